"""IC3 / PDR: a proof for every depth with no lemma written by hand.

Every variable of the symbolic model is a Bool or a bit-vector, so proving an
invariant is a finite-state safety problem, which IC3 (Bradley, "SAT-based model
checking without unrolling", 2011) and PDR (Een, Mishchenko, Brayton, "Efficient
implementation of property directed reachability", 2011) solve by building the
strengthening themselves.  This is PDR as those papers give it, over z3's
incremental SAT solver (QF_FD), at the level of bits:

* frames F_1 .. F_k over-approximate the states reachable in at most i steps;
  each is a set of clauses (negated cubes of state bits), kept at the highest
  frame where they hold (delta encoding, one activation literal per frame);
* a state of F_k that breaks the property is blocked recursively: a cube with a
  predecessor in F_{i-1} makes that predecessor an obligation at i-1; a cube
  without one is generalised (the solver's unsat core, then dropping literals one
  by one while the clause stays inductive relative to F_{i-1}) and added;
* predecessors are lifted (Chockler et al. 2011): the unsat core of "this cube,
  this action, and a successor outside the target" keeps only the bits that
  matter;
* clauses are pushed forward; when a frame has no clause of its own left it
  equals the next one, and the clauses from there on, with the property, are an
  inductive invariant.  It is checked again by a fresh solver before it is shown.

An obligation at frame 0 is a counterexample: its concrete initial state and the
actions of the obligations above it are replayed through the explicit model,
which must break the property (anything else is an encoding bug).  PDR's
counterexamples need not be shortest, so BMC confirms each from the initial
states, at the shortest depth, and that trace is the one reported.

Why not z3's Spacer (its CHC engine): on 2.1.0 with 2 replicas it had not proved
``hw-le-leo`` after 300 s, with bit-vectors or with integers, where this engine
and k-induction with lemmas take seconds (benchmarks/README.md).
"""

from __future__ import annotations

import heapq
import itertools
import time
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field

import z3

from replcheck.checker.explicit.bfs import Step, Violation
from replcheck.checker.symbolic.prove import (
    EncodingMismatch,
    Lemma,
    Property,
    _check,
    _solver,
    _why_unknown,
    bmc,
    is_interrupt,
    step_parts,
)
from replcheck.checker.symbolic.z3_interrupt import ctrl_c_cancels_z3
from replcheck.model.interface import Action, Model, SymbolicModel

Cube = tuple[int, ...]  # sorted literals: +(b+1) bit b is 1, -(b+1) bit b is 0
# Counterexamples to generalisation blocked per literal tried, and how deep (Hassan,
# Bradley and Somenzi's maxCTGs = 3 and maxDepth = 1).
MAX_CTGS = 3
MAX_CTG_DEPTH = 1


@dataclass
class PdrResult:
    """``status``: ``proved``, ``violated``, ``timeout``, ``interrupted`` or ``unknown``.

    ``invariant``: when proved, the clauses that with the properties are inductive,
    each as text over the state's variables.  ``violation``: PDR's counterexample,
    replayed through the explicit model (not necessarily the shortest)."""

    status: str
    seconds: float
    properties: tuple[str, ...]
    frames: int = 0
    invariant: list[str] = field(default_factory=list)
    # The seeds (known lemmas offered to PDR) that are part of the invariant.
    seeds_used: list[str] = field(default_factory=list)
    violation: Violation | None = None
    # PDR's own counterexample's length in states, before BMC shortened it.
    pdr_length: int = 0
    # Whether BMC confirmed and shortened it (not when Ctrl-C stopped BMC).
    shortened: bool = False
    queries: int = 0
    clauses_learned: int = 0


@dataclass
class _Obligation:
    level: int
    cube: Cube
    # The action from this cube's states into the parent's cube, and the parent.
    action: Action | None = None
    parent: _Obligation | None = None
    # For an obligation at frame 0: the concrete initial state it stands for.
    state: Hashable | None = None


