"""The options commands share: argument types, the model's flags, search limits.

Each flag's parse error is one line (``Parser`` turns argparse's usage dumps into
``UsageError``), and the model's configuration is built and validated here.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Callable
from typing import Any, NoReturn

from replcheck import options
from replcheck.checker.explicit.bfs import Progress, default_memory_budget
from replcheck.cli.exits import UsageError
from replcheck.model.errors import InputError
from replcheck.model.interface import Model
from replcheck.model.kafka.config import (
    DESIGN_RULES,
    MODES,
    Config,
    ConfigError,
    parse_mode,
)
from replcheck.model.kafka.releases import COVERED
from replcheck.model.registry import AnyConfig
from replcheck.model.tla.config import (
    KAFKA_MODEL,
    MODEL_NAMES,
    SPEC_KEYS,
    SPEC_MODELS,
    make_spec_config,
)


class Parser(argparse.ArgumentParser):
    """argparse, but errors become one-line UsageErrors instead of usage dumps.

    A value that starts with a dash and a digit (``--memory -1G``) is read as the
    option's value, so its type says what is wrong with it; argparse would take it for
    an unknown option and say "expected one argument" (no option starts with a digit).
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._negative_number_matcher = re.compile(r"^-\.?\d")

    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


def _checked(check: Callable[..., Any], *args: Any) -> Any:
    """One of the API's own checks (``replcheck.options``) as the body of an argparse
    type: its one-line message, without the name (argparse names the flag itself)."""
    try:
        return check(*args, "value")
    except InputError as exc:
        raise argparse.ArgumentTypeError(str(exc).removeprefix("value: ")) from None


def whole_number(minimum: int) -> Callable[[str], int]:
    """An argparse type: a whole number >= minimum, with a one-line error otherwise."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
        return _checked(options.at_least, value, minimum)

    return parse


positive_int = whole_number(1)


def seconds(text: str) -> float:
    """An argparse type: a positive, finite number of seconds."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    return _checked(options.seconds, value)


def memory_size(text: str) -> int:
    """An argparse type: bytes from '512M', '4G', '1.5g' or a plain number of MiB."""
    return _checked(options.memory_size, text)


def worker_count(text: str) -> int:
    """An argparse type: worker processes, 1 to what this machine can open."""
    return _checked(options.workers, positive_int(text))


def format_bytes(n: int) -> str:
    for unit, size in (("G", 2**30), ("M", 2**20)):
        if n >= size:
            return f"{n / size:.1f}{unit}"
    return f"{n}B"


def kafka_release(text: str) -> str:
    """argparse type for --kafka: a covered release, in its canonical form."""
    try:
        return parse_mode(text, "--kafka")
    except ConfigError as exc:
        raise argparse.ArgumentTypeError(str(exc).removeprefix("--kafka: ")) from None


