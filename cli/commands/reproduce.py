"""``replcheck reproduce``: a trace taken by a real Kafka cluster on loopback."""

from __future__ import annotations

import argparse
import json
import re
import signal
from pathlib import Path
from typing import Any

import replcheck
from replcheck.cli.args import whole_number
from replcheck.cli.exits import (
    EXIT_INCOMPLETE,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_VIOLATION,
    UsageError,
)
from replcheck.cluster.nodes import BROKER_SETTINGS
from replcheck.cluster.runner import Reproduction, StepRun

NAME = "reproduce"
ORDER = 33


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        NAME,
        help="take a trace on a real Kafka cluster on 127.0.0.1 and show whether the "
        "acknowledged records survive",
        description="Start a KRaft cluster of the release on 127.0.0.1 (one controller, one "
        "JVM per broker, from its jars on Maven Central, which Maven fetches on first use), "
        "create the trace's topic, and make Kafka take each step: a relay between the "
        "brokers, and between each broker and the controller, holds fetches, metadata "
        "fetches and AlterPartition requests until their step; a producer with acks=all "
        "writes, Kafka's Admin elects and reorders, SIGKILL and SIGTERM crash and shut down. "
        "Each step waits for Kafka's own evidence (a log line, an answered request, the "
        "partition epoch a broker applied).  At the end every gate opens and the partition "
        "is read from its leader.  Exit 1: an acknowledged record is gone; 0: every one "
        "survived (also where Kafka refused a step, as a fixed release does); 2: bad input "
        "or a step no cluster can be made to take; 3: a step timed out (it is named); 130: "
        "interrupted.  The processes, ports and data are gone on every exit; the logs stay "
        "in the run folder.  docs/reproduce.md has how each step is taken.",
        epilog="Broker settings changed from Kafka's defaults: "
        + "; ".join(f"{k}={v} ({why})" for k, (v, why) in BROKER_SETTINGS.items()),
    )
    p.add_argument("trace", metavar="TRACE", nargs="?", help="an ITF JSON file, or an action list")
    p.add_argument("--id", metavar="ID", help="a catalogue entry's pinned steps, e.g. --id F3")
    p.add_argument(
        "--kafka", metavar="X", help="the Kafka release (with --id; a trace has its own)"
    )
    p.add_argument(
        "--steps-of",
        metavar="R",
        help="take the steps as the model of release R takes them, on the --kafka cluster (a "
        "negative control: an affected release's steps on a fixed one)",
    )
    p.add_argument(
        "--runs",
        type=whole_number(1),
        default=1,
        metavar="N",
        help="take the steps N times, each on a fresh cluster (1)",
    )
    p.add_argument(
        "--out",
        metavar="DIR",
        help="the run folder: logs and report (default replcheck-runs/NAME-RELEASE-TIME)",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object on stdout")


def run(args: argparse.Namespace) -> int:
    given = [n for n, v in (("TRACE", args.trace), ("--id", args.id)) if v]
    if len(given) != 1:
        raise UsageError("give one of TRACE or --id")
    options: dict[str, Any] = {"kafka": args.kafka} if args.kafka else {}
    config: dict[str, Any] = {"trace": args.trace} if args.trace else {"entry": args.id}
    previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        report = replcheck.reproduce(
            **config,
            **options,
            steps_of=args.steps_of,
            runs=args.runs,
            out=args.out,
            on_step=None if args.json else _print_step,
            on_run=None if args.json else _print_run_start,
        )
    finally:
        signal.signal(signal.SIGTERM, previous)
    if args.json:
        print(json.dumps(_json(report)))
    else:
        _print_report(report)
    return {
        "lost": EXIT_VIOLATION,  # "refused" (a fixed release's answer) and "kept": 0
        "interrupted": EXIT_INTERRUPTED,
        "timed out": EXIT_INCOMPLETE,
    }.get(report.verdict, EXIT_OK)


def _interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


def _print_run_start(run: int, folder: Path) -> None:
    print(
        f"run {run}: starting a KRaft cluster on 127.0.0.1, logs in {folder} (the first run "
        "of a release fetches its jars with Maven) ...",
        flush=True,
    )


def _print_step(run: int, s: StepRun) -> None:
    where = f"{s.step:>4}" if s.step else "    "
    print(f"{where}  {s.action:<48} {s.seconds:5.1f} s", flush=True)
    for line in s.evidence[-3:]:
        print(f"        Kafka: {_short(line)}", flush=True)


# The lines that tell the story of a loss: a leader's epoch change and the epoch it saw
# before, a replay skipped, an answer ignored or refused, a truncation, a fence.
STORY = (
    "Shrinking ISR from",
    "ISR updated to",
    "previous leader epoch was",
    "Skipped the become-leader",
    "Ignoring failed ISR update",
    "Ignoring new ISR",
    "Rejecting AlterPartition",
    "Truncating to offset",
    "Fencing broker",
)


_TOPIC_ID = re.compile(r" with topic id Some\([^)]*\)")
_LOGGER = re.compile(r" \([a-zA-Z_.$]+\)$")


def _short(line: str, width: int = 200) -> str:
    """A log line without the topic id and the logger's name, cut at ``width``."""
    line = _LOGGER.sub("", _TOPIC_ID.sub("", line))
    return line if len(line) <= width else line[: width - 3] + "..."


def _print_report(report: Any) -> None:
    plan = report.plan
    lag = ", ".join(f"r{b}" for b in sorted(plan.lagging)) or "none"
    print(
        f"\nKafka {report.release}, a real cluster on 127.0.0.1: {report.name}, "
        f"{len(plan.actions)} steps; metadata held back for: {lag}; replica order "
        f"{plan.plan.assignment}"
    )
    for n, r in enumerate(report.runs, start=1):
        _print_run(n, r)
    print(
        f"{report.verdict.upper()}: {report.lost} of {len(report.runs)} runs lost an "
        f"acknowledged record ({report.seconds:.0f} s; run folder {report.folder})"
    )


def _print_run(n: int, r: Reproduction) -> None:
    head = f"run {n}: {r.verdict}"
    if r.failure:
        head += f" ({r.failure})"
    if r.refused:
        head += f" (Kafka refused: {r.refused})"
    print(f"{head}; {r.seconds:.0f} s; logs in {r.folder / 'logs'}")
    story = [line for line in r.kafka_lines if any(mark in line for mark in STORY)]
    if story:
        print("  Kafka's account (its log lines, in time order):")
        for line in story[-16:]:
            print(f"    {_short(line)}")
    for line in r.unplanned:
        print(f"  Kafka also, not a step of the trace: {_short(line)}")
    final = r.final
    if "records" in final:
        where = f"broker {final.get('leader')}, ISR {final.get('isr')}, log end {final.get('end')}"
        present = {rec["value"]: rec["offset"] for rec in final["records"]}
        for record, status in sorted(r.writes.items()):
            state = "acknowledged" if status.startswith("acked") else (status or "unanswered")
            kept = "present" if record in present else "MISSING"
            print(f"  {record}: {state}; {kept} in the final leader's log ({where})")


def _json(report: Any) -> dict[str, Any]:
    return {
        "release": report.release,
        "name": report.name,
        "verdict": report.verdict,
        "lost_runs": report.lost,
        "runs": [
            {
                "verdict": r.verdict,
                "failure": r.failure,
                "refused": r.refused,
                "unplanned": r.unplanned,
                "kafka_lines": r.kafka_lines,
                "writes": r.writes,
                "lost": r.lost,
                "final": r.final,
                "folder": str(r.folder),
                "seconds": round(r.seconds, 1),
                "steps": [
                    {
                        "step": s.step,
                        "action": s.action,
                        "seconds": round(s.seconds, 2),
                        "kafka": s.evidence,
                    }
                    for s in r.steps
                ],
            }
            for r in report.runs
        ],
        "lagging": sorted(report.plan.lagging),
        "seconds": round(report.seconds, 1),
    }
