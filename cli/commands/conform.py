"""``replcheck conform``: a trace run through the model and through Kafka's own classes."""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from collections import Counter
from typing import Any

import replcheck
from replcheck.cli.args import (
    add_model_args,
    given_model_flags,
    model_config_from_args,
    whole_number,
)
from replcheck.cli.exits import EXIT_OK, EXIT_VIOLATION, UsageError
from replcheck.harness.conform import ConformResult, Step
from replcheck.model.tla.config import KAFKA_MODEL

NAME = "conform"
ORDER = 32


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        NAME,
        help="run a trace (or random walks) through the model and through Kafka's own classes, "
        "and report the first step where they differ",
        description="Run steps through the model and through Kafka's own classes side by side "
        "(a ReplicaManager, Partition, fetcher and AlterPartitionManager per broker, Kafka's "
        "KRaft controller managers, from the release's jars, which Maven fetches on first use; "
        "docs/conformance.md).  The steps: a TRACE file (ITF or an action list), a catalogue "
        "entry's pinned steps (--id), or seeded random walks of the model (--walks).  After each "
        "step the shared fields (logs, HW, ISR, leaders and epochs, acknowledged writes, the "
        "controller's partition state) are compared.  Exit 0: Kafka agrees at every step; 1: it "
        "differs or refuses a step (the first one is named: a field that differs, a choice its "
        "controller does not make, a timing its clock cannot give); 2: bad input (no Java or "
        "Maven, a release or trace the harness does not cover).  KRaft traces only.",
    )
    p.add_argument("trace", metavar="TRACE", nargs="?", help="an ITF JSON file, or an action list")
    p.add_argument("--id", metavar="ID", help="a catalogue entry's steps, e.g. --id F3")
    add_model_args(p)
    p.set_defaults(model=KAFKA_MODEL)  # the Kafka model only: its traces run on Kafka
    g = p.add_argument_group("random walks (differential testing)")
    g.add_argument("--walks", type=whole_number(1), metavar="N", help="run N seeded random walks")
    g.add_argument("--seed", type=whole_number(0), default=0, metavar="S", help="(default 0)")
    g.add_argument(
        "--depth", type=whole_number(1), default=30, metavar="D", help="steps per walk (30)"
    )
    g.add_argument("--no-swarm", action="store_true", help="uniform walks, not swarm weights")
    o = p.add_argument_group("output")
    o.add_argument("--states", action="store_true", help="print Kafka's state after each step")
    o.add_argument("--json", action="store_true", help="print one JSON object on stdout")


def run(args: argparse.Namespace) -> int:
    given = [n for n, v in (("TRACE", args.trace), ("--id", args.id), ("--walks", args.walks)) if v]
    if len(given) != 1:
        raise UsageError("give one of TRACE, --id or --walks")
    flags = [f for f in given_model_flags(args) if f not in ("--kafka", "--mode")]
    progress = None
    if args.walks:
        config: dict[str, Any] = {"config": model_config_from_args(args)}
        if not config["config"].kraft:
            raise UsageError(
                "--walks: conform runs KRaft traces; give --kraft (and a 3.3+ --kafka)"
            )
        config["walks"], config["seed"], config["depth"] = args.walks, args.seed, args.depth
        config["swarm"] = not args.no_swarm
        if not args.json:
            progress = _progress
    else:
        if flags:
            raise UsageError(f"{flags[0]}: model flags go with --walks (a trace has its own)")
        release = args.kafka or args.mode
        options = {"kafka": release} if release else {}
        config = {"trace": args.trace, **options} if args.trace else {"entry": args.id, **options}
    report = replcheck.conform(**config, on_batch=progress)
    if args.json:
        print(json.dumps(_json(report)))
    elif len(report.results) == 1 and not args.walks:
        _print_one(report.results[0], args.states)
    else:
        _print_walks(report)
    return EXIT_OK if report.agrees else EXIT_VIOLATION


def _progress(done: int, total: int) -> None:
    print(f"{done} of {total} walks run on Kafka", file=sys.stderr, flush=True)


