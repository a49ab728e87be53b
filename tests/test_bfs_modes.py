"""BFS verdicts per mode on 2 replicas at the default bounds, with the reason for each."""

from __future__ import annotations

import pytest

from checker.bfs import bfs
from invariants import INVARIANTS, select
from model import KafkaReplication, make_config

BOUNDS = dict(replicas=2, records=2, epochs=3, crashes=1)

EXPECTED = {
    # 0.10: a restarted follower truncates to its lagging HW on becoming
    # follower, then is elected: committed and acknowledged m1 are gone, and the
    # ISR member held less than the leader's HW.  A zombie leader that later
    # truncates to its HW leaves a follower with a record the leader lacks.
    "hw": {
        "no-committed-data-loss": 9,
        "acked-writes-durable": 9,
        "consistent-logs": 9,
        "strong-isr": 7,
    },
    # KIP-101/279: a new leader has not cached its epoch, so a follower whose
    # latest epoch is newer than the leader's gets no answer and falls back to
    # its HW, truncating a committed record while it is in the ISR (KAFKA-7415).
    # Losing it needs one more election than these bounds allow.
    "kip101": {"strong-isr": 12},
    "kip279": {"strong-isr": 12},
    # KIP-320 (+ KIP-380): every property holds at these bounds.
    "kip320": {},
}


@pytest.mark.parametrize("mode", list(EXPECTED))
def test_verdicts_per_mode(mode):
    result = bfs(KafkaReplication(make_config({**BOUNDS, "mode": mode})), INVARIANTS)
    assert result.exhaustive
    got = {inv: v.length for inv, v in result.violations.items()}
    assert got == EXPECTED[mode]


def test_bfs_finds_the_seed_data_loss_by_itself():
    """2 replicas, 1 record, one crash and its restart: the seeds' story, found unaided."""
    config = make_config(dict(mode="hw", replicas=2, records=1, epochs=2, crashes=1))
    result = bfs(KafkaReplication(config), select(["no-committed-data-loss"]))
    violation = result.violations["no-committed-data-loss"]
    names = [step.action.name for step in violation.trace[1:]]
    assert names == ["write", "fetch", "fetch", "crash", "restart", "deliver", "elect", "deliver"]
    final = violation.trace[-1].state
    assert final.committed and final.replicas[final.ctrl_leader].log == ()


def test_counterexample_is_a_real_execution():
    """Each step of a rebuilt trace is enabled in the state before it."""
    config = make_config(dict(mode="hw"))
    model = KafkaReplication(config)
    result = bfs(model, INVARIANTS)
    for violation in result.violations.values():
        for before, after in zip(violation.trace, violation.trace[1:], strict=False):
            assert after.action in list(model.actions(before.state))
            assert model.next_state(before.state, after.action) == after.state


def test_max_states_stops_early_and_says_so():
    model = KafkaReplication(make_config(dict(mode="kip320")))
    result = bfs(model, INVARIANTS, max_states=500)
    assert result.status == "max-states"
    assert not result.exhaustive
    assert 500 <= result.distinct_states < 2000
