"""A z3 term over Int and Bool constants, compiled to a Python function of their values.

Tests that hold a lemma against every reachable state of a configuration evaluate one
term on tens of thousands of states; substituting numerals and simplifying in z3 costs
about 1.7 ms a state (most of it building the numerals), a compiled term a few
microseconds.  Only the operators the Kafka model's lemmas use are compiled; any other
raises :class:`Unsupported`, and callers check a sample of states with z3 itself
(:func:`agrees_with_z3`) so an error here cannot pass silently.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import z3


class Unsupported(Exception):
    """The term uses an operator this compiler does not translate."""


_NARY = {
    z3.Z3_OP_AND: " and ",
    z3.Z3_OP_OR: " or ",
    z3.Z3_OP_ADD: " + ",
    z3.Z3_OP_MUL: " * ",
}
_BINARY = {
    z3.Z3_OP_LE: "<=",
    z3.Z3_OP_LT: "<",
    z3.Z3_OP_GE: ">=",
    z3.Z3_OP_GT: ">",
    z3.Z3_OP_EQ: "==",
    z3.Z3_OP_IFF: "==",
    z3.Z3_OP_XOR: "!=",
}


def compile_term(term: z3.ExprRef, variables: Sequence[z3.ExprRef]) -> Callable[[Sequence], object]:
    """``f(values)`` = the value of ``term`` where ``variables[k]`` is ``values[k]``."""
    index = {v.decl().name(): k for k, v in enumerate(variables)}
    names: dict[int, str] = {}  # AST id -> the local holding its value
    lines: list[str] = []

    def visit(t: z3.ExprRef) -> str:
        key = t.get_id()
        if key in names:
            return names[key]
        kind = t.decl().kind()
        args = [visit(a) for a in t.children()]
        if z3.is_int_value(t):
            expr = str(t.as_long())
        elif kind == z3.Z3_OP_TRUE:
            expr = "True"
        elif kind == z3.Z3_OP_FALSE:
            expr = "False"
        elif kind == z3.Z3_OP_UNINTERPRETED and not args:
            name = t.decl().name()
            if name not in index:
                raise Unsupported(f"constant {name} is not a variable")
            expr = f"v[{index[name]}]"
        elif kind in _NARY:
            expr = _NARY[kind].join(f"({a})" for a in args)
        elif kind in _BINARY and len(args) == 2:
            expr = f"({args[0]}) {_BINARY[kind]} ({args[1]})"
        elif kind == z3.Z3_OP_NOT:
            expr = f"not ({args[0]})"
        elif kind == z3.Z3_OP_IMPLIES:
            expr = f"(not ({args[0]})) or ({args[1]})"
        elif kind == z3.Z3_OP_ITE:
            expr = f"({args[1]}) if ({args[0]}) else ({args[2]})"
        elif kind == z3.Z3_OP_SUB:
            expr = f"({args[0]})" + "".join(f" - ({a})" for a in args[1:])
        elif kind == z3.Z3_OP_UMINUS:
            expr = f"-({args[0]})"
        elif kind == z3.Z3_OP_DISTINCT:
            expr = f"len({{{', '.join(args)}}}) == {len(args)}"
        else:
            raise Unsupported(f"operator {t.decl().name()} in {t.sexpr()[:80]}")
        local = f"t{len(names)}"
        lines.append(f"    {local} = {expr}")
        names[key] = local
        return local

    result = visit(term)
    source = "def f(v):\n" + "\n".join(lines) + f"\n    return {result}\n"
    scope: dict = {}
    exec(compile(source, "<z3 term>", "exec"), scope)  # noqa: S102 - our own generated code
    return scope["f"]


def agrees_with_z3(term: z3.ExprRef, compiled: Callable, values: Sequence, encoded, sym) -> bool:
    """Whether the compiled term and z3 (substitute, simplify) give the same truth value
    on one state (``values``: its variables' values; ``encoded``: the same state as z3
    numerals, ``sym``: the symbolic model whose template ``term`` is built over)."""
    return bool(compiled(values)) == z3.is_true(z3.simplify(sym.substitute(term, encoded)))