def add_model_args(p: argparse.ArgumentParser, with_mode: bool = True) -> None:
    """The model's bounds and Kafka settings, as flags that override --config."""
    g = p.add_argument_group("model (flags override --config)")
    g.add_argument("--config", metavar="FILE.toml", help="read model keys from a TOML file")
    if with_mode:
        g.add_argument(
            "--kafka",
            metavar="X.Y.Z",
            type=kafka_release,
            help=f"the Kafka release to model, {COVERED} (default 0.10.2)",
        )
        g.add_argument(
            "--mode",
            choices=MODES,
            help="a release by its truncation mode: hw (0.10.2), kip101 (1.1.1), kip279 (2.0.0), "
            "kip320 (2.1.0)",
        )
    g.add_argument("--replicas", type=int, metavar="N", help="replicas, 2-5 (default 2)")
    g.add_argument("--records", type=int, metavar="N", help="producer writes in all (default 2)")
    g.add_argument(
        "--epochs",
        type=int,
        metavar="N",
        help="highest leader epoch the controller may reach by elections (the first leader "
        "has epoch 1; default 3). KRaft before 3.6 also bumps it on ISR shrinks, past this",
    )
    g.add_argument("--crashes", type=int, metavar="N", help="broker crashes in all (default 1)")
    g.add_argument("--acks", metavar="all|1|0", help="producer acks (default all)")
    g.add_argument("--min-isr", type=int, metavar="N", help="min.insync.replicas (default 1)")
    g.add_argument(
        "--unclean",
        action="store_true",
        default=None,
        help="allow unclean leader election (a replica outside the ISR may lead; KRaft "
        "controllers honour it from 3.9.0, KAFKA-12670)",
    )
    g.add_argument(
        "--lossy-crash",
        action="store_true",
        default=None,
        help="a crash may lose the unflushed tail of the log",
    )
    g.add_argument(
        "--controller-failover",
        action="store_true",
        default=None,
        help="a broker may skip partition changes and get only the current state: with "
        "ZooKeeper, after a controller failover; with KRaft, when its metadata lags and it "
        "applies several changes as one delta",
    )
    g.add_argument(
        "--clean-shutdown",
        action="store_true",
        default=None,
        help="a broker may also stop cleanly (controlled shutdown: log flushed, HW "
        "checkpointed); with ELR the controller keeps such a broker in the ELR",
    )
    g.add_argument(
        "--disk-loss",
        action="store_true",
        default=None,
        help="a stopped broker's disk may be replaced: it restarts with an empty log and no "
        "HW checkpoint (KRaft 3.7+: it cannot lead until it reports its new log directory, "
        "report_dir)",
    )
    g.add_argument(
        "--fencing",
        action="store_true",
        default=None,
        help="the controller may take a broker whose process still runs for gone, moving "
        "leadership and the ISR as for a crash, while the broker goes on as it was (fence); "
        "KRaft: missed heartbeats, and its next heartbeat unfences it (same broker epoch); "
        "ZooKeeper: an expired session, and it registers again and is sent the current "
        "state (unfence)",
    )
    g.add_argument(
        "--ibp",
        metavar="X.Y[-IVn]",
        help="ZooKeeper mode: the inter.broker.protocol.version the cluster runs at, as "
        "during an upgrade (default: the release's newest)",
    )
    g.add_argument(
        "--metadata-version",
        metavar="X.Y[-IVn]",
        help="KRaft: the metadata.version the cluster runs at (default: the release's newest)",
    )
    g.add_argument(
        "--atomic",
        action="store_true",
        default=None,
        help="coarse model: a fetch, and a whole epoch exchange, is one step (faster; what the "
        "TLA+ specs do). Default: requests and responses are separate steps",
    )
    g.add_argument(
        "--kraft",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="the controller is the KRaft quorum, 3.3.0 and later (default: ZooKeeper before "
        "4.0, KRaft from 4.0)",
    )
    g.add_argument(
        "--elr",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="Eligible Leader Replicas (KIP-966), 4.0.0 and later (default: off in 4.0, on "
        "from 4.1)",
    )
    g.add_argument(
        "--break-rule",
        choices=DESIGN_RULES,
        help="break a design rule of the protocol to see what it prevents: "
        + "; ".join(f"{k}: {why}" for k, (_needs, _kraft, why) in DESIGN_RULES.items()),
    )


def add_model_choice(p: argparse.ArgumentParser) -> None:
    """--model: the Kafka model, or a variant of the TLA+ reference spec with its constants."""
    g = p.add_argument_group(
        "TLA+ reference spec (hachikuji/kafka-specification; with --model tla-*, which also "
        "takes --replicas)"
    )
    g.add_argument(
        "--model",
        choices=MODEL_NAMES,
        default=KAFKA_MODEL,
        help="what to check: the Kafka model (default) or a spec module: "
        + ", ".join(f"{name} ({module}.tla)" for name, (_v, module) in SPEC_MODELS.items()),
    )
    g.add_argument("--log-size", type=int, metavar="N", help="the spec's LogSize (default 2)")
    g.add_argument("--max-records", type=int, metavar="N", help="the spec's MaxRecords (default 2)")
    g.add_argument(
        "--max-leader-epoch",
        type=int,
        metavar="N",
        help="the spec's MaxLeaderEpoch (default 3)",
    )


