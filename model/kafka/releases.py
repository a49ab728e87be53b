"""What differs between Kafka releases, as one table of behaviours by release.

Each row is one behaviour of the replication protocol, the value it had in the
oldest release the model covers, and the releases that changed it, each change
citing its KIP or JIRA.  A release's behaviour is read off the table; the model
asks :class:`Behaviour`, never which release it runs.  The facts, with the Kafka
code they were read from, are in ``docs/kafka-behaviour-by-release.md``.

Kafka 1.1.2 was never released: the 1.1 branch received the fixes of KAFKA-7128,
7164, 7414 and 7415 but never shipped again, so every released 1.1.x has the bugs
and the first releases with the fixes are 2.0.1 and 2.1.0.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, fields
from typing import NamedTuple

from replcheck.model.errors import InputError
from replcheck.model.kafka.protocol import at_least, newest_of

Version = tuple[int, int, int]

# The releases the model covers, oldest first (0.10.2.x counts as 0.10.2).
RELEASES: tuple[str, ...] = (
    "0.10.2",
    "0.11.0",
    "1.0.0",
    "1.0.1",
    "1.0.2",
    "1.1.0",
    "1.1.1",
    "2.0.0",
    "2.0.1",
    "2.1.0",
    "2.1.1",
    "2.2.0",
    "2.2.1",
    "2.2.2",
    "2.3.0",
    "2.3.1",
    "2.4.0",
    "2.4.1",
    "2.5.0",
    "2.5.1",
    "2.6.0",
    "2.6.1",
    "2.6.2",
    "2.6.3",
    "2.7.0",
    "2.7.1",
    "2.7.2",
    "2.8.0",
    "2.8.1",
    "2.8.2",
    "3.0.0",
    "3.0.1",
    "3.0.2",
    "3.1.0",
    "3.1.1",
    "3.1.2",
    "3.2.0",
    "3.2.1",
    "3.2.2",
    "3.2.3",
    "3.3.0",
    "3.3.1",
    "3.3.2",
    "3.4.0",
    "3.4.1",
    "3.5.0",
    "3.5.1",
    "3.5.2",
    "3.6.0",
    "3.6.1",
    "3.6.2",
    "3.7.0",
    "3.7.1",
    "3.7.2",
    "3.8.0",
    "3.8.1",
    "3.9.0",
    "3.9.1",
    "4.0.0",
    "4.0.1",
    "4.0.2",
    "4.1.0",
    "4.1.1",
    "4.1.2",
    "4.2.0",
    "4.2.1",
    "4.2.2",
    "4.3.0",
    "4.3.1",
    "4.3.2",
    "4.4.0",
)
COVERED = f"{RELEASES[0]} to {RELEASES[-1]}"

# The truncation modes of the model's first versions, kept as names for releases.
MODE_RELEASES: dict[str, str] = {
    "hw": "0.10.2",
    "kip101": "1.1.1",
    "kip279": "2.0.0",
    "kip320": "2.1.0",
}

# How a follower truncates on becoming follower (Behaviour.truncation).
TRUNCATE_TO_HW = "hw"  # 0.10: to its own HW, in makeFollowers
EPOCH_ONCE = "once"  # KIP-101: one OffsetsForLeaderEpoch for its latest epoch
EPOCH_LOOP = "loop"  # KIP-279: repeat until both sides name the same epoch
ON_FETCH = "fetch"  # KAFKA-10554: on the divergingEpoch of a fetch response

# When a follower re-truncates on a LeaderAndIsr naming the leader it already has.
RETRUNCATE_NEVER = "never"
RETRUNCATE_MISSED = "missed"  # only if it missed an epoch (new >= old + 2)
RETRUNCATE_EVERY = "every"  # on every new epoch


@dataclass(frozen=True)
class Behaviour:
    """The protocol rules of one Kafka release; field docs are in :data:`TABLE`."""

    release: str
    truncation: str
    undefined_for_old_epoch: bool
    leader_caches_epoch: bool
    retruncate_same_leader: str
    isr_join_needs_epoch_start: bool
    caught_up_stays_in_isr: bool
    exits_on_out_of_range: bool
    fenced_by_epoch: bool
    epoch_answer_checks_epoch: bool
    fetch_answer_checks_epoch: bool
    controller_sees_bounces: bool
    truncation_lowers_hw: bool
    truncation_clears_end_epoch: bool
    hides_stale_hw: bool
    alter_isr: bool
    one_isr_request_in_flight: bool
    diverged_fetch_moves_leader: bool
    hw_before_diverging_truncation: bool
    isr_needs_live_replicas: bool
    kraft_available: bool
    zookeeper_available: bool
    isr_broker_epochs: bool
    kraft_shrink_bumps_epoch: bool
    kraft_unclean_election: bool
    elr_available: bool
    elr_default: bool
    hw_needs_min_isr: bool
    dir_assignment: bool
    last_known_leader_acceptable: bool
    last_known_leader_on_leaderless: bool
    dir_report_keeps_elr: bool

    @property
    def rules(self) -> tuple:
        """Every behaviour but the release's name: equal rules, equal state spaces."""
        return tuple(getattr(self, f.name) for f in fields(self) if f.name != "release")


