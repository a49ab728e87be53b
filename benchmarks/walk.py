"""Benchmark of ``replcheck walk``: Spark against a plain Python loop, and swarm against uniform.

    python benchmarks/walk.py                  # spark: local[1], local[2] and the plain loop
    python benchmarks/walk.py --walks 4000     # a shorter job
    python benchmarks/walk.py --swarm-study    # how often uniform and swarm walks find each bug

The Spark part runs the same walks (same seed, so the same steps) three ways:
a plain loop in this process, then ``local[1]`` and ``local[2]``, each in a fresh
process (one SparkContext per process).  It reports steps/s, Spark's start-up,
its overhead against the loop, and the cost of one task (a job of many 1-walk
tasks).  Results are printed as a Markdown table.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

from replcheck.checker.walks.walk import Walker, summarize
from replcheck.model.kafka.config import make_config

BOUNDS = dict(mode="kip320", replicas=3, records=2, epochs=3, crashes=2)  # no violation: full walks


def plain(walks: int, depth: int, seed: int) -> dict:
    walker = Walker(make_config(BOUNDS), depth=depth)
    start = time.monotonic()
    summary = summarize(walker.run_range(seed, 0, walks))
    seconds = time.monotonic() - start
    return {"steps": summary.steps, "seconds": seconds, "steps_per_second": summary.steps / seconds}


def one_spark(master: str, walks: int, depth: int, seed: int, partitions: int | None) -> dict:
    from replcheck.checker.spark import session as spark_session
    from replcheck.checker.spark import walks as spark_walk

    start = time.monotonic()
    spark = spark_session.start_session(master)
    startup = time.monotonic() - start
    parts = partitions or spark_walk.default_partitions(spark, walks, depth)
    job = spark_walk.WalkJob(make_config(BOUNDS), walks, depth, seed, parts)
    # warm-up: the first job starts the Python workers
    warm = spark_walk.WalkJob(make_config(BOUNDS), 4 * parts, 2, seed + 1, parts)
    spark_walk.run_job(spark, warm)[1].unpersist()
    df, job_seconds = spark_walk.run_walks(spark, job)
    summary = spark_walk.aggregate(df, job, job_seconds)
    df.unpersist()
    # per-task cost: many tasks of one 1-step walk each
    tiny = spark_walk.WalkJob(make_config(BOUNDS), 200, 1, seed, 200)
    df, tiny_seconds = spark_walk.run_walks(spark, tiny)
    df.unpersist()
    spark_session.close_session(spark)
    return {
        "master": master,
        "partitions": parts,
        "startup_seconds": startup,
        "steps": summary.steps,
        "job_seconds": job_seconds,
        "aggregate_seconds": summary.aggregate_seconds,
        "steps_per_second": summary.steps / job_seconds,
        "task_ms": 1000 * tiny_seconds / 200,
        "distinct_states_approx": summary.distinct_states_approx,
    }


def spark_benchmark(args: argparse.Namespace) -> None:
    base = plain(args.walks, args.depth, args.seed)
    runs = []
    for master in ("local[1]", "local[2]"):
        cmd = [sys.executable, __file__, "--one", master, "--walks", str(args.walks)]
        cmd += ["--depth", str(args.depth), "--seed", str(args.seed)]
        if args.partitions:
            cmd += ["--partitions", str(args.partitions)]
        out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
        runs.append(json.loads(out.strip().splitlines()[-1]))
    print(f"bounds: {BOUNDS}, {args.walks:,} walks x depth {args.depth}, seed {args.seed}")
    print(f"load average at the end: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores\n")
    print("| run | tasks | steps | job s | steps/s | vs loop | start-up s | ms/task |")
    print("|---|---|---|---|---|---|---|---|")
    print(
        f"| plain Python loop | - | {base['steps']:,} | {base['seconds']:.1f} | "
        f"{base['steps_per_second']:,.0f} | 1.00x | - | - |"
    )
    for r in runs:
        ratio = r["steps_per_second"] / base["steps_per_second"]
        print(
            f"| Spark {r['master']} | {r['partitions']} | {r['steps']:,} | "
            f"{r['job_seconds']:.1f} | {r['steps_per_second']:,.0f} | {ratio:.2f}x | "
            f"{r['startup_seconds']:.1f} | {r['task_ms']:.0f} |"
        )
    one, two = runs
    overhead = one["job_seconds"] / base["seconds"] - 1
    speedup = two["steps_per_second"] / one["steps_per_second"]
    print(f"\nlocal[2] / local[1] steps/s: {speedup:.2f}x")
    print(f"Spark overhead, local[1] job against the loop: {100 * overhead:+.1f}%")
    total = one["job_seconds"] + one["startup_seconds"] + one["aggregate_seconds"]
    print(f"... with start-up and aggregation: {100 * (total / base['seconds'] - 1):+.1f}%")


STUDY = [
    ("hw", dict(replicas=3, records=2, epochs=3, crashes=2)),
    ("kip101", dict(replicas=3, records=2, epochs=3, crashes=2)),
    ("kip101", dict(replicas=2, records=2, epochs=4, crashes=2, lossy_crash=True)),
]
STUDY_INVARIANTS = [
    "no-committed-data-loss",
    "acked-writes-durable",
    "consistent-logs",
    "strong-isr",
]


def swarm_study(args: argparse.Namespace) -> None:
    """Violating walks per invariant (each checked alone), uniform against swarm."""
    print(f"{args.walks:,} walks x depth {args.depth}, seed {args.seed}")
    print("cells: violating walks (steps of the shortest one)")
    print("\n| mode, bounds | invariant | uniform | swarm |")
    print("|---|---|---|---|")
    for mode, bounds in STUDY:
        config = make_config(dict(mode=mode, **bounds))
        for inv in STUDY_INVARIANTS:
            cells = []
            for swarm in (False, True):
                w = Walker(config, [inv], depth=args.depth, swarm=swarm)
                s = summarize(w.run_range(args.seed, 0, args.walks))
                n = s.violations.get(inv, 0)
                cells.append(f"{n} ({s.shortest[inv][0]} steps)" if n else "0")
            label = f"{mode} " + " ".join(f"{k}={v}" for k, v in bounds.items())
            print(f"| {label} | {inv} | {cells[0]} | {cells[1]} |", flush=True)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--walks", type=int, default=20_000)
    p.add_argument("--depth", type=int, default=100)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--partitions", type=int)
    p.add_argument("--one", metavar="MASTER", help=argparse.SUPPRESS)
    p.add_argument("--swarm-study", action="store_true")
    args = p.parse_args()
    if args.one:
        r = one_spark(args.one, args.walks, args.depth, args.seed, args.partitions)
        print(json.dumps(r))
    elif args.swarm_study:
        swarm_study(args)
    else:
        spark_benchmark(args)


if __name__ == "__main__":
    main()
