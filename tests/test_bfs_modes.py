"""BFS verdicts per mode on 2 replicas at the default bounds, with the reason for each."""

from __future__ import annotations

import pytest

from replcheck.checker.explicit.bfs import bfs
from replcheck.invariants import INVARIANTS, select
from replcheck.model import KafkaReplication, make_config
from tests.conftest import reachable

BOUNDS = dict(replicas=2, records=2, epochs=3, crashes=1)

EXPECTED = {
    # 0.10: a restarted replica truncates to its lagging HW on becoming follower,
    # then is elected: committed and acknowledged m1 are gone (KAFKA-1211), the
    # ISR member held less than the leader's HW, and a follower exposed a record
    # below its HW that the partition did not keep.
    "hw": {
        "no-committed-data-loss": 11,
        "acked-writes-durable": 11,
        "consistent-logs": 10,
        "strong-isr": 10,
        "follower-hw-committed": 12,
    },
    # KIP-101/279: a follower asks a leader that has not reached its epoch (KIP-320
    # rule 2) and falls back to its lagging HW, truncating a committed record
    # while it is in the ISR.  Losing it needs one more election than these bounds.
    "kip101": {"strong-isr": 14},
    "kip279": {"strong-isr": 14},
    # KIP-320: every default property holds at these bounds.
    "kip320": {},
}


@pytest.mark.parametrize("mode", list(EXPECTED))
def test_verdicts_per_mode(mode):
    result = bfs(KafkaReplication(make_config({**BOUNDS, "mode": mode})), select(None))
    assert result.exhaustive
    got = {inv: v.length for inv, v in result.violations.items()}
    assert got == EXPECTED[mode]


def test_bfs_finds_the_seed_data_loss_by_itself():
    """2 replicas, 1 record, one crash and its restart: the seeds' story, found unaided.

    The restart goes unnoticed (before KIP-380 a quick bounce often does), so the
    restarted leader truncates to its checkpointed HW only when the next leader
    change makes it a follower; two elections later it leads without m1.
    """
    config = make_config(dict(mode="hw", replicas=2, records=1, epochs=3, crashes=1))
    result = bfs(KafkaReplication(config), select(["no-committed-data-loss"]))
    violation = result.violations["no-committed-data-loss"]
    names = [step.action.name for step in violation.trace[1:]]
    assert names == [
        "write",
        "fetch_request",
        "fetch_response",
        "fetch_request",
        "crash",
        "restart",
        "elect",
        "deliver",
        "elect",
        "deliver",
    ]
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


@pytest.mark.parametrize(
    "values",
    [
        {"mode": "0.10.2", "records": 1, "epochs": 2},
        {"mode": "0.10.2", "records": 1, "epochs": 2, "atomic": True},
        {"mode": "2.1.0", "records": 1, "epochs": 2},
        {"mode": "2.1.0", "records": 1, "epochs": 2, "atomic": True},
        {"mode": "3.4.0", "records": 1, "epochs": 2},
    ],
)
def test_every_listed_action_kind_can_fire(values):
    """Coverage reports and the z3 encoding's instances follow action_kinds(); a kind
    listed there that no reachable state enables would be reported as never covered."""
    model = KafkaReplication(make_config(values))
    fired = {action.name for state in reachable(model) for action in model.actions(state)}
    assert fired == set(model.action_kinds())
