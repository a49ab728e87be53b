"""Level sizes of a BFS too large to exhaust, to extrapolate its whole space (issue 24).

    python benchmarks/levels.py --kafka 4.1.0 --replicas 3 --workers 2 --timeout 600

Runs the multi-process engine (at least 2 workers: its progress reports, one a round,
give each level's exact size) at the release's default bounds and prints each finished
level: its depth (steps from the initial state), its states, the states so far, the
ratio to the level before and the rate.  The ratios fall as the bounds bite; where they
reach 1 the widest level is near, which bounds the space.
"""

from __future__ import annotations

import argparse
import time


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kafka", default="4.1.0")
    parser.add_argument("--replicas", type=int, default=3)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=600.0)
    args = parser.parse_args()
    if args.workers < 2:
        parser.error("--workers: at least 2 (one worker is the single-process engine)")

    from replcheck.checker.explicit.parallel_bfs import parallel_bfs
    from replcheck.invariants import select
    from replcheck.model import KafkaReplication, make_config
    from replcheck.model.errors import ReplcheckError

    try:
        config = make_config({"mode": args.kafka, "replicas": args.replicas})
    except ReplcheckError as e:  # a bad release or replica count: one line, exit 2
        parser.error(str(e))
    model = KafkaReplication(config)
    print(f"kafka {args.kafka}, {args.replicas} replicas, {args.workers} workers", flush=True)
    print("| depth | level | states so far | ratio | seconds | states/s |", flush=True)
    print("|---:|---:|---:|---:|---:|---:|", flush=True)
    last = {"depth": None, "queued": 0, "prev": 1, "total": len(model.init_states())}

    def report(p) -> None:  # called every round: the last call of a depth saw its level
        if last["depth"] is not None and p.depth != last["depth"]:
            level, prev = last["queued"], last["prev"]
            last["total"] += level
            print(
                f"| {last['depth']} | {level:,} | {last['total']:,} | "
                f"{level / prev:.3f} | {p.seconds:.0f} | {p.states_per_second:,.0f} |",
                flush=True,
            )
            last["prev"] = level
        last["depth"], last["queued"] = p.depth, p.queue

    start = time.monotonic()
    kwargs = {"time_limit": args.timeout, "on_progress": report, "progress_every": 0.0}
    result = parallel_bfs(model, select(["all"]), workers=args.workers, **kwargs)
    print(
        f"{result.status}: {result.distinct_states:,} states, depth {result.depth}, "
        f"{time.monotonic() - start:.0f} s",
        flush=True,
    )


if __name__ == "__main__":
    main()
