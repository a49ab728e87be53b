"""Exact symmetry for the TLA+ spec: one state per orbit under Permutations(Replicas).

The reduced count is checked against Burnside's lemma on the unreduced reachable
set: the number of orbits is the average, over the renamings, of the states each
renaming leaves unchanged.  That holds because the reachable set is closed under
renaming (Init is symmetric and every action treats replicas alike).
"""

from __future__ import annotations

import random
from collections.abc import Hashable

import pytest

from replcheck.checker.explicit.bfs import bfs
from replcheck.invariants.tla import TLA_INVARIANTS
from replcheck.model.tla.spec import TlaKafkaSpec
from tests.conftest import reachable

WEAK_ISR = next(inv for inv in TLA_INVARIANTS if inv.id == "weak-isr")
TYPE_OK = next(inv for inv in TLA_INVARIANTS if inv.id == "type-ok")  # holds everywhere


def burnside(model: TlaKafkaSpec, states: set[Hashable]) -> int:
    fixed = sum(1 for order in model.renamings for s in states if model._rename(s, order) == s)
    assert fixed % len(model.renamings) == 0
    return fixed // len(model.renamings)


CASES = [
    ("kip320", 2, 2, 2, 3),  # the TLC bounds
    ("hw", 2, 2, 2, 3),
    ("kip279", 3, 1, 1, 1),  # 3 replicas: six renamings
]


@pytest.mark.parametrize(("variant", "replicas", "log_size", "records", "epochs"), CASES)
def test_reduced_count_is_the_number_of_orbits(
    variant: str, replicas: int, log_size: int, records: int, epochs: int
) -> None:
    model = TlaKafkaSpec(variant, replicas, log_size, records, epochs)
    states = reachable(model)
    orbits = burnside(model, states)
    assert orbits < len(states)
    assert len({model.representative(s) for s in states}) == orbits
    assert bfs(model, [TYPE_OK], symmetry=True).distinct_states == orbits
    assert bfs(model, [TYPE_OK], symmetry=False).distinct_states == len(states)


def test_every_member_of_an_orbit_has_the_same_representative() -> None:
    model = TlaKafkaSpec("kip279", 3, 1, 1, 1)
    states = sorted(reachable(model))
    for s in random.Random(7).sample(states, 300):
        rep = model.representative(s)
        assert rep in {model._rename(s, order) for order in model.renamings}
        assert {model.representative(model._rename(s, o)) for o in model.renamings} == {rep}


def test_symmetry_keeps_the_shortest_counterexample() -> None:
    """The HW spec's WeakIsr loss on 3 replicas is 9 states long either way (TLC: 9)."""
    model = TlaKafkaSpec("hw", 3, 2, 2, 3)
    reduced = bfs(model, [WEAK_ISR], symmetry=True).violations["weak-isr"]
    assert reduced.length == 9
    assert WEAK_ISR.check(reduced.trace[-1].state) is not None
    assert all(WEAK_ISR.check(step.state) is None for step in reduced.trace[:-1])
