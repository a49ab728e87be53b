"""The leader-epoch cache and the OffsetsForLeaderEpoch exchange (KIP-101, KIP-279).

The cache is derived from the log (every record carries its epoch) plus the
entry a new leader caches for its epoch before it has written a record in it
(``Replica.unwritten_epoch``, KAFKA-7415).  One exchange is the leader's
:func:`leader_answer` to the follower's latest epoch, then the follower's
:func:`truncation_step` on that answer; KIP-279 repeats it until both sides
name the same epoch.
"""

from __future__ import annotations

from replcheck.model.kafka.releases import EPOCH_ONCE, Behaviour
from replcheck.model.kafka.state import Replica, record_epoch

UNDEFINED = -1  # Kafka's UNDEFINED_EPOCH and UNDEFINED_EPOCH_OFFSET

EpochEntries = list[tuple[int, int]]  # (epoch, start offset), ascending


def epoch_entries(replica: Replica) -> EpochEntries:
    """The replica's leader-epoch cache, as LeaderEpochFileCache.assign builds it.

    ``assign`` only appends an entry for an epoch larger than the latest one, so
    a record with a lower epoch than its predecessor adds nothing.
    """
    entries: EpochEntries = []
    latest = 0
    for offset, record in enumerate(replica.log):
        epoch = record_epoch(record)
        if epoch > latest:
            entries.append((epoch, offset))
            latest = epoch
    if replica.unwritten_epoch > latest:
        entries.append((replica.unwritten_epoch, len(replica.log)))
    return entries


def latest_epoch(replica: Replica) -> int:
    """The epoch a follower asks about: its latest cached one (UNDEFINED if none)."""
    entries = epoch_entries(replica)
    return entries[-1][0] if entries else UNDEFINED


def end_offset_v0(entries: EpochEntries, leo: int, requested: int) -> int:
    """LeaderEpochFileCache.endOffsetFor, 0.11.0 to 1.1.1 (KIP-101).

    The LEO for the latest epoch, else the start of the first larger epoch;
    UNDEFINED when the epoch is unknown, older than the first entry, or too new.
    """
    if requested == UNDEFINED or not entries:
        return UNDEFINED
    if requested == entries[-1][0]:
        return leo
    if requested < entries[0][0]:
        return UNDEFINED
    for epoch, start in entries:
        if epoch > requested:
            return start
    return UNDEFINED


def end_offset_v1(
    entries: EpochEntries, leo: int, requested: int, undefined_for_old: bool
) -> tuple[int, int]:
    """LeaderEpochFileCache.endOffsetFor, 2.0.0+ (KIP-279): also names the epoch it answers for.

    (largest epoch <= requested, where that epoch ends), or (UNDEFINED, UNDEFINED)
    when the requested epoch is newer than every entry.  For an epoch older than
    the first entry 2.0.0 answers UNDEFINED too; 2.0.1+ (KAFKA-7415, PR #5678)
    answers (requested, first start offset).
    """
    if requested == UNDEFINED or not entries:
        return UNDEFINED, UNDEFINED
    if requested == entries[-1][0]:
        return requested, leo
    previous = [e for e in entries if e[0] <= requested]
    later = [e for e in entries if e[0] > requested]
    if not later:
        return UNDEFINED, UNDEFINED
    if not previous:
        if undefined_for_old:
            return UNDEFINED, UNDEFINED
        return requested, later[0][1]
    return previous[-1][0], later[0][1]


def leader_answer(leader: Replica, requested: int, b: Behaviour) -> tuple[int, int]:
    """The leader's OffsetsForLeaderEpoch answer: (epoch, end offset).

    KIP-101's version 0 names no epoch: (UNDEFINED, offset).
    """
    entries = epoch_entries(leader)
    if b.truncation == EPOCH_ONCE:
        return UNDEFINED, end_offset_v0(entries, leader.leo, requested)
    return end_offset_v1(entries, leader.leo, requested, b.undefined_for_old_epoch)


def truncation_step(follower: Replica, answer: tuple[int, int], b: Behaviour) -> tuple[int, bool]:
    """Where the follower truncates on an answer, and whether truncation is complete.

    KIP-101 (0.11.0 ReplicaFetcherThread.maybeTruncate): UNDEFINED -> own HW,
    else min(answer, LEO).  KIP-279 (2.0.0 AbstractFetcherThread.getOffsetTruncationState):
    UNDEFINED -> own HW; an epoch the follower does not know -> its end of the
    largest earlier epoch, and ask again; the same epoch -> the smaller end.
    """
    leo = follower.leo
    fallback = min(follower.hw, leo)  # the fetcher's initial offset: the HW
    leader_epoch, leader_end = answer
    if leader_end == UNDEFINED:
        return fallback, True
    if b.truncation == EPOCH_ONCE:
        return min(leader_end, leo), True
    my_epoch, my_end = end_offset_v1(
        epoch_entries(follower), leo, leader_epoch, b.undefined_for_old_epoch
    )
    if my_end == UNDEFINED:
        return min(leader_end, leo), True
    if my_epoch == leader_epoch:
        return min(my_end, leader_end, leo), True
    return min(my_end, leo), False


def truncate_epochs(follower: Replica, offset: int, b: Behaviour) -> Replica:
    """The follower as far as the exchange is concerned after truncating to ``offset``
    (broker.truncate: an epoch entry at the log end goes too from KAFKA-10706)."""
    if offset >= follower.leo:
        if b.truncation_clears_end_epoch and follower.unwritten_epoch:
            return follower.replace(unwritten_epoch=0)
        return follower
    return follower.replace(log=follower.log[:offset], unwritten_epoch=0)


def whole_exchange(follower: Replica, leader: Replica, b: Behaviour) -> int | None:
    """The coarse model's truncation: every round of the exchange at once.

    The leader's log only grows meanwhile, which cannot change its answers for
    older epochs.  Returns None when Kafka's loop would make no progress (the
    follower keeps asking and never fetches: a livelock, not a safety bug).
    """
    current = follower
    while True:
        requested = latest_epoch(current)
        if requested == UNDEFINED:  # no epochs (left): no request, truncate to the HW
            return min(follower.hw, current.leo)
        offset, done = truncation_step(current, leader_answer(leader, requested, b), b)
        if done:
            return offset
        shorter = truncate_epochs(current, offset, b)
        if shorter == current:
            return None
        current = shorter
