"""``replcheck compare``: the same bounds under several modes, as one table."""

from __future__ import annotations

import argparse
import json
import os
import sys

from replcheck.checker.explicit.bfs import SearchResult, Violation
from replcheck.cli.args import add_model_args, add_search_args, config_from_args
from replcheck.cli.commands.check import search, status_note
from replcheck.cli.exits import (
    EXIT_INCOMPLETE,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_VIOLATION,
    UsageError,
)
from replcheck.cli.outputs import check_writable, prepare_out_dir
from replcheck.cli.report import (
    cell,
    html_counterexample,
    html_page,
    html_table,
    markdown_table,
    rebuild_errors,
    relative_href,
    summarize_violation,
    table,
    to_json,
)
from replcheck.invariants import select
from replcheck.model.kafka.config import MODES, Config, ConfigError, parse_mode
from replcheck.model.kafka.releases import COVERED
from replcheck.traces.itf import trace_to_itf, write_itf

NAME = "compare"
ORDER = 20
NOT_RUN = "not run (interrupted before it started)"


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        NAME,
        help="check several modes at the same bounds; a table of invariants x modes",
        epilog="An upgrade path, one column per step (X.Y.Z@V: release X.Y.Z at "
        "inter.broker.protocol.version / metadata.version V): "
        "replcheck compare --kafka 2.6.0,2.8.0@2.6,2.8.0@2.7-IV1,2.8.0",
        description="Run check for each mode and print invariants as rows, modes as columns.",
    )
    p.add_argument(
        "--kafka",
        metavar="X.Y.Z,...",
        help="comma-separated Kafka releases to compare, e.g. 0.10.2,2.0.0,2.1.0 "
        f"(covered: {COVERED}); X.Y.Z@V runs X.Y.Z at protocol or metadata version V",
    )
    p.add_argument(
        "--modes",
        metavar="M,M,...",
        help=f"the same by mode names or releases (default {','.join(MODES)})",
    )
    add_model_args(p, with_mode=False)
    add_search_args(p)
    out = p.add_argument_group("output")
    out.add_argument(
        "--markdown",
        action="store_true",
        help="print the table as Markdown, each counterexample explained (not with --json)",
    )
    out.add_argument(
        "--html",
        metavar="OUT.html",
        help="also write an HTML page: the table, each counterexample explained, and "
        "(with --trace-dir) links to its trace and timeline",
    )
    out.add_argument(
        "--trace-dir",
        metavar="DIR",
        help="save every counterexample as DIR/<mode>.<invariant>.itf.json (created if "
        "missing); with --html, also its timeline as DIR/<mode>.<invariant>.html",
    )


def parse_modes(text: str, option: str = "--modes") -> list[str]:
    """The modes or releases in the order given, each once (``hw,hw`` is ``hw``).

    ``X.Y.Z@V`` is release X.Y.Z run at protocol or metadata version V, as in the middle
    of an upgrade (the new binary, the old version): ``3.6.0@3.5``.
    """
    modes: list[str] = []
    for k, m in enumerate((m.strip() for m in text.split(",")), start=1):
        if not m:
            raise UsageError(
                f"{option} {text}: item {k} is empty (give releases or modes, comma-separated)"
            )
        release, at, version = m.partition("@")
        if at and not version.strip():
            raise UsageError(f"{option} {text}: item {k} has no version after '@'")
        m = parse_mode(release, option) + (f"@{version.strip()}" if at else "")
        if m not in modes:
            modes.append(m)
    if not modes:
        raise UsageError(f"{option}: give at least one release")
    return modes


def _config(args: argparse.Namespace, column: str) -> Config:
    """One column's configuration; a bad version names the column it came from."""
    if "@" not in column:
        return config_from_args(args, mode=column)
    try:
        return config_from_args(args, *column.split("@"))
    except ConfigError as exc:
        raise UsageError(f"--kafka {column}: {exc}") from None


