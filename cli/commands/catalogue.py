"""``replcheck catalogue``: show every catalogued Kafka bug in exactly the releases it affected."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from replcheck.checker.suites.catalogue import (
    CATALOGUE,
    EntryResult,
    load_catalogue,
    run_entry,
)
from replcheck.cli.args import seconds
from replcheck.cli.exits import (
    EXIT_INCOMPLETE,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_VIOLATION,
    UsageError,
)
from replcheck.cli.outputs import prepare_out_dir
from replcheck.traces.itf import trace_to_itf, write_itf

NAME = "catalogue"
ORDER = 65


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        NAME,
        help="reproduce each catalogued Kafka bug in the releases it affected, not after",
        description="Run every entry of the bug catalogue (Kafka's replication bugs and "
        "trade-offs, 0.10.2 to 4.4, and the design rules that keep it safe): each affected "
        "release must violate the entry's invariant at its bounds, and the fixed release must "
        "not (BFS at the same bounds, or the affected counterexample replayed where another "
        "bug still breaks the invariant there); a rule, broken on purpose, must be violated "
        "in every release that has it, and kept, hold in the newest.  "
        "Exit 0 when every entry behaves so, 1 when one does not, 3 when a search stopped at "
        "--timeout before it could judge, 2 for a bad catalogue file.  docs/kafka-bugs.md is "
        "generated from the same runs.",
    )
    p.add_argument(
        "--only",
        metavar="ID",
        action="append",
        help="run only this entry (repeatable), e.g. --only A4",
    )
    p.add_argument(
        "--file",
        metavar="CATALOGUE.toml",
        default=str(CATALOGUE),
        help="the catalogue to run (default: the one shipped with replcheck)",
    )
    p.add_argument(
        "--timeout",
        type=seconds,
        metavar="SECONDS",
        help="stop each search after this long (its release is then not judged: exit 3)",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    p.add_argument(
        "--out", metavar="DIR", help="save each entry's counterexample here (ID.itf.json)"
    )
    p.add_argument("--list", action="store_true", help="list the entries and exit")


def _line(r: EntryResult) -> str:
    mark = "ok  " if r.ok else ("?   " if r.incomplete else "FAIL")
    parts = []
    for v in r.verdicts:
        word = {True: "violates", False: "holds", None: "not judged"}[v.violated]
        parts.append(f"{v.release} {word}")
    return f"{mark} {r.entry.id:<4} {r.entry.jira:<32} {', '.join(parts)}"


def run(args: argparse.Namespace) -> int:
    entries = load_catalogue(args.file)
    if args.only:
        known = {e.id for e in entries}
        unknown = [i for i in args.only if i not in known]
        if unknown:
            raise UsageError(
                f"--only: no entry {unknown[0]!r} (known: {', '.join(e.id for e in entries)})"
            )
        entries = [e for e in entries if e.id in args.only]
    if args.list:
        for e in entries:
            print(f"{e.id:<4} {e.kind:<9} {e.affected_text:<24} {e.invariant:<24} {e.title}")
        return EXIT_OK
    folder = Path(prepare_out_dir(args.out, "--out")) if args.out else None

    results: list[EntryResult] = []
    interrupted = False
    try:
        for entry in entries:
            live = not args.json and sys.stderr.isatty()
            if live:  # what is running now, overwritten by its result line
                print(f"     {entry.id} running ...", end="\r", file=sys.stderr, flush=True)
            result = run_entry(entry, args.timeout)
            if live:
                print("\r\033[K", end="", file=sys.stderr, flush=True)
            results.append(result)
            if folder is not None and result.trace:
                path = folder / f"{entry.id}.itf.json"
                config = entry.config(result.trace_release)
                write_itf(path, trace_to_itf(config, result.trace, entry.invariant, result.message))
            if not args.json:
                print(_line(result), flush=True)
                if result.problem:
                    print(f"       {result.problem}", flush=True)
    except KeyboardInterrupt:
        interrupted = True

    failed = [r for r in results if not r.ok and not r.incomplete]
    unjudged = [r for r in results if r.incomplete]
    if args.json:
        doc = {
            "catalogue": args.file,
            "passed": not failed and not unjudged and not interrupted,
            "interrupted": interrupted,
            "not_run": [e.id for e in entries[len(results) :]],
            "entries": [
                {
                    "id": r.entry.id,
                    "jira": r.entry.jira,
                    "kind": r.entry.kind,
                    "invariant": r.entry.invariant,
                    "ok": r.ok,
                    "problem": r.problem or None,
                    "verdicts": [
                        {
                            "release": v.release,
                            "violated": v.violated,
                            "how": v.how,
                            "seconds": round(v.seconds, 3),
                        }
                        for v in r.verdicts
                    ],
                }
                for r in results
            ],
        }
        print(json.dumps(doc, indent=2))
    else:
        print(
            f"\n{len(results) - len(failed) - len(unjudged)} behave as catalogued, "
            f"{len(failed)} do not, {len(unjudged)} not judged"
        )
    if interrupted:
        print(
            f"replcheck catalogue: interrupted after {len(results)} of {len(entries)} entries",
            file=sys.stderr,
        )
        return EXIT_VIOLATION if failed else EXIT_INTERRUPTED
    if failed:
        return EXIT_VIOLATION
    return EXIT_INCOMPLETE if unjudged else EXIT_OK
