"""The bounds and options of one model-checking run, validated once at the edge.

Every way a user can give a configuration (TOML file, CLI flags, a trace's
``#meta``) ends in :func:`make_config`, so they all get the same clear errors.
"""

from __future__ import annotations

import tomllib
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any, NamedTuple

from replcheck.model.errors import InputError
from replcheck.model.kafka.protocol import UnknownVersion, check_range, newest_of, version_name
from replcheck.model.kafka.releases import (
    MODE_RELEASES,
    Behaviour,
    UnknownRelease,
    behaviour,
    release_name,
)

MODES = tuple(MODE_RELEASES)  # names for releases: hw, kip101, kip279, kip320
ACKS = {"all": -1, "-1": -1, "1": 1, "0": 0}
MAX_RECORDS = 30  # record ids live in a bitmask; 30 keeps states small ints


class DesignRule(NamedTuple):
    """A rule of the protocol's design that a run may break on purpose."""

    needs: str  # the Behaviour flag of the releases that have the rule
    kraft_only: bool  # a rule of the KRaft controller: the run must use kraft
    why: str


# Design rules a run may break on purpose (``broken_rule``), to show what each one
# prevents: the catalogue's "rule" entries (B1, B5).  Each needs a release with it.
DESIGN_RULES: dict[str, DesignRule] = {
    "maximal-isr": DesignRule(
        "alter_isr",
        False,
        "while an ISR change is pending the leader counts the committed and the proposed ISR "
        "for the HW (KIP-497); broken, it counts the proposed ISR alone",
    ),
    "isr-join-by-fetch": DesignRule(
        "kraft_available",
        True,
        "a replica joins the ISR only through its leader's AlterPartition, after a fetch in "
        "the current leader epoch; broken, a fenced broker's removal and re-addition land in "
        "one metadata batch, so it re-registers as an ISR member without having fetched",
    ),
}


class ConfigError(InputError):
    """A configuration value is wrong; the message names the key and the problem."""


