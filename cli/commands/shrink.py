"""``replcheck shrink``: drop steps from a counterexample while it still violates its invariant."""

from __future__ import annotations

import argparse
import json

from replcheck.cli.exits import EXIT_OK, EXIT_VIOLATION, UsageError
from replcheck.cli.outputs import check_writable
from replcheck.invariants import registry, select
from replcheck.model.kafka.config import Config
from replcheck.model.registry import build_model
from replcheck.traces.itf import trace_to_itf, write_itf
from replcheck.traces.load import load_trace
from replcheck.traces.replay import execute, replay_trace
from replcheck.traces.shrink import shrink
from replcheck.traces.text import format_plain_trace, format_table

NAME = "shrink"
ORDER = 40


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        NAME,
        help="shorten a counterexample by delta debugging over its actions",
        description="Remove steps from a trace (delta debugging over its action list), keeping "
        "only sequences whose actions are all enabled and that still violate the same "
        "invariant, until no single step can be removed; write the result as ITF.  Exit 0: "
        "written; 1: the trace does not replay or violates nothing; 2: bad input.",
    )
    p.add_argument("trace", metavar="TRACE", help="an ITF JSON file, or a .json/.toml action list")
    p.add_argument("--out", required=True, metavar="SHORTER", help="where to write the ITF result")
    p.add_argument(
        "--invariant",
        metavar="ID",
        help="the invariant to keep violating (default: the one the trace records, else the "
        "first one it violates)",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    p.add_argument("--quiet", action="store_true", help="print only the summary line")


def run(args: argparse.Namespace) -> int:
    check_writable(args.out, "--out")
    trace = load_trace(args.trace)
    invariants = registry(trace.config)
    if args.invariant:
        select([args.invariant], invariants)  # an unknown id is bad input (exit 2)
    replayed = replay_trace(trace)
    if not replayed.ok:
        div = replayed.divergence
        return _fail(args, f"the trace does not replay: step {div.step}: {div.reason}")
    inv_id = args.invariant or replayed.invariant
    if inv_id is None:
        return _fail(args, "the trace violates no invariant: nothing to shrink")
    if inv_id not in replayed.first_violated:
        return _fail(args, f"the trace does not violate {inv_id}: nothing to shrink")

    model = build_model(trace.config)
    actions = shrink(model, trace.actions, inv_id, invariants)
    steps = execute(model, actions)
    (inv,) = select([inv_id], invariants)
    message = inv(steps[-1][1])
    write_itf(args.out, trace_to_itf(trace.config, steps, inv_id, message))

    before, after = len(trace.actions), len(actions)
    if args.json:
        doc = {
            "result": "shrunk",
            "invariant": inv_id,
            "message": message,
            "steps_before": before,
            "steps_after": after,
            "out": args.out,
        }
        print(json.dumps(doc, indent=2))
        return EXIT_OK
    if args.quiet:
        print(f"{inv_id}: {before} steps -> {after} steps, written to {args.out}")
        return EXIT_OK
    print(f"replcheck shrink {trace.path}: {trace.config.describe()}")
    print(f"{inv_id}: {before} steps -> {after} steps (no single step can be removed)")
    print()
    if isinstance(trace.config, Config):
        lines = format_table(steps, mark=len(steps) - 1)
    else:
        lines = format_plain_trace(steps, trace.config)
    for line in lines:
        print(line)
    print()
    print(f"=> {inv_id} violated: {message}")
    print(f"written to {args.out} (ITF JSON)")
    return EXIT_OK


def _fail(args: argparse.Namespace, reason: str) -> int:
    if args.json:
        print(json.dumps({"result": "not-shrunk", "reason": reason}, indent=2))
    else:
        print(f"replcheck shrink: {reason}; nothing written")
    return EXIT_VIOLATION


__all__ = ["NAME", "ORDER", "UsageError", "register", "run"]
