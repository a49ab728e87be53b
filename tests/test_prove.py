"""replcheck.checker.symbolic.prove on a toy model small enough to know every answer by hand.

Two counters (a, b) start at 0; ``step`` adds one to both while a < LIMIT.  With
``jump`` on, when a == 3 b may also jump by 3: a bug that breaks ``b <= LIMIT``
after four steps.  ``b <= LIMIT`` holds without the jump but is not inductive on
its own (from a=4, b=5, a step reaches b=6): the lemma ``a == b`` fixes that.
"""

from __future__ import annotations

from collections.abc import Hashable

import pytest
import z3

from replcheck.checker.explicit.bfs import bfs
from replcheck.checker.symbolic.prove import EncodingMismatch, Lemma, Property, bmc, k_induction
from replcheck.invariants import Invariant
from replcheck.model.interface import Action

LIMIT = 5
DOMAIN = 10  # counters range over 0 .. DOMAIN in the symbolic domain


class Counters:
    """The explicit model."""

    default_symmetry = False

    def __init__(self, jump: bool) -> None:
        self.jump = jump

    def init_states(self) -> list[Hashable]:
        return [(0, 0)]

    def actions(self, s: tuple[int, int]) -> list[Action]:
        a, _ = s
        out = [Action("step")] if a < LIMIT else []
        if self.jump and a == 3:
            out.append(Action("jump"))
        return out

    def next_state(self, s: tuple[int, int], action: Action) -> tuple[int, int]:
        a, b = s
        return (a + 1, b + 1) if action.name == "step" else (a, b + 3)

    def representative(self, s: Hashable) -> Hashable:
        return s

    canonical = representative

    def action_params(self, action: Action) -> dict[str, int]:
        return {}


class SymbolicCounters:
    """The same system as z3 terms; ``wrong`` makes ``jump`` add 2 (an encoding bug)."""

    def __init__(self, jump: bool, wrong: bool = False) -> None:
        self.jump, self.wrong = jump, wrong

    def fresh(self, tag: str) -> tuple[z3.ArithRef, z3.ArithRef]:
        return z3.Int(f"a_{tag}"), z3.Int(f"b_{tag}")

    def domain(self, s):
        return z3.And([z3.And(v >= 0, v <= DOMAIN) for v in s])

    def init(self, s):
        return z3.And(s[0] == 0, s[1] == 0)

    def instances(self) -> list[Action]:
        return [Action("step"), Action("jump")] if self.jump else [Action("step")]

    def guard(self, s, action: Action):
        return s[0] < LIMIT if action.name == "step" else s[0] == 3

    def effect(self, s, action: Action):
        if action.name == "step":
            return s[0] + 1, s[1] + 1
        return s[0], s[1] + (2 if self.wrong else 3)

    def variables(self, s):
        return list(s)

    def same(self, s, t):
        return z3.And(s[0] == t[0], s[1] == t[1])

    def encode(self, state):
        return z3.IntVal(state[0]), z3.IntVal(state[1])

    def decode(self, solution, s):
        return tuple(solution.eval(v, model_completion=True).as_long() for v in s)


def b_bounded(state: tuple[int, int]) -> str | None:
    return None if state[1] <= LIMIT else f"b = {state[1]} > {LIMIT}"


B_BOUNDED = Property("b-bounded", lambda s: s[1] <= LIMIT, b_bounded)
SAME = Lemma("a-equals-b", "both counters move together", lambda s: s[0] == s[1])


def test_bmc_finds_the_jump_at_the_depth_bfs_reports() -> None:
    explicit = Counters(jump=True)
    found = bmc(explicit, SymbolicCounters(jump=True), [B_BOUNDED], max_depth=8)
    violation = found.violations["b-bounded"]
    assert found.status == "all-violated" and found.cleared == 3
    assert [step.action.name for step in violation.trace[1:]] == ["step"] * 3 + ["jump"]
    assert violation.message == "b = 6 > 5"
    by_bfs = bfs(explicit, [Invariant("b-bounded", "", b_bounded)], symmetry=False)
    assert by_bfs.violations["b-bounded"].length == violation.length == 5


def test_bmc_clears_every_depth_without_the_jump() -> None:
    found = bmc(Counters(jump=False), SymbolicCounters(jump=False), [B_BOUNDED], max_depth=7)
    assert found.status == "complete" and found.cleared == 7 and not found.violations
    assert [d.result for d in found.depths] == ["clear"] * 8


def test_an_encoding_that_disagrees_with_the_explicit_model_is_caught() -> None:
    wrong = SymbolicCounters(jump=True, wrong=True)
    b_at_most_4 = Property("b-le-4", lambda s: s[1] <= 4, lambda st: None)
    with pytest.raises(EncodingMismatch, match="jump"):
        bmc(Counters(jump=True), wrong, [b_at_most_4], max_depth=6)


def test_induction_needs_the_lemma_and_proves_with_it() -> None:
    explicit, symbolic = Counters(jump=False), SymbolicCounters(jump=False)
    bare = k_induction(explicit, symbolic, [B_BOUNDED], [], max_k=1, candidates=[SAME])
    assert bare.status == "cti" and bare.cti_broken == ("b-bounded",)
    first, second = bare.cti
    assert first[1] <= LIMIT < second[1] and first[0] < LIMIT
    assert bare.suggestions == ("a-equals-b",)  # the CTI's first state has a != b
    proved = k_induction(explicit, symbolic, [B_BOUNDED], [SAME], max_k=1)
    assert proved.status == "proved" and proved.k == 1


def test_induction_base_case_reports_a_real_violation() -> None:
    found = k_induction(Counters(jump=True), SymbolicCounters(jump=True), [B_BOUNDED], [SAME], 6)
    assert found.status == "violated" and found.violation is not None
    assert found.violation.invariant == "b-bounded"  # the jump breaks the lemma too
    assert found.violation.length == 5


A_BOUNDED = Property("a-bounded", lambda s: s[0] <= LIMIT, lambda st: None)


def _is_cti(found, explicit: Counters) -> bool:
    """A CTI: its first state satisfies the property, the action is the explicit
    model's, and leads to the last state, which breaks it."""
    first, second = found.cti
    (action,) = found.cti_actions
    enabled = action in explicit.actions(first)
    return enabled and explicit.next_state(first, action) == second and b_bounded(second)


@pytest.mark.parametrize("jobs", [1, 2])
def test_the_step_is_shared_among_workers_with_the_same_verdicts(jobs: int) -> None:
    """Two actions, so two workers each take one: the proof and the CTI agree with the
    single-process run."""
    explicit, symbolic = Counters(jump=True), SymbolicCounters(jump=True)
    proved = k_induction(explicit, symbolic, [A_BOUNDED], [], max_k=2, jobs=jobs)
    assert proved.status == "proved" and proved.k == 1
    seen: list[tuple[int, int, int]] = []
    found = k_induction(
        explicit, symbolic, [B_BOUNDED], [], max_k=1, jobs=jobs, on_action=lambda *a: seen.append(a)
    )
    assert found.status == "cti" and found.cti_broken == ("b-bounded",)
    assert b_bounded(found.cti[0]) is None and _is_cti(found, explicit)
    assert seen and seen[-1][0] == 1 and seen[-1][2] == 2  # k=1, of 2 actions
