"""One process against worker processes on the same search (issue 11's speedup).

    python benchmarks/parallel.py              # bfs, then parallel_bfs with 2 workers; ~2 min
    python benchmarks/parallel.py --workers 1 2 4 8 16
    python benchmarks/parallel.py --kafka 4.1.0 --replicas 3 --max-states 2000000 --workers 1 16

Each engine runs in a fresh process, one after the other.  The default search is
3.5.0 on 2 replicas with epochs 4 (1,599,431 states, every invariant); --kafka and
--replicas pick another at the default bounds, --max-states stops each run there (a
multi-process run stops at the end of the round that passes it, so its count may be a
little higher: compare states/s).  Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time

DEFAULT_SEARCH = {"mode": "3.5.0", "replicas": 2, "records": 2, "epochs": 4, "crashes": 1}


def run_one(workers: int, search: dict, max_states: int | None) -> dict:
    from replcheck.checker.explicit.bfs import bfs
    from replcheck.checker.explicit.parallel_bfs import parallel_bfs
    from replcheck.invariants import select
    from replcheck.model import KafkaReplication, make_config

    model = KafkaReplication(make_config(search))
    start = time.perf_counter()
    if workers == 1:
        result = bfs(model, select(["all"]), max_states=max_states)
    else:
        result = parallel_bfs(model, select(["all"]), workers=workers, max_states=max_states)
    seconds = time.perf_counter() - start
    return {"states": result.distinct_states, "seconds": round(seconds, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--kafka", help="release to search at the default bounds")
    parser.add_argument("--replicas", type=int, help="with --kafka (default 2)")
    parser.add_argument("--max-states", type=int, help="stop each run at this many states")
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    search = DEFAULT_SEARCH
    if args.kafka:
        search = {"mode": args.kafka, "replicas": args.replicas or 2}
    from replcheck.model import make_config
    from replcheck.model.errors import ReplcheckError

    try:
        make_config(search)  # a bad release or replica count: one line, exit 2
    except ReplcheckError as e:
        parser.error(str(e))
    if args.one:
        print(json.dumps(run_one(args.one, search, args.max_states)))
        return
    print(f"search: {search}, max states: {args.max_states or 'none'}")
    print("| engine | states | seconds | states/s | speedup |")
    print("|---|---:|---:|---:|---:|")
    base = None
    for workers in args.workers:
        out = subprocess.run(
            [sys.executable, *sys.argv, "--one", str(workers)],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        r = json.loads(out)
        rate = r["states"] / r["seconds"]
        base = base or rate
        engine = "bfs" if workers == 1 else f"parallel_bfs, {workers} workers"
        print(
            f"| {engine} | {r['states']:,} | {r['seconds']} | {round(rate):,} | "
            f"{rate / base:.2f}x |",
            flush=True,
        )


if __name__ == "__main__":
    main()