# A change's first release, or for a fix that was backported, the first release on
# each branch that has it: ("2.7.2", "2.8.1", "3.0.0") is fixed in 2.7.2 and later
# 2.7.x, in 2.8.1 and later 2.8.x, and in every release from 3.0.0 on.
First = str | tuple[str, ...]


def applies(first: First, release: str) -> bool:
    """Whether a change that arrived in ``first`` is in ``release``."""
    firsts = (first,) if isinstance(first, str) else first
    version = _version(release)
    mainline = max(_version(f) for f in firsts)
    if version >= mainline:
        return True
    return any(version[:2] == _version(f)[:2] and version >= _version(f) for f in firsts)


def first_text(first: First) -> str:
    return first if isinstance(first, str) else " / ".join(first)


class Change(NamedTuple):
    """A change of one behaviour: from which release(s), to what, and why.

    ``needs``: the inter.broker.protocol.version / metadata.version the change also
    needs (model/kafka/protocol.py): a release that has it, run at an older version,
    keeps the behaviour of before.  Empty: no version gate.
    """

    first: First
    value: object
    why: str
    needs: str = ""


@dataclass(frozen=True)
class Row:
    """One behaviour: its value in the oldest covered release and its changes."""

    field: str
    what: str
    initial: object
    changes: tuple[Change, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "changes", tuple(Change(*c) for c in self.changes))


