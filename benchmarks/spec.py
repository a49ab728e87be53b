"""The TLA+ reference spec against TLC: the same states, and the time to reach them.

    python benchmarks/spec.py                 # every row but the last, one process each; ~2 min
    python benchmarks/spec.py --only kip320-3r --seconds 120
    python benchmarks/spec.py --only kip320-3r-sym   # the whole 3-replica space, by orbits; ~5 min

Rows: the four variants' full 2-replica spaces (TLC: 62,855 / 53,413 / 53,099 /
28,939 distinct states in 13.1 / 19.0 / 9.9 / 5.6 s), the first WeakIsr
violation on 3 replicas (TLC: 9 states for the HW spec; 11 states for Kip101 and
Kip279, in 47.6 s and 35.9 s), and Kip320 on 3 replicas for a fixed time, whose
rate compares with TLC's 6,000-8,000 distinct states/s, and the whole of that space
with exact symmetry (one state per orbit under Permutations(Replicas); TLC: 341 s).
Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time

# name: (model, replicas, invariants, what the run measures); rows in SYMMETRY reduce
# by symmetry and run without the time limit.
SYMMETRY = {"kip320-3r-sym"}
ROWS = {
    "hw-2r": ("tla-hw", 2, ["type-ok"], "full space"),
    "kip101-2r": ("tla-kip101", 2, ["type-ok"], "full space"),
    "kip279-2r": ("tla-kip279", 2, ["type-ok"], "full space"),
    "kip320-2r": ("tla-kip320", 2, ["type-ok"], "full space"),
    "hw-3r-weak": ("tla-hw", 3, ["weak-isr"], "first WeakIsr violation"),
    "kip101-3r-weak": ("tla-kip101", 3, ["weak-isr"], "first WeakIsr violation"),
    "kip279-3r-weak": ("tla-kip279", 3, ["weak-isr"], "first WeakIsr violation"),
    "kip320-3r": ("tla-kip320", 3, ["type-ok", "weak-isr", "strong-isr"], "time-limited"),
    "kip320-3r-sym": ("tla-kip320", 3, ["type-ok", "weak-isr", "strong-isr"], "orbits, full"),
}
DEFAULT_ROWS = [name for name in ROWS if name not in SYMMETRY]


def run_one(name: str, seconds: float) -> dict:
    from replcheck.checker.explicit.bfs import bfs
    from replcheck.invariants import registry, select
    from replcheck.model.tla.config import make_spec_config

    model_name, replicas, ids, _what = ROWS[name]
    config = make_spec_config({"model": model_name, "replicas": replicas})
    start = time.perf_counter()
    symmetric = name in SYMMETRY
    result = bfs(
        config.build(),
        select(ids, registry(config)),
        symmetry=symmetric,
        time_limit=None if symmetric else seconds,
    )
    elapsed = time.perf_counter() - start
    first = next(iter(result.violations.values()), None)
    return {
        "row": name,
        "status": result.status,
        "distinct_states": result.distinct_states,
        "seconds": round(elapsed, 2),
        "states_per_second": round(result.distinct_states / elapsed),
        "trace_length": first.length if first else None,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", action="append", choices=ROWS)
    parser.add_argument("--seconds", type=float, default=60.0, help="limit of the time-limited row")
    parser.add_argument("--one", help=argparse.SUPPRESS)  # internal: run one row, print JSON
    args = parser.parse_args()
    if args.one:
        print(json.dumps(run_one(args.one, args.seconds)))
        return
    print("| row | what | status | distinct states | trace | seconds | states/s |")
    print("|---|---|---|---:|---:|---:|---:|")
    for name in args.only or DEFAULT_ROWS:
        out = subprocess.run(
            [sys.executable, __file__, "--one", name, "--seconds", str(args.seconds)],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        r = json.loads(out)
        trace = r["trace_length"] or "-"
        print(
            f"| {name} | {ROWS[name][3]} | {r['status']} | {r['distinct_states']:,} | {trace} "
            f"| {r['seconds']} | {r['states_per_second']:,} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
