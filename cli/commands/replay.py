"""``replcheck replay``: re-execute a trace file against the model and show it step by step."""

from __future__ import annotations

import argparse
import json
from typing import Any

import replcheck
from replcheck.cli.args import kafka_release
from replcheck.cli.exits import EXIT_OK, EXIT_VIOLATION, UsageError
from replcheck.cli.outputs import check_writable
from replcheck.model.kafka.config import MODES, Config
from replcheck.model.registry import action_params
from replcheck.traces.itf import action_to_itf, encode_state
from replcheck.traces.load import load_trace
from replcheck.traces.replay import ReplayResult
from replcheck.traces.text import describe_action, format_plain_trace, format_table, state_changes

NAME = "replay"
ORDER = 30

KINDS = {
    "itf": "ITF trace with recorded states",
    "itf-actions": "ITF trace listing only actions",
    "actions": "hand-written action list",
}


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        NAME,
        help="re-execute a trace (ITF, or a hand-written action list) and show it step by step",
        description="Load a trace, rebuild the configuration from it, re-execute its actions "
        "one by one (each must be enabled and lead to the recorded state) and print the steps.  "
        "Exit 0: it replays exactly (and ends in the recorded violation, if one is recorded); "
        "1: it diverges (the first differing step is named); 2: not a valid trace.  "
        "Formats: docs/traces.md.",
    )
    p.add_argument("trace", metavar="TRACE", help="an ITF JSON file, or a .json/.toml action list")
    p.add_argument(
        "--html",
        metavar="OUT.html",
        help="also write a self-contained HTML timeline of the trace to OUT.html",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    g = p.add_argument_group("another release")
    g.add_argument(
        "--kafka",
        metavar="X.Y.Z",
        type=kafka_release,
        help="replay the trace's actions under this Kafka release instead of the one it "
        "records (the recorded states and violation are then not compared): how the same "
        "steps fare in another release",
    )
    g.add_argument(
        "--mode",
        choices=MODES,
        help="the same, naming the release by its truncation mode",
    )


def run(args: argparse.Namespace) -> int:
    if args.html:
        check_writable(args.html, "--html")
    if args.kafka and args.mode:
        raise UsageError("--kafka and --mode: give one of them")
    trace = load_trace(args.trace)  # a bad file: TraceError, one line from main
    release = args.kafka or args.mode
    if release and not isinstance(trace.config, Config):
        raise UsageError(f"--kafka: a Kafka model option; this trace is of {trace.config.model}")
    if args.html and not isinstance(trace.config, Config):
        raise UsageError(
            f"--html: the timeline view is the Kafka model's; {trace.config.model} traces "
            "replay as text or --json"
        )
    options = {"kafka": release} if release else {}
    result = replcheck.replay(trace, **options).engine
    focus = trace.invariant if release else None  # the violation the trace recorded
    if args.html:
        from replcheck.traces.html import render_html

        with open(args.html, "w", encoding="utf-8") as out:
            out.write(render_html(result))
    if args.json:
        print(json.dumps(to_json(result, args), indent=1))
    else:
        for line in report_lines(result, focus):
            print(line)
        if args.html:
            print(f"timeline written to {args.html}")
    return EXIT_OK if result.ok else EXIT_VIOLATION


def report_lines(result: ReplayResult, focus: str | None = None) -> list[str]:
    """The steps and the verdict; ``focus``: the invariant a trace replayed under another
    release recorded, whose verdict there is the point of the replay."""
    trace = result.trace
    lines = [
        f"replcheck replay {trace.path}: {trace.config.describe()}",
        f"{KINDS[trace.kind]}, {len(trace.actions)} action(s)",
        "",
    ]
    if isinstance(trace.config, Config):
        lines += format_table(result.steps, mark=result.broken_step)
    else:
        lines += format_plain_trace(result.steps, trace.config)
    lines.append("")
    div = result.divergence
    inv = result.invariant
    if div is not None:
        lines.append(f"DIVERGES at step {div.step}: {div.reason}")
    if focus is not None and focus not in result.first_violated:
        lines.append(f"=> {focus} is not violated along this trace in {trace.config.mode}")
    elif focus is not None:
        at, message = result.first_violated[focus]
        lines.append(f"=> {focus} violated (first at step {at}) in {trace.config.mode}: {message}")
    elif inv is not None and result.broken_step is not None:
        message = result.first_violated[inv][1]
        final = result.message
        where = f"step {result.broken_step}"
        lines.append(f"=> {inv} violated (first at {where}): {final or message}")
        others = [i for i in result.first_violated if i != inv]
        if others:
            lines.append(
                "also violated: "
                + ", ".join(f"{i} (step {result.first_violated[i][0]})" for i in others)
            )
    elif div is None:
        lines.append("=> no invariant is violated along this trace")
    if div is None:
        recorded = trace.invariant is not None
        ending = ", ends in the recorded violation" if recorded else ""
        checked = "replays exactly" if trace.kind == "itf" else "every action is enabled"
        lines.append(f"result: {checked} ({len(trace.actions)} steps){ending}")
    else:
        lines.append("result: diverged")
    return lines


def to_json(result: ReplayResult, args: argparse.Namespace) -> dict[str, Any]:
    trace = result.trace
    kafka = isinstance(trace.config, Config)
    params = action_params(trace.config)
    shown = None if kafka else params  # the Kafka model names replicas r0, r1, ...
    steps = []
    prev = None
    for index, (action, state) in enumerate(result.steps):
        if prev is None:
            changes = []
        elif kafka:
            changes = state_changes(prev, state)
        else:
            fields = zip(state._fields, state, prev, strict=True)
            changes = [f"{name} = {now!r}" for name, now, before in fields if now != before]
        steps.append(
            {
                "step": index,
                "action": action_to_itf(action, params) if action else None,
                "action_text": describe_action(action, shown) if action else None,
                "changes": changes,
                "state": encode_state(trace.config, state),
            }
        )
        prev = state
    div = result.divergence
    return {
        "result": "replayed" if div is None else "diverged",
        "file": trace.path,
        "kind": trace.kind,
        "config": trace.config.to_dict(),
        "actions": len(trace.actions),
        "invariant": result.invariant,
        "message": result.message,
        "violated_at_step": result.broken_step,
        "divergence": {"step": div.step, "reason": div.reason} if div else None,
        "violations": {
            inv: {"step": step, "message": message}
            for inv, (step, message) in result.first_violated.items()
        },
        "html": args.html,
        "steps": steps,
    }
