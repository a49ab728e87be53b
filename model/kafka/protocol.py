"""Inter-broker protocol and metadata versions: what a cluster mid-upgrade runs.

A broker runs its release's code at the cluster's ``inter.broker.protocol.version``
(ZooKeeper mode) or ``metadata.version`` (KRaft).  Several behaviours of the release
table take effect only from a version on (``Change.needs`` in releases.py): a new
binary at an old version behaves, there, like the older release.  The two settings
share one order (Kafka's MetadataVersion continues ApiVersion's list), so one list
holds both.  Sources: ``core/src/main/scala/kafka/api/ApiVersion.scala`` (to 3.2) and
``server-common/.../MetadataVersion.java`` (from 3.3) at each release's tag; for 4.0.1
to 4.4.0, ``MetadataVersion.VERSIONS`` and ``LATEST_PRODUCTION`` as each release's
``kafka-server-common`` jar from Maven Central answers them (4.4.0: 4.4-IV2, where the
4.4 branch's source of 2026-08-21 still said 4.3-IV0).
"""

from __future__ import annotations

import re

from replcheck.model.errors import InputError

# Every version, oldest first (ApiVersion.allVersions, then MetadataVersion).
VERSIONS: tuple[str, ...] = (
    "0.8.0", "0.8.1", "0.8.2", "0.9.0",
    "0.10.0-IV0", "0.10.0-IV1", "0.10.1-IV0", "0.10.1-IV1", "0.10.1-IV2", "0.10.2-IV0",
    "0.11.0-IV0", "0.11.0-IV1", "0.11.0-IV2",
    "1.0-IV0", "1.1-IV0",
    "2.0-IV0", "2.0-IV1", "2.1-IV0", "2.1-IV1", "2.1-IV2", "2.2-IV0", "2.2-IV1",
    "2.3-IV0", "2.3-IV1", "2.4-IV0", "2.4-IV1", "2.5-IV0", "2.6-IV0",
    "2.7-IV0", "2.7-IV1", "2.7-IV2", "2.8-IV0", "2.8-IV1",
    "3.0-IV0", "3.0-IV1", "3.1-IV0", "3.2-IV0",
    "3.3-IV0", "3.3-IV1", "3.3-IV2", "3.3-IV3", "3.4-IV0",
    "3.5-IV0", "3.5-IV1", "3.5-IV2", "3.6-IV0", "3.6-IV1", "3.6-IV2",
    "3.7-IV0", "3.7-IV1", "3.7-IV2", "3.7-IV3", "3.7-IV4", "3.8-IV0", "3.9-IV0",
    "4.0-IV0", "4.0-IV1", "4.0-IV2", "4.0-IV3", "4.1-IV0", "4.1-IV1",
    "4.2-IV0", "4.2-IV1", "4.3-IV0", "4.4-IV0", "4.4-IV1", "4.4-IV2",
)  # fmt: skip
_INDEX = {name: i for i, name in enumerate(VERSIONS)}

# The newest production version of each release line: its default.
NEWEST: dict[str, str] = {
    "0.10.2": "0.10.2-IV0", "0.11.0": "0.11.0-IV2", "1.0": "1.0-IV0", "1.1": "1.1-IV0",
    "2.0": "2.0-IV1", "2.1": "2.1-IV2", "2.2": "2.2-IV1", "2.3": "2.3-IV1", "2.4": "2.4-IV1",
    "2.5": "2.5-IV0", "2.6": "2.6-IV0", "2.7": "2.7-IV2", "2.8": "2.8-IV1",
    "3.0": "3.0-IV1", "3.1": "3.1-IV0", "3.2": "3.2-IV0", "3.3": "3.3-IV3", "3.4": "3.4-IV0",
    "3.5": "3.5-IV2", "3.6": "3.6-IV2", "3.7": "3.7-IV4", "3.8": "3.8-IV0", "3.9": "3.9-IV0",
    "4.0": "4.0-IV3", "4.1": "4.1-IV1", "4.2": "4.2-IV1", "4.3": "4.3-IV0", "4.4": "4.4-IV2",
}  # fmt: skip
OLDEST_IBP = "0.8.0"  # ZooKeeper mode accepts every older IBP (a rolling upgrade from 0.8)
OLDEST_METADATA_VERSION = "3.3-IV3"  # MetadataVersion.MINIMUM_VERSION (4.0); KRaft 3.3+'s
# bootstrap minimum is 3.3-IV0, and a cluster that ran 3.0-3.2 KRaft (not production) is out
# of this model's range.
OLDEST_KRAFT_BOOTSTRAP = "3.3-IV0"


class UnknownVersion(InputError):
    """Not an inter.broker.protocol.version / metadata.version this model knows."""


def version_name(text: str, where: str) -> str:
    """The canonical name of a version: ``2.7`` is its last IV (``2.7-IV2``), as Kafka
    reads a short IBP; ``0.10.2`` is ``0.10.2-IV0``; ``3.6-iv0`` is ``3.6-IV0``."""
    raw = str(text).strip()
    found = re.fullmatch(r"(\d+\.\d+(?:\.\d+)?)(?:-[iI][vV](\d+))?", raw)
    if not found:
        raise UnknownVersion(f"{where}: {raw!r} is not a version (expected e.g. 3.6-IV0 or 3.6)")
    line, iv = found.groups()
    if line.count(".") == 2 and not line.startswith("0."):
        line = line.rsplit(".", 1)[0]  # 3.6.0 -> 3.6, as Kafka reads it
    if iv is not None:
        name = f"{line}-IV{iv}"
    else:
        candidates = [v for v in VERSIONS if v == line or v.startswith(f"{line}-IV")]
        name = candidates[-1] if candidates else line
    if name not in _INDEX:
        raise UnknownVersion(
            f"{where}: {raw!r} is not a Kafka version (known: {VERSIONS[0]} to {VERSIONS[-1]})"
        )
    return name


def at_least(version: str, needed: str) -> bool:
    return _INDEX[version] >= _INDEX[needed]


def newest_of(release: str) -> str:
    """The release's newest production version (its default for new clusters)."""
    major, minor, _patch = release.split(".")
    return NEWEST[release if major == "0" else f"{major}.{minor}"]


def check_range(version: str, release: str, kraft: bool, where: str) -> None:
    """Refuse a version the release cannot run at, with one line saying its range."""
    newest = newest_of(release)
    oldest = OLDEST_KRAFT_BOOTSTRAP if kraft else OLDEST_IBP
    if release.startswith("4."):
        oldest = OLDEST_METADATA_VERSION
    if not at_least(newest, version):
        raise UnknownVersion(
            f"{where}: Kafka {release} runs at most {newest} (got {version}); a newer "
            "version needs a newer binary"
        )
    if not at_least(version, oldest):
        raise UnknownVersion(f"{where}: Kafka {release} runs at {oldest} or later (got {version})")
