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
    exits_on_out_of_range: bool
    fenced_by_epoch: bool
    epoch_answer_checks_epoch: bool
    controller_sees_bounces: bool
    truncation_lowers_hw: bool
    hides_stale_hw: bool

    @property
    def rules(self) -> tuple:
        """Every behaviour but the release's name: equal rules, equal state spaces."""
        return tuple(getattr(self, f.name) for f in fields(self) if f.name != "release")


@dataclass(frozen=True)
class Row:
    """One behaviour: its value in the oldest covered release and its changes."""

    field: str
    what: str
    initial: object
    changes: tuple[tuple[str, object, str], ...]  # (first release, new value, citation)


TABLE: tuple[Row, ...] = (
    Row(
        "truncation",
        "how a new follower finds where its log and the leader's agree",
        TRUNCATE_TO_HW,
        (
            ("0.11.0", EPOCH_ONCE, "KIP-101 (KAFKA-1211): OffsetsForLeaderEpoch, once"),
            ("2.0.0", EPOCH_LOOP, "KIP-279 (KAFKA-6361): repeat until the epochs agree"),
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
        (("2.1.0", True, "KIP-320 (KAFKA-6880, KAFKA-7395): currentLeaderEpoch"),),
    ),
    Row(
        "epoch_answer_checks_epoch",
        "an OffsetsForLeaderEpoch answer is dropped if the follower's epoch changed "
        "while it was in flight",
        False,
        (("2.1.1", True, "KAFKA-7786: compare the epoch of the request with the current one"),),
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
)


class UnknownRelease(ValueError):
    """A release or mode name the model does not cover; the message says which it does."""


def parse_version(text: str) -> Version:
    found = re.fullmatch(r"(\d{1,3})\.(\d{1,3})(?:\.(\d{1,3}))?(?:\.\d{1,3})?", text.strip())
    if not found:
        names = ", ".join(MODE_RELEASES)
        raise UnknownRelease(
            f"{text!r} is not a Kafka release (expected X.Y.Z such as 2.1.0, or one of {names})"
        )
    major, minor, patch = found.groups()
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
        raise UnknownRelease(
            f"Kafka {name} is newer than this model covers (releases {COVERED}: "
            "the ZooKeeper-era protocol, before AlterIsr and truncation on fetch)"
        )
    raise UnknownRelease(f"Kafka {name} is not a release this model covers ({COVERED})")


def behaviour(text: str) -> Behaviour:
    """The behaviour of the release (or mode name) ``text``."""
    release = release_name(text)
    version = _version(release)
    values: dict[str, object] = {"release": release}
    for row in TABLE:
        value = row.initial
        for first, new, _why in row.changes:
            if version >= _version(first):
                value = new
        values[row.field] = value
    return Behaviour(**values)


def differences(a: str, b: str) -> list[tuple[str, object, object, str]]:
    """The behaviours in which release ``a`` and ``b`` differ: (field, a's, b's, citation)."""
    ba, bb = behaviour(a), behaviour(b)
    out = []
    for row in TABLE:
        va, vb = getattr(ba, row.field), getattr(bb, row.field)
        if va != vb:
            lo, hi = sorted((_version(ba.release), _version(bb.release)))
            why = "; ".join(c for first, _v, c in row.changes if lo < _version(first) <= hi)
            out.append((row.field, va, vb, why))
    return out


assert {r.field for r in TABLE} == {f.name for f in fields(Behaviour)} - {"release"}