# Flags of the Kafka model only: a spec run refuses them rather than ignore them.
_KAFKA_ONLY = {
    "config": "--config",
    "kafka": "--kafka",
    "mode": "--mode",
    "records": "--records",
    "epochs": "--epochs",
    "crashes": "--crashes",
    "acks": "--acks",
    "min_isr": "--min-isr",
    "unclean": "--unclean",
    "lossy_crash": "--lossy-crash",
    "controller_failover": "--controller-failover",
    "clean_shutdown": "--clean-shutdown",
    "disk_loss": "--disk-loss",
    "fencing": "--fencing",
    "ibp": "--ibp",
    "metadata_version": "--metadata-version",
    "atomic": "--atomic",
    "kraft": "--kraft",
    "elr": "--elr",
    "break_rule": "--break-rule",
}


def given_model_flags(args: argparse.Namespace) -> list[str]:
    """The flags of :func:`add_model_args` and :func:`add_model_choice` the user gave
    (each defaults to None, so ``--no-kraft`` counts too)."""
    names = {**_KAFKA_ONLY, **{key: "--" + key.replace("_", "-") for key in SPEC_KEYS}}
    given = ["--model"] if args.model != KAFKA_MODEL else []
    return given + [flag for key, flag in names.items() if getattr(args, key, None) is not None]


def model_config_from_args(args: argparse.Namespace) -> AnyConfig:
    """The Kafka model's Config (see :func:`config_from_args`) or the spec's SpecConfig."""
    spec_flags = {key: getattr(args, key, None) for key in SPEC_KEYS if key != "replicas"}
    if args.model == KAFKA_MODEL:
        given = [k for k, v in spec_flags.items() if v is not None]
        if given:
            flag = "--" + given[0].replace("_", "-")
            raise UsageError(f"{flag}: a constant of the TLA+ spec; give --model tla-...")
        return config_from_args(args)
    for key, flag in _KAFKA_ONLY.items():
        if getattr(args, key, None) not in (None, False):
            raise UsageError(
                f"{flag}: a Kafka model option; --model {args.model} takes --replicas, "
                "--log-size, --max-records and --max-leader-epoch"
            )
    values = {"model": args.model, "replicas": args.replicas, **spec_flags}
    return make_spec_config({k: v for k, v in values.items() if v is not None})


