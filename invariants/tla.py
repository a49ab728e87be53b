"""The invariants of hachikuji/kafka-specification's ``KafkaReplication`` module.

Predicates over a ``model.tla.spec.TlaState``, written as the spec writes them
(``TypeOk``, ``WeakIsr``, ``StrongIsr``, ``LeaderInIsr``), so that a search of
``model.tla.spec.TlaKafkaSpec`` finds the violations TLC finds.  Each returns
``None`` when the state satisfies it, else a one-line explanation.
"""

from __future__ import annotations

from replcheck.invariants.interface import Invariant, Verdict
from replcheck.model.tla.spec import NIL, NONE, TlaState, record_epoch, record_id, record_name


def _name(replica: int) -> str:
    return "None" if replica == NONE else f"r{replica}"


def _isr_name(mask: int, n: int) -> str:
    return "{" + ", ".join(f"r{i}" for i in range(n) if mask >> i & 1) + "}"


def type_ok(s: TlaState) -> Verdict:
    """``TypeOk``: every variable within its type, for the constants the state carries.

    ``FiniteReplicatedLog``'s "offsets at or beyond endOffset hold Nil" holds by the
    encoding (a log is the tuple of its written records), so what is left of
    ``ReplicaLog!TypeOk`` is ``endOffset \\in 0 .. LogSize`` and each written record in
    ``LogRecords``.
    """
    log_size, max_records, max_epoch = s.constants
    n = len(s.replica_state)
    all_mask = (1 << n) - 1
    # LeaderEpochSeq!TypeOk, RecordSeq!TypeOk: nextId \in IdSet \union {MaxId + 1}.
    if not 0 <= s.next_leader_epoch <= max_epoch + 1:
        return f"nextLeaderEpoch {s.next_leader_epoch} outside 0 .. {max_epoch + 1}"
    if not 0 <= s.next_record_id <= max_records:
        return f"nextRecordId {s.next_record_id} outside 0 .. {max_records}"
    for i, log in enumerate(s.replica_log):
        if len(log) > log_size:
            return f"r{i}'s endOffset {len(log)} is beyond LogSize {log_size}"
        for offset, record in enumerate(log):
            if not (
                0 <= record_id(record) < max_records and 0 <= record_epoch(record) <= max_epoch
            ):
                return f"r{i} holds {record_name(record)} at offset {offset}, not in LogRecords"
    for i, r in enumerate(s.replica_state):
        if not 0 <= r.hw <= log_size:
            return f"r{i}'s hw {r.hw} outside 0 .. LogSize ({log_size})"
        if not NIL <= r.leader_epoch <= max_epoch:
            return f"r{i}'s leaderEpoch {r.leader_epoch} outside LeaderEpochOpt"
        if not NONE <= r.leader < n:
            return f"r{i}'s leader {r.leader} is not in ReplicaOpt"
        if r.isr & ~all_mask:
            return f"r{i}'s isr {r.isr:#b} is not a subset of Replicas"
    q = s.quorum_state
    if not (NIL <= q.leader_epoch <= max_epoch and NONE <= q.leader < n and not q.isr & ~all_mask):
        return f"quorumState {tuple(q)} is not in QuorumState"
    # leaderAndIsrRequests \subseteq QuorumState (a request's epoch is its index).
    for epoch, (leader, isr) in enumerate(s.leader_and_isr_requests):
        if not (epoch <= max_epoch and NONE <= leader < n and not isr & ~all_mask):
            return f"request {(epoch, leader, isr)} is not in QuorumState"
    return None


def _isr_holds_leader_records(s: TlaState, isr_of: str) -> Verdict:
    """The body of WeakIsr / StrongIsr: for every replica presuming leadership with a
    positive HW, every member of the chosen ISR holds the leader's record at each
    offset below that HW (``\\E record : HasEntry(r1, ...) /\\ HasEntry(r2, ...)``)."""
    logs = s.replica_log
    n = len(s.replica_state)
    for r1, state in enumerate(s.replica_state):
        if state.leader != r1 or state.hw == 0:
            continue
        hw = state.hw
        isr = state.isr if isr_of == "replica" else s.quorum_state.isr
        log1 = logs[r1]
        for r2 in range(n):
            if not isr >> r2 & 1:
                continue
            log2 = logs[r2]
            for offset in range(hw):
                if offset >= len(log1):
                    return (
                        f"leader r{r1} has HW {hw} but no record at offset {offset} "
                        f"(its endOffset is {len(log1)})"
                    )
                if offset >= len(log2) or log2[offset] != log1[offset]:
                    has = record_name(log2[offset]) if offset < len(log2) else "nothing"
                    where = "its ISR" if isr_of == "replica" else "the quorum ISR"
                    return (
                        f"leader r{r1} has HW {hw} and {record_name(log1[offset])} at offset "
                        f"{offset}, where r{r2} (in {where} {_isr_name(isr, n)}) has {has}"
                    )
    return None


def weak_isr(s: TlaState) -> Verdict:
    """``WeakIsr``: below a presumed leader's HW, the members of the ISR *it caches*
    hold its records."""
    return _isr_holds_leader_records(s, "replica")


def strong_isr(s: TlaState) -> Verdict:
    """``StrongIsr``: below a presumed leader's HW, the members of the *quorum's* ISR
    hold its records."""
    return _isr_holds_leader_records(s, "quorum")


def leader_in_isr(s: TlaState) -> Verdict:
    """``LeaderInIsr == quorumState.leader \\in quorumState.isr``, literally.

    False in the spec's own ``Init`` (quorum leader ``None``, ISR all replicas, and
    ``None \\notin Replicas``), and again whenever ``ControllerShrinkIsr`` takes the
    leader away (new leader ``None``), so every variant violates it in a trace of one
    state, Kip320 included, though Kip320 states it as a THEOREM.  Off by default.
    """
    q = s.quorum_state
    if q.leader != NONE and q.isr >> q.leader & 1:
        return None
    return (
        f"quorum leader {_name(q.leader)} is not in the quorum ISR "
        f"{_isr_name(q.isr, len(s.replica_state))} (epoch {q.leader_epoch})"
    )


TLA_INVARIANTS: tuple[Invariant, ...] = (
    Invariant("type-ok", "TypeOk: every variable within its type", type_ok),
    Invariant(
        "weak-isr",
        "WeakIsr: below a presumed leader's HW, every member of its cached ISR holds its records",
        weak_isr,
    ),
    Invariant(
        "strong-isr",
        "StrongIsr: below a presumed leader's HW, every member of the quorum ISR holds its records",
        strong_isr,
    ),
    Invariant(
        "leader-in-isr",
        "LeaderInIsr: the quorum's leader is a member of the quorum ISR; off by default: "
        "false in the spec's initial state (leader None)",
        leader_in_isr,
        default=False,
    ),
)
