"""Kafka's own evidence that a step happened, read from its logs.

The partition epoch a broker has applied (every metadata change of the partition
logs it: ``Partition.makeLeader`` / ``makeFollower``, state.change.logger), the
controller's partition epoch (one ``Replayed partition ... change`` line per
PartitionChangeRecord, ReplicationControlManager at DEBUG), and the lines that name
the decisive moments of a run (an ISR shrink proposed, a response adopted or ignored).
"""

from __future__ import annotations

import re

from replcheck.cluster.nodes import Cluster

TOPIC = "t"
PARTITION = f"{TOPIC}-0"
_EPOCH = re.compile(r"partition epoch (\d+)|partitionEpoch=(\d+)")

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
)


def applied_epoch(cluster: Cluster, broker: int) -> int:
    """The highest partition epoch ``broker`` has applied from the metadata log (-1: none)."""
    best = -1
    for line in cluster.read_log(f"broker-{broker}").splitlines():
        if PARTITION in line and "state.change" in line:
            for found in _EPOCH.finditer(line):
                best = max(best, int(found.group(1) or found.group(2)))
    return best


def controller_epoch(cluster: Cluster) -> int:
    """The partition epoch of the controller's last PartitionChangeRecord (0 at creation)."""
    count = 0
    for line in cluster.read_log("controller").splitlines():
        if "Replayed partition" in line and "change" in line and f"topic {TOPIC}" in line:
            count += 1
    return count


def decisive_lines(cluster: Cluster, node: str, since: int = 0) -> list[str]:
    return [
        line
        for line in cluster.read_log(node, since).splitlines()
        if any(mark in line for mark in DECISIVE) and (PARTITION in line or "broker" in line)
    ]