class _Bits:
    """One copy of the state as bit atoms: a Bool per Bool variable, one per bit of
    each bit-vector, defined once in every solver that reads them."""

    def __init__(self, model: SymbolicModel, tag: str) -> None:
        self.tag = tag
        self.state = model.fresh(tag)
        self.vars = model.variables(self.state)
        self.atoms: list[z3.BoolRef] = []
        self.owner: list[tuple[int, int]] = []  # (variable, bit); bit -1: a Bool
        self.definitions: list[z3.BoolRef] = []
        for vi, v in enumerate(self.vars):
            if z3.is_bool(v):
                self.atoms.append(v)
                self.owner.append((vi, -1))
                continue
            for b in range(v.size()):
                atom = z3.Bool(f"{tag}#{vi}.{b}")
                self.definitions.append(atom == (z3.Extract(b, b, v) == 1))
                self.atoms.append(atom)
                self.owner.append((vi, b))
        self.negated = [z3.Not(a) for a in self.atoms]

    def literal(self, lit: int) -> z3.BoolRef:
        return self.atoms[lit - 1] if lit > 0 else self.negated[-lit - 1]

    def literals(self, cube: Cube) -> list[z3.BoolRef]:
        return [self.literal(lit) for lit in cube]

    def clause(self, cube: Cube) -> z3.BoolRef:
        """Not ``cube``."""
        return z3.Or([self.literal(-lit) for lit in cube])

    def cube_of(self, solution: z3.ModelRef) -> Cube:
        """The full cube of the state ``solution`` gives this copy."""
        lits = []
        i = 0
        for v in self.vars:
            value = solution.eval(v, model_completion=True)
            if z3.is_bool(v):
                i += 1
                lits.append(i if z3.is_true(value) else -i)
                continue
            n = value.as_long()
            for b in range(v.size()):
                i += 1
                lits.append(i if (n >> b) & 1 else -i)
        return tuple(lits)

    def describe(self, cube: Cube, values_of: Callable[[int], list[int]]) -> str:
        """The cube in the trace view's words: ``r0.hw = 2 and not r1.alive``;
        ``values_of(variable)`` lists the values the domain allows that variable."""
        by_var: dict[int, dict[int, int]] = {}
        for lit in cube:
            vi, b = self.owner[abs(lit) - 1]
            by_var.setdefault(vi, {})[b] = 1 if lit > 0 else 0
        words = []
        for vi in sorted(by_var):
            v = self.vars[vi]
            name = str(v).removeprefix(f"{self.tag}.")
            bits = by_var[vi]
            if -1 in bits:
                words.append(name if bits[-1] else f"not {name}")
                continue
            values = [
                n for n in values_of(vi) if all((n >> b) & 1 == bit for b, bit in bits.items())
            ]
            shown = [str(_signed(n, v.size())) for n in values]
            if len(shown) == 1:
                words.append(f"{name} = {shown[0]}")
            else:
                words.append(f"{name} in {{{', '.join(shown)}}}")
        return " and ".join(words)


