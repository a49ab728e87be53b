"""``replcheck graph``: the reachable state graph of a small configuration, written to a file."""

from __future__ import annotations

import argparse
import json
import os
import sys

from replcheck.checker.explicit.bfs import default_memory_budget
from replcheck.cli.args import (
    add_invariant_args,
    add_model_args,
    add_model_choice,
    format_bytes,
    memory_size,
    model_config_from_args,
    positive_int,
    seconds,
)
from replcheck.cli.exits import (
    EXIT_INCOMPLETE,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_VIOLATION,
    UsageError,
)
from replcheck.cli.outputs import check_writable
from replcheck.invariants import registry, select
from replcheck.model.kafka.config import Config
from replcheck.model.registry import build_model
from replcheck.traces.text import describe_action

NAME = "graph"
ORDER = 50
DEFAULT_MAX_STATES = 50_000
FORMATS = (".graphml", ".dot", ".json")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        NAME,
        help="build the reachable state graph of a small configuration and write it",
        description="Build every reachable state (nodes, with their invariant verdicts) and "
        "transition (edges, labelled with actions) with networkx, write it as GraphML, DOT or "
        "node-link JSON (by the suffix of --out), and print: states and edges, deadlocks, the "
        "shortest path to a violation of each invariant, and the states from which no "
        "violation is reachable.  Exit 0: no state violates a checked invariant; 1: some do; "
        "2: bad input; 3: more states than --max-states or past --timeout (nothing written); "
        "130: interrupted.  With --model tla-hw (or tla-kip101, tla-kip279, tla-kip320) it "
        "builds the TLA+ reference spec's graph instead.",
    )
    add_model_args(p)
    add_model_choice(p)
    g = p.add_argument_group("graph")
    add_invariant_args(g)
    g.add_argument(
        "--out", required=True, metavar="FILE", help="FILE.graphml, FILE.dot or FILE.json"
    )
    g.add_argument(
        "--max-states",
        type=positive_int,
        default=DEFAULT_MAX_STATES,
        metavar="N",
        help=f"give up (exit 3, nothing written) on configurations with more than N "
        f"reachable states (default {DEFAULT_MAX_STATES:,})",
    )
    g.add_argument(
        "--timeout",
        type=seconds,
        metavar="SECONDS",
        help="give up (exit 3, nothing written) if the graph is not built in this many seconds",
    )
    budget = default_memory_budget()
    shown = format_bytes(budget) if budget else "none"
    g.add_argument(
        "--memory",
        type=memory_size,
        default=budget,
        metavar="SIZE",
        help="give up (exit 3, nothing written) when this process's memory reaches SIZE (e.g. "
        f"2G; default: 80%% of this machine's memory, {shown})",
    )
    g.add_argument(
        "--symmetry",
        action="store_true",
        help="merge states that differ only by replica naming (fewer nodes; edge labels then "
        "name replicas of the representative state)",
    )
    g.add_argument("--json", action="store_true", help="print the facts as one JSON object")


def run(args: argparse.Namespace) -> int:
    suffix = os.path.splitext(args.out)[1].lower()
    if suffix not in FORMATS:
        raise UsageError(f"--out {args.out}: expected a name ending in {', '.join(FORMATS)}")
    check_writable(args.out, "--out")
    try:  # networkx is imported here so the other commands work without it
        from replcheck.checker.explicit.graph import (
            GraphIncomplete,
            build_graph,
            graph_facts,
            state_label,
            write_graph,
        )
    except ImportError:
        raise UsageError("replcheck graph needs networkx (pip install networkx)") from None
    config = model_config_from_args(args)
    invariants = select(args.invariant, registry(config))
    # The Kafka model's states and actions read better in its own words (r0, e1, ...);
    # any other model's are labelled by their fields and parameter names.
    labels = dict(label=state_label, describe=describe_action) if isinstance(config, Config) else {}
    try:
        sg = build_graph(
            build_model(config),
            invariants,
            args.max_states,
            args.symmetry,
            time_limit=args.timeout,
            memory_limit=args.memory,
            **labels,
        )
    except GraphIncomplete as exc:
        if args.json:
            doc = {"config": config.to_dict(), "result": "incomplete", "reason": str(exc)}
            print(json.dumps(doc | {"states_built": exc.states, "out": None}, indent=2))
            return EXIT_INCOMPLETE
        print(
            f"replcheck graph: {config.describe()}: incomplete: {exc}; nothing written to "
            f"{args.out}.  The graph is for small configurations: lower the bounds, or raise "
            "--max-states / --timeout / --memory",
            file=sys.stderr,
        )
        return EXIT_INCOMPLETE
    except KeyboardInterrupt:
        print(f"replcheck graph: interrupted; nothing written to {args.out}", file=sys.stderr)
        return EXIT_INTERRUPTED
    facts = graph_facts(sg)
    write_graph(sg, args.out)
    any_violation = any(facts.violating.values())
    if args.json:
        doc = {"config": config.to_dict(), "symmetry": args.symmetry, "out": args.out}
        doc.update(facts.to_json())
        print(json.dumps(doc, indent=2))
        return EXIT_VIOLATION if any_violation else EXIT_OK

    print(f"replcheck graph: {config.describe()} (symmetry {'on' if args.symmetry else 'off'})")
    print(f"{facts.states:,} states, {facts.edges:,} edges (transitions)")
    if facts.deadlocks:
        shown = ", ".join(str(n) for n in facts.deadlocks[:5])
        more = " ..." if len(facts.deadlocks) > 5 else ""
        print(f"deadlocks: {len(facts.deadlocks)} state(s) with no enabled action: {shown}{more}")
    else:
        print("deadlocks: none (every state has a successor)")
    for inv in invariants:
        path = facts.shortest[inv.id]
        if path is None:
            print(f"{inv.id}: no violating state")
            continue
        target, actions = path
        print(
            f"{inv.id}: {facts.violating[inv.id]:,} violating state(s); shortest path "
            f"{len(actions)} steps (to state {target}): {', '.join(actions)}"
        )
    print(f"states from which no violation is reachable: {facts.safe:,} of {facts.states:,}")
    print(f"graph written to {args.out}")
    return EXIT_VIOLATION if any_violation else EXIT_OK
