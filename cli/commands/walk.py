"""``replcheck walk``: seeded random walks as a Spark job, for bounds BFS cannot exhaust."""

from __future__ import annotations

import argparse
import json
import os
import sys

import replcheck
from replcheck.checker.walks.walk import END_DEADLOCK, END_DEPTH, END_VIOLATION
from replcheck.cli.args import (
    add_invariant_args,
    add_model_args,
    add_model_choice,
    model_config_from_args,
    positive_int,
    symmetry_on,
    whole_number,
)
from replcheck.cli.exits import EXIT_INTERRUPTED, EXIT_OK, EXIT_VIOLATION, UsageError
from replcheck.cli.outputs import prepare_out_dir
from replcheck.cli.report import table
from replcheck.invariants import registry, select
from replcheck.model.kafka.config import Config
from replcheck.model.registry import build_model
from replcheck.traces.itf import trace_to_itf, write_itf
from replcheck.traces.text import format_plain_trace, format_trace

NAME = "walk"
ORDER = 25
PARQUET = "walks.parquet"
SUMMARY = "summary.json"


nonnegative_int = whole_number(0)


def spark_conf(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    return key.strip(), value


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        NAME,
        help="seeded random walks on Spark (local[*] or a cluster) for bounds BFS cannot exhaust",
        description="Run many seeded random walks from the initial state, checking the "
        "invariants after every step, as a Spark job (local[*] by default, or --master "
        "spark://host:7077, or under spark-submit).  Walk i of seed S is always the same walk, "
        "however the walks are split.  Violations are replayed on the driver, shrunk and "
        "printed (and written as ITF with --out).  With --model tla-kip320 (or tla-hw, "
        "tla-kip101, tla-kip279) it walks the TLA+ reference spec instead.",
    )
    add_model_args(p)
    add_model_choice(p)
    g = p.add_argument_group("walks")
    add_invariant_args(g)
    g.add_argument(
        "--walks",
        type=positive_int,
        default=10_000,
        metavar="N",
        help="walks in all (default 10000)",
    )
    g.add_argument(
        "--depth",
        type=positive_int,
        default=100,
        metavar="D",
        help="steps per walk at most (default 100)",
    )
    g.add_argument(
        "--seed",
        type=nonnegative_int,
        default=0,
        metavar="S",
        help="seed: walk i of seed S is always the same walk (default 0)",
    )
    g.add_argument(
        "--swarm",
        action="store_true",
        help="swarm testing: each walk draws its own weights over action kinds (each kind "
        "switched off with probability 1/2)",
    )
    g.add_argument(
        "--symmetry",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="count distinct states up to a renaming of the replicas; the walks are the same "
        "either way (default: on for the Kafka model, off for the TLA+ spec)",
    )
    g.add_argument(
        "--no-shrink", action="store_true", help="export violating walks as found, unshrunk"
    )
    s = p.add_argument_group("spark")
    s.add_argument(
        "--master",
        metavar="URL",
        help="Spark master: local[*] (default), local[N], spark://host:7077, yarn...; under "
        "spark-submit its --master is used",
    )
    s.add_argument(
        "--partitions",
        type=positive_int,
        metavar="P",
        help="Spark tasks the walks are split into (default: at least 4 per core, and about "
        "200,000 steps per task for long jobs)",
    )
    s.add_argument(
        "--spark-conf",
        action="append",
        type=spark_conf,
        default=[],
        metavar="KEY=VALUE",
        help="extra Spark setting (repeatable), e.g. spark.driver.memory=4g",
    )
    o = p.add_argument_group("output")
    o.add_argument(
        "--out",
        metavar="DIR",
        help=f"write each invariant's shortest counterexample (ITF), {PARQUET} (one row per "
        f"walk) and {SUMMARY} to DIR (created if missing)",
    )
    o.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    o.add_argument("--quiet", action="store_true", help="no progress lines on stderr")


# ------------------------------------------------------------------------ run


