"""``replcheck compare``: the same bounds under several modes, as one table."""

from __future__ import annotations

import argparse
import json

from checker.bfs import SearchResult
from checker.cli import (
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_VIOLATION,
    UsageError,
    add_model_args,
    add_search_args,
    config_from_args,
)
from checker.commands.check import search, status_note
from checker.report import cell, table, to_json
from invariants import select
from model.config import MODES

NAME = "compare"
ORDER = 20


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        NAME,
        help="check several modes at the same bounds; a table of invariants x modes",
        description="Run check for each mode and print invariants as rows, modes as columns.",
    )
    p.add_argument(
        "--modes",
        default=",".join(MODES),
        metavar="M,M,...",
        help=f"comma-separated modes (default {','.join(MODES)})",
    )
    add_model_args(p, with_mode=False)
    add_search_args(p)


def parse_modes(text: str) -> list[str]:
    modes = [m.strip() for m in text.split(",") if m.strip()]
    if not modes:
        raise UsageError("--modes: give at least one mode")
    for m in modes:
        if m not in MODES:
            raise UsageError(f"--modes: unknown mode {m!r} (known: {', '.join(MODES)})")
    return modes


def run(args: argparse.Namespace) -> int:
    modes = parse_modes(args.modes)
    invariants = select(args.invariant)
    configs = {m: config_from_args(args, mode=m) for m in modes}
    results: dict[str, SearchResult] = {}
    for m in modes:
        results[m] = search(configs[m], args, label=f"[{m}] ")
        if results[m].status == "interrupted":
            break
    done = list(results)
    rows = [inv.id for inv in invariants]
    if args.json:
        doc = {
            "modes": done,
            "config": {k: v for k, v in configs[modes[0]].to_dict().items() if k != "mode"},
            "results": {
                m: to_json(configs[m], results[m], invariants, symmetry=not args.no_symmetry)
                for m in done
            },
            "table": {r: {m: cell(results[m], r) for m in done} for r in rows},
        }
        print(json.dumps(doc, indent=2))
    else:
        bounds = configs[modes[0]].describe().split(" ", 1)[1]
        print(f"replcheck compare: {bounds}")
        print()
        print(table(rows, done, {(r, m): cell(results[m], r) for r in rows for m in done}))
        for m in done:
            note = status_note(results[m])
            if note:
                print(f"note [{m}]: {note}")
        for m in done:
            for v in results[m].violations.values():
                print(f"\n[{m}] {v.invariant}: {v.message}")
    if any(r.violations for r in results.values()):
        return EXIT_VIOLATION
    if len(done) < len(modes) or any(r.status == "interrupted" for r in results.values()):
        return EXIT_INTERRUPTED
    return EXIT_OK