class _Pdr:
    def __init__(
        self,
        explicit: Model,
        symbolic: SymbolicModel,
        properties: Sequence[Property],
        seeds: Sequence[Lemma],
        deadline: float | None,
        on_frame: Callable[[int, int, float], None] | None,
    ) -> None:
        self.explicit, self.symbolic = explicit, symbolic
        self.properties = list(properties)
        self.seeds = list(seeds)
        self.deadline = deadline
        self.on_frame = on_frame
        self.start = time.monotonic()
        self.interrupted: Callable[[], bool] = lambda: False
        self.queries = 0
        m = symbolic
        self.instances = m.instances()
        self.x, self.y = _Bits(m, "pdr_x"), _Bits(m, "pdr_y")
        self.chosen = [z3.Bool(f"pdr_do_{i}") for i in range(len(self.instances))]
        self.step = step_parts(m, self.instances, self.x.state, self.y.state, self.chosen)
        one, guards, updates = self.step
        prop_x = z3.And([p.holds(self.x.state) for p in self.properties])

        # The main solver: one step from x to y, within the domain, frames as clauses
        # guarded by activation literals.
        s = self.solver = _solver(m)
        s.add(*self.x.definitions, *self.y.definitions)
        s.add(m.domain(self.x.state), m.domain(self.y.state), one, *guards, *updates)
        self.init_act = z3.Bool("pdr_init")
        self.prop_act = z3.Bool("pdr_prop")
        self.bad_act = z3.Bool("pdr_bad")
        s.add(z3.Implies(self.init_act, m.init(self.x.state)))
        s.add(z3.Implies(self.prop_act, prop_x))
        s.add(z3.Implies(self.bad_act, z3.Not(prop_x)))
        self.frame_acts: list[z3.BoolRef] = [self.init_act]
        self.frames: list[set[Cube]] = [set()]  # frames[i]: cubes blocked at exactly i
        self.seeded: list[set[int]] = [set()]  # seeded[i]: the seeds that hold to exactly i
        self.seed_literals: list[tuple[z3.BoolRef, z3.BoolRef]] = []
        self.temporary = itertools.count()

        # The lifting solver: the step without its guards, which a lifting query states
        # itself (every state of the lifted cube must take the action).
        lift = self.lifter = _solver(m)
        lift.add(*self.x.definitions, *self.y.definitions, one, *updates)
        lift.add(z3.Implies(self.prop_act, prop_x))
        self.guard_of = [m.guard(self.x.state, a) for a in self.instances]

        # The initial states, as bit values when there is one (the Kafka model).
        self.init_solver = _solver(m)
        self.init_solver.add(*self.x.definitions, m.init(self.x.state), m.domain(self.x.state))
        self.init_cube = self._single_init()
        self.domain_values: dict[int, list[int]] = {}
        self.domain_solver: z3.Solver | None = None
        self.solution: z3.ModelRef | None = None  # the last relative query's predecessor

    # ------------------------------------------------------------------ queries

    def _ask(self, solver: z3.Solver, assumptions: list) -> z3.CheckSatResult:
        if self.interrupted():  # Ctrl-C while Python built terms: stop between queries
            raise _Stop("interrupted")
        self.queries += 1
        if self.deadline is not None:
            left_ms = int((self.deadline - time.monotonic()) * 1000)
            if left_ms <= 0:
                raise _Stop("timeout")
            solver.set("timeout", left_ms)
        answer = solver.check(*assumptions)
        if answer == z3.unknown:
            raise _Stop(_why_unknown(solver, self.deadline, self.interrupted))
        return answer

    def _temporary(self, solver: z3.Solver, formula: z3.BoolRef) -> z3.BoolRef:
        """An activation literal for ``formula`` in ``solver``, for one query."""
        act = z3.Bool(f"pdr_tmp{next(self.temporary)}")
        solver.add(z3.Implies(act, formula))
        return act

    def _frame(self, i: int) -> list[z3.BoolRef]:
        """Assumptions that make the solver's x lie in F_i (F_0: the initial states).
        Every frame below the last lies within the property."""
        if i == 0:
            return [self.init_act]
        seeds = [self.seed_literals[s][0] for level in self.seeded[i:] for s in level]
        below_last = i < len(self.frames) - 1
        return [self.prop_act] * below_last + self.frame_acts[i:] + seeds

    def _single_init(self) -> dict[int, bool] | None:
        if _check(self.init_solver, None) != z3.sat:
            raise EncodingMismatch("the symbolic model has no initial state")
        cube = self.x.cube_of(self.init_solver.model())
        self.init_solver.push()
        self.init_solver.add(self.x.clause(cube))
        other = _check(self.init_solver, None)
        self.init_solver.pop()
        return {abs(lit): lit > 0 for lit in cube} if other == z3.unsat else None

    def _meets_init(self, cube: Cube) -> bool:
        if self.init_cube is not None:
            return all(self.init_cube[abs(lit)] == (lit > 0) for lit in cube)
        return self._ask(self.init_solver, self.x.literals(cube)) == z3.sat

    # ------------------------------------------------------------------ PDR

    def run(self) -> PdrResult:
        names = tuple(p.id for p in self.properties)
        result = PdrResult("unknown", 0.0, names)
        try:
            # Ctrl-C cancels the query under way and sets a flag read before the next
            # one (see checker.symbolic.z3_interrupt): a KeyboardInterrupt raised in the middle of
            # building a z3 term left a half-made object whose __del__ printed a
            # traceback (seen in the test suite).
            with ctrl_c_cancels_z3() as self.interrupted:
                self._run(result)
        except _Stop as stop:
            result.status = stop.why
        except (KeyboardInterrupt, z3.Z3Exception) as e:
            # A query cancelled by Ctrl-C can make the next z3 call fail (no model).
            if not (is_interrupt(e) or self.interrupted()):
                raise
            result.status = "interrupted"
        result.seconds = time.monotonic() - self.start
        result.queries = self.queries
        result.frames = len(self.frames) - 1
        result.clauses_learned = sum(len(f) for f in self.frames)
        return result

    def _run(self, result: PdrResult) -> None:
        if self._ask(self.solver, [self.init_act, self.bad_act]) == z3.sat:
            state = self.symbolic.decode(self.solver.model(), self.x.state)
            result.violation = self._violation(_Obligation(0, (), state=state))
            result.status = "violated"
            return
        self._new_frame()
        self._plant_seeds()
        while True:
            k = len(self.frames) - 1
            while self._ask(self.solver, [*self._frame(k), self.bad_act]) == z3.sat:
                bad = self._lift_bad(self.x.cube_of(self.solver.model()))
                found = self._block(_Obligation(k, bad))
                if found is not None:
                    result.violation = self._violation(found)
                    result.status = "violated"
                    return
            self._new_frame()
            fixpoint = self._propagate()
            if self.on_frame:
                self.on_frame(k, sum(len(f) for f in self.frames), time.monotonic() - self.start)
            if fixpoint is not None:
                clauses = sorted(c for f in self.frames[fixpoint:] for c in f)
                seeds = sorted(i for f in self.seeded[fixpoint:] for i in f)
                self._check_invariant(clauses, [self.seeds[i] for i in seeds])
                result.seeds_used = [self.seeds[i].id for i in seeds]
                result.invariant = [f"not ({self.x.describe(c, self._values)})" for c in clauses]
                result.status = "proved"
                return

    def _new_frame(self) -> None:
        self.frames.append(set())
        self.seeded.append(set())
        self.frame_acts.append(z3.Bool(f"pdr_frame{len(self.frames) - 1}"))

    def _plant_seeds(self) -> None:
        """Each seed that holds in every state at most one step from the initial ones
        joins F_1, as a clause would; propagation takes it as far as it is inductive.
        A seed is encoded once, as two literals: it holds in x (assumed by the frames
        it belongs to), and whether it holds in y."""
        for seed in self.seeds:
            at_x, at_y = z3.Bool(f"pdr_seed_x_{seed.id}"), z3.Bool(f"pdr_seed_y_{seed.id}")
            self.solver.add(z3.Implies(at_x, seed.holds(self.x.state)))
            self.solver.add(at_y == seed.holds(self.y.state))
            self.seed_literals.append((at_x, at_y))
        for i, (_, at_y) in enumerate(self.seed_literals):
            if self._ask(self.solver, [self.init_act, z3.Not(at_y)]) == z3.unsat:
                self.seeded[1].add(i)

    def _add_clause(self, cube: Cube, level: int) -> None:
        self.frames[level].add(cube)
        self.solver.add(z3.Implies(self.frame_acts[level], self.x.clause(cube)))

    def _block(self, bad: _Obligation) -> _Obligation | None:
        """Block ``bad`` and every predecessor it needs; an obligation at frame 0 is a
        counterexample, returned."""
        k = len(self.frames) - 1
        order = itertools.count()
        queue = [(bad.level, next(order), bad)]
        while queue:
            level, _, ob = heapq.heappop(queue)
            if level == 0:
                return ob
            if self._blocked(ob.cube, level):
                continue
            core = self._relative(ob.cube, level)
            if core is None:
                pred = self._predecessor(ob.cube, level)
                heapq.heappush(queue, (level - 1, next(order), pred))
                pred.parent = ob
                heapq.heappush(queue, (level, next(order), ob))
                continue
            cube, reached = self._generalize(ob.cube, level, core)
            self._add_clause(cube, reached)
            if reached < k:  # look for longer counterexamples through it (Een et al.)
                again = _Obligation(reached + 1, ob.cube, ob.action, ob.parent)
                heapq.heappush(queue, (reached + 1, next(order), again))
        return None

    def _blocked(self, cube: Cube, level: int) -> bool:
        return self._ask(self.solver, [*self._frame(level), *self.x.literals(cube)]) == z3.unsat

    def _relative(self, cube: Cube, level: int) -> Cube | None:
        """Is not-``cube`` inductive relative to F_{level-1}?  When it is: the part of
        ``cube`` the proof used (from the unsat core); when not: None, with the
        predecessor's solution kept in ``self.solution`` (read only where needed: a
        full cube costs an evaluation of every variable)."""
        not_cube = self._temporary(self.solver, self.x.clause(cube))
        primed = self.y.literals(cube)
        answer = self._ask(self.solver, [*self._frame(level - 1), not_cube, *primed])
        if answer == z3.sat:
            self.solution = self.solver.model()
            self.solver.add(z3.Not(not_cube))
            return None
        core = {c.get_id() for c in self.solver.unsat_core()}
        self.solver.add(z3.Not(not_cube))
        return tuple(lit for lit, p in zip(cube, primed, strict=True) if p.get_id() in core)

    def _predecessor(self, cube: Cube, level: int) -> _Obligation:
        """The obligation for the predecessor the last relative query found, lifted to
        the bits that alone step into ``cube``."""
        solution = self.solution
        full = self.x.cube_of(solution)
        index = next(i for i, c in enumerate(self.chosen) if z3.is_true(solution.eval(c, True)))
        state = self.symbolic.decode(solution, self.x.state) if level == 1 else None
        lifted = full if level == 1 else self._lift(full, index, cube)
        return _Obligation(level - 1, lifted, self.instances[index], None, state)

    def _lift(self, full: Cube, index: int, target: Cube) -> Cube:
        """The bits of ``full`` that alone make action ``index`` enabled and lead into
        ``target``."""
        outside = z3.Or(z3.Not(self.guard_of[index]), self.y.clause(target))
        act = self._temporary(self.lifter, outside)
        lits = self.x.literals(full)
        answer = self._ask(self.lifter, [act, self.chosen[index], *lits])
        self.lifter.add(z3.Not(act))
        if answer == z3.sat:  # cannot happen for a deterministic step; keep the state
            return full
        core = {c.get_id() for c in self.lifter.unsat_core()}
        return tuple(lit for lit, z in zip(full, lits, strict=True) if z.get_id() in core)

    def _lift_bad(self, full: Cube) -> Cube:
        """The bits of ``full`` that alone break the property."""
        lits = self.x.literals(full)
        if self._ask(self.lifter, [self.prop_act, *lits]) == z3.sat:
            return full
        core = {c.get_id() for c in self.lifter.unsat_core()}
        return tuple(lit for lit, z in zip(full, lits, strict=True) if z.get_id() in core)

    def _outside_init(self, kept: Cube, original: Cube) -> Cube:
        """``kept``, with a literal of ``original`` added back if it meets the initial
        states (a clause must never exclude one)."""
        if not self._meets_init(kept):
            return kept
        for lit in original:
            if lit not in kept and not self._meets_init((lit,)):
                return tuple(sorted((*kept, lit), key=abs))
        return original

    def _generalize(self, cube: Cube, level: int, core: Cube) -> tuple[Cube, int]:
        """A small sub-cube of ``cube`` (whose negation is inductive relative to
        F_{level-1}, ``core`` the part that query used), pushed as high as it holds."""
        return self._push(self._mic(self._outside_init(core, cube), level, 1), level)

    def _push(self, cube: Cube, level: int) -> tuple[Cube, int]:
        """``cube``, inductive relative to F_{level-1}, moved to the highest frame where
        it still is, narrowed by each query's core."""
        while level < len(self.frames) - 1:
            core = self._relative(cube, level + 1)
            if core is None:
                break
            level += 1
            cube = self._outside_init(core, cube)
        return cube, level

    def _mic(self, cube: Cube, level: int, depth: int) -> Cube:
        """Drop literals one by one while the clause stays inductive relative to
        F_{level-1} (Bradley's MIC, with ctgDown for each try)."""
        for lit in list(cube):
            if lit not in cube or len(cube) == 1:
                continue
            smaller = self._ctg_down(tuple(x for x in cube if x != lit), level, depth)
            if smaller is not None:
                cube = smaller
        return cube

    def _ctg_down(self, cube: Cube, level: int, depth: int) -> Cube | None:
        """``cube`` or a sub-cube of it whose negation is inductive relative to
        F_{level-1}, or None.  A predecessor that blocks the try (a counterexample to
        generalisation) is itself blocked one frame lower when it can be, a few times
        (Hassan, Bradley, Somenzi, "Better generalization in IC3", 2013); otherwise the
        cube keeps only the literals the predecessor shares with it."""
        ctgs = 0
        while True:
            if self._meets_init(cube):
                return None
            core = self._relative(cube, level)
            if core is not None:
                return self._outside_init(core, cube)
            if depth > MAX_CTG_DEPTH:
                return None
            pred = self.x.cube_of(self.solution)
            if ctgs < MAX_CTGS and level > 1 and not self._meets_init(pred):
                core = self._relative(pred, level - 1)
                if core is not None:
                    ctgs += 1
                    pred, at = self._push(self._outside_init(core, pred), level - 1)
                    self._add_clause(self._mic(pred, at, depth + 1), at)
                    continue
            ctgs = 0
            shared = set(pred)
            joined = tuple(lit for lit in cube if lit in shared)
            if joined == cube or not joined:
                return None
            cube = joined

    def _propagate(self) -> int | None:
        """Push each clause to the next frame where it holds; the first frame left with
        no clause of its own equals the next, and is returned."""
        k = len(self.frames) - 1
        for i in range(1, k):
            for cube in sorted(self.frames[i]):
                primed = self.y.literals(cube)
                if self._ask(self.solver, [*self._frame(i), *primed]) == z3.unsat:
                    self.frames[i].discard(cube)
                    self._add_clause(cube, i + 1)
            for index in sorted(self.seeded[i]):
                at_y = self.seed_literals[index][1]
                if self._ask(self.solver, [*self._frame(i), z3.Not(at_y)]) == z3.unsat:
                    self.seeded[i].discard(index)
                    self.seeded[i + 1].add(index)
            if not self.frames[i] and not self.seeded[i]:
                return i + 1
        return None

    def _check_invariant(self, clauses: list[Cube], seeds: list[Lemma]) -> None:
        """The invariant, checked from scratch: it holds initially and is inductive."""
        m = self.symbolic
        fresh = _solver(m)
        x, y = self.x.state, self.y.state
        one, guards, updates = self.step
        fresh.add(m.domain(x), m.domain(y), one, *guards, *updates)
        fresh.add(*self.x.definitions, *self.y.definitions)
        facts = [*self.properties, *seeds]
        inv_x = z3.And([p.holds(x) for p in facts] + [self.x.clause(c) for c in clauses])
        inv_y = z3.And([p.holds(y) for p in facts] + [self.y.clause(c) for c in clauses])
        fresh.push()
        fresh.add(m.init(self.x.state), z3.Not(inv_x))
        if _check(fresh, None) != z3.unsat:
            raise EncodingMismatch("PDR's invariant does not hold in an initial state")
        fresh.pop()
        fresh.add(inv_x, z3.Not(inv_y))
        if _check(fresh, None) != z3.unsat:
            raise EncodingMismatch("PDR's invariant is not inductive")

    def _values(self, index: int) -> list[int]:
        """The values of bit-vector variable ``index`` within the domain (for the
        invariant's text), as two's complement bit patterns read back as numbers."""
        if index not in self.domain_values:
            v = self.x.vars[index]
            if self.domain_solver is None:
                self.domain_solver = _solver(self.symbolic)
                self.domain_solver.add(self.symbolic.domain(self.x.state))
            solver = self.domain_solver
            solver.push()
            found = []
            while _check(solver, None) == z3.sat and len(found) < 1 << v.size():
                value = solver.model().eval(v, model_completion=True)
                found.append(value.as_long())
                solver.add(v != value)
            solver.pop()
            self.domain_values[index] = sorted(found, key=lambda n: _signed(n, v.size()))
        return self.domain_values[index]

    # ------------------------------------------------------------------ counterexample

    def _violation(self, ob: _Obligation) -> Violation:
        """The chain from the initial state ``ob`` to the bad cube, replayed through the
        explicit model."""
        state = ob.state
        if state not in self.explicit.init_states():
            raise EncodingMismatch(f"PDR's initial state is not the model's: {state}")
        steps = [Step(None, state)]
        node = ob
        while node.parent is not None:
            here = steps[-1].state
            if node.action not in set(self.explicit.actions(here)):
                raise EncodingMismatch(f"PDR: {node.action} is not enabled in {here}")
            steps.append(Step(node.action, self.explicit.next_state(here, node.action)))
            node = node.parent
        last = steps[-1].state
        for p in self.properties:
            message = p.explain(last)
            if message is not None:
                return Violation(p.id, message, steps)
        raise EncodingMismatch("PDR's counterexample breaks no property in the explicit model")


