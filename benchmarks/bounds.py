"""Where each method stops as the bounds grow: BFS, BMC, k-induction and PDR.

    python benchmarks/bounds.py                       # every cell, 300 s each, ~65 min on 2 cores
    python benchmarks/bounds.py --limit 60 --only 2.1.0-records-3

Each row raises one bound above the defaults (records 2, epochs 3, one crash,
2 replicas) for one release; each method gets the same time, in its own process,
on every default invariant at once (the headline's property set):

* ``bfs``: ``replcheck check --workers 1``: exhausting the bounds is a proof;
  otherwise the depth its complete levels cover;
* ``bmc``: ``replcheck prove``: the depth cleared, or the violation found;
* ``k-induction``: ``replcheck prove --induction --workers 1 --depth 2``, every lemma;
* ``pdr``: ``replcheck prove --pdr``, seeded with the lemmas: proved, or the frame reached.

Prints a Markdown table: each cell the verdict and the seconds it took.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

METHODS = ("bfs", "bmc", "k-induction", "pdr")
RAISED = {
    "defaults": [],
    "records-3": ["--records", "3"],
    "epochs-4": ["--epochs", "4"],
    "crashes-2": ["--crashes", "2"],
    "replicas-4": ["--replicas", "4"],
}
ROWS = {
    f"{release}-{bound}": ["--kafka", release, *flags]
    for release in ("2.1.0", "4.1.0")
    for bound, flags in RAISED.items()
}


def _command(flags: list[str], method: str, limit: int) -> list[str]:
    base = [sys.executable, "-m", "replcheck"]
    if method == "bfs":
        return [*base, "check", *flags, "--workers", "1", "--timeout", str(limit), "--json"]
    extra = {
        "bmc": ["--depth", "100"],
        "k-induction": ["--induction", "--workers", "1", "--depth", "2"],
        "pdr": ["--pdr"],
    }[method]
    return [*base, "prove", *flags, *extra, "--timeout", str(limit), "--json", "--quiet"]


def _cell(method: str, doc: dict, seconds: float) -> str:
    took = f"{seconds:.0f} s"
    if doc.get("violations"):
        inv, v = next(iter(doc["violations"].items()))
        depth = v["depth"] if "depth" in v else v["trace_length"] - 1
        return f"violated ({inv}, depth {depth}), {took}"
    if method == "bfs":
        states = f"{doc['distinct_states']:,} states"
        if doc["status"] == "complete":
            return f"proved (exhausted: {states}, depth {doc['depth']}), {took}"
        return f"{doc['status']}: {states}, every state within {doc['depth'] - 1} steps, {took}"
    if method == "bmc":
        return f"clear to depth {doc['cleared_depth']} ({doc['status']}), {took}"
    if doc["status"] == "cti":
        return f"CTI ({', '.join(doc['cti']['broken'])}), {took}"
    if method == "pdr":
        return f"{doc['status']} at frame {doc['frames']}, {took}"
    return f"{doc['status']}, {took}"


def run(row: str, method: str, limit: int) -> str:
    cmd = _command(ROWS[row], method, limit)
    start = time.monotonic()
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=limit + 180)
    except subprocess.TimeoutExpired:
        return f"no answer {limit + 180} s after its time limit"
    seconds = time.monotonic() - start
    try:
        doc = json.loads(done.stdout)
    except json.JSONDecodeError:
        return f"error (exit {done.returncode}): {done.stderr.strip().splitlines()[-1:]}"
    return _cell(method, doc, seconds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--limit", type=int, default=300, help="seconds per method and row (default 300)"
    )
    parser.add_argument("--only", action="append", choices=list(ROWS))
    parser.add_argument("--method", action="append", choices=METHODS)
    parser.add_argument("--jobs", type=int, default=2, help="cells run at once (default 2)")
    args = parser.parse_args()
    rows, methods = args.only or list(ROWS), args.method or list(METHODS)
    cells = [(r, m) for r in rows for m in methods]
    with ThreadPoolExecutor(args.jobs) as pool:
        results = dict(zip(cells, pool.map(lambda c: run(*c, args.limit), cells), strict=True))
    print(f"| row | {' | '.join(methods)} |")
    print("|---" * (len(methods) + 1) + "|")
    for row in rows:
        print(f"| {row} | {' | '.join(results[row, m] for m in methods)} |", flush=True)


if __name__ == "__main__":
    main()