def exit_code(violated: bool, interrupted: bool) -> int:
    """A violation found before a stop is still a violation (1); else 130 if Ctrl-C cut
    the walks short; else 0 -- "not violated in N walks", which is no proof."""
    if violated:
        return EXIT_VIOLATION
    return EXIT_INTERRUPTED if interrupted else EXIT_OK


def run(args: argparse.Namespace) -> int:
    config = model_config_from_args(args)
    invariants = select(args.invariant, registry(config))
    args.symmetry = symmetry_on(args, build_model(config))  # a bool from here on
    if args.master is not None and not args.master.strip():
        raise UsageError("--master: give a Spark master URL, e.g. local[*] or spark://host:7077")
    if args.out:
        prepare_out_dir(args.out, "--out")

    from replcheck.checker.spark import session as spark_session  # Spark is only needed here

    def started(master: str, partitions: int, startup: float) -> None:
        if not args.quiet:
            print(
                f"replcheck walk: {args.walks:,} walks on {master} in {partitions} tasks "
                f"(Spark started in {startup:.1f} s)",
                file=sys.stderr,
                flush=True,
            )

    try:
        result = replcheck.walk(
            config,
            walks=args.walks,
            depth=args.depth,
            seed=args.seed,
            swarm=args.swarm,
            invariants=[inv.id for inv in invariants],
            symmetry=args.symmetry,
            shrink=not args.no_shrink,
            spark=True,
            master=args.master,
            partitions=args.partitions,
            spark_conf=args.spark_conf,
            parquet=os.path.join(args.out, PARQUET) if args.out else None,
            progress=not args.quiet,
            on_start=started,
        )
    except spark_session.SparkUnavailable as exc:
        raise UsageError(str(exc)) from None
    except spark_session.JobFailed as exc:
        raise UsageError(f"the Spark job failed: {exc}") from None
    except spark_session.StartInterrupted:
        print("replcheck: interrupted while Spark was starting; no walks ran", file=sys.stderr)
        return EXIT_INTERRUPTED
    except KeyboardInterrupt:  # a second Ctrl-C, or one after the walks (aggregating, shrinking)
        print("replcheck: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    return _report(config, args, result, invariants)


def _report(config, args, result, invariants) -> int:
    summary, examples = result.summary, result.counterexamples
    if args.out:
        for ex in examples.values():
            ex.trace_file = os.path.join(args.out, f"{ex.invariant}.itf.json")
            write_itf(ex.trace_file, trace_to_itf(config, ex.steps, ex.invariant, ex.message))
    doc = to_json(
        config,
        args,
        summary,
        examples,
        invariants,
        result.master,
        result.seconds,
        result.startup_seconds,
        result.interrupted,
    )
    if args.out:
        with open(os.path.join(args.out, SUMMARY), "w", encoding="utf-8") as fh:
            json.dump(doc, fh, indent=2)
            fh.write("\n")
    if args.json:
        print(json.dumps(doc, indent=2))
    else:
        print_text(config, args, summary, examples, invariants, doc)
    return exit_code(bool(examples), result.interrupted)


# --------------------------------------------------------------------- output


def result_word(violated: bool, interrupted: bool) -> str:
    """An interrupted run without a violation must not read as a pass."""
    if violated:
        return "violated"
    return "interrupted" if interrupted else "not violated"


def to_json(
    config, args, summary, examples, invariants, master, seconds, startup, interrupted=False
) -> dict:
    first = next(iter(examples.values()), None)
    job = summary.job_seconds
    return {
        "result": result_word(bool(examples), interrupted),
        "interrupted": interrupted,
        "invariant": first.invariant if first else None,
        "message": first.message if first else None,
        "walks": summary.walks,
        "walks_requested": args.walks,
        "steps": summary.steps,
        "violations": {inv.id: summary.violations.get(inv.id, 0) for inv in invariants},
        "shortest_trace_length": min((ex.length for ex in examples.values()), default=None),
        "counterexamples": {
            ex.invariant: {
                "message": ex.message,
                "walk": ex.walk_id,
                "walk_steps": ex.walk_steps,
                "trace_length": ex.length,
                "shrink": ex.shrunk,
                "trace_file": ex.trace_file,
            }
            for ex in examples.values()
        },
        "ends": summary.ends,
        "action_counts": summary.action_counts,
        "never_fired": summary.never_fired(build_model(config).action_kinds()),
        "distinct_states_approx": summary.distinct_states_approx,
        "seconds": round(seconds, 3),
        "job_seconds": round(job, 3),
        "spark_startup_seconds": round(startup, 3),
        "steps_per_second": round(summary.steps / job) if job > 0 else None,
        "master": master,
        "partitions": summary.partitions,
        "seed": args.seed,
        "depth": args.depth,
        "swarm": args.swarm,
        "symmetry": args.symmetry,
        "model": getattr(config, "model", "kafka"),
        "mode": getattr(config, "mode", None),  # the Kafka release; None for the spec
        "config": config.to_dict(),
        "out": args.out,
    }


def print_text(config, args, summary, examples, invariants, doc) -> None:
    print(f"replcheck walk: {config.describe()}")
    if doc["interrupted"]:
        print(
            f"interrupted: {summary.walks:,} of {args.walks:,} walks done (Ctrl-C; this "
            "report covers those walks)"
        )
    choice = "swarm" if args.swarm else "uniform"
    print(
        f"{summary.walks:,} walks ({choice}, depth <= {args.depth}, seed {args.seed}) on "
        f"{doc['master']} in {summary.partitions} tasks: {summary.steps:,} steps in "
        f"{summary.job_seconds:.1f} s ({doc['steps_per_second'] or 0:,} steps/s); "
        f"{doc['seconds']:.1f} s in all"
    )
    ends = summary.ends
    print(
        f"walks ended: {ends.get(END_DEPTH, 0):,} at depth {args.depth}, "
        f"{ends.get(END_DEADLOCK, 0):,} with nothing enabled, "
        f"{ends.get(END_VIOLATION, 0):,} at a violation"
    )
    print(
        f"distinct states seen: ~{summary.distinct_states_approx:,} "
        f"(approx_count_distinct over {'symmetry-reduced ' if args.symmetry else ''}"
        "fingerprints)"
    )
    print()
    cells = {}
    rows = [inv.id for inv in invariants]
    for r in rows:
        n = summary.violations.get(r, 0)
        cells[(r, "violating walks")] = f"{n:,}" if n else "none"
        ex = examples.get(r)
        cells[(r, "shortest")] = (
            f"walk {ex.walk_id}: {ex.walk_steps} steps -> trace of {ex.length} states"
            if ex
            else "-"
        )
    print(table(rows, ["violating walks", "shortest"], cells))
    print()
    counts = summary.action_counts
    total = sum(counts.values()) or 1
    kinds = build_model(config).action_kinds()
    print("action coverage: " + ", ".join(f"{k} {100 * counts[k] / total:.1f}%" for k in kinds))
    never = summary.never_fired(kinds)
    print(f"never fired: {', '.join(never) if never else 'none'}")

    first = next(iter(examples.values()), None)
    if first is not None:
        print()
        print(
            f"Shortest counterexample to {first.invariant} ({first.length} states, from walk "
            f"{first.walk_id}; {first.shrunk}):"
        )
        steps = first.steps
        kafka = isinstance(config, Config)
        for line in format_trace(steps) if kafka else format_plain_trace(steps, config):
            print(line)
        print(f"=> {first.invariant} violated: {first.message}")
        if len(examples) > 1:
            others = ", ".join(ex.invariant for ex in list(examples.values())[1:])
            print(f"(also violated: {others})")
        print("note: a walk stops at its first violation; narrow with --invariant ID")
    if args.out:
        print()
        for ex in examples.values():
            print(f"trace written to {ex.trace_file} (ITF JSON)")
        print(f"per-walk results written to {os.path.join(args.out, PARQUET)} (Parquet)")
    print()
    if doc["result"] == "not violated":
        print(f"result: not violated in {summary.walks:,} walks (random walks prove nothing)")
    elif doc["result"] == "interrupted":
        print(f"result: interrupted; not violated in the {summary.walks:,} walks done")
    else:
        print(f"result: {doc['result']}")
