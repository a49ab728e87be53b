"""The cost of searching past RAM (issue 24): the same search in RAM and spilling to disk.

    python benchmarks/spill.py                      # 2.1.0, 3 replicas, coarse; ~15 min
    python benchmarks/spill.py --memory 300M --workers 1 2

Each run is ``replcheck check`` in a fresh process, one after the other, on the
issue's search (``--kafka 2.1.0 --replicas 3 --atomic --records 1 --epochs 4``,
7,866,820 states), once with the default --memory (all in RAM here) and once
with ``--memory`` small enough to spill.  Prints a Markdown table: states/s,
the peak RSS of the largest process of the run, and the disk the spilled states
took at most (bytes per state).
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time

MODEL = ["--kafka", "2.1.0", "--replicas", "3", "--atomic", "--records", "1", "--epochs", "4"]


def run(workers: int, memory: str | None) -> dict:
    argv = [sys.executable, "-m", "replcheck", "check", *MODEL, "--workers", str(workers)]
    with tempfile.TemporaryDirectory(prefix="spill-bench-") as spill:
        if memory:
            argv += ["--memory", memory, "--spill-dir", spill]
        start = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, __file__, "--measure", json.dumps([*argv, "--json", "--quiet"])],
            capture_output=True,
            text=True,
        )
        seconds = time.perf_counter() - start
    out, _, rss = proc.stdout.rstrip("\n").rpartition("\n")
    try:
        doc = json.loads(out)
    except json.JSONDecodeError:
        raise SystemExit(
            f"{' '.join(argv)} exited {proc.returncode}: {proc.stderr.strip()}"
        ) from None
    return {
        "states": doc["distinct_states"],
        "status": doc["status"],
        "seconds": seconds,
        "disk": doc["disk_bytes"],
        "rss": int(rss),
    }


def measure(argv: list[str]) -> int:
    """Run ``argv``; print its output, then the peak RSS of its largest process."""
    proc = subprocess.run(argv, capture_output=True, text=True)
    sys.stderr.write(proc.stderr)
    print(proc.stdout.rstrip("\n"))
    print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024)
    return proc.returncode


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memory", default="300M", help="the spilling runs' --memory")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--spill-only", action="store_true", help="skip the runs in RAM")
    parser.add_argument("--measure", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        raise SystemExit(measure(json.loads(args.measure)))
    print(f"`replcheck check {' '.join(MODEL)}`\n")
    print(
        "| workers | --memory | status | states | seconds | states/s | peak RSS (one process) "
        "| disk | disk bytes/state |"
    )
    print("|---:|---|---|---:|---:|---:|---:|---:|---:|")
    for workers in args.workers:
        for memory in (args.memory,) if args.spill_only else (None, args.memory):
            r = run(workers, memory)
            rate = r["states"] / r["seconds"]
            per = r["disk"] / r["states"] if r["disk"] else 0
            print(
                f"| {workers} | {memory or 'default (in RAM)'} | {r['status']} | "
                f"{r['states']:,} | {r['seconds']:.0f} | {rate:,.0f} | "
                f"{r['rss'] / 2**20:,.0f} MiB | {r['disk'] / 2**20:,.0f} MiB | {per:.1f} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
