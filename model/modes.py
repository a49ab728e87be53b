"""Truncation modes: how a replica that becomes a follower decides what to keep.

Each mode is a small strategy object (reference page, "Truncation when a replica
becomes a follower: the modes").  The transition system asks the mode; it never
tests ``mode == ...`` itself.

The leader-epoch cache is derived from the log (every record carries its epoch)
plus, in ``kip320``, the entry a new leader writes for its epoch before it has
written a record in it (``Replica.unwritten_epoch``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from model.state import Replica, record_epoch

UNDEFINED = -1  # Kafka's UNDEFINED_EPOCH and UNDEFINED_EPOCH_OFFSET

EpochEntries = list[tuple[int, int]]  # (epoch, start offset), ascending


def epoch_entries(replica: Replica) -> EpochEntries:
    """The replica's leader-epoch cache, as LeaderEpochFileCache.assign builds it.

    0.11's ``assign`` only appends an entry for an epoch larger than the latest
    one, so a record with a lower epoch than its predecessor adds nothing.
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


def end_offset_v0(entries: EpochEntries, leo: int, requested: int) -> int:
    """Leader side of OffsetsForLeaderEpoch in Kafka 0.11-1.1 (KIP-101).

    LeaderEpochFileCache.endOffsetFor: the LEO for the latest epoch, else the start
    of the first larger epoch; UNDEFINED when the epoch is unknown or too new.
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
    return UNDEFINED  # requested epoch is newer than any the leader has


def end_offset_v1(entries: EpochEntries, leo: int, requested: int) -> tuple[int, int]:
    """OffsetsForLeaderEpoch in Kafka 2.0+ (KIP-279): also names the epoch it answers for.

    Returns (largest epoch <= requested, end offset of that epoch), or
    (UNDEFINED, UNDEFINED) when the requested epoch is newer than any known one.
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
        # Kafka: the requested epoch predates the log start; answer with the
        # requested epoch and the first known start offset.
        return requested, later[0][1]
    return previous[-1][0], later[0][1]


def _truncated(entries: EpochEntries, end: int) -> EpochEntries:
    """LeaderEpochFileCache.truncateFromEnd: drop entries starting at or after ``end``."""
    return [e for e in entries if e[1] < end]


def kip101_offset(follower: Replica, leader: Replica) -> int | None:
    """ReplicaFetcherThread.maybeTruncate in 0.11: one request for the latest epoch."""
    mine = epoch_entries(follower)
    if not mine:
        return min(follower.hw, follower.leo)
    answer = end_offset_v0(epoch_entries(leader), leader.leo, mine[-1][0])
    if answer == UNDEFINED:
        return min(follower.hw, follower.leo)  # KIP-101: no answer, fall back to the HW
    return min(answer, follower.leo)


def kip279_offset(follower: Replica, leader: Replica) -> int | None:
    """AbstractFetcherThread's truncation loop in 2.0+ (KIP-279).

    Repeats OffsetsForLeaderEpoch with the follower's latest epoch, truncating to
    epoch boundaries, until both sides name the same epoch; the result is the
    longest common prefix of the two logs.  The exchange is one atomic model step
    (the leader's log only grows meanwhile, which cannot change its answers for
    older epochs).  Returns None when Kafka's loop would make no progress: the
    follower keeps asking and never fetches (a livelock, not a safety bug).
    """
    leader_entries = epoch_entries(leader)
    mine = epoch_entries(follower)
    leo = follower.leo
    while True:
        if not mine:
            return min(follower.hw, leo)
        leader_epoch, leader_end = end_offset_v1(leader_entries, leader.leo, mine[-1][0])
        if leader_end == UNDEFINED:
            return min(follower.hw, leo)  # no answer from the leader: fall back to HW
        my_epoch, my_end = end_offset_v1(mine, leo, leader_epoch)
        if my_end == UNDEFINED:
            return min(leader_end, leo)
        if my_epoch == leader_epoch:
            return min(my_end, leader_end, leo)
        # The follower does not know the leader's epoch: truncate to where its
        # own earlier epoch ends and ask again.
        new_leo = min(my_end, leo)
        new_entries = _truncated(mine, new_leo)
        if new_leo == leo and new_entries == mine:
            return None
        leo, mine = new_leo, new_entries


@dataclass(frozen=True)
class Mode:
    """What differs between the Kafka versions the checker compares."""

    name: str
    kafka: str
    # None: truncate to the own HW as soon as the LeaderAndIsr arrives (0.10).
    # Otherwise: ask the leader (OffsetsForLeaderEpoch) before fetching; returns
    # the offset to truncate to, or None if the exchange cannot conclude.
    epoch_truncation: Callable[[Replica, Replica], int | None] | None
    # KIP-320: Fetch and OffsetsForLeaderEpoch carry the follower's epoch and a
    # leader in another epoch refuses them.
    fenced_by_epoch: bool = False
    # KIP-320 (KAFKA-7415): a new leader caches its epoch at its LEO at once, and
    # admits a follower to the ISR only from the start offset of that epoch.
    leader_caches_epoch: bool = False
    # Before KAFKA-7414 (2.0.1), a follower whose log is longer than the leader's
    # exits the broker when unclean election is off, instead of truncating.
    exits_on_out_of_range: bool = True
    # Log.truncateTo lowers the HW to the new log end.  Kafka 0.10 to 2.1 left
    # the HW above the LEO until the next fetch response (verified in their
    # sources); current Kafka (UnifiedLog.truncateTo) lowers it.
    truncation_lowers_hw: bool = False
    # KIP-380 (2.2): a restarting broker registers with a new broker epoch, so the
    # controller always handles the crash before the broker gets a role again.
    # Before it, a quick bounce could go unnoticed (the broker's ZooKeeper node
    # reappears; cf. KAFKA-1120) and the broker rejoin in its old epoch, still in
    # the ISR -- the seeds' data-loss scenario relies on that.
    controller_sees_bounces: bool = False
    summary: str = ""


MODES: dict[str, Mode] = {
    "hw": Mode(
        "hw",
        "0.10.2 and earlier",
        epoch_truncation=None,
        summary="truncate to the own high watermark on becoming follower",
    ),
    "kip101": Mode(
        "kip101",
        "0.11 to 1.1",
        epoch_truncation=kip101_offset,
        summary="truncate to the leader's end offset for the follower's latest epoch",
    ),
    "kip279": Mode(
        "kip279",
        "2.0",
        epoch_truncation=kip279_offset,
        summary="repeat the epoch exchange until the logs agree (longest common prefix)",
    ),
    "kip320": Mode(
        "kip320",
        "2.1 and later (as Kafka runs today)",
        epoch_truncation=kip279_offset,
        fenced_by_epoch=True,
        leader_caches_epoch=True,
        exits_on_out_of_range=False,
        truncation_lowers_hw=True,
        controller_sees_bounces=True,
        summary="as kip279, plus epoch fencing of fetches and the new leader's epoch entry",
    ),
}