TABLE: tuple[Row, ...] = (
    Row(
        "truncation",
        "how a new follower finds where its log and the leader's agree",
        TRUNCATE_TO_HW,
        (
            (
                "0.11.0",
                EPOCH_ONCE,
                "KIP-101 (KAFKA-1211): OffsetsForLeaderEpoch, once (from IBP 0.11.0-IV2: "
                "ReplicaFetcherThread.shouldSendLeaderEpochRequest)",
                "0.11.0-IV2",
            ),
            (
                "2.0.0",
                EPOCH_LOOP,
                "KIP-279 (KAFKA-6361): repeat until the epochs agree (OffsetsForLeaderEpoch "
                "v1 from IBP 2.0-IV0: ReplicaFetcherThread.offsetForLeaderEpochRequestVersion)",
                "2.0-IV0",
            ),
            (
                "2.8.0",
                ON_FETCH,
                "KAFKA-10554 (commit 7ecc3a5): each fetch carries the last fetched epoch; the "
                "leader answers a divergingEpoch and the follower truncates on it (no "
                "OffsetsForLeaderEpoch; from IBP 2.7-IV1: ApiVersion.isTruncationOnFetchSupported)",
                "2.7-IV1",
            ),
        ),
    ),
    Row(
        "undefined_for_old_epoch",
        "the leader answers UNDEFINED for an epoch older than its first cached one "
        "(the follower then falls back to its HW)",
        True,
        (("2.0.1", False, "KAFKA-7415 (PR #5678): answer (requested epoch, first start offset)"),),
    ),
    Row(
        "leader_caches_epoch",
        "a new leader caches (its epoch, its LEO) at once, not at its first append",
        False,
        (("2.0.1", True, "KAFKA-7415: Partition.makeLeader assigns the epoch's start offset"),),
    ),
    Row(
        "retruncate_same_leader",
        "a follower told of a new epoch with the same leader truncates again",
        RETRUNCATE_NEVER,
        (
            ("2.0.1", RETRUNCATE_MISSED, "KAFKA-7164: only after a missed epoch (new >= old + 2)"),
            ("2.1.0", RETRUNCATE_EVERY, "KAFKA-7395 (KIP-320): on every new leader epoch"),
        ),
    ),
    Row(
        "isr_join_needs_epoch_start",
        "a follower joins the ISR only once its fetch offset reaches the start of the "
        "leader's epoch, not just the leader's HW",
        False,
        (("2.0.1", True, "KAFKA-7128: maybeExpandIsr checks leaderEpochStartOffset"),),
    ),
    Row(
        "caught_up_stays_in_isr",
        "a follower whose LEO, as the leader recorded it, equals the leader's LEO is never out "
        "of sync (before, any follower not caught up for replica.lag.time.max.ms was)",
        False,
        (
            (
                "2.1.0",
                True,
                "KAFKA-7152 (commit 9a7f29c): Partition.getOutOfSyncReplicas keeps a replica whose "
                "logEndOffset equals the leader's",
            ),
        ),
    ),
    Row(
        "exits_on_out_of_range",
        "a follower whose log is longer than the leader's halts its broker (unclean "
        "election off) instead of truncating",
        True,
        (("2.0.1", False, "KAFKA-7414: truncate to the leader's log end instead"),),
    ),
    Row(
        "fenced_by_epoch",
        "Fetch and OffsetsForLeaderEpoch carry the follower's leader epoch; a leader in "
        "another epoch refuses them",
        False,
        (
            (
                "2.1.0",
                True,
                "KIP-320 (KAFKA-6880, KAFKA-7395): currentLeaderEpoch (in Fetch from IBP 2.1-IV2: "
                "ReplicaFetcherThread.fetchRequestVersion)",
                "2.1-IV2",
            ),
        ),
    ),
    Row(
        "epoch_answer_checks_epoch",
        "an OffsetsForLeaderEpoch answer is dropped if the follower's epoch changed "
        "while it was in flight",
        False,
        (("2.1.1", True, "KAFKA-7786: compare the epoch of the request with the current one"),),
    ),
    Row(
        "fetch_answer_checks_epoch",
        "a Fetch answer is dropped if the follower's leader epoch changed while it was in "
        "flight (before, a new epoch with the same leader re-adds the partition at its log "
        "end, and from truncation on fetch (KAFKA-10554) it is Fetching at once, so the "
        "older epoch's answer at that offset is processed: records, HW, divergingEpoch)",
        False,
        (
            (
                ("3.9.1", "4.0.1", "4.1.0"),
                True,
                "KAFKA-18991 (apache/kafka#19223): AbstractFetcherThread.processFetchRequest "
                "also requires fetchPartitionData.currentLeaderEpoch == "
                "currentFetchState.currentLeaderEpoch (3.9.0 and 4.0.0 compare only the fetch "
                "offset and isReadyForFetch)",
            ),
        ),
    ),
    Row(
        "controller_sees_bounces",
        "the controller always handles a broker's crash before its restart",
        False,
        (("2.2.0", True, "KIP-380 (KAFKA-7235): broker epochs expose a quick bounce"),),
    ),
    Row(
        "truncation_lowers_hw",
        "truncating the log lowers the HW to the new log end at once",
        False,
        (("2.4.0", True, "Log.updateLogEndOffset clamps the HW (commit 7a7d4cb, PR #7055)"),),
    ),
    Row(
        "truncation_clears_end_epoch",
        "a truncation that cuts no record still drops a leader-epoch entry at the log end "
        "(an epoch its replica cached as leader and never wrote in)",
        False,
        (
            (
                ("2.6.1", "2.7.0"),
                True,
                "KAFKA-10706 (PR #9633): Log.truncateTo calls "
                "leaderEpochCache.truncateFromEnd(logEndOffset) when the target is at or past "
                "the log end; before, the follower kept asking with that epoch and never "
                "fetched again",
            ),
        ),
    ),
    Row(
        "hides_stale_hw",
        "a new leader whose HW is still below its epoch's start offset answers ListOffsets "
        "with OFFSET_NOT_AVAILABLE instead of exposing that lower HW",
        False,
        (
            (
                "2.2.0",
                True,
                "KIP-207 (KAFKA-2334): Partition.fetchOffsetForTimestamp checks "
                "leaderEpochStartOffsetOpt",
            ),
        ),
    ),
    Row(
        "alter_isr",
        "ISR changes are requests to the controller (AlterIsr, AlterPartition); while one is "
        "pending the leader counts its maximal ISR (committed and proposed) for the HW; it "
        "proposes whether or not its cached partition version is current, and one refused "
        "as stale stays pending until the next LeaderAndIsr or metadata record (before, the "
        "ZooKeeper write conditional on the zkVersion is only tried while it is current)",
        False,
        (
            (
                "2.7.0",
                True,
                "KIP-497 (KAFKA-8836): Partition.IsrState, AlterIsrManager (from IBP 2.7-IV2: "
                "ApiVersion.isAlterIsrSupported; below it the leader writes ZooKeeper)",
                "2.7-IV2",
            ),
        ),
    ),
    Row(
        "one_isr_request_in_flight",
        "a leader proposes no ISR change while its last AlterIsr / AlterPartition request "
        "is unanswered, even after a new leader epoch reset its pending state",
        False,
        (
            (
                "3.0.0",
                True,
                "KAFKA-12686 (PR #10561): AlterIsrManager.clearPending removed, so "
                "Partition.makeLeader no longer drops the queued item; submit refuses a "
                "partition with one (unsentIsrUpdates.putIfAbsent: OPERATION_NOT_ATTEMPTED, "
                "the leader keeps its committed ISR) until its response is handled",
            ),
        ),
    ),
    Row(
        "diverged_fetch_moves_leader",
        "a fetch answered with a divergingEpoch still records the follower's fetch offset "
        "at the leader, which may then grow the ISR and advance the HW",
        False,
        (
            (
                "2.7.0",
                True,
                "KAFKA-10487 (the leader's half of truncation on fetch): "
                "ReplicaManager.updateFollowerFetchState skips only errors",
            ),
            (
                ("2.7.2", "2.8.1", "3.0.0"),
                False,
                "KAFKA-13141 (PR #11136): skip the follower's fetch state when the response "
                "diverges",
            ),
        ),
    ),
    Row(
        "hw_before_diverging_truncation",
        "a follower takes the HW of a diverging fetch response before it truncates, so "
        "for a moment its HW covers its own divergent records",
        False,
        (
            (
                "2.8.0",
                True,
                "KAFKA-10554: AbstractFetcherThread.processFetchRequest runs "
                "processPartitionData, then truncateOnFetchResponse",
            ),
            (
                ("3.4.1", "3.5.0"),
                False,
                "KAFKA-14704 (PR #13230): a diverging response only queues the truncation",
            ),
        ),
    ),
    Row(
        "isr_needs_live_replicas",
        "the controller refuses an ISR change naming a fenced or shutting-down broker",
        False,
        (("3.3.0", True, "KIP-841: INELIGIBLE_REPLICA (KRaft), isr -- liveBrokerIds (ZK)"),),
    ),
    Row(
        "kraft_available",
        "the controller may be the KRaft quorum (production-ready)",
        False,
        (("3.3.0", True, "KIP-833: KRaft marked production-ready"),),
    ),
    Row(
        "zookeeper_available",
        "the controller may be the ZooKeeper-based one",
        True,
        (("4.0.0", False, "KIP-500 (KAFKA-17611): ZooKeeper mode removed"),),
    ),
    Row(
        "isr_broker_epochs",
        "KRaft: Fetch carries the follower's broker epoch and AlterPartition the epoch of "
        "each ISR member; the controller refuses a member whose registration changed",
        False,
        (
            (
                "3.5.0",
                True,
                "KIP-903 (KAFKA-14139): ReplicationControlManager (Fetch v15 carries the broker "
                "epoch from metadata.version 3.5-IV1: MetadataVersion.fetchRequestVersion)",
                "3.5-IV1",
            ),
        ),
    ),
    Row(
        "kraft_shrink_bumps_epoch",
        "KRaft: a partition change that shrinks the ISR also bumps the leader epoch",
        True,
        (
            (
                "3.6.0",
                False,
                "KAFKA-15021: PartitionChangeBuilder, ISR shrink bumps only the partition epoch "
                "(from metadata.version 3.6-IV0: "
                "MetadataVersion.isLeaderEpochBumpRequiredOnIsrShrink)",
                "3.6-IV0",
            ),
        ),
    ),
    Row(
        "kraft_unclean_election",
        "KRaft: the controller honours unclean.leader.election.enable (before, it never "
        "elects a leader from outside the ISR on its own)",
        False,
        (
            (
                "3.9.0",
                True,
                "KAFKA-12670 (PR #16866): ConfigurationControlManager."
                "uncleanLeaderElectionEnabledForTopic reads the topic's setting (3.3.0 to "
                "3.8.0 return false: 'TODO: support configuring unclean leader election')",
            ),
        ),
    ),
    Row(
        "hw_needs_min_isr",
        "the leader does not advance the HW while its ISR is below min.insync.replicas",
        False,
        (
            (
                "3.7.0",
                True,
                "KAFKA-15583 (KIP-966 part 1, PR #14594): Partition.maybeIncrementLeaderHW "
                "returns at isUnderMinIsr, with or without ELR",
            ),
        ),
    ),
    Row(
        "elr_available",
        "Eligible Leader Replicas can be turned on (eligible.leader.replicas.version=1)",
        False,
        (
            (
                "4.0.0",
                True,
                "KIP-966: ELR, opt-in (eligible.leader.replicas.version=1 needs metadata.version "
                "4.0-IV1: EligibleLeaderReplicasVersion.ELRV_1)",
                "4.0-IV1",
            ),
        ),
    ),
    Row(
        "elr_default",
        "Eligible Leader Replicas are on unless turned off (new clusters)",
        False,
        (
            (
                "4.1.0",
                True,
                "KIP-966: ELR on by default for new clusters (the default feature level at "
                "metadata.version 4.1-IV0 and later: Feature.defaultVersion)",
                "4.1-IV0",
            ),
        ),
    ),
    Row(
        "dir_assignment",
        "KRaft: a partition names each replica's log directory; a broker whose directory is "
        "not online cannot lead until it reports the new one (AssignReplicasToDirs)",
        False,
        (
            (
                "3.7.0",
                True,
                "KIP-858 (JBOD in KRaft): ReplicationControlManager.LeaderAcceptor tests "
                "ClusterControlManager.hasOnlineDir for the partition's directory; the broker "
                "reports a replica's directory from ReplicaManager.maybeUpdateTopicAssignment "
                "(AssignmentsManager), handled by handleAssignReplicasToDirs (from "
                "metadata.version 3.7-IV2: MetadataVersion.isDirectoryAssignmentSupported)",
                "3.7-IV2",
            ),
        ),
    ),
    Row(
        "last_known_leader_acceptable",
        "KRaft with ELR: the last known leader is elected only if the controller would "
        "accept it as leader (unfenced, its directory online)",
        False,
        (
            (
                "4.1.0",
                True,
                "KAFKA-19522 (commit e4e2dce2eb): PartitionChangeBuilder.canElectLastKnownLeader "
                "returns false where isAcceptableLeader fails (4.0 logs it and elects anyway)",
            ),
        ),
    ),
    Row(
        "last_known_leader_on_leaderless",
        "KRaft with ELR: lastKnownElr records the leader when a partition change leaves the "
        "partition leaderless (before: when it empties the ISR, so a partition that lost its "
        "leader with members left in the ISR records [-1], no broker, once they leave too, "
        "and its last leader is never recovered)",
        False,
        (
            (
                "4.1.1",
                True,
                "apache/kafka#20655 (backport of #20629, commit 4369d8e07e; no JIRA): "
                "PartitionChangeBuilder.maybeUpdateLastKnownLeader sets [partition.leader] when "
                "record.leader() is NO_LEADER and lastKnownElr is empty, and clears it only when "
                "record.leader() >= 0 (4.0.0 to 4.1.0: set when record.isr() is empty, to "
                "partition.leader even where that is already NO_LEADER)",
            ),
        ),
    ),
    Row(
        "dir_report_keeps_elr",
        "KRaft with ELR: the partition change of a broker's directory report "
        "(AssignReplicasToDirs) keeps the ELR (before, it writes it empty: finding F4)",
        False,
        (
            (
                "4.3.0",
                True,
                "apache/kafka#20716 (commit 04a77120c9; no JIRA): PartitionChangeBuilder takes "
                "eligibleLeaderReplicasEnabled in its constructor, and "
                "ReplicationControlManager.handleAssignReplicasToDirs passes "
                "featureControl.isElrFeatureEnabled(); before, its builder alone never called "
                "setEligibleLeaderReplicasEnabled, so maybeUpdateRecordElr wrote targetElr = []",
            ),
        ),
    ),
)