def _signed(n: int, width: int) -> int:
    return n - (1 << width) if n >> (width - 1) else n


class _Stop(Exception):
    def __init__(self, why: str) -> None:
        self.why = why


def pdr(
    explicit: Model,
    symbolic: SymbolicModel,
    properties: Sequence[Property],
    *,
    seeds: Sequence[Lemma] = (),
    time_limit: float | None = None,
    on_frame: Callable[[int, int, float], None] | None = None,
) -> PdrResult:
    """Prove ``properties`` for every depth by PDR, or find a counterexample.
    ``seeds`` are candidate lemmas: those that hold one step from the initial states
    start in F_1 and go as far as propagation takes them; none is assumed.
    ``on_frame(k, clauses, seconds)`` follows each frame completed."""
    deadline = time.monotonic() + time_limit if time_limit is not None else None
    result = _Pdr(explicit, symbolic, properties, seeds, deadline, on_frame).run()
    if result.violation is not None:
        result.pdr_length = result.violation.length
        shortest = _shortest(explicit, symbolic, properties, result.violation)
        result.shortened = shortest is not None
        result.violation = shortest or result.violation
    return result


def _shortest(
    explicit: Model, symbolic: SymbolicModel, properties: Sequence[Property], found: Violation
) -> Violation | None:
    """PDR's counterexample confirmed by BMC from the initial states, which also makes
    it as short as any (BFS's depth): BMC to PDR's length must find a violation.
    None when Ctrl-C stops BMC first (PDR's own trace, replayed, still stands)."""
    broken = [p for p in properties if p.id == found.invariant]
    confirmed = bmc(explicit, symbolic, broken, found.length - 1)
    if confirmed.status == "interrupted":
        return None
    shortest = confirmed.violations.get(found.invariant)
    if shortest is None:
        raise EncodingMismatch(
            f"BMC finds no violation of {found.invariant} in {found.length - 1} steps, "
            "where PDR found one"
        )
    return shortest
