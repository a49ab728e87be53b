"""The named safety properties of Kafka replication, as predicates over one state.

Each predicate returns ``None`` when the state satisfies it, or a one-sentence
explanation naming the replicas, offset and record concerned.  Properties that
speak about the past ("ever committed", "acknowledged") read the ghost history
the model keeps in the state (``State.committed``, ``State.acked``).
"""

from __future__ import annotations

from replcheck.invariants.interface import Invariant, Verdict
from replcheck.model.kafka.state import (
    MUST_TRUNCATE,
    NO_LEADER,
    TRUNCATED,
    State,
    members,
    record_id,
    record_name,
    true_leader,
)


def hw_le_leo(s: State) -> Verdict:
    """HW <= LEO on every running replica (a crashed one has no in-memory HW)."""
    for i, r in enumerate(s.replicas):
        if r.alive and r.hw > len(r.log):
            return f"r{i} has HW {r.hw} beyond its log end (LEO {len(r.log)})"
    return None


def no_committed_data_loss(s: State) -> Verdict:
    """Every record once below the true leader's HW is at its offset in the true leader's log."""
    leader = true_leader(s)
    if leader < 0 or not s.committed:
        return None
    log = s.replicas[leader].log
    for offset, record in enumerate(s.committed):
        if offset >= len(log):
            return (
                f"committed record {record_name(record)} at offset {offset} is missing from "
                f"leader r{leader}'s log (LEO {len(log)}, epoch {s.ctrl_epoch})"
            )
        if log[offset] != record:
            return (
                f"committed record {record_name(record)} at offset {offset} was replaced by "
                f"{record_name(log[offset])} in leader r{leader}'s log (epoch {s.ctrl_epoch})"
            )
    return None


def _settled(r) -> bool:
    """Running, told its role, and not owing a leader-epoch truncation.

    A replica that just restarted (no LeaderAndIsr yet) or still owes its
    OffsetsForLeaderEpoch exchange may hold a stale tail below a reloaded HW;
    the property is about replicas *after* truncation (reference page).
    """
    return bool(r.alive) and r.leader != NO_LEADER and r.truncation != MUST_TRUNCATE


def consistent_logs(s: State) -> Verdict:
    """No two settled replicas differ below both HWs; a truncated follower is a leader prefix."""
    reps = s.replicas
    for i, a in enumerate(reps):
        if not _settled(a):
            continue
        for j in range(i + 1, len(reps)):
            b = reps[j]
            if not _settled(b):
                continue
            upto = min(a.hw, b.hw, len(a.log), len(b.log))
            if a.log[:upto] != b.log[:upto]:
                offset = next(k for k in range(upto) if a.log[k] != b.log[k])
                return (
                    f"r{i} and r{j} hold different records at offset {offset} below both HWs "
                    f"({record_name(a.log[offset])} vs {record_name(b.log[offset])})"
                )
    for i, f in enumerate(reps):
        if not f.alive or f.truncation != TRUNCATED or f.leader < 0 or f.leader == i:
            continue
        lead = reps[f.leader]
        if not lead.alive or lead.leader != f.leader or lead.epoch != f.epoch:
            continue
        if f.log != lead.log[: len(f.log)]:
            offset = next(
                (k for k in range(min(len(f.log), len(lead.log))) if f.log[k] != lead.log[k]),
                len(lead.log),
            )
            mine = record_name(f.log[offset])
            theirs = record_name(lead.log[offset]) if offset < len(lead.log) else "nothing"
            return (
                f"follower r{i} is not a prefix of its epoch-{f.epoch} leader r{f.leader}'s log: "
                f"offset {offset} holds {mine} on r{i} but {theirs} on r{f.leader}"
            )
    return None


def acked_writes_durable(s: State) -> Verdict:
    """Every acknowledged write is in the true leader's log."""
    leader = true_leader(s)
    if leader < 0 or not s.acked:
        return None
    present = 0
    for record in s.replicas[leader].log:
        present |= 1 << record_id(record)
    missing = s.acked & ~present
    if missing:
        rid = members(missing)[0]
        return (
            f"acknowledged write m{rid} is not in leader r{leader}'s log "
            f"(epoch {s.ctrl_epoch}, LEO {len(s.replicas[leader].log)})"
        )
    return None


def leader_in_isr(s: State) -> Verdict:
    """The controller's leader is a member of the controller's ISR."""
    if s.ctrl_leader >= 0 and not s.ctrl_isr >> s.ctrl_leader & 1:
        isr = ",".join(f"r{i}" for i in members(s.ctrl_isr))
        return f"controller leader r{s.ctrl_leader} is not in its ISR {{{isr}}}"
    return None


