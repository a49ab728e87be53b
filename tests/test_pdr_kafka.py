"""IC3/PDR on the Kafka model against the other engines' verdicts (slow: minutes).

A catalogued bug must make the proof fail with a real counterexample at BFS's
depth; where k-induction with lemmas proves a pair of invariants, PDR proves it too.
"""

from __future__ import annotations

import pytest

import replcheck
from replcheck.checker.explicit.bfs import bfs
from replcheck.checker.suites.catalogue import load_catalogue
from replcheck.invariants import select
from replcheck.model.kafka.replication import KafkaReplication

pytestmark = pytest.mark.slow

BUGS = {entry.id: entry for entry in load_catalogue()}


# B2 (over 2 minutes here) is heavy: CI proves the same way on B3, and the catalogue
# checks B2's own BFS verdicts.
@pytest.mark.parametrize("bug", [pytest.param("B2", marks=pytest.mark.heavy), "B3"])
def test_a_catalogued_bug_fails_the_proof_at_the_depth_bfs_finds(bug: str) -> None:
    entry = BUGS[bug]
    release = entry.affected[0]  # 2.8.0 for both
    config = entry.config(release)
    proof = replcheck.prove(config, invariants=entry.invariant, pdr=True)
    assert proof.status == "violated" and not proof.holds
    shortest = proof.violations[entry.invariant]
    by_bfs = bfs(KafkaReplication(config), select([entry.invariant]))
    assert shortest.length == by_bfs.violations[entry.invariant].length
    assert proof.engine.pdr_length >= shortest.length


def test_the_release_after_the_fix_is_proved() -> None:
    """B3 is fixed in 3.4.1: at the entry's bounds PDR proves the invariant there."""
    entry = BUGS["B3"]
    proof = replcheck.prove(entry.config("3.4.1"), invariants=entry.invariant, pdr=True)
    assert proof.status == "proved" and proof.holds


# Heavy (about 3 minutes): CI proves with PDR on Kafka in test_the_release_after_the_fix_is_proved,
# the prove table's quick cells and test_prove_cli, and proves this pair by k-induction in
# test_kafka_lemmas.
@pytest.mark.heavy
def test_pdr_proves_what_k_induction_proves() -> None:
    pair = ["hw-le-leo", "consistent-logs"]
    by_induction = replcheck.prove(kafka="2.1.0", invariants=pair, induction=True, workers=1)
    by_pdr = replcheck.prove(kafka="2.1.0", invariants=pair, pdr=True)
    assert by_induction.status == by_pdr.status == "proved"
