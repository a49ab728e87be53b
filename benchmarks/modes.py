"""States and seconds of each release at the default bounds, coarse and message level.

    python benchmarks/modes.py                  # 2 replicas, the CLI's default bounds
    python benchmarks/modes.py --replicas 3 --records 1 --epochs 3

One exhaustive BFS per (release, model) with every invariant, symmetry on, in
this process one after another.  Prints a Markdown table for benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import platform
import time

from replcheck.checker.explicit.bfs import bfs
from replcheck.invariants import INVARIANTS
from replcheck.model import KafkaReplication, make_config
from replcheck.model.kafka.releases import MODE_RELEASES

# One release per distinct row set of the release table that matters at these bounds.
RELEASES = (
    *("0.10.2", "1.1.1", "2.0.0", "2.0.1", "2.1.0", "2.1.1", "2.2.0", "2.4.0"),
    *("2.7.0", "2.8.0", "3.0.0", "3.4.1", "3.5.0", "3.7.0", "4.0.0", "4.1.0"),
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--replicas", type=int, default=2)
    parser.add_argument("--records", type=int, default=2)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--crashes", type=int, default=1)
    args = parser.parse_args()
    bounds = dict(
        replicas=args.replicas, records=args.records, epochs=args.epochs, crashes=args.crashes
    )
    names = {release: mode for mode, release in MODE_RELEASES.items()}
    print(f"{platform.processor() or platform.machine()}, Python {platform.python_version()}")
    print(f"bounds: {' '.join(f'{k}={v}' for k, v in bounds.items())}\n")
    print("| release | message level: states | s | coarse (--atomic): states | s | violated |")
    print("|---|---:|---:|---:|---:|---|")
    for release in RELEASES:
        cells = []
        violated: set[str] = set()
        for atomic in (False, True):
            model = KafkaReplication(make_config({**bounds, "mode": release, "atomic": atomic}))
            start = time.perf_counter()
            result = bfs(model, INVARIANTS)
            seconds = time.perf_counter() - start
            cells += [f"{result.distinct_states:,}", f"{seconds:.1f}"]
            if not atomic:
                violated = set(result.violations)
        label = f"{release} (`{names[release]}`)" if release in names else release
        shown = ", ".join(sorted(violated)) or "none"
        print(f"| {label} | {' | '.join(cells)} | {shown} |", flush=True)


if __name__ == "__main__":
    main()