@dataclass(frozen=True)
class Config:
    """One partition's bounds and Kafka settings.

    ``epochs`` is the highest leader epoch the controller may reach by electing
    leaders (the first leader has epoch 1).  In KRaft before 3.6 an accepted ISR
    shrink also starts an epoch (controller.py ``_do_alter_isr``, KAFKA-15021): those
    are not held to the bound, since Kafka does not refuse the shrink; the writes
    bound them instead.  ``records`` and ``crashes`` count events in the whole run.
    ``controller_failover``: a broker may skip partition changes and apply only the
    current state.  With ZooKeeper, a new controller after a failover sends each broker
    only the current state, so a replica may miss LeaderAndIsr requests.  With KRaft, a
    broker whose metadata lags applies the changes it fetches as one delta
    (MetadataLoader publishes a commit's batches together; TopicDelta merges the
    partition's records), so it sees only the first and the last registration.
    ``mode`` is a Kafka release (``2.1.0``) or a mode name for one (``kip320``).
    ``atomic``: the coarse model, where a fetch or an epoch exchange is one step.
    ``kraft``: the controller is the KRaft quorum (3.3+; the only one from 4.0).
    ``elr``: Eligible Leader Replicas (KIP-966; 4.0 opt-in, on by default from 4.1).
    Both default to what the release does by default (see :func:`make_config`).
    ``broken_rule``: one of :data:`DESIGN_RULES`, broken to show what it prevents.
    ``clean_shutdown``: a broker may also stop cleanly (controlled shutdown), which the
    controller of releases with ELR tells from a crash.  ``disk_loss``: a stopped
    broker's disk may be replaced, so it restarts empty.  ``fencing``: the
    controller may take a broker whose process still runs for gone, as if it had crashed
    (KRaft: missed heartbeats, and its next heartbeat unfences it; ZooKeeper: an expired
    session, and it registers again).
    ``ibp`` (ZooKeeper) / ``metadata_version`` (KRaft): the version the cluster runs
    at, as during an upgrade (model/kafka/protocol.py); empty: the release's newest.
    """

    mode: str = "hw"
    replicas: int = 2
    records: int = 2
    epochs: int = 3
    crashes: int = 1
    acks: int = -1  # -1 means acks=all
    min_insync_replicas: int = 1
    unclean_election: bool = False
    lossy_crash: bool = False
    controller_failover: bool = False
    clean_shutdown: bool = False
    disk_loss: bool = False
    fencing: bool = False
    atomic: bool = False
    kraft: bool = False
    elr: bool = False
    broken_rule: str = ""
    ibp: str = ""
    metadata_version: str = ""

    @property
    def protocol_version(self) -> str:
        """The version the cluster runs at: the one given, else the release's newest."""
        return self.ibp or self.metadata_version or newest_of(release_name(self.mode))

    def rules(self) -> Behaviour:
        """The release's behaviour at this run's protocol or metadata version."""
        return behaviour(self.mode, self.protocol_version)

    @property
    def elects_unclean(self) -> bool:
        """Whether the controller may elect a leader from outside the ISR (and the ELR):
        ``unclean_election`` where the controller honours it.  Kafka's KRaft controller
        ignores the setting before 3.9.0 (KAFKA-12670, Behaviour.kraft_unclean_election)."""
        return self.unclean_election and not self.unclean_ignored

    @property
    def assigns_dirs(self) -> bool:
        """KRaft from 3.7.0 at metadata.version 3.7-IV2 (KIP-858): a partition names each
        replica's log directory (Behaviour.dir_assignment)."""
        return self.kraft and self.rules().dir_assignment

    @property
    def reports_dirs(self) -> bool:
        """A replaced disk leaves its broker's new directory to report (``report_dir``):
        ``disk_loss`` where partitions name directories.  Read once per model: it reads
        the release table."""
        return self.disk_loss and self.assigns_dirs

    @property
    def unclean_ignored(self) -> bool:
        """``unclean_election`` was asked for where Kafka's controller ignores it."""
        return self.unclean_election and self.kraft and not self.rules().kraft_unclean_election

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def describe(self) -> str:
        acks = "all" if self.acks == -1 else str(self.acks)
        parts = [
            f"mode={self.mode}" if self.mode in MODES else f"kafka={self.mode}",
            f"replicas={self.replicas}",
            f"records={self.records}",
            f"epochs={self.epochs}",
            f"crashes={self.crashes}",
            f"acks={acks}",
            f"min_isr={self.min_insync_replicas}",
        ]
        if self.unclean_ignored:
            parts.append("unclean(ignored)")
        elif self.unclean_election:
            parts.append("unclean")
        if self.lossy_crash:
            parts.append("lossy-crash")
        if self.controller_failover:
            parts.append("controller-failover")
        if self.clean_shutdown:
            parts.append("clean-shutdown")
        if self.disk_loss:
            parts.append("disk-loss")
        if self.fencing:
            parts.append("fencing")
        if self.atomic:
            parts.append("atomic")
        if self.kraft:
            parts.append("kraft")
        if self.elr:
            parts.append("elr")
        if self.broken_rule:
            parts.append(f"broken-rule={self.broken_rule}")
        if self.ibp:
            parts.append(f"ibp={self.ibp}")
        if self.metadata_version:
            parts.append(f"metadata-version={self.metadata_version}")
        return " ".join(parts)


FIELD_NAMES = tuple(f.name for f in fields(Config))
# Friendly aliases accepted in TOML files and trace metadata.
ALIASES = {"min_isr": "min_insync_replicas", "unclean": "unclean_election", "kafka": "mode"}


def parse_acks(value: Any, where: str = "acks") -> int:
    """Accept 'all', -1, 1, 0 (as ints or strings) and return Kafka's int form."""
    key = str(value).strip().lower()
    if isinstance(value, bool) or key not in ACKS:
        raise ConfigError(f"{where}: expected one of all, 1, 0 (got {value!r})")
    return ACKS[key]


def parse_mode(value: Any, where: str = "mode") -> str:
    """A mode name as given, or a Kafka release in its canonical form (``2.1`` -> ``2.1.0``)."""
    if not isinstance(value, str):
        raise ConfigError(f'{where}: expected a Kafka release such as "2.1.0" (got {value!r})')
    if value in MODES:
        return value
    try:
        return release_name(value)
    except UnknownRelease as exc:
        raise ConfigError(f"{where}: {exc}") from None


