"""The invariants of invariants/kafka/predicates.py as z3 terms over a symbolic state.

``Z3_INVARIANTS[id](model, s)`` is true exactly when the explicit invariant of
the same id holds (returns None) in the state ``s`` stands for;
tests/test_symbolic_kafka.py checks that on every state it reaches.  Each
function's docstring names the explicit one it mirrors, which says why the
property matters.
"""

from __future__ import annotations

from collections.abc import Callable

import z3

from replcheck.invariants.kafka.predicates import INVARIANTS
from replcheck.model.kafka.state import MUST_TRUNCATE, NO_LEADER, TRUNCATED
from replcheck.model.kafka.symbolic.replication import KafkaSymbolic
from replcheck.model.kafka.symbolic.state import SymReplica, SymState

Z3Invariant = Callable[[KafkaSymbolic, SymState], z3.BoolRef]


def _same_record(a: tuple, k: int, b: tuple, m: int) -> z3.BoolRef:
    """Slot ``k`` of log ``a`` holds the record in slot ``m`` of log ``b`` ((eps, ids) pairs)."""
    return z3.And(a[0][k] == b[0][m], a[1][k] == b[1][m])


def _log(r: SymReplica) -> tuple:
    return r.log_ep, r.log_id


def _prefixes_equal(a: SymReplica, b: SymReplica, upto: object, records: int) -> z3.BoolRef:
    """``a.log[:upto] == b.log[:upto]`` (both logs' lengths taken into account)."""
    la, lb = a.log_len, b.log_len
    length_a = z3.If(upto < la, upto, la)
    length_b = z3.If(upto < lb, upto, lb)
    same = [length_a == length_b]
    for k in range(records):
        same.append(z3.Implies(k < length_a, _same_record(_log(a), k, _log(b), k)))
    return z3.And(*same)


def _under_true_leader(
    model: KafkaSymbolic, s: SymState, holds: Callable[[int, SymReplica], z3.BoolRef]
) -> z3.BoolRef:
    """True when there is no true leader, else ``holds`` of it."""
    return z3.And(
        *[
            z3.Implies(is_leader, holds(j, s.replicas[j]))
            for j, is_leader in enumerate(model.true_leaders(s))
        ]
    )


def hw_le_leo(model: KafkaSymbolic, s: SymState) -> z3.BoolRef:
    """Mirrors invariants.kafka.predicates.hw_le_leo."""
    return z3.And(*[z3.Implies(r.alive, r.hw <= r.log_len) for r in s.replicas])


def no_committed_data_loss(model: KafkaSymbolic, s: SymState) -> z3.BoolRef:
    """Mirrors invariants.kafka.predicates.no_committed_data_loss."""
    committed = (s.committed_ep, s.committed_id)

    def holds(_j: int, lead: SymReplica) -> z3.BoolRef:
        kept = []
        for k in range(model.records):
            present = z3.And(k < lead.log_len, _same_record(_log(lead), k, committed, k))
            kept.append(z3.Implies(k < s.committed_len, present))
        return z3.And(*kept)

    return _under_true_leader(model, s, holds)


def _settled(r: SymReplica) -> z3.BoolRef:
    """Mirrors invariants.kafka.predicates._settled."""
    return z3.And(r.alive, r.leader != NO_LEADER, r.truncation != MUST_TRUNCATE)


