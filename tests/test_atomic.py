"""The coarse model (--atomic) is the message-level model with each response handled at once.

For states the coarse model reaches, every coarse step is realised at message level:
a ``fetch`` by its request immediately followed by its response, a ``truncate`` by
epoch requests each immediately answered until the follower is done, and every other
action by itself, with the same successor.  By induction every coarse execution is a
message-level execution, so a coarse violation is always a message-level one too.
The coarse ``fetch`` is built from the two message steps; ``truncate`` runs the whole
exchange in one function (``model.kafka.epochs.whole_exchange``), and the guards of every
action are shared, so those are what this test guards (a shifted truncation point in
``whole_exchange`` fails it).
"""

from __future__ import annotations

import pytest

from replcheck.model import KafkaReplication, make_config
from replcheck.model.interface import Action
from replcheck.model.kafka.state import MUST_TRUNCATE, NOTHING_IN_FLIGHT
from tests.conftest import walk_states

CONFIGS = [
    dict(mode=release, replicas=2, records=2, epochs=3, crashes=1)
    for release in ("0.10.2", "1.1.1", "2.0.0", "2.0.1", "2.1.0", "2.1.1", "2.2.0", "2.4.0")
] + [
    dict(mode="1.1.1", replicas=3, records=2, epochs=4, crashes=2, unclean_election=True),
    dict(mode="2.0.1", replicas=3, records=2, epochs=4, crashes=1, controller_failover=True),
    dict(mode="2.1.0", replicas=2, records=2, epochs=4, crashes=2, lossy_crash=True),
]


def realise(fine: KafkaReplication, state, action: Action):
    """The coarse ``action`` as message-level steps from ``state``; their end state."""

    def step(s, name: str, *args: int):
        a = Action(name, args)
        assert a in list(fine.actions(s)), f"{a} not enabled at message level for {action}"
        return fine.next_state(s, a)

    if action.name == "fetch":
        follower, leader = action.args
        state = step(state, "fetch_request", follower, leader)
        return step(state, "fetch_response", follower)
    if action.name == "truncate":
        follower, leader = action.args
        for _ in range(10):  # KIP-279 asks again until both sides name the same epoch
            if state.replicas[follower].truncation != MUST_TRUNCATE:
                return state
            state = step(state, "epoch_request", follower, leader)
            if state.replicas[follower].inflight != NOTHING_IN_FLIGHT:
                state = step(state, "epoch_response", follower)
        raise AssertionError(f"{action}: the exchange did not finish")
    return step(state, action.name, *action.args)


@pytest.mark.parametrize("values", CONFIGS, ids=lambda v: " ".join(f"{k}={v[k]}" for k in v))
def test_every_coarse_step_is_a_request_and_its_immediate_response(values):
    coarse = KafkaReplication(make_config({**values, "atomic": True}))
    fine = KafkaReplication(make_config({**values, "atomic": False}))
    states = walk_states(coarse, walks=150, depth=30, seed=7)
    assert len(states) > 300
    kinds = set()
    for state in states:
        assert all(r.inflight == NOTHING_IN_FLIGHT for r in state.replicas)
        for action in coarse.actions(state):
            kinds.add(action.name)
            assert realise(fine, state, action) == coarse.next_state(state, action), action
    assert "fetch" in kinds  # the check saw the steps it is about
    if values["mode"] != "0.10.2":
        assert "truncate" in kinds