def add_invariant_args(p: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    p.add_argument(
        "--invariant",
        action="append",
        metavar="ID",
        help="check this invariant (repeatable; default: those list-invariants marks "
        "default; 'all': every one)",
    )


class StoreGiven(argparse.Action):
    """Store the value and remember the option was given: some defaults (--workers: the
    cores; --memory: 80% of RAM) are values a user may also type, and an option that
    does not apply must be refused only when the user asked for it."""

    def __call__(self, parser, namespace, values, option_string=None):  # noqa: ANN001
        setattr(namespace, self.dest, values)
        namespace.given = {*getattr(namespace, "given", ()), option_string}


def option_given(args: argparse.Namespace, option: str) -> bool:
    """Whether the user typed ``option`` (one stored with :class:`StoreGiven`)."""
    return option in getattr(args, "given", ())


def add_workers_arg(p: argparse.ArgumentParser | argparse._ArgumentGroup, what: str) -> None:
    """--workers N, defaulting to this machine's cores; ``what`` says what they do."""
    cores = os.cpu_count() or 1
    p.add_argument(
        "--workers",
        action=StoreGiven,
        type=worker_count,
        default=cores,
        metavar="N",
        help=f"{what} (default: this machine's cores, {cores})",
    )


def add_search_args(p: argparse.ArgumentParser) -> None:
    """Options of the exhaustive search, shared by check and compare."""
    g = p.add_argument_group("search")
    add_invariant_args(g)
    g.add_argument(
        "--symmetry",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="explore one state per renaming of the replicas (default: on for the Kafka "
        "model; off for the TLA+ spec, whose counts are TLC's without symmetry; with it, "
        "the count is the number of orbits)",
    )
    add_limit_args(g, max_states_help="stop after N distinct states")
    g.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    g.add_argument("--quiet", action="store_true", help="no progress lines on stderr")


def add_limit_args(
    g: argparse.ArgumentParser | argparse._ArgumentGroup,
    *,
    max_states_help: str,
    max_states_default: int | None = None,
) -> None:
    """--max-states, --timeout: each stops the search cleanly (exit 3); --memory and
    --spill-dir: where the states go."""
    g.add_argument(
        "--max-states",
        type=positive_int,
        default=max_states_default,
        metavar="N",
        help=max_states_help,
    )
    g.add_argument(
        "--timeout",
        type=seconds,
        metavar="SECONDS",
        help="stop after this many seconds and report what was explored (exit 3 unless a "
        "violation was found)",
    )
    budget = default_memory_budget()
    shown = format_bytes(budget) if budget else "no limit"
    g.add_argument(
        "--memory",
        action=StoreGiven,
        type=memory_size,
        default=budget,
        metavar="SIZE",
        help="RAM for the visited states and the levels (e.g. 2G, 500M); past it they spill "
        "to disk (--spill-dir) and the search goes on, as TLC's disk-backed sets do "
        f"(default: 80%% of this machine's memory, {shown})",
    )
    g.add_argument(
        "--spill-dir",
        metavar="DIR",
        help="where the states past --memory go: a new folder in DIR, removed at the end "
        "(default: the system's temporary folder; with --checkpoint, inside it)",
    )


def config_from_args(
    args: argparse.Namespace, mode: str | None = None, version: str = ""
) -> Config:
    """--config file values, overridden by flags, validated (as the API does it).
    ``version``: the IBP or metadata.version to run ``mode`` at (compare's X.Y.Z@V)."""
    kafka, named = getattr(args, "kafka", None), getattr(args, "mode", None)
    if kafka is not None and named is not None:
        raise UsageError("--kafka and --mode: give one of them")
    flags = {
        "mode": mode if mode is not None else kafka if kafka is not None else named,
        "replicas": args.replicas,
        "records": args.records,
        "epochs": args.epochs,
        "crashes": args.crashes,
        "acks": args.acks,
        "min_insync_replicas": args.min_isr,
        "unclean_election": args.unclean,
        "lossy_crash": args.lossy_crash,
        "controller_failover": args.controller_failover,
        "clean_shutdown": args.clean_shutdown,
        "disk_loss": args.disk_loss,
        "fencing": args.fencing,
        "ibp": args.ibp,
        "metadata_version": args.metadata_version,
        "atomic": args.atomic,
        "kraft": args.kraft,
        "elr": args.elr,
        "broken_rule": args.break_rule,
    }
    given = {k: v for k, v in flags.items() if v is not None}
    if version:  # an IBP in ZooKeeper mode, a metadata.version in KRaft: which one applies
        at_newest = options.model_config(args.config, given)
        given["metadata_version" if getattr(at_newest, "kraft", False) else "ibp"] = version
    config = options.model_config(args.config, given)
    if not isinstance(config, Config):  # the file named the spec: its keys need --model
        raise UsageError(
            f"--config {args.config}: model = {config.model!r} is the TLA+ spec; give "
            f"--model {config.model} and its constants as flags"
        )
    if config.unclean_ignored:  # run as Kafka runs, and say so
        print(
            f"replcheck: note: Kafka {config.mode}'s KRaft controller ignores "
            "unclean.leader.election.enable (read from 3.9.0, KAFKA-12670): "
            "no unclean elections in this run",
            file=sys.stderr,
        )
    return config


def progress_printer(label: str = "") -> Callable[[Progress], None]:
    def show(p: Progress) -> None:
        print(
            f"{label}{p.distinct_states:,} distinct states, queue {p.queue:,}, depth {p.depth}, "
            f"{p.states_per_second:,.0f} states/s, {p.violations} violated",
            file=sys.stderr,
            flush=True,
        )

    return show


def symmetry_on(args: argparse.Namespace, model: Model) -> bool:
    """--symmetry / --no-symmetry if given, else the model's default."""
    return model.default_symmetry if args.symmetry is None else args.symmetry
