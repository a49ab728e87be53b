"""BMC against BFS on the Kafka model: the cross-check matrix.

For each release and small bounds, BMC to depth K finds a violation of an
invariant exactly when BFS's shortest counterexample has at most K steps, and at
the same depth; every other invariant is cleared to K.  BMC's counterexamples
are replayed through the explicit model by the engine itself, so a disagreement
between the encoding and the model fails here too.
"""

from __future__ import annotations

import pytest

from replcheck.checker.explicit.bfs import bfs
from replcheck.checker.symbolic.prove import Property, bmc
from replcheck.invariants import INVARIANTS
from replcheck.invariants.kafka.symbolic import Z3_INVARIANTS
from replcheck.model.kafka.config import make_config
from replcheck.model.kafka.replication import KafkaReplication
from replcheck.model.kafka.symbolic.replication import KafkaSymbolic

# Small bounds where unclean election loses data within a few steps, so both
# outcomes (violated at depth d <= K, cleared to K) occur in one run.
BOUNDS = {"records": 1, "epochs": 2, "unclean_election": True}
DEPTH = 6
FAST = ["0.10.2", "2.1.0", "4.1.0"]
SLOW = ["1.1.1", "2.0.0", "2.7.0", "2.8.0", "3.4.0", "3.5.0"]


def cross_check(keys: dict, depth: int) -> None:
    config = make_config(keys)
    explicit = KafkaReplication(config)
    by_bfs = bfs(explicit, INVARIANTS)
    assert by_bfs.exhaustive
    symbolic = KafkaSymbolic(config, sort="bv")
    props = [
        Property(inv.id, lambda s, f=Z3_INVARIANTS[inv.id]: f(symbolic, s), inv.check)
        for inv in INVARIANTS
    ]
    by_bmc = bmc(explicit, symbolic, props, depth)
    for inv in INVARIANTS:
        shortest = by_bfs.violations.get(inv.id)
        found = by_bmc.violations.get(inv.id)
        if shortest is not None and shortest.length - 1 <= depth:
            assert found is not None, f"{inv.id}: BFS breaks it in {shortest.length - 1} steps"
            assert found.length == shortest.length, inv.id
            assert inv.check(found.trace[-1].state) is not None
            assert all(inv.check(step.state) is None for step in found.trace[:-1])
        else:
            assert found is None, f"{inv.id}: BMC breaks it, BFS does not within {depth}"
    if len(by_bmc.violations) < len(INVARIANTS):
        assert by_bmc.cleared == depth and by_bmc.status == "complete"


@pytest.mark.parametrize("release", FAST)
def test_bmc_agrees_with_bfs(release: str) -> None:
    cross_check({**BOUNDS, "mode": release}, DEPTH)


@pytest.mark.slow
@pytest.mark.parametrize("release", SLOW)
def test_bmc_agrees_with_bfs_on_more_releases(release: str) -> None:
    cross_check({**BOUNDS, "mode": release}, DEPTH)


@pytest.mark.parametrize(
    ("keys", "depth"),
    [
        # A replaced disk loses a committed record in 2.1.0 (9 steps; none without it).
        ({"mode": "2.1.0", "records": 1, "epochs": 2, "disk_loss": True}, 9),
        # A clean shutdown and a fence beside crashes, in KRaft with the ELR.
        (
            {
                "mode": "4.1.0",
                "records": 1,
                "epochs": 2,
                "clean_shutdown": True,
                "fencing": True,
                "unclean_election": True,
            },
            6,
        ),
    ],
    ids=["2.1.0-disk-loss", "4.1.0-clean-shutdown-fencing"],
)
def test_bmc_agrees_with_bfs_with_the_fault_options(keys: dict, depth: int) -> None:
    cross_check(keys, depth)


@pytest.mark.slow
def test_bmc_finds_the_seed_loss_at_the_depth_bfs_reports() -> None:
    """The seeds' scenario (hw, 2 replicas, one record): the loss takes 10 steps."""
    keys = {"mode": "hw", "records": 1}
    inv = next(i for i in INVARIANTS if i.id == "no-committed-data-loss")
    config = make_config(keys)
    explicit = KafkaReplication(config)
    shortest = bfs(explicit, [inv]).violations[inv.id]
    symbolic = KafkaSymbolic(config, sort="bv")
    prop = Property(inv.id, lambda s: Z3_INVARIANTS[inv.id](symbolic, s), inv.check)
    found = bmc(explicit, symbolic, [prop], shortest.length - 1).violations[inv.id]
    assert found.length == shortest.length == 11