def _print_one(r: ConformResult, states: bool) -> None:
    reorders = [
        f"before step {r.plan.step_of[k + 1]}: {op['replicas']}"
        for k, op in enumerate(r.plan.ops)
        if op["op"] == "reorder"
    ]
    print(f"Kafka {r.kafka_version} (its own classes) against the model of {r.release}")
    print(
        f"replica order {r.plan.assignment}"
        + (f"; reordered (a reassignment) {'; '.join(reorders)}" if reorders else "")
    )
    for note in r.plan.notes:
        print(f"note: {note}")
    for s in r.steps:
        if s.model_step is None and s.index:
            continue
        mark = "refused" if s.refused else ("DIFFERS" if s.differences else "agrees")
        print(f"{s.model_step or 0:>4}  {s.action:<48} {mark}")
        for d in s.differences:
            print(f"        {d}")
        if s.refused:
            kind, detail = s.refused
            print(f"        {kind}: {detail.strip().splitlines()[0]}")
        for event in (s.kafka or {}).get("events", []):
            if not event.startswith("r") or " answers " not in event:
                print(f"        Kafka: {event}")
        if states and s.kafka:
            for line in _state_lines(s):
                print(f"        {line}")
    print(f"result: {r.summary()}")


def _state_lines(s: Step) -> list[str]:
    k = s.kafka or {}
    c = k.get("controller", {})
    out = [
        f"controller: leader {c.get('leader')} leader epoch {c.get('leader_epoch')} partition "
        f"epoch {c.get('partition_epoch')} isr {c.get('isr')} elr {c.get('elr')} replicas "
        f"{c.get('replicas')}"
    ]
    for b in k.get("brokers", []):
        if not b["alive"]:
            out.append(
                f"b{b['id']}: down, log {_log(b['log'])}, hw checkpoint {b['hw_checkpoint']}"
            )
            continue
        p = b.get("partition") or {}
        role = (
            f"leads epoch {p.get('leader_epoch')}"
            if p.get("leader") == b["id"]
            else (
                f"follows b{p.get('leader')} epoch {p.get('leader_epoch')}" if p else "no partition"
            )
        )
        extra = ""
        if p.get("leader") == b["id"]:
            remote = ", ".join(f"b{x['id']} {x['leo']}" for x in p.get("remote", []))
            extra = f" isr {p.get('isr')} maximal {p.get('maximal_isr')} remote LEOs {{{remote}}}"
        out.append(f"b{b['id']}: {role}, log {_log(b['log'])}, hw {b['hw']}{extra}")
    return out


def _log(records: list[list[Any]]) -> str:
    return "[" + ", ".join(f"{v}@{e}" for e, v in records) + "]"


def _print_walks(report: Any) -> None:
    counts = report.counts
    print(
        f"{len(report.results)} traces on Kafka {report.release}: {counts.get('agrees', 0)} agree, "
        f"{counts.get('disagrees', 0)} disagree, {counts.get('refused', 0)} refused "
        f"({report.seconds:.0f} s)"
    )
    kinds: Counter[str] = Counter()
    first: dict[str, tuple[int, str]] = {}
    for k, r in enumerate(report.results):
        bad = r.first_bad
        if bad is None:
            continue
        key = (
            f"refused: {bad.refused[0]}"
            if bad.refused
            else "differs: " + ", ".join(sorted({d.field for d in bad.differences}))
        ) + f" at {bad.action.split('(')[0]}"
        kinds[key] += 1
        first.setdefault(key, (k, r.summary()))
    for key, n in kinds.most_common():
        k, text = first[key]
        print(f"{n:>5}  {key}\n       first: walk {k}: {text}")


def _json(report: Any) -> dict[str, Any]:
    return {
        "kafka": report.release,
        "agrees": report.agrees,
        "counts": dict(report.counts),
        "seconds": round(report.seconds, 3),
        "results": [
            {
                "verdict": r.verdict,
                "summary": r.summary(),
                "violations": [dataclasses.asdict(b) for b in r.violations()],
                "assignment": r.plan.assignment,
                "ops": r.plan.ops,
                "steps": [
                    {
                        "step": s.model_step,
                        "action": s.action,
                        "differences": [str(d) for d in s.differences],
                        "refused": list(s.refused) if s.refused else None,
                        "kafka": s.kafka,
                    }
                    for s in r.steps
                ],
            }
            for r in report.results
        ],
    }
