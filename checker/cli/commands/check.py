"""``replcheck check``: exhaustive BFS, each invariant's verdict, the shortest counterexample."""

from __future__ import annotations

import argparse
import json
import sys

import replcheck
from replcheck.checker.bfs import SearchResult
from replcheck.checker.cli.args import (
    add_model_args,
    add_model_choice,
    add_search_args,
    add_workers_arg,
    model_config_from_args,
    progress_printer,
)
from replcheck.checker.cli.exits import EXIT_INCOMPLETE, EXIT_INTERRUPTED, EXIT_OK, EXIT_VIOLATION
from replcheck.checker.cli.outputs import check_writable
from replcheck.checker.cli.report import cell, rebuild_errors, result_word, table, to_json
from replcheck.invariants import registry, select
from replcheck.model.kafka.config import Config
from replcheck.model.registry import AnyConfig
from replcheck.results import CheckResult
from replcheck.traces.itf import trace_to_itf, write_itf
from replcheck.traces.text import format_plain_trace, format_trace

NAME = "check"
ORDER = 10


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        NAME,
        help="exhaustive BFS: each invariant holds, or its shortest counterexample",
        description="Explore every reachable state within the bounds (breadth-first, so each "
        "counterexample is as short as possible) and check each invariant.  Without options "
        "it checks hw mode on 2 replicas, where it finds the seeds' committed-data loss.  "
        "With --model tla-kip320 (or tla-hw, tla-kip101, tla-kip279) it checks the TLA+ "
        "reference spec instead, on exactly the states TLC explores.",
    )
    add_model_args(p)
    add_model_choice(p)
    add_search_args(p)
    add_workers_arg(
        p,
        "worker processes, each owning a share of the visited states; the counts and the "
        "counterexamples' lengths are the same for any N",
    )
    p.add_argument(
        "--trace-out",
        metavar="FILE",
        help="write the first counterexample (ITF JSON, Apalache ADR-015) to FILE",
    )


def search(config: AnyConfig, args: argparse.Namespace, label: str = "") -> CheckResult:
    """:func:`replcheck.check` the way the search flags ask (``compare`` runs one process
    per search: one worker is the single-process BFS)."""
    return replcheck.check(
        config,
        invariants=args.invariant,
        symmetry=args.symmetry,
        max_states=args.max_states,
        timeout=args.timeout,
        memory=args.memory,
        workers=getattr(args, "workers", 1),
        on_progress=None if args.quiet else progress_printer(label),
    )


def symmetry_note(config: AnyConfig, symmetry: bool) -> str:
    if isinstance(config, Config):
        return f"symmetry {'on' if symmetry else 'off'}"
    if symmetry:
        return "symmetry on: one state per orbit under Permutations(Replicas)"
    return "no symmetry: the spec's states, as TLC counts them"


def status_note(result: SearchResult) -> str | None:
    """Why an unfinished search stopped; None when it finished."""
    return {
        "max-states": "stopped at --max-states: the state space was not exhausted",
        "timeout": "stopped at --timeout: the state space was not exhausted",
        "memory": "stopped at the --memory budget: the state space was not exhausted",
        "interrupted": "interrupted: the state space was not exhausted",
    }.get(result.status)


def exit_code(result: SearchResult) -> int:
    """1 for a violation (found before any stop); else 130 if interrupted, 3 if unfinished."""
    if result.violations:
        return EXIT_VIOLATION
    if result.status == "interrupted":
        return EXIT_INTERRUPTED
    return EXIT_OK if result.exhaustive else EXIT_INCOMPLETE


def run(args: argparse.Namespace) -> int:
    config = model_config_from_args(args)
    invariants = select(args.invariant, registry(config))
    if args.trace_out:
        check_writable(args.trace_out, "--trace-out")
    result = search(config, args)
    for line in rebuild_errors(result):
        print(f"replcheck: {line}", file=sys.stderr)
    symmetry = result.symmetry
    first = next(iter(result.violations.values()), None)
    if first is not None and args.trace_out and first.trace:
        steps = [(step.action, step.state) for step in first.trace]
        document = trace_to_itf(config, steps, first.invariant, first.message)
        write_itf(args.trace_out, document)

    if args.json:
        doc = to_json(config, result, invariants, symmetry=symmetry, trace_out=args.trace_out)
        print(json.dumps(doc, indent=2))
        return exit_code(result)

    rate = result.distinct_states / result.seconds if result.seconds > 0 else 0
    print(f"replcheck check: {config.describe()}")
    print(
        f"explored {result.distinct_states:,} distinct states, depth {result.depth}, "
        f"in {result.seconds:.1f} s ({rate:,.0f} states/s; {symmetry_note(config, symmetry)})"
    )
    note = status_note(result)
    if note:
        print(f"note: {note}")
    print()
    rows = [inv.id for inv in invariants]
    print(table(rows, ["verdict"], {(r, "verdict"): cell(result, r) for r in rows}))
    if first is not None:
        print()
        print(f"Shortest counterexample to {first.invariant} ({first.length} states):")
        steps = [(s.action, s.state) for s in first.trace]
        kafka = isinstance(config, Config)
        if first.error:
            print(f"(cut short: {first.error})")
        for line in format_trace(steps) if kafka else format_plain_trace(steps, config):
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
    return exit_code(result)