def run(args: argparse.Namespace) -> int:
    if args.kafka and args.modes:
        raise UsageError("--kafka and --modes: give one of them")
    if args.kafka:
        modes = parse_modes(args.kafka, "--kafka")
    else:
        modes = parse_modes(args.modes or ",".join(MODES))
    if args.markdown and args.json:
        raise UsageError("--markdown and --json: choose one output format")
    invariants = select(args.invariant)
    configs = {m: _config(args, m) for m in modes}
    if args.html:
        check_writable(args.html, "--html")
    if args.trace_dir:
        prepare_out_dir(args.trace_dir, "--trace-dir")
    results: dict[str, SearchResult] = {}
    for m in modes:
        results[m] = search(configs[m], args, label=f"[{m}] ")
        for line in rebuild_errors(results[m]):
            print(f"replcheck: [{m}] {line}", file=sys.stderr)
        if results[m].status == "interrupted":
            break
    done = list(results)
    not_run = [m for m in modes if m not in done]
    rows = [inv.id for inv in invariants]
    cells = {(r, m): cell(results[m], r) for r in rows for m in done}
    bounds = _shared_bounds(configs, modes)
    found = [(m, v) for m in done for v in results[m].violations.values()]
    links = _write_traces(args, configs, found) if args.trace_dir else {}
    if args.html:
        # What --markdown prints, plus links to each counterexample's trace and timeline.
        hrefs = {(v.invariant, m): f"#{m}.{v.invariant}" for m, v in found}
        explained = [
            html_counterexample(f"{m}.{v.invariant}", m, v, links.get((v.invariant, m), ()))
            for m, v in found
        ]
        notes = [f"{m}: {note}" for m in done if (note := status_note(results[m]))]
        notes += [f"{m}: {NOT_RUN}" for m in not_run]
        sections = [("Verdicts", html_table(rows, done, cells, hrefs=hrefs, links=links))]
        if explained:
            sections.append(("Counterexamples", "\n".join(explained)))
        page = html_page("replcheck compare", f"Bounds: {bounds}.", sections, notes=notes)
        with open(args.html, "w", encoding="utf-8") as fh:
            fh.write(page)
    if args.markdown:
        print(f"Bounds: `{bounds}`\n")
        print(markdown_table(rows, done, cells))
        for m, v in found:
            print(f"\n- **{m}**, `{v.invariant}`: {summarize_violation(v)}")
        for m in not_run:
            print(f"\n- **{m}**: {NOT_RUN}")
    elif args.json:
        doc = {
            "modes": done,
            "not_run": not_run,
            "config": {k: v for k, v in configs[modes[0]].to_dict().items() if k != "mode"},
            "results": {
                m: to_json(configs[m], results[m], invariants, symmetry=args.symmetry is not False)
                for m in done
            },
            "table": {r: {m: cell(results[m], r) for m in done} for r in rows},
        }
        print(json.dumps(doc, indent=2))
    else:
        print(f"replcheck compare: {bounds}")
        print()
        print(table(rows, done, cells))
        for m in done:
            note = status_note(results[m])
            if note:
                print(f"note [{m}]: {note}")
        for m in not_run:
            print(f"note [{m}]: {NOT_RUN}")
        for m, v in found:
            print(f"\n[{m}] {v.invariant}: {v.message}")
    if any(r.violations for r in results.values()):
        return EXIT_VIOLATION
    if len(done) < len(modes) or any(r.status == "interrupted" for r in results.values()):
        return EXIT_INTERRUPTED
    if not all(r.exhaustive for r in results.values()):
        return EXIT_INCOMPLETE
    return EXIT_OK


def _shared_bounds(configs: dict[str, Config], modes: list[str]) -> str:
    """The columns' bounds for the header.  Where some columns' releases ignore
    ``--unclean`` (KRaft before 3.9.0, KAFKA-12670) and others do not, it says which."""
    ignored = [m for m in modes if configs[m].unclean_ignored]
    honoured = [m for m in modes if not configs[m].unclean_ignored]
    bounds = configs[(honoured or modes)[0]].describe().split(" ", 1)[1]
    if ignored and honoured:
        parts = bounds.split(" ")
        parts[parts.index("unclean")] = f"unclean(ignored by {','.join(ignored)})"
        bounds = " ".join(parts)
    return bounds


def _write_traces(
    args: argparse.Namespace, configs: dict[str, Config], found: list[tuple[str, Violation]]
) -> dict[tuple[str, str], list[tuple[str, str]]]:
    """Each counterexample as DIR/<mode>.<invariant>.itf.json and, with --html (a browser
    cannot show ITF), its timeline beside it; returns the page's links to both."""
    from replcheck.traces.html import render_violation

    page_dir = os.path.dirname(os.path.abspath(args.html)) if args.html else ""
    links: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for m, v in found:
        if not v.trace:  # not rebuilt (an internal error, reported on stderr)
            continue
        base = os.path.join(args.trace_dir, f"{m}.{v.invariant}")
        steps = [(s.action, s.state) for s in v.trace]
        write_itf(base + ".itf.json", trace_to_itf(configs[m], steps, v.invariant, v.message))
        if args.html:
            with open(base + ".html", "w", encoding="utf-8") as fh:
                fh.write(render_violation(configs[m], steps, v.invariant, v.message))
            links[(v.invariant, m)] = [
                ("timeline", relative_href(base + ".html", page_dir)),
                ("trace (ITF)", relative_href(base + ".itf.json", page_dir)),
            ]
    return links
