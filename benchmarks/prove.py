"""Bounded model checking with z3 against BFS, on the same model and bounds.

    python benchmarks/prove.py                      # the rows below, ~8 min on 2 cores
    python benchmarks/prove.py --only seed-1r

Rows: the seeds' hw committed-data loss on 2 replicas (with 1 and with 2 records):
BFS's shortest counterexample against the depth and time at which BMC finds it;
and a configuration BFS cannot exhaust (4.1.0 on 3 replicas: 43M states and 37
minutes were not enough), where BMC clears depths one by one until its time
limit.  Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from checker.bfs import bfs  # noqa: E402
from checker.prove import Property, bmc  # noqa: E402
from invariants import INVARIANTS, select  # noqa: E402
from invariants.kafka_z3 import Z3_INVARIANTS  # noqa: E402
from model.config import make_config  # noqa: E402
from model.kafka import KafkaReplication  # noqa: E402
from model.symbolic.kafka import KafkaSymbolic  # noqa: E402

LOSS = "no-committed-data-loss"
# name: (config keys, invariant, BMC depth limit, seconds for each engine, BFS too?)
ROWS = {
    "seed-1r": ({"mode": "hw", "records": 1}, LOSS, 12, 600, True),
    "seed-2r": ({"mode": "hw"}, LOSS, 12, 900, True),
    # BFS stopped at 43M states after 37 min without exhausting it (issue 10's note).
    "4.1.0-3-replicas": ({"mode": "4.1.0", "replicas": 3}, LOSS, 30, 300, False),
}


def run(name: str) -> str:
    keys, inv_id, depth, seconds, with_bfs = ROWS[name]
    config = make_config(keys)
    explicit = KafkaReplication(config)
    bfs_cell = "-"
    if with_bfs:
        start = time.perf_counter()
        found = bfs(explicit, select([inv_id]), time_limit=seconds)
        bfs_s = time.perf_counter() - start
        v = found.violations.get(inv_id)
        what = f"depth {v.length - 1}" if v else found.status
        bfs_cell = f"{what}, {found.distinct_states:,} states, {bfs_s:.1f} s"
    symbolic = KafkaSymbolic(config, sort="bv")
    (inv,) = select([inv_id], INVARIANTS)
    prop = Property(inv_id, lambda s: Z3_INVARIANTS[inv_id](symbolic, s), inv.check)
    start = time.perf_counter()
    result = bmc(explicit, symbolic, [prop], depth, time_limit=seconds)
    bmc_s = time.perf_counter() - start
    v = result.violations.get(inv_id)
    if v:
        bmc_cell = f"violated at depth {v.length - 1}, {bmc_s:.1f} s"
    else:
        bmc_cell = f"cleared depth {result.cleared} ({result.status}), {bmc_s:.1f} s"
    per_depth = ", ".join(f"{d.depth}:{d.seconds:.1f}" for d in result.depths[-4:])
    return f"| {name} | {config.describe()} | {bfs_cell} | {bmc_cell} | {per_depth} |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", action="append", choices=ROWS)
    args = parser.parse_args()
    print("| row | bounds | BFS | BMC (z3) | last depths: z3 s |")
    print("|---|---|---|---|---|")
    for name in args.only or ROWS:
        print(run(name), flush=True)


if __name__ == "__main__":
    main()