def strong_isr(s: State) -> Verdict:
    """Below the true leader's HW, every settled ISR member holds the leader's records.

    Members that are down, not yet told their role after a restart, or still
    owing their epoch truncation are judged once they settle (a crashed member
    that lost its tail is caught by the other invariants if it is elected).
    """
    leader = true_leader(s)
    if leader < 0:
        return None
    lead = s.replicas[leader]
    committed = lead.log[: lead.hw]
    for m in members(s.ctrl_isr):
        if m == leader or not _settled(s.replicas[m]):
            continue
        log = s.replicas[m].log
        if log[: lead.hw] != committed:
            offset = next(
                (k for k in range(min(len(log), lead.hw)) if log[k] != committed[k]),
                len(log),
            )
            has = record_name(log[offset]) if offset < len(log) else "nothing"
            return (
                f"ISR member r{m} holds {has} at offset {offset}, below leader r{leader}'s "
                f"HW {lead.hw} where the leader has {record_name(committed[offset])}"
            )
    return None


def follower_hw_committed(s: State) -> Verdict:
    """Below its HW, every running replica holds what the true leader holds.

    A consumer may read up to a replica's HW (from a follower since KIP-392): a
    record below it that the true leader does not have at that offset is data a
    consumer has seen and that the partition will not keep.
    """
    leader = true_leader(s)
    if leader < 0:
        return None
    truth = s.replicas[leader].log
    for i, r in enumerate(s.replicas):
        if not r.alive or i == leader:
            continue
        for offset in range(min(r.hw, len(r.log))):
            if offset >= len(truth) or r.log[offset] != truth[offset]:
                has = record_name(truth[offset]) if offset < len(truth) else "nothing"
                return (
                    f"r{i} exposes {record_name(r.log[offset])} at offset {offset} below its "
                    f"HW {r.hw}, where leader r{leader} has {has}"
                )
    return None


def hw_monotonic(s: State) -> Verdict:
    """The end offset the true leader lists is never below what was ever committed.

    ``State.committed`` is as long as the highest HW a true leader exposed; a new
    leader whose HW is lower lists a shorter committed log (a consumer's
    ``endOffsets`` goes backwards, KAFKA-2334).  From 2.2 (KIP-207) a leader whose
    HW is below its epoch's start offset answers OFFSET_NOT_AVAILABLE instead, so
    it lists nothing until its HW catches up.  Fetch responses still carry the
    lower HW in every release; this property is about ListOffsets.
    """
    leader = true_leader(s)
    if leader < 0:
        return None
    lead = s.replicas[leader]
    hw = lead.hw
    if hw >= len(s.committed):
        return None
    if s.hides_stale_hw and hw < lead.epoch_start:
        return None  # ListOffsets: OFFSET_NOT_AVAILABLE
    return (
        f"leader r{leader} lists end offset {hw} in epoch {s.ctrl_epoch}, below the "
        f"{len(s.committed)} record(s) a leader has already exposed as committed"
    )


# Ordered by importance: reports lead with the first violated one.
INVARIANTS: tuple[Invariant, ...] = (
    Invariant(
        "no-committed-data-loss",
        "a record once below the true leader's HW stays at its offset in every later "
        "true leader's log",
        no_committed_data_loss,
    ),
    Invariant(
        "acked-writes-durable",
        "every write acknowledged to the producer survives in every later true leader's log",
        acked_writes_durable,
    ),
    Invariant(
        "consistent-logs",
        "no two settled replicas differ below both their HWs; a follower that has truncated and "
        "fetches from the leader of its epoch holds a prefix of the leader's log",
        consistent_logs,
    ),
    Invariant("hw-le-leo", "HW <= LEO on every running replica", hw_le_leo),
    Invariant(
        "strong-isr",
        "below the true leader's HW, every settled member of the controller's ISR holds the "
        "leader's records",
        strong_isr,
    ),
    Invariant("leader-in-isr", "the controller's leader is a member of its ISR", leader_in_isr),
    Invariant(
        "follower-hw-committed",
        "below its HW, every running replica holds the true leader's records (a consumer "
        "reading there never sees data the partition will not keep)",
        follower_hw_committed,
    ),
    Invariant(
        "hw-monotonic",
        "the end offset the true leader lists (ListOffsets) never goes below what a leader "
        "already exposed as committed; off by default: it is about what consumers see, not "
        "durability; releases before 2.2 break it (KAFKA-2334, fixed by KIP-207 in 2.2.0)",
        hw_monotonic,
        default=False,
    ),
)
