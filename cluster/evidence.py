"""Kafka's own evidence that a step happened, read from its logs.

The partition epoch a broker has applied (every metadata change of the partition
logs it: ``Partition.makeLeader`` / ``makeFollower``, state.change.logger), the
controller's partition epoch (one ``Replayed partition ... change`` line per
PartitionChangeRecord, ReplicationControlManager at DEBUG), and the lines that name
the decisive moments of a run (an ISR shrink proposed, a response adopted or ignored).
"""

from __future__ import annotations

import datetime
import re

from replcheck.cluster.nodes import Cluster

TOPIC = "t"
PARTITION = f"{TOPIC}-0"
_EPOCH = re.compile(r"partition epoch (\d+)|partitionEpoch=(\d+)")
_CONTROLLER_EPOCH = re.compile(r"partitionEpoch: \d+ -> (\d+)")

# Lines worth showing in a report, by what they show.
DECISIVE = (
    "Shrinking ISR from",
    "ISR updated to",
    "Ignoring failed ISR update",
    "Failed to alter partition",
    "starts at leader epoch",
    "Skipped the become-leader",
    "Truncating",
    "Fencing broker",
    "AlterPartition request from node",
    "Rejecting AlterPartition",
    "Ignoring new ISR",
    "altered ISR",
)

# How a leader shows it handled an AlterPartition answer (3.3 to 4.4).
ANSWER_HANDLED = (
    "ISR updated to",
    "Ignoring failed ISR update",
    "Failed to alter partition",
    "Ignoring new ISR",
    "Failed to update ISR",
)


def applied_epoch(cluster: Cluster, broker: int) -> int:
    """The highest partition epoch ``broker`` has applied from the metadata log (-1: none)."""
    best = -1
    for line in cluster.read_log(f"broker-{broker}").splitlines():
        if PARTITION in line and "state.change" in line:
            for found in _EPOCH.finditer(line):
                best = max(best, int(found.group(1) or found.group(2)))
    return best


_LEADER_EPOCH = re.compile(r"leader epoch (\d+)|leaderEpoch=(\d+)")


def applied_leader_epoch(cluster: Cluster, broker: int) -> int:
    """The highest leader epoch ``broker`` has applied from the metadata log (-1: none)."""
    best = -1
    for line in cluster.read_log(f"broker-{broker}").splitlines():
        if PARTITION in line and "state.change" in line:
            for found in _LEADER_EPOCH.finditer(line):
                best = max(best, int(found.group(1) or found.group(2)))
    return best


def epoch_started_at(cluster: Cluster, broker: int) -> float:
    """When (time.time) ``broker`` last applied a new leader epoch of the partition: its
    fetcher to the leader restarts then (0.0: never)."""
    last = ""
    for line in cluster.read_log(f"broker-{broker}").splitlines():
        if PARTITION in line and "starts at leader epoch" in line:
            last = line
    if not last.startswith("["):
        return 0.0
    clock = datetime.datetime.strptime(last[1:13], "%H:%M:%S,%f").time()
    today = datetime.date.today()
    return datetime.datetime.combine(today, clock).timestamp()


def controller_epoch(cluster: Cluster) -> int:
    """The partition epoch of the controller's last PartitionChangeRecord (0 at creation).

    3.3 to 3.6 log each change with its epochs ("partitionEpoch: 0 -> 1"); later
    releases log "Replayed partition change" once per record (the epoch counts them)."""
    count, best = 0, -1
    for line in cluster.read_log("controller").splitlines():
        if PARTITION in line and "partitionEpoch: " in line:
            for found in _CONTROLLER_EPOCH.finditer(line):
                best = max(best, int(found.group(1)))
        elif "Replayed partition" in line and "change" in line and f"topic {TOPIC}" in line:
            count += 1
    return max(best, count)


_RECORD_LEADER = re.compile(r"\bleader=(-?\d+)")
_CHANGED_LEADER = re.compile(r"\bleader: (-?\d+) -> (-?\d+)")
NO_LEADER_CHANGE = -2  # PartitionChangeRecord's leader when it does not change


def controller_leader(cluster: Cluster) -> int | None:
    """The partition's leader as the controller last wrote it (-1: none; None: not yet
    created).  4.x logs each PartitionChangeRecord ("leader=-2" when unchanged), 3.3 to
    3.6 the change ("leader: 2 -> 0")."""
    leader: int | None = None
    for line in cluster.read_log("controller").splitlines():
        if PARTITION in line and "PartitionRegistration(" in line:
            found = _RECORD_LEADER.search(line.split("PartitionRegistration(", 1)[1])
            leader = int(found.group(1)) if found else leader
        elif "Replayed partition" in line and "change" in line and f"topic {TOPIC}" in line:
            found = _RECORD_LEADER.search(line)
            if found and int(found.group(1)) != NO_LEADER_CHANGE:
                leader = int(found.group(1))
        elif PARTITION in line and "partition change for" in line:
            changed = _CHANGED_LEADER.search(line)
            if changed:
                leader = int(changed.group(2))
    return leader


_BROKER_ID = re.compile(r"brokerId: (\d+)")


def shrink_lines(cluster: Cluster, leader: int) -> list[str]:
    """The ISR shrinks ``leader`` has proposed (Partition.maybeShrinkIsr), in order."""
    return [
        line
        for line in cluster.read_log(f"broker-{leader}").splitlines()
        if "Shrinking ISR from" in line and PARTITION in line
    ]


def out_of_sync(line: str) -> set[int]:
    """The replicas a shrink line removes."""
    tail = line.split("Out of sync replicas:", 1)[-1]
    return {int(found) for found in _BROKER_ID.findall(tail)}


def decisive_lines(cluster: Cluster, node: str, since: int = 0) -> list[str]:
    return [
        line
        for line in cluster.read_log(node, since).splitlines()
        if any(mark in line for mark in DECISIVE) and (PARTITION in line or "broker" in line)
    ]
