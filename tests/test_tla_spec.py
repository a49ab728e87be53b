"""replcheck.model.tla.spec against TLC's numbers for hachikuji/kafka-specification.

The distinct-state counts (2 replicas, LogSize 2, MaxRecords 2, MaxLeaderEpoch 3,
whole reachable space, no symmetry) and the 3-replica WeakIsr trace lengths are
TLC's.  The counting loop is written here rather than taken from checker.explicit.bfs,
which stops once every invariant it checks is violated.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass, field

import pytest

from replcheck.checker.explicit.bfs import bfs
from replcheck.invariants.tla import TLA_INVARIANTS, leader_in_isr, type_ok
from replcheck.model.interface import Action
from replcheck.model.tla.spec import ACTION_PARAMS, NEXT, VARIANTS, TlaKafkaSpec

# TLC, 2 replicas, LogSize 2, MaxRecords 2, MaxLeaderEpoch 3, no symmetry.
TLC_DISTINCT_STATES = {
    "hw": 62_855,  # KafkaTruncateToHighWatermark
    "kip101": 53_413,
    "kip279": 53_099,
    "kip320": 28_939,
}

# TLC, 3 replicas, same bounds: states in the first WeakIsr counterexample.
TLC_WEAK_ISR_TRACE = {"hw": 9, "kip101": 11, "kip279": 11}

BY_ID = {inv.id: inv for inv in TLA_INVARIANTS}


def spec(variant: str, replicas: int = 2) -> TlaKafkaSpec:
    return TlaKafkaSpec(variant, replicas, log_size=2, max_records=2, max_leader_epoch=3)


@dataclass
class Explored:
    """What one breadth-first pass saw: distinct fingerprints, the first depth (states
    in the trace, the initial one included) at which each invariant failed, and the
    action names that fired."""

    distinct: int
    first_violation: dict[str, int] = field(default_factory=dict)
    fired: set[str] = field(default_factory=set)


def explore(model: TlaKafkaSpec, stop_at: str | None = None) -> Explored:
    """BFS keyed by hash(state), as the checker fingerprints; stops after the level
    where ``stop_at`` first fails, else runs to the end of the reachable space."""
    seen: dict[int, Hashable] = {}
    out = Explored(0)

    def visit(state: Hashable, depth: int) -> bool:
        fp = hash(state)
        if fp in seen:
            assert seen[fp] == state, "fingerprint collision"
            return False
        seen[fp] = state
        for inv in TLA_INVARIANTS:
            if inv.id not in out.first_violation and inv.check(state) is not None:
                out.first_violation[inv.id] = depth
        return True

    frontier = [s for s in model.init_states() if visit(s, 1)]
    depth = 1
    while frontier and (stop_at is None or stop_at not in out.first_violation):
        depth += 1
        next_level = []
        for state in frontier:
            for action in model.actions(state):
                out.fired.add(action.name)
                succ = model.next_state(state, action)
                if visit(succ, depth):
                    next_level.append(succ)
        frontier = next_level
    out.distinct = len(seen)
    return out


@pytest.fixture(scope="module")
def two_replicas() -> dict[str, Explored]:
    """Each variant's whole 2-replica space, explored once for the tests below."""
    return {variant: explore(spec(variant)) for variant in VARIANTS}


@pytest.mark.parametrize("variant", VARIANTS)
def test_distinct_states_match_tlc(two_replicas: dict[str, Explored], variant: str) -> None:
    assert two_replicas[variant].distinct == TLC_DISTINCT_STATES[variant]


@pytest.mark.parametrize("variant", VARIANTS)
def test_type_ok_in_every_reachable_state(two_replicas: dict[str, Explored], variant: str) -> None:
    assert "type-ok" not in two_replicas[variant].first_violation


@pytest.mark.parametrize("variant", VARIANTS)
def test_every_next_disjunct_fires(two_replicas: dict[str, Explored], variant: str) -> None:
    assert two_replicas[variant].fired == set(NEXT[variant])


def test_kip320_holds_its_isr_theorems(two_replicas: dict[str, Explored]) -> None:
    """Kip320.tla states THEOREM Spec => []WeakIsr and => []StrongIsr; at 2 replicas the
    whole space bears them out (LeaderInIsr, also stated, is false in Init: below)."""
    assert "weak-isr" not in two_replicas["kip320"].first_violation
    assert "strong-isr" not in two_replicas["kip320"].first_violation


@pytest.mark.parametrize("variant", VARIANTS)
def test_leader_in_isr_is_false_in_init(two_replicas: dict[str, Explored], variant: str) -> None:
    """Init has quorumState.leader = None, which is in no ISR."""
    assert two_replicas[variant].first_violation["leader-in-isr"] == 1
    (init,) = spec(variant).init_states()
    assert leader_in_isr(init) is not None
    assert type_ok(init) is None


@pytest.mark.parametrize("variant", sorted(TLC_WEAK_ISR_TRACE))
def test_first_weak_isr_violation_on_three_replicas(variant: str) -> None:
    found = explore(spec(variant, replicas=3), stop_at="weak-isr")
    assert found.first_violation["weak-isr"] == TLC_WEAK_ISR_TRACE[variant]


def test_checker_bfs_rebuilds_the_hw_counterexample() -> None:
    """The model plugs into checker.explicit.bfs: the rebuilt trace replays and fails WeakIsr
    last."""
    result = bfs(spec("hw", replicas=3), [BY_ID["weak-isr"]], symmetry=False)
    violation = result.violations["weak-isr"]
    assert violation.length == TLC_WEAK_ISR_TRACE["hw"]
    assert BY_ID["weak-isr"].check(violation.trace[-1].state) is not None
    assert all(BY_ID["weak-isr"].check(step.state) is None for step in violation.trace[:-1])


def _ints_and_tuples(value: object) -> bool:
    if isinstance(value, tuple):
        return all(_ints_and_tuples(v) for v in value)
    return type(value) is int


def test_states_are_ints_and_tuples_and_actions_name_their_args() -> None:
    model = spec("kip320", replicas=3)
    frontier = model.init_states()
    for _ in range(6):
        next_level = []
        for state in frontier[:200]:
            assert _ints_and_tuples(state)
            rep = model.representative(state)
            assert model.representative(rep) == rep
            for action in model.actions(state):
                assert isinstance(action, Action)
                params = model.action_params(action)
                assert list(params) == list(ACTION_PARAMS[action.name])
                assert all(type(v) is int for v in params.values())
                next_level.append(model.next_state(state, action))
        frontier = next_level
    assert frontier


def test_unknown_variant_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown variant"):
        TlaKafkaSpec("kip999", 2, 2, 2, 3)
