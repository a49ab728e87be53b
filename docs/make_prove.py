"""Generate the proof table of docs/prove.md: release class x invariant x replicas.

    python docs/make_prove.py --run      # check every row again (~50 min on 2 cores),
                                         # record docs/proofs/results.json, rewrite the table
    python docs/make_prove.py            # rewrite the table from the recorded runs
    python docs/make_prove.py --check    # exit 1 if the table is not the recorded runs'

Each row and replication factor is checked at the default bounds by BFS (one
worker, a time limit): a search that exhausts the bounds proves every invariant it
does not find violated, for every depth.  Where BFS cannot exhaust them,
``replcheck prove --pdr`` gets each invariant BFS did not break, on its own with a
time limit; a violation it finds is confirmed by BMC.  Counterexamples are written
under docs/proofs/.  Nothing in the table is written by hand:
tests/test_prove_table.py checks it against the recorded runs, and (slow) proves
the quick cells again on the current model.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import replcheck
from replcheck.invariants import INVARIANTS
from replcheck.traces.itf import trace_to_itf

DOCS = Path(__file__).resolve().parent
PAGE = DOCS / "prove.md"
FOLDER = DOCS / "proofs"
RESULTS = FOLDER / "results.json"
START, END = "<!-- proof table: start -->", "<!-- proof table: end -->"

# One release of each behaviour class from 2.1 (KIP-279/KIP-320) to 4.1, ZooKeeper and
# KRaft where both exist; 2.8.0 carries catalogued bugs (B2, B3) at these bounds.
ROWS = {
    "2.1.0": {"kafka": "2.1.0"},
    "2.4.0": {"kafka": "2.4.0"},
    "2.7.2": {"kafka": "2.7.2"},
    "2.8.0": {"kafka": "2.8.0"},
    "3.5.0": {"kafka": "3.5.0", "kraft": False},
    "3.5.0 KRaft": {"kafka": "3.5.0", "kraft": True},
    "3.9.1": {"kafka": "3.9.1", "kraft": False},
    "3.9.1 KRaft": {"kafka": "3.9.1", "kraft": True},
    "4.1.0 KRaft": {"kafka": "4.1.0"},
}
REPLICAS = (2, 3)
DEFAULTS = [inv.id for inv in INVARIANTS if inv.default]
# How a run gave PDR the invariants BFS left: each on its own (from 2026-11-27), or, in
# runs recorded before, all of them in one proof.
PDR_EACH = "each"


def prove_row(
    row: str,
    replicas: int,
    bfs_limit: float,
    pdr_limit: float,
    bfs_workers: int = 1,
    pdr_only: list[str] | None = None,
) -> dict:
    """BFS first (``bfs_workers`` processes, one by default): where it exhausts the
    bounds, that is a proof for every depth, and its violations are as short as any.
    Where it cannot, PDR proves the invariants BFS did not find violated, each on its
    own with ``pdr_limit`` seconds (a violation it finds is confirmed by BMC).
    ``pdr_only``: give PDR only these."""
    keys = {**ROWS[row], "replicas": replicas}
    cells: dict[str, dict] = {}
    traces: dict[str, dict] = {}

    def violated(inv: str, violation, config, method: str, seconds: int) -> None:
        depth = violation.length - 1
        cells[inv] = {"status": "violated", "method": method, "depth": depth, "seconds": seconds}
        steps = [(s.action, s.state) for s in violation.trace]
        traces[inv] = trace_to_itf(config, steps, inv, violation.message)

    start = time.monotonic()
    search = replcheck.check(invariants=DEFAULTS, timeout=bfs_limit, workers=bfs_workers, **keys)
    seconds = round(time.monotonic() - start)
    for inv, violation in search.violations.items():
        violated(inv, violation, search.config, "BFS", seconds)
    left = [inv for inv in DEFAULTS if inv not in cells]
    if search.exhaustive:
        for inv in left:
            states = search.distinct_states
            cells[inv] = {"status": "proved", "method": "BFS", "seconds": seconds, "states": states}
        return {"row": row, "replicas": replicas, "cells": cells, "traces": traces}
    bfs_note = f"BFS: {search.distinct_states:,} states in {bfs_limit:.0f} s"
    if pdr_only is not None:
        left = [inv for inv in left if inv in pdr_only]
    for inv in left:  # each on its own: one hard invariant leaves only its own cell open
        start = time.monotonic()
        result = replcheck.prove(invariants=[inv], pdr=True, timeout=pdr_limit, **keys)
        seconds = round(time.monotonic() - start)
        if result.status == "proved":
            cells[inv] = {"status": "proved", "method": "PDR", "seconds": seconds}
        elif result.status == "violated":
            violated(inv, result.violations[inv], result.config, "PDR, BMC", seconds)
        else:
            why = (
                f"{bfs_note}; PDR {result.status} at frame {result.engine.frames} after {seconds} s"
            )
            cells[inv] = {"status": "open", "why": why}
    return {"row": row, "replicas": replicas, "cells": cells, "traces": traces}


def _trace_prefix(row: str, replicas: int) -> str:
    return f"{row.replace(' ', '-').lower()}-{replicas}r-"


def _trace_file(row: str, replicas: int, inv: str) -> str:
    return f"{_trace_prefix(row, replicas)}{inv}.itf.json"


def _task_name(row: str, replicas: int) -> str:
    return f"{row}/{replicas}"


def run(
    bfs_limit: float,
    pdr_limit: float,
    jobs: int,
    only: list[str] | None = None,
    bfs_workers: int = 1,
) -> None:
    """Prove every row (or those of ``only``, named ROW/RF, kept beside the recorded runs
    of the others) and record the runs and their traces."""
    FOLDER.mkdir(exist_ok=True)
    tasks = [(row, rf) for rf in REPLICAS for row in ROWS]
    if only:
        tasks = [t for t in tasks if _task_name(*t) in only]
    rows, rfs = zip(*tasks, strict=True)
    limits = [bfs_limit] * len(tasks), [pdr_limit] * len(tasks), [bfs_workers] * len(tasks)
    with ProcessPoolExecutor(jobs) as pool:
        done = list(pool.map(prove_row, rows, rfs, *limits))
    command = (
        f"python docs/make_prove.py --run --bfs-limit {bfs_limit:.0f} "
        f"--pdr-limit {pdr_limit:.0f} --jobs {jobs}"
    ) + (f" --bfs-workers {bfs_workers}" if bfs_workers != 1 else "")
    for old in FOLDER.glob("*.itf.json"):
        if not only or any(old.name.startswith(_trace_prefix(*t)) for t in tasks):
            old.unlink()
    runs = []
    for entry in done:
        for inv, itf in entry.pop("traces").items():
            name = _trace_file(entry["row"], entry["replicas"], inv)
            (FOLDER / name).write_text(json.dumps(itf, indent=1) + "\n")
        runs.append(entry)
    if only:
        record = json.loads(RESULTS.read_text())
        again = {(e["row"], e["replicas"]): e for e in runs}
        record["runs"] = [again.get((e["row"], e["replicas"]), e) for e in record["runs"]]
        names = " ".join(f"--only '{_task_name(*t)}'" for t in tasks)
        rerun = {"command": f"{command} {names}", "date": time.strftime("%Y-%m-%d")}
        rerun["rows"] = [_task_name(*t) for t in tasks]
        rerun["pdr"] = PDR_EACH
        record["reruns"] = [
            r for r in record.get("reruns", []) if not set(r["rows"]) <= set(rerun["rows"])
        ] + [rerun]
    else:
        record = {
            "command": command,
            "bfs_limit_seconds": bfs_limit,
            "pdr_limit_seconds": pdr_limit,
            "jobs": jobs,
            "machine": f"{platform.machine()}, Python {platform.python_version()}",
            "date": time.strftime("%Y-%m-%d"),
            "bounds": "records 2, epochs 3, one crash (the defaults)",
            "pdr": PDR_EACH,
            "runs": runs,
        }
    RESULTS.write_text(json.dumps(record, indent=1) + "\n")


def _pdr_scope(run: dict) -> str:
    if run.get("pdr") == PDR_EACH:
        return "for each invariant BFS left"
    return "for the invariants BFS left, in one proof"


def _cell(row: str, replicas: int, inv: str, cell: dict) -> str:
    if cell["status"] == "proved" and cell["method"] == "BFS":
        return f"proved (BFS, all {cell['states']:,} states, {cell['seconds']} s)"
    if cell["status"] == "proved":
        return f"proved ({cell['method']}, {cell['seconds']} s)"
    if cell["status"] == "violated":
        name = _trace_file(row, replicas, inv)
        return f"violated ([trace](proofs/{name}), depth {cell['depth']}, {cell['method']})"
    return f"open ({cell['why']})"


def table(record: dict) -> str:
    lines = [START, ""]
    lines.append("| release | RF | " + " | ".join(f"`{inv}`" for inv in DEFAULTS) + " |")
    lines.append("|---" * (len(DEFAULTS) + 2) + "|")
    for entry in record["runs"]:
        row, rf = entry["row"], entry["replicas"]
        cells = [_cell(row, rf, inv, entry["cells"][inv]) for inv in DEFAULTS]
        lines.append(f"| {row} | {rf} | " + " | ".join(cells) + " |")
    lines += [
        "",
        f"(Generated by `{record['command']}` on {record['date']}: {record['jobs']} rows "
        f"at once on this project's 2-core machine, each BFS with one worker for up to "
        f"{record['bfs_limit_seconds']:.0f} s, then, where BFS did not exhaust the bounds, "
        f"PDR for up to {record['pdr_limit_seconds']:.0f} s {_pdr_scope(record)}; "
        f"bounds: {record['bounds']}"
        + "".join(
            f"; then {', '.join(r['rows'])} again by `{r['command']}` on {r['date']}"
            + (f" ({_pdr_scope(r)})" if r.get("pdr") != record.get("pdr") else "")
            for r in record.get("reruns", [])
        )
        + ".)",
        "",
        END,
    ]
    return "\n".join(lines)


def page(record: dict) -> str:
    text = PAGE.read_text()
    head, rest = text.split(START, 1)
    _, tail = rest.split(END, 1)
    return head + table(record) + tail


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", action="store_true", help="prove every row again first")
    parser.add_argument(
        "--bfs-limit", type=float, default=600.0, help="BFS seconds per row (default 600)"
    )
    parser.add_argument(
        "--pdr-limit", type=float, default=60.0, help="PDR seconds per invariant (default 60)"
    )
    parser.add_argument("--jobs", type=int, default=2, help="rows proved at once")
    parser.add_argument(
        "--bfs-workers",
        type=int,
        default=1,
        help="BFS worker processes per row (default 1; a large row alone: --jobs 1 "
        "--bfs-workers 2)",
    )
    parser.add_argument(
        "--only",
        action="append",
        metavar="ROW/RF",
        choices=[_task_name(row, rf) for rf in REPLICAS for row in ROWS],
        help="with --run: prove this row again (e.g. '2.1.0/3'), keep the others' records",
    )
    parser.add_argument("--check", action="store_true", help="exit 1 if the table is stale")
    args = parser.parse_args()
    if args.only and not args.run:
        parser.error("--only: only with --run")
    if args.bfs_workers < 1:
        parser.error(f"--bfs-workers: must be at least 1 (got {args.bfs_workers})")
    if args.run:
        run(args.bfs_limit, args.pdr_limit, args.jobs, args.only, args.bfs_workers)
    record = json.loads(RESULTS.read_text())
    fresh = page(record)
    if args.check:
        if fresh != PAGE.read_text():
            print("stale: docs/prove.md (run: python docs/make_prove.py)")
            return 1
        return 0
    PAGE.write_text(fresh)
    print(f"wrote {PAGE.relative_to(DOCS.parent)} from {RESULTS.relative_to(DOCS.parent)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
