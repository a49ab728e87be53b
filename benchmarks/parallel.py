"""One process against worker processes on the same search (issue 11's speedup).

    python benchmarks/parallel.py              # bfs, then parallel_bfs with 2 workers; ~2 min
    python benchmarks/parallel.py --workers 1 2 4

Each engine runs in a fresh process, one after the other, on the 3.5.0 search
below (1,599,431 states, every invariant).  Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time

CONFIG = {"mode": "3.5.0", "replicas": 2, "records": 2, "epochs": 4, "crashes": 1}


def run_one(workers: int) -> dict:
    from replcheck.checker.bfs import bfs
    from replcheck.checker.parallel_bfs import parallel_bfs
    from replcheck.invariants import select
    from replcheck.model import KafkaReplication, make_config

    model = KafkaReplication(make_config(CONFIG))
    start = time.perf_counter()
    if workers == 1:
        result = bfs(model, select(["all"]))
    else:
        result = parallel_bfs(model, select(["all"]), workers=workers)
    seconds = time.perf_counter() - start
    return {"states": result.distinct_states, "seconds": round(seconds, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(run_one(args.one)))
        return
    print("| engine | states | seconds | states/s | speedup |")
    print("|---|---:|---:|---:|---:|")
    base = None
    for workers in args.workers:
        out = subprocess.run(
            [sys.executable, __file__, "--one", str(workers)],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        r = json.loads(out)
        base = base or r["seconds"]
        engine = "bfs" if workers == 1 else f"parallel_bfs, {workers} workers"
        rate = round(r["states"] / r["seconds"])
        print(
            f"| {engine} | {r['states']:,} | {r['seconds']} | {rate:,} | "
            f"{base / r['seconds']:.2f}x |",
            flush=True,
        )


if __name__ == "__main__":
    main()