class UnknownRelease(InputError):
    """A release or mode name the model does not cover; the message says which it does."""


def parse_version(text: str) -> Version:
    """``X.Y.Z`` or ``X.Y`` (its .0); before 1.0, Kafka's own four-part names too
    (``0.10.2.1`` is a patch release of the 0.10.2 line the model covers as one)."""
    found = re.fullmatch(r"(\d{1,3})\.(\d{1,3})(?:\.(\d{1,3}))?(\.\d{1,3})?", text.strip())
    names = ", ".join(MODE_RELEASES)
    if not found:
        raise UnknownRelease(
            f"{text!r} is not a Kafka release (expected X.Y.Z such as 2.1.0, or one of {names})"
        )
    major, minor, patch, fourth = found.groups()
    if fourth is not None and (major != "0" or patch is None):
        raise UnknownRelease(
            f"{text!r} is not a Kafka release: only releases before 1.0 have four parts, such "
            f"as 0.10.2.1 (expected X.Y.Z such as 2.1.0, or one of {names})"
        )
    return int(major), int(minor), int(patch or 0)


def _version(release: str) -> Version:
    return parse_version(release)


def release_name(text: str) -> str:
    """The covered release ``text`` names: a mode name, ``X.Y.Z``, or ``X.Y`` (its .0).

    Raises UnknownRelease naming the covered range for anything else.
    """
    text = str(text).strip()
    if text in MODE_RELEASES:
        return MODE_RELEASES[text]
    version = parse_version(text)  # 0.10.2.1 reads as 0.10.2
    name = f"{version[0]}.{version[1]}.{version[2]}"
    if name in RELEASES:
        return name
    if version == (1, 1, 2):
        raise UnknownRelease(
            "Kafka 1.1.2 was never released (its fixes shipped in 2.0.1 and 2.1.0); "
            f"releases covered: {COVERED}"
        )
    if version > _version(RELEASES[-1]):
        raise UnknownRelease(f"Kafka {name} is newer than this model covers (releases {COVERED})")
    raise UnknownRelease(f"Kafka {name} is not a release this model covers ({COVERED})")


def behaviour(text: str, version: str = "") -> Behaviour:
    """The behaviour of the release (or mode name) ``text``, run at the protocol or
    metadata ``version`` (model/kafka/protocol.py; default: the release's newest)."""
    release = release_name(text)
    version = version or newest_of(release)
    values: dict[str, object] = {"release": release}
    for row in TABLE:
        value = row.initial
        for change in row.changes:
            if applies(change.first, release) and (
                not change.needs or at_least(version, change.needs)
            ):
                value = change.value
        values[row.field] = value
    return Behaviour(**values)


def differences(a: str, b: str) -> list[tuple[str, object, object, str]]:
    """The behaviours in which release ``a`` and ``b`` differ: (field, a's, b's, citation)."""
    ba, bb = behaviour(a), behaviour(b)
    out = []
    for row in TABLE:
        va, vb = getattr(ba, row.field), getattr(bb, row.field)
        if va != vb:
            why = "; ".join(
                c
                for first, _v, c, _needs in row.changes
                if applies(first, ba.release) != applies(first, bb.release)
            )
            out.append((row.field, va, vb, why))
    return out


assert {r.field for r in TABLE} == {f.name for f in fields(Behaviour)} - {"release"}