def _int_in(name: str, value: Any, low: int, high: int | None, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(f"{where}{name}: expected an integer (got {value!r})")
    if value < low or (high is not None and value > high):
        span = f"{low}..{high}" if high is not None else f">= {low}"
        raise ConfigError(f"{where}{name}: must be {span} (got {value})")
    return value


def _bool(name: str, value: Any, where: str) -> bool:
    if not isinstance(value, bool):
        raise ConfigError(f"{where}{name}: expected true or false (got {value!r})")
    return value


def make_config(values: dict[str, Any], where: str = "") -> Config:
    """Build a validated Config from loose key/values (unknown keys are errors).

    ``where`` prefixes messages, e.g. ``"gate.toml: "``, so the user knows the source.
    """
    merged: dict[str, Any] = {}
    given: dict[str, str] = {}
    for raw_key, value in values.items():
        key = ALIASES.get(raw_key, raw_key)
        if key not in FIELD_NAMES:
            known = ", ".join((*FIELD_NAMES, "kafka"))
            raise ConfigError(f"{where}unknown key {raw_key!r} (known keys: {known})")
        if key in given:
            raise ConfigError(f"{where}{given[key]} and {raw_key}: give one of them")
        given[key] = raw_key
        merged[key] = value
    cfg = Config()
    out = asdict(cfg)
    out.update(merged)

    out["mode"] = parse_mode(out["mode"], f"{where}{given.get('mode', 'mode')}")
    out["replicas"] = _int_in("replicas", out["replicas"], 2, 5, where)
    out["records"] = _int_in("records", out["records"], 0, MAX_RECORDS, where)
    out["epochs"] = _int_in("epochs", out["epochs"], 1, 1000, where)
    out["crashes"] = _int_in("crashes", out["crashes"], 0, 1000, where)
    out["acks"] = parse_acks(out["acks"], f"{where}acks")
    out["min_insync_replicas"] = _int_in(
        "min_insync_replicas", out["min_insync_replicas"], 1, out["replicas"], where
    )
    out["unclean_election"] = _bool("unclean_election", out["unclean_election"], where)
    out["lossy_crash"] = _bool("lossy_crash", out["lossy_crash"], where)
    out["controller_failover"] = _bool("controller_failover", out["controller_failover"], where)
    out["clean_shutdown"] = _bool("clean_shutdown", out["clean_shutdown"], where)
    out["disk_loss"] = _bool("disk_loss", out["disk_loss"], where)
    out["fencing"] = _bool("fencing", out["fencing"], where)
    out["atomic"] = _bool("atomic", out["atomic"], where)
    _release_options(out, merged, where)
    return Config(**out)


def _release_options(out: dict[str, Any], given: dict[str, Any], where: str) -> None:
    """``kraft``, the version and ``elr``: the release's default unless given, and only
    where it has them."""
    b = behaviour(out["mode"])
    name = b.release
    kraft = _bool("kraft", given["kraft"], where) if "kraft" in given else not b.zookeeper_available
    if kraft and not b.kraft_available:
        raise ConfigError(
            f"{where}kraft: Kafka {name} has no production KRaft controller (from 3.3.0, KIP-833)"
        )
    if not kraft and not b.zookeeper_available:
        raise ConfigError(f"{where}kraft: Kafka {name} has no ZooKeeper mode (removed in 4.0.0)")
    b = _protocol_version(out, given, kraft, b, where)
    elr = _bool("elr", given["elr"], where) if "elr" in given else b.elr_default
    if elr and not b.elr_available:
        if behaviour(name).elr_available:
            raise ConfigError(
                f"{where}elr: Eligible Leader Replicas need metadata.version 4.0-IV1 or later "
                f"(got {out['metadata_version']})"
            )
        raise ConfigError(f"{where}elr: Kafka {name} has no Eligible Leader Replicas (from 4.0.0)")
    out["kraft"], out["elr"] = kraft, elr
    rule = out["broken_rule"]
    if rule:
        if not isinstance(rule, str) or rule not in DESIGN_RULES:
            raise ConfigError(
                f"{where}broken_rule: expected one of {', '.join(DESIGN_RULES)} (got {rule!r})"
            )
        if not getattr(b, DESIGN_RULES[rule].needs):
            raise ConfigError(f"{where}broken_rule: Kafka {name} has no {rule} rule to break")
        if DESIGN_RULES[rule].kraft_only and not kraft:
            raise ConfigError(f"{where}broken_rule: {rule} is a KRaft rule (kraft = true, --kraft)")


def _protocol_version(
    out: dict[str, Any], given: dict[str, Any], kraft: bool, b: Behaviour, where: str
) -> Behaviour:
    """``ibp`` (ZooKeeper) or ``metadata_version`` (KRaft): checked against the release's
    range and stored in canonical form; the release's behaviour at that version."""
    key, other = ("metadata_version", "ibp") if kraft else ("ibp", "metadata_version")
    if given.get(other):
        if kraft:
            why = "a KRaft cluster has a metadata.version instead (metadata_version)"
        else:
            why = "a ZooKeeper cluster has an inter.broker.protocol.version instead (ibp)"
        raise ConfigError(f"{where}{other}: {why}")
    out[other] = ""
    value = given.get(key) or ""
    if not value:
        out[key] = ""
        return b
    if not isinstance(value, str):
        raise ConfigError(f'{where}{key}: expected a version such as "3.6-IV0" (got {value!r})')
    try:
        version = version_name(value, f"{where}{key}")
        check_range(version, b.release, kraft, f"{where}{key}")
    except UnknownVersion as exc:
        raise ConfigError(str(exc)) from None
    out[key] = version
    return behaviour(b.release, version)


# The largest file replcheck reads: far more than any configuration or trace it writes
# (a trace of thousands of steps is a few MB), and little enough to read at once.
MAX_FILE_BYTES = 64 * 2**20


def read_text(path: str | Path, error: type[Exception] = ConfigError, kind: str = "TOML") -> str:
    """A user's file as text, or ``error`` with one line naming the file and the problem.

    At most :data:`MAX_FILE_BYTES` are read, so a device or a runaway file (``/dev/zero``)
    is refused instead of filling the memory.  A UTF-8 byte-order mark (some Windows
    editors write one) is dropped.
    """
    path = Path(path)
    try:
        with path.open("rb") as f:
            data = f.read(MAX_FILE_BYTES + 1)
    except FileNotFoundError:
        raise error(f"{path}: no such file") from None
    except IsADirectoryError:
        raise error(f"{path}: is a directory") from None
    except OSError as exc:
        raise error(f"{path}: cannot read ({exc.strerror})") from None
    if len(data) > MAX_FILE_BYTES:
        raise error(
            f"{path}: larger than {MAX_FILE_BYTES // 2**20} MB, the most replcheck reads "
            f"({kind} expected)"
        )
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise error(
            f"{path}: not a UTF-8 text file (byte 0x{data[exc.start]:02x} at line {line}; "
            f"expected {kind})"
        ) from None


def read_toml(path: str | Path, error: type[Exception] = ConfigError) -> dict[str, Any]:
    """A user's TOML file, parsed, or ``error`` with one line naming the file and the place."""
    text = read_text(path, error, "TOML")
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise error(f"{path}: invalid TOML ({exc})") from None
    except RecursionError:
        raise error(f"{path}: invalid TOML (nested too deeply)") from None
    except ValueError as exc:  # an integer past Python's 4,300-digit conversion limit
        raise error(f"{path}: invalid TOML ({str(exc).split(';')[0]})") from None


def load_config_file(path: str | Path) -> dict[str, Any]:
    """Read a TOML file's model keys: at top level, or in a ``[model]`` table (not both)."""
    data = read_toml(path)
    if "model" in data:
        if not isinstance(data["model"], dict):
            raise ConfigError(f"{path}: model: expected a [model] table")
        extra = sorted(k for k in data if k != "model")
        if extra:
            raise ConfigError(
                f"{path}: {extra[0]!r} beside the [model] table: put every model key inside "
                "[model], or use no [model] table at all"
            )
        data = data["model"]
    return data
