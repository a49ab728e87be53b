"""BFS benchmark: distinct states per second and memory per visited state.

    python benchmarks/bfs.py            # every config, one fresh process each
    python benchmarks/bfs.py --only kip320-3r
    python benchmarks/bfs.py --exact-symmetry   # reduce by model.kafka.symmetry.canonical

Each configuration runs in its own process so its peak RSS is its own; the
baseline (interpreter plus imports, measured before the search) is
subtracted to give bytes per visited state.  Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import time

CONFIGS = {
    # name: model keys (all kip320; bounds chosen so each run takes 10-60 s here)
    "kip320-2r": dict(mode="kip320", replicas=2, records=2, epochs=4, crashes=2),
    "kip320-3r": dict(mode="kip320", replicas=3, records=2, epochs=2, crashes=1),
    "hw-2r": dict(mode="hw", replicas=2, records=2, epochs=4, crashes=2),
}
# Long runs, only with --only: memory per state at 10 million states (issue 11's target:
# at most 64 bytes a visited state, frontier included); about ten minutes here.
LONG = {
    "4.1.0-3r-10M": dict(mode="4.1.0", replicas=3, records=2, epochs=3, crashes=1),
}
MAX_STATES = {"4.1.0-3r-10M": 10_000_000}
ALL = {**CONFIGS, **LONG}


def run_one(name: str, exact_symmetry: bool = False) -> dict:
    from replcheck.checker.explicit.bfs import bfs
    from replcheck.invariants import INVARIANTS
    from replcheck.model import KafkaReplication, make_config
    from replcheck.model.kafka.symmetry import canonical

    model = KafkaReplication(make_config(ALL[name]))
    if exact_symmetry:  # one state per orbit instead of the default's cheaper sort
        model.representative = canonical
    base_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.perf_counter()
    result = bfs(model, INVARIANTS, max_states=MAX_STATES.get(name))
    seconds = time.perf_counter() - start
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {
        "config": name,
        "status": result.status,
        "distinct_states": result.distinct_states,
        "transitions": result.transitions,
        "seconds": round(seconds, 2),
        "states_per_second": round(result.distinct_states / seconds),
        "peak_rss_mib": round(peak_kb / 1024, 1),
        "bytes_per_state": round((peak_kb - base_kb) * 1024 / result.distinct_states),
        "violated": sorted(result.violations),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", choices=list(ALL), action="append")
    parser.add_argument(
        "--exact-symmetry",
        action="store_true",
        help="reduce by the exact canonical member of each orbit (model.kafka.symmetry.canonical)",
    )
    parser.add_argument("--one", choices=list(ALL), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(run_one(args.one, args.exact_symmetry)))
        return
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))
    print(f"python {platform.python_version()}, {os.cpu_count()} cores, {platform.machine()}")
    print()
    print("| config | bounds | distinct states | seconds | states/s | peak RSS | bytes/state |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for name in args.only or CONFIGS:
        out = subprocess.run(
            [sys.executable, __file__, "--one", name]
            + (["--exact-symmetry"] if args.exact_symmetry else []),
            env=env,
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        r = json.loads(out)
        bounds = " ".join(f"{k}={v}" for k, v in ALL[name].items() if k != "mode")
        if name in MAX_STATES:
            bounds += f" (stopped at {MAX_STATES[name]:,} states)"
        print(
            f"| {name} | {bounds} | {r['distinct_states']:,} | {r['seconds']} | "
            f"{r['states_per_second']:,} | {r['peak_rss_mib']} MiB | {r['bytes_per_state']} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
