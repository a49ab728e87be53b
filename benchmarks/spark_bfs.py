"""Exhaustive BFS on Spark against the local engines (issue 24): overhead and scaling.

    python benchmarks/spark_bfs.py                 # ~6 min
    python benchmarks/spark_bfs.py --kafka 2.1.0 --records 2

Each run is ``replcheck check`` in a fresh process, one after the other: the local
engine with 1 and 2 worker processes, then ``--engine spark`` on local[1] and
local[2].  "search s" is the search itself as the run reports it (Spark's start-up
is not in it); "wall s" is the whole command.  Prints a Markdown table.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time

RUNS = [
    ("local, 1 worker", ["--workers", "1"]),
    ("local, 2 workers", ["--workers", "2"]),
    ("spark local[1]", ["--engine", "spark", "--master", "local[1]"]),
    ("spark local[2]", ["--engine", "spark", "--master", "local[2]"]),
]


def main() -> None:
    model = sys.argv[1:]  # check's model flags, as given (default: hw, 2 replicas)
    if {"-h", "--help"} & set(model):
        raise SystemExit(__doc__)
    print(f"`replcheck check {' '.join(model)}`\n")
    print("| engine | states | depth | search s | wall s | states/s (search) |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, flags in RUNS:
        argv = [sys.executable, "-m", "replcheck", "check", *model, *flags, "--json", "--quiet"]
        start = time.perf_counter()
        proc = subprocess.run(argv, capture_output=True, text=True)
        wall = time.perf_counter() - start
        try:
            doc = json.loads(proc.stdout)
        except json.JSONDecodeError:
            raise SystemExit(
                f"{' '.join(argv)} exited {proc.returncode}: {proc.stderr.strip()}"
            ) from None
        print(
            f"| {name} | {doc['distinct_states']:,} | {doc['depth']} | {doc['seconds']:.1f} | "
            f"{wall:.1f} | {doc['distinct_states'] / doc['seconds']:,.0f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