def consistent_logs(model: KafkaSymbolic, s: SymState) -> z3.BoolRef:
    """Mirrors invariants.kafka.predicates.consistent_logs."""
    reps = s.replicas
    facts = []
    for i, a in enumerate(reps):
        for j in range(i + 1, len(reps)):
            b = reps[j]
            upto = model.mn(a.hw, b.hw, a.log_len, b.log_len)
            agree = z3.And(
                *[
                    z3.Implies(k < upto, _same_record(_log(a), k, _log(b), k))
                    for k in range(model.records)
                ]
            )
            facts.append(z3.Implies(z3.And(_settled(a), _settled(b)), agree))
    for i, f in enumerate(reps):
        fetching = z3.And(f.alive, f.truncation == TRUNCATED, f.leader >= 0, f.leader != i)
        for j, lead in enumerate(reps):
            if j == i:
                continue
            of_epoch = z3.And(f.leader == j, lead.alive, lead.leader == j, lead.epoch == f.epoch)
            prefix = z3.And(
                f.log_len <= lead.log_len,
                *[
                    z3.Implies(k < f.log_len, _same_record(_log(f), k, _log(lead), k))
                    for k in range(model.records)
                ],
            )
            facts.append(z3.Implies(z3.And(fetching, of_epoch), prefix))
    return z3.And(*facts)


def acked_writes_durable(model: KafkaSymbolic, s: SymState) -> z3.BoolRef:
    """Mirrors invariants.kafka.predicates.acked_writes_durable."""

    def holds(_j: int, lead: SymReplica) -> z3.BoolRef:
        durable = []
        for rid, acked in enumerate(s.acked, start=1):
            present = z3.Or(
                *[z3.And(k < lead.log_len, lead.log_id[k] == rid) for k in range(model.records)]
            )
            durable.append(z3.Implies(acked, present))
        return z3.And(*durable)

    return _under_true_leader(model, s, holds)


def leader_in_isr(model: KafkaSymbolic, s: SymState) -> z3.BoolRef:
    """Mirrors invariants.kafka.predicates.leader_in_isr."""
    return z3.Implies(s.ctrl_leader >= 0, model.has(s.ctrl_isr, s.ctrl_leader))


def strong_isr(model: KafkaSymbolic, s: SymState) -> z3.BoolRef:
    """Mirrors invariants.kafka.predicates.strong_isr."""

    def holds(j: int, lead: SymReplica) -> z3.BoolRef:
        return z3.And(
            *[
                z3.Implies(
                    z3.And(s.ctrl_isr[m], _settled(s.replicas[m])),
                    _prefixes_equal(s.replicas[m], lead, lead.hw, model.records),
                )
                for m in model.ids
                if m != j
            ]
        )

    return _under_true_leader(model, s, holds)


def follower_hw_committed(model: KafkaSymbolic, s: SymState) -> z3.BoolRef:
    """Mirrors invariants.kafka.predicates.follower_hw_committed."""

    def holds(j: int, lead: SymReplica) -> z3.BoolRef:
        facts = []
        for i, r in enumerate(s.replicas):
            if i == j:
                continue
            for k in range(model.records):
                exposed = z3.And(r.alive, k < r.hw, k < r.log_len)
                kept = z3.And(k < lead.log_len, _same_record(_log(r), k, _log(lead), k))
                facts.append(z3.Implies(exposed, kept))
        return z3.And(*facts)

    return _under_true_leader(model, s, holds)


def hw_monotonic(model: KafkaSymbolic, s: SymState) -> z3.BoolRef:
    """Mirrors invariants.kafka.predicates.hw_monotonic."""

    def holds(_j: int, lead: SymReplica) -> z3.BoolRef:
        hidden = z3.And(s.hides_stale_hw, lead.hw < lead.epoch_start)
        return z3.Or(lead.hw >= s.committed_len, hidden)

    return _under_true_leader(model, s, holds)


Z3_INVARIANTS: dict[str, Z3Invariant] = {
    "no-committed-data-loss": no_committed_data_loss,
    "acked-writes-durable": acked_writes_durable,
    "consistent-logs": consistent_logs,
    "hw-le-leo": hw_le_leo,
    "strong-isr": strong_isr,
    "leader-in-isr": leader_in_isr,
    "follower-hw-committed": follower_hw_committed,
    "hw-monotonic": hw_monotonic,
}

assert list(Z3_INVARIANTS) == [inv.id for inv in INVARIANTS]
