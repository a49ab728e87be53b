"""Symmetry reduction may shrink the search, but never changes a verdict."""

from __future__ import annotations

import random

import pytest

from replcheck.checker.explicit.bfs import bfs
from replcheck.invariants import INVARIANTS
from replcheck.model import KafkaReplication, make_config
from replcheck.model.kafka.symmetry import (
    NAMES_FROM,
    all_renamings,
    canonical,
    rename,
    representative,
)
from replcheck.traces.replay import execute
from tests.conftest import reachable


@pytest.mark.parametrize(
    "values",
    [
        dict(mode="hw", replicas=2, records=2, epochs=3, crashes=1),
        dict(mode="kip101", replicas=2, records=2, epochs=3, crashes=1),
        dict(mode="kip320", replicas=2, records=2, epochs=2, crashes=1, lossy_crash=True),
        pytest.param(
            dict(mode="hw", replicas=3, records=1, epochs=2, crashes=1), marks=pytest.mark.slow
        ),
        # Over 100 s here: heavy; the slow run checks 3 replicas on hw above.
        pytest.param(
            dict(mode="kip279", replicas=3, records=1, epochs=3, crashes=0),
            marks=[pytest.mark.slow, pytest.mark.heavy],
        ),
        # 3 replicas, fast enough for every run: 3! namings of the same states
        dict(mode="kip320", replicas=3, records=1, epochs=2, crashes=0),
    ],
)
def test_symmetry_never_changes_a_verdict(values):
    model = KafkaReplication(make_config(values))
    with_sym = bfs(model, INVARIANTS, symmetry=True)
    without = bfs(model, INVARIANTS, symmetry=False)
    assert with_sym.exhaustive and without.exhaustive
    assert with_sym.distinct_states <= without.distinct_states
    assert {k: v.length for k, v in with_sym.violations.items()} == {
        k: v.length for k, v in without.violations.items()
    }


def _random_states(values, count=200, length=25, seed=7):
    model = KafkaReplication(make_config(values))
    rng = random.Random(seed)
    for _ in range(count):
        state = model.init_states()[0]
        for _ in range(length):
            options = list(model.actions(state))
            if not options:
                break
            state = model.next_state(state, rng.choice(options))
        yield model, state


def test_representative_is_a_renaming_and_a_fixed_point():
    for model, state in _random_states(dict(mode="kip320", replicas=3, records=3, crashes=2)):
        rep = representative(state)
        assert rep in {rename(state, order) for order in all_renamings(3)}
        assert representative(rep) == rep
        # Renamed states act alike: the same number of enabled actions.
        assert len(list(model.actions(rep))) == len(list(model.actions(state)))


def test_invariants_do_not_depend_on_replica_names():
    for _, state in _random_states(dict(mode="hw", replicas=3, records=3, crashes=2)):
        for order in all_renamings(3):
            renamed = rename(state, order)
            for inv in INVARIANTS:
                assert (inv(state) is None) == (inv(renamed) is None)


def _renamed_mask(mask: int, position: dict[int, int]) -> int:
    return sum(1 << position[i] for i in range(len(position)) if mask >> i & 1)


def test_renaming_commutes_with_steps():
    """The transition relation is symmetric: rename-then-step equals step-then-rename."""
    model = KafkaReplication(make_config(dict(mode="kip279", replicas=3, records=2, crashes=1)))
    order = (2, 0, 1)
    position = {old: new for new, old in enumerate(order)}
    for _, state in _random_states(dict(mode="kip279", replicas=3, records=2, crashes=1), 50):
        for action in model.actions(state):
            params = model.action_params(action)
            mapped_args = tuple(
                _renamed_mask(v, position)
                if name == "followers"
                else position[v]
                if name != "keep" and v >= 0
                else v
                for name, v in params.items()
            )
            renamed_action = type(action)(action.name, mapped_args)
            after = execute(model, [renamed_action], start=rename(state, order))[-1][1]
            assert after == rename(model.next_state(state, action), order)


def _ties(state) -> bool:
    """Two replicas hold the same, up to the fields that name replicas."""
    held = [r[:NAMES_FROM] for r in state.replicas]
    return len(set(held)) < len(held)


@pytest.mark.parametrize(
    "values",
    [
        dict(mode="4.1.0", replicas=3, records=2, crashes=2),  # KRaft, ELR, AlterPartition
        dict(mode="2.1.0", replicas=3, records=2, crashes=2, unclean_election=True),
        dict(mode="hw", replicas=2, records=2, crashes=2, controller_failover=True),
    ],
)
def test_canonical_is_the_same_member_for_the_whole_orbit(values):
    model = KafkaReplication(make_config(values))
    init = model.init_states()[0]
    states = [init] + [model.next_state(init, a) for a in model.actions(init)]
    states += [state for _, state in _random_states(values)]
    renamings = all_renamings(model.n)
    for state in states:
        canon = canonical(state)
        assert canon in {rename(state, order) for order in renamings}
        assert {canonical(rename(state, order)) for order in renamings} == {canon}
        assert canonical(canon) == canon
    if model.n == 3:  # the tie-breaking path is exercised (the initial followers tie)
        assert any(_ties(state) for state in states)


def test_canonical_counts_orbits():
    """A search reduced by ``canonical`` visits one state per orbit of the reachable set
    (counted here by listing each orbit); ``representative`` keeps a few more."""
    model = KafkaReplication(
        make_config(dict(mode="kip320", replicas=3, records=1, epochs=1, crashes=1))
    )
    states = reachable(model)
    renamings = all_renamings(3)
    orbits = len({frozenset(rename(s, order) for order in renamings) for s in states})
    assert (len(states), orbits) == (4_902, 2_554)
    assert len({canonical(s) for s in states}) == orbits
    assert len({representative(s) for s in states}) == 2_567
    assert bfs(model, INVARIANTS, symmetry=True).distinct_states == 2_558
    model.representative = canonical
    assert bfs(model, INVARIANTS, symmetry=True).distinct_states == orbits
