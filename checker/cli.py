"""The ``replcheck`` command line.

Exit codes: 0 every checked invariant holds within the bounds, 1 a violation
was found, 2 bad input (one line on stderr, no traceback), 130 interrupted
before any violation was found.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from checker.bfs import Progress, SearchResult, bfs
from checker.report import cell, result_word, table, to_json
from invariants import INVARIANTS, UnknownInvariant, select
from model.config import MODES, Config, ConfigError, load_config_file, make_config
from model.kafka import KafkaReplication
from traces.itf import trace_to_itf, write_itf
from traces.text import format_trace

EXIT_OK, EXIT_VIOLATION, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130


class UsageError(Exception):
    """Bad input from the user: printed as one line, exit code 2."""


class Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _add_bounds(p: argparse.ArgumentParser, with_mode: bool = True) -> None:
    g = p.add_argument_group("model (flags override --config)")
    g.add_argument("--config", metavar="FILE.toml", help="read model keys from a TOML file")
    if with_mode:
        g.add_argument("--mode", choices=list(MODES), help="truncation mode (default hw)")
    g.add_argument("--replicas", type=int, metavar="N", help="replicas, 2-5 (default 2)")
    g.add_argument("--records", type=int, metavar="N", help="producer writes in all (default 2)")
    g.add_argument(
        "--epochs",
        type=int,
        metavar="N",
        help="highest leader epoch the controller may reach "
        "(the first leader has epoch 1; default 3)",
    )
    g.add_argument("--crashes", type=int, metavar="N", help="broker crashes in all (default 1)")
    g.add_argument("--acks", metavar="all|1|0", help="producer acks (default all)")
    g.add_argument("--min-isr", type=int, metavar="N", help="min.insync.replicas (default 1)")
    g.add_argument(
        "--unclean",
        action="store_true",
        default=None,
        help="allow unclean leader election (a replica outside the ISR may lead)",
    )
    g.add_argument(
        "--lossy-crash",
        action="store_true",
        default=None,
        help="a crash may lose the unflushed tail of the log",
    )


def _add_search(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("search")
    g.add_argument(
        "--invariant",
        action="append",
        metavar="ID",
        help="check only this invariant (repeatable; default: all, see list-invariants)",
    )
    g.add_argument(
        "--no-symmetry",
        action="store_true",
        help="explore every replica naming separately (symmetry reduction is on by default)",
    )
    g.add_argument("--max-states", type=_positive, metavar="N", help="stop after N distinct states")
    g.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    g.add_argument("--quiet", action="store_true", help="no progress lines on stderr")


def build_parser() -> Parser:
    parser = Parser(
        prog="replcheck",
        description="Model-check Kafka partition replication: HW truncation (hw) against "
        "leader-epoch truncation (kip101, kip279, kip320).",
        epilog="Exit codes: 0 holds, 1 violation found, 2 bad input, 130 interrupted.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)

    check = sub.add_parser(
        "check",
        help="exhaustive BFS: each invariant holds, or its shortest counterexample",
        description="Explore every reachable state within the bounds (breadth-first, so each "
        "counterexample is as short as possible) and check each invariant.  Without options "
        "it checks hw mode on 2 replicas, where it finds the seeds' committed-data loss.",
    )
    _add_bounds(check)
    _add_search(check)
    check.add_argument(
        "--trace-out",
        metavar="FILE",
        help="write the first counterexample (ITF JSON, Apalache ADR-015) to FILE",
    )

    compare = sub.add_parser(
        "compare",
        help="check several modes at the same bounds; a table of invariants x modes",
        description="Run check for each mode and print invariants as rows, modes as columns.",
    )
    compare.add_argument(
        "--modes",
        default=",".join(MODES),
        metavar="M,M,...",
        help=f"comma-separated modes (default {','.join(MODES)})",
    )
    _add_bounds(compare, with_mode=False)
    _add_search(compare)

    sub.add_parser("list-invariants", help="print invariant ids and what each states")
    return parser


def config_from_args(args: argparse.Namespace, mode: str | None = None) -> Config:
    values: dict[str, Any] = {}
    where = ""
    if args.config:
        values.update(load_config_file(args.config))
        where = f"{args.config}: "
    flags = {
        "mode": mode if mode is not None else getattr(args, "mode", None),
        "replicas": args.replicas,
        "records": args.records,
        "epochs": args.epochs,
        "crashes": args.crashes,
        "acks": args.acks,
        "min_insync_replicas": args.min_isr,
        "unclean_election": args.unclean,
        "lossy_crash": args.lossy_crash,
    }
    overridden = {k: v for k, v in flags.items() if v is not None}
    if overridden:
        where = ""  # a mix of file and flags: name the key only
    values.update(overridden)
    return make_config(values, where)


def _progress_printer(label: str):
    def show(p: Progress) -> None:
        print(
            f"{label}{p.distinct_states:,} distinct states, queue {p.queue:,}, depth {p.depth}, "
            f"{p.states_per_second:,.0f} states/s, {p.violations} violated",
            file=sys.stderr,
            flush=True,
        )

    return show


def _search(config: Config, args: argparse.Namespace, label: str = "") -> SearchResult:
    invariants = select(args.invariant)
    return bfs(
        KafkaReplication(config),
        invariants,
        symmetry=not args.no_symmetry,
        max_states=args.max_states,
        on_progress=None if args.quiet else _progress_printer(label),
    )


def _status_note(result: SearchResult) -> str | None:
    return {
        "max-states": "stopped at --max-states: the state space was not exhausted",
        "interrupted": "interrupted: the state space was not exhausted",
    }.get(result.status)


def _exit_code(result: SearchResult) -> int:
    if result.violations:
        return EXIT_VIOLATION
    return EXIT_INTERRUPTED if result.status == "interrupted" else EXIT_OK


def cmd_check(args: argparse.Namespace) -> int:
    config = config_from_args(args)
    invariants = select(args.invariant)
    if args.trace_out:
        _check_writable(args.trace_out)
    result = _search(config, args)
    first = next(iter(result.violations.values()), None)
    if first is not None and args.trace_out:
        steps = [(step.action, step.state) for step in first.trace]
        write_itf(args.trace_out, trace_to_itf(config, steps, first.invariant, first.message))

    if args.json:
        doc = to_json(
            config, result, invariants, symmetry=not args.no_symmetry, trace_out=args.trace_out
        )
        print(json.dumps(doc, indent=2))
        return _exit_code(result)

    rate = result.distinct_states / result.seconds if result.seconds > 0 else 0
    print(f"replcheck check: {config.describe()}")
    print(
        f"explored {result.distinct_states:,} distinct states, depth {result.depth}, "
        f"in {result.seconds:.1f} s ({rate:,.0f} states/s; symmetry "
        f"{'off' if args.no_symmetry else 'on'})"
    )
    note = _status_note(result)
    if note:
        print(f"note: {note}")
    print()
    rows = [inv.id for inv in invariants]
    print(table(rows, ["verdict"], {(r, "verdict"): cell(result, r) for r in rows}))
    if first is not None:
        print()
        print(f"Shortest counterexample to {first.invariant} ({first.length} states):")
        for line in format_trace([(s.action, s.state) for s in first.trace]):
            print(line)
        print(f"=> {first.invariant} violated: {first.message}")
        if args.trace_out:
            print(f"trace written to {args.trace_out} (ITF JSON)")
        else:
            print("(save it with --trace-out FILE; narrow to one invariant with --invariant ID)")
    elif args.trace_out:
        print(f"\nno counterexample, so nothing was written to {args.trace_out}")
    print()
    print(f"result: {result_word(result)}")
    return _exit_code(result)


def cmd_compare(args: argparse.Namespace) -> int:
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    if not modes:
        raise UsageError("--modes: give at least one mode")
    for m in modes:
        if m not in MODES:
            raise UsageError(f"--modes: unknown mode {m!r} (known: {', '.join(MODES)})")
    invariants = select(args.invariant)
    configs = {m: config_from_args(args, mode=m) for m in modes}
    results: dict[str, SearchResult] = {}
    for m in modes:
        results[m] = _search(configs[m], args, label=f"[{m}] ")
        if results[m].status == "interrupted":
            break
    done = list(results)
    rows = [inv.id for inv in invariants]
    if args.json:
        doc = {
            "modes": done,
            "config": {k: v for k, v in configs[modes[0]].to_dict().items() if k != "mode"},
            "results": {
                m: to_json(configs[m], results[m], invariants, symmetry=not args.no_symmetry)
                for m in done
            },
            "table": {r: {m: cell(results[m], r) for m in done} for r in rows},
        }
        print(json.dumps(doc, indent=2))
    else:
        bounds = configs[modes[0]].describe().split(" ", 1)[1]
        print(f"replcheck compare: {bounds}")
        print()
        print(table(rows, done, {(r, m): cell(results[m], r) for r in rows for m in done}))
        for m in done:
            note = _status_note(results[m])
            if note:
                print(f"note [{m}]: {note}")
        for m in done:
            for v in results[m].violations.values():
                print(f"\n[{m}] {v.invariant}: {v.message}")
    if any(r.violations for r in results.values()):
        return EXIT_VIOLATION
    if len(done) < len(modes) or any(r.status == "interrupted" for r in results.values()):
        return EXIT_INTERRUPTED
    return EXIT_OK


def cmd_list_invariants(_: argparse.Namespace) -> int:
    width = max(len(inv.id) for inv in INVARIANTS)
    for inv in INVARIANTS:
        print(f"{inv.id:<{width}}  {inv.description}")
    return EXIT_OK


def _check_writable(path: str) -> None:
    """Fail before a long search, not after it, if the trace cannot be saved."""
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise UsageError(f"--trace-out {path}: is a directory")
    if not os.path.isdir(folder):
        raise UsageError(f"--trace-out {path}: folder {folder} does not exist")
    if not os.access(folder, os.W_OK):
        raise UsageError(f"--trace-out {path}: folder {folder} is not writable")


COMMANDS = {"check": cmd_check, "compare": cmd_compare, "list-invariants": cmd_list_invariants}


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        if args.command is None:
            parser.print_help()
            return EXIT_USAGE
        return COMMANDS[args.command](args)
    except (UsageError, ConfigError, UnknownInvariant) as exc:
        print(f"replcheck: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("replcheck: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
