"""``replcheck check``: exhaustive BFS, each invariant's verdict, the shortest counterexample."""

from __future__ import annotations

import argparse
import json
import sys

import replcheck
from replcheck.checker.explicit.bfs import SearchResult
from replcheck.checker.explicit.checkpoint import DEFAULT_EVERY as DEFAULT_CHECKPOINT_EVERY
from replcheck.cli.args import (
    add_model_args,
    add_model_choice,
    add_search_args,
    add_workers_arg,
    format_bytes,
    given_model_flags,
    model_config_from_args,
    option_given,
    progress_printer,
    seconds,
)
from replcheck.cli.exits import (
    EXIT_INCOMPLETE,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_VIOLATION,
    UsageError,
)
from replcheck.cli.outputs import check_writable
from replcheck.cli.report import cell, rebuild_errors, result_word, table, to_json
from replcheck.invariants import registry, select
from replcheck.model.kafka.config import Config
from replcheck.model.registry import AnyConfig
from replcheck.results import CheckResult
from replcheck.run import resume_point
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
    g = p.add_argument_group("engine")
    g.add_argument(
        "--engine",
        choices=("local", "spark"),
        default="local",
        help="local: worker processes on this machine (default); spark: Spark jobs, a BFS "
        "level at a time, the levels as Parquet (for a cluster; --checkpoint keeps them)",
    )
    g.add_argument(
        "--master",
        metavar="URL",
        help="with --engine spark: the Spark master (default local[*], or spark-submit's)",
    )
    g = p.add_argument_group("checkpoints (TLC's -recover)")
    g.add_argument(
        "--checkpoint",
        metavar="DIR",
        help="write the search's state to DIR at level boundaries (at most every "
        "--checkpoint-every seconds) and whenever it stops, Ctrl-C or SIGTERM included; go on with "
        "--resume DIR",
    )
    g.add_argument(
        "--checkpoint-every",
        type=seconds,
        default=DEFAULT_CHECKPOINT_EVERY,
        metavar="SECONDS",
        help=f"the least time between two checkpoints (default {DEFAULT_CHECKPOINT_EVERY:.0f})",
    )
    g.add_argument(
        "--resume",
        metavar="DIR",
        help="go on from the checkpoint in DIR, with the model, invariants and symmetry it "
        "was started with (the limits, --workers and --memory are this run's); the same "
        "counts and counterexample lengths as a run never stopped (a Spark search's "
        "folder: with --engine spark)",
    )


def search(config: AnyConfig | None, args: argparse.Namespace, label: str = "") -> CheckResult:
    """:func:`replcheck.check` the way the search flags ask (``compare`` runs one process
    per search: one worker is the single-process BFS).  With --resume, the model is the
    checkpoint's (``config`` is what it says, for the report)."""
    resume = getattr(args, "resume", None)
    what = {} if resume else {"invariants": args.invariant, "symmetry": args.symmetry}
    return replcheck.check(
        None if resume else config,
        **what,
        max_states=args.max_states,
        timeout=args.timeout,
        memory=args.memory,
        spill_dir=args.spill_dir,
        checkpoint=getattr(args, "checkpoint", None),
        checkpoint_every=getattr(args, "checkpoint_every", DEFAULT_CHECKPOINT_EVERY),
        resume=resume,
        workers=getattr(args, "workers", 1),
        engine=getattr(args, "engine", "local"),
        master=getattr(args, "master", None),
        on_progress=None if args.quiet else progress_printer(label),
    )


def resume_conflicts(args: argparse.Namespace) -> list[str]:
    """The model options and invariants given beside --resume (which would ignore them)."""
    chosen = [("--invariant", args.invariant), ("--symmetry", args.symmetry)]
    return given_model_flags(args) + [flag for flag, value in chosen if value is not None]


def resume_note(folder: str, engine: str) -> str:
    """Where a resumed search stands, said before its states are read back (a large
    checkpoint takes a minute or more to load, and the search is silent meanwhile).  A
    checkpoint that cannot be resumed is refused here, with the search's one-line error."""
    point = resume_point(folder, engine)
    depth = point.depth
    where = f"levels to depth {depth} complete" if point.complete else f"in level {depth}"
    return f"resuming {folder}: {point.distinct:,} distinct states, {where}; reading them back"


def resume_command(args: argparse.Namespace, result: CheckResult) -> str:
    """The command that goes on from the checkpoint the search left (a Spark search's
    folder is resumed by the Spark engine only)."""
    spark = " --engine spark" if args.engine == "spark" else ""
    return f"replcheck check{spark} --resume {result.checkpoint}"


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
        "memory": "stopped near all of this machine's memory: the state space was not exhausted",
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
    if args.engine == "spark":
        local = [
            flag
            for flag, typed in (
                ("--workers", option_given(args, "--workers")),
                ("--memory", option_given(args, "--memory")),
                ("--spill-dir", args.spill_dir is not None),
                ("--checkpoint-every", args.checkpoint_every != DEFAULT_CHECKPOINT_EVERY),
            )
            if typed
        ]
        if local:
            raise UsageError(
                f"{local[0]}: an option of the local engine; with --engine spark, Spark's "
                "executors keep the states (their cores and memory are the cluster's) and "
                "every level is a checkpoint"
            )
    if args.resume:
        given = resume_conflicts(args)
        if given:
            raise UsageError(
                f"--resume {args.resume}: the model, invariants and symmetry are the "
                f"checkpoint's; drop {', '.join(given)}"
            )
    config = None if args.resume else model_config_from_args(args)  # resumed: the checkpoint's
    if args.trace_out:
        check_writable(args.trace_out, "--trace-out")
    if args.resume and not args.quiet:
        print(resume_note(args.resume, args.engine), file=sys.stderr, flush=True)
    result = search(config, args)
    config = result.config
    invariants = select(list(result.invariants), registry(config))
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
    if result.disk_bytes:
        print(
            f"note: past --memory, the states spilled to disk "
            f"({format_bytes(result.disk_bytes)} at most)"
        )
    if result.checkpoint:
        resume = "" if result.exhaustive else f"; go on with: {resume_command(args, result)}"
        print(f"checkpoint: {result.checkpoint}{resume}")
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
