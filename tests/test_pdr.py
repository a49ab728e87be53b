"""replcheck.checker.symbolic.pdr (IC3/PDR) on the two-counter toy of test_prove, as bit-vectors.

Without the jump, ``b <= LIMIT`` holds but is not inductive alone; PDR must find a
strengthening itself (k-induction needs the lemma a == b).  With the jump it breaks
after four steps, which PDR must report as a counterexample the explicit model
replays.
"""

from __future__ import annotations

import pytest
import z3

from replcheck.checker.symbolic import pdr as pdr_module
from replcheck.checker.symbolic.pdr import pdr
from replcheck.checker.symbolic.prove import BmcResult, EncodingMismatch, Lemma, Property
from tests.test_prove import LIMIT, Counters, SymbolicCounters, b_bounded

WIDTH = 5  # signed: -16 .. 15, enough for 0 .. DOMAIN


class BitCounters(SymbolicCounters):
    """test_prove's symbolic counters over bit-vectors, as PDR needs."""

    def fresh(self, tag: str) -> tuple[z3.BitVecRef, z3.BitVecRef]:
        return z3.BitVec(f"a_{tag}", WIDTH), z3.BitVec(f"b_{tag}", WIDTH)

    def encode(self, state):
        return z3.BitVecVal(state[0], WIDTH), z3.BitVecVal(state[1], WIDTH)


B_BOUNDED = Property("b-bounded", lambda s: s[1] <= LIMIT, b_bounded)


def test_pdr_proves_what_needs_a_strengthening_without_being_given_one() -> None:
    found = pdr(Counters(jump=False), BitCounters(jump=False), [B_BOUNDED])
    assert found.status == "proved" and found.violation is None
    # b <= LIMIT alone is not inductive (from a=4, b=5 a step reaches b=6), so the
    # invariant needs clauses, each over the counters' names and values.
    assert found.invariant
    for clause in found.invariant:
        assert clause.startswith("not (") and ("a_pdr_x" in clause or "b_pdr_x" in clause)


def test_the_invariant_pdr_prints_is_true_of_every_reachable_state() -> None:
    """The clauses are checked by z3 before they are shown; here they are checked
    again against the explicit states, by reading them back as Python."""
    found = pdr(Counters(jump=False), BitCounters(jump=False), [B_BOUNDED])
    reachable = [(i, i) for i in range(LIMIT + 1)]  # the counters move together
    for a, b in reachable:
        for clause in found.invariant:
            text = clause.replace("a_pdr_x", str(a)).replace("b_pdr_x", str(b))
            assert eval(_as_python(text)), (clause, a, b)


def _as_python(text: str) -> str:
    return text.replace(" = ", " == ")


def test_pdr_reports_the_jump_as_a_counterexample_the_explicit_model_replays() -> None:
    explicit, symbolic = Counters(jump=True), BitCounters(jump=True)
    found = pdr(explicit, symbolic, [B_BOUNDED])
    assert found.status == "violated" and found.violation is not None
    trace = found.violation.trace
    assert trace[0].state == (0, 0) and b_bounded(trace[-1].state) is not None
    for before, after in zip(trace, trace[1:], strict=False):
        assert explicit.next_state(before.state, after.action) == after.state
    # Confirmed by BMC at the shortest depth (BFS's, test_prove): 4 steps.
    assert found.violation.length == 5 <= found.pdr_length and found.shortened
    assert [step.action.name for step in trace[1:]] == ["step"] * 3 + ["jump"]


def test_ctrl_c_in_the_confirming_bmc_keeps_pdrs_own_counterexample(monkeypatch) -> None:
    """Ctrl-C while BMC looks for a shorter trace: PDR's replayed one is reported, marked
    as not shortened (before, the missing BMC trace was taken for an encoding error)."""
    monkeypatch.setattr(pdr_module, "bmc", lambda *a, **k: BmcResult("interrupted", 0, -1, 0.0))
    found = pdr(Counters(jump=True), BitCounters(jump=True), [B_BOUNDED])
    assert found.status == "violated" and not found.shortened
    assert found.violation is not None and found.violation.length == found.pdr_length
    assert b_bounded(found.violation.trace[-1].state) is not None


def test_a_wrong_encoding_is_caught_not_reported_as_a_finding() -> None:
    wrong = BitCounters(jump=True, wrong=True)
    b_at_most_4 = Property("b-le-4", lambda s: s[1] <= 4, lambda st: None)
    with pytest.raises(EncodingMismatch):
        pdr(Counters(jump=True), wrong, [b_at_most_4])


def test_a_seed_lemma_is_used_when_inductive_and_dropped_when_false() -> None:
    same = Lemma("a-equals-b", "both counters move together", lambda s: s[0] == s[1])
    false = Lemma("a-is-zero", "not true after one step", lambda s: s[0] == 0)
    found = pdr(Counters(jump=False), BitCounters(jump=False), [B_BOUNDED], seeds=[same, false])
    assert found.status == "proved"
    assert found.seeds_used == ["a-equals-b"]


def test_a_time_limit_stops_pdr_with_its_status() -> None:
    found = pdr(Counters(jump=False), BitCounters(jump=False), [B_BOUNDED], time_limit=0)
    assert found.status == "timeout" and not found.invariant
