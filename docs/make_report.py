"""Generate docs/hw-vs-leader-epoch.md and its counterexamples under docs/traces/.

    python docs/make_report.py           # rewrite the report from fresh BFS runs
    python docs/make_report.py --check   # exit 1 if the committed report is stale

Nothing in the report is written by hand: every verdict, length and sentence
comes from a BFS run of the current model, so the report changes when the
model does (tests/test_report.py fails until it is regenerated).  The report opens
with its verdict tables as one picture, docs/hw-vs-leader-epoch.svg (release by
invariant, drawn by docs/svg_matrix.py).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from replcheck.checker.explicit.bfs import SearchResult, bfs
from replcheck.cli.report import cell, generator_main, markdown_table, summarize_violation
from replcheck.invariants import INVARIANTS, Invariant, select
from replcheck.model import KafkaReplication, make_config
from replcheck.model.kafka.config import MODES, Config
from replcheck.model.kafka.releases import MODE_RELEASES, TABLE, applies, behaviour
from replcheck.traces.itf import trace_to_itf

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT / "docs") not in sys.path:  # docs/svg_matrix.py, however this script is loaded
    sys.path.insert(0, str(ROOT / "docs"))
import svg_matrix  # noqa: E402

REPORT = "hw-vs-leader-epoch.md"
PICTURE = "hw-vs-leader-epoch.svg"
TRACES = "traces"
STANDARD = dict(replicas=2, records=2, epochs=4, crashes=1)
# The releases from 2.7 on: one column per change that matters at these bounds, and the
# newest release.  Their ISR changes are requests (AlterIsr), which makes each space
# about five times larger, so they run at the default bounds (3 epochs) rather than the
# standard 4.
LATER_RELEASES = ("2.7.0", "2.8.0", "3.0.0", "3.5.0", "4.1.0", "4.4.0")
LATER = dict(replicas=2, records=2, epochs=3, crashes=1)

# (label, the Kafka setting it stands for, model keys, the one invariant it targets)
NEGATIVE_CONTROLS = [
    (
        "acks=1",
        "the leader acknowledges before any follower has the write",
        dict(acks="1"),
        "acked-writes-durable",
    ),
    (
        "unclean election",
        "unclean.leader.election.enable=true (off by default since KIP-106)",
        dict(unclean_election=True),
        "no-committed-data-loss",
    ),
    (
        "lossy crash",
        "a power failure loses the unflushed log tail (Kafka does not fsync)",
        dict(lossy_crash=True),
        "no-committed-data-loss",
    ),
]


def _bounds(values: dict) -> str:
    return " ".join(f"{k}={v}" for k, v in values.items())


def _trace_doc(config, violation) -> str:
    import json

    steps = [(s.action, s.state) for s in violation.trace]
    doc = trace_to_itf(config, steps, violation.invariant, violation.message)
    return json.dumps(doc, indent=1) + "\n"


def _changes(previous: str, release: str) -> list[str]:
    """The release table's reasons for each behaviour ``release`` has and ``previous`` lacks."""
    return [
        why
        for row in TABLE
        for first, _value, why, _needs in row.changes
        if applies(first, release)
        and not applies(first, previous)
        and getattr(behaviour(release), row.field) != getattr(behaviour(previous), row.field)
    ]


# (section title, bounds, invariants searched, [(row label, its search)]) for the picture
Sections = list[tuple[str, dict, Sequence[Invariant], list[tuple[str, SearchResult]]]]


def picture(sections: Sections) -> str:
    """The report's verdict tables as one matrix: a row per mode or release (grouped by
    section, whose bounds differ), a column per invariant."""
    rows, cells, notes = [], [], []
    hrefs = {title: f"{REPORT}#{svg_matrix.github_anchor(title)}" for title, *_rest in sections}
    invariants = sections[0][2]
    used: set[str] = set()
    for title, values, searched, searches in sections:
        assert list(searched) == list(invariants), "one column per invariant, in every section"
        notes.append(f"{title}: {_bounds(values)}")
        for label, result in searches:
            rows.append(svg_matrix.Label(label, group=title))
            line = []
            for inv in invariants:
                said = cell(result, inv.id)
                key = (
                    "violated"
                    if inv.id in result.violations
                    else "holds"
                    if result.exhaustive
                    else "incomplete"
                )
                used.add(key)
                line.append(svg_matrix.Cell((key,), f"{label}, {inv.id}: {said}", hrefs[title]))
            cells.append(line)
    columns = [svg_matrix.Label(inv.id, title=f"{inv.id}: {inv.description}") for inv in invariants]
    categories = [
        c for c in (svg_matrix.VIOLATED, svg_matrix.HOLDS, svg_matrix.INCOMPLETE) if c.key in used
    ]
    notes.append(
        f"Each section's name links to its table on {REPORT}; hover a cell for its verdict."
    )
    return svg_matrix.render(
        "HW vs leader-epoch truncation: each invariant's verdict by release",
        rows,
        columns,
        cells,
        categories,
        corner="release (mode)",
        notes=notes,
        group_hrefs=hrefs,
    )


def _search(job: tuple[Config, tuple[str, ...]]) -> SearchResult:
    """One search of the report, given as plain data so that a worker process can run it."""
    config, invariant_ids = job
    return bfs(KafkaReplication(config), select(list(invariant_ids)))


def _search_all(jobs: list[tuple[Config, tuple[str, ...]]]) -> list[SearchResult]:
    """The searches of one section side by side, a process per core: the report's
    freshness test (which CI always runs) took 3.5 minutes on one core of two.  Each
    search is the same single-process BFS, so its result does not depend on where it
    ran."""
    workers = min(len(jobs), os.cpu_count() or 1)
    if workers < 2:
        return [_search(job) for job in jobs]
    with ProcessPoolExecutor(workers) as pool:
        return list(pool.map(_search, jobs))


def build() -> dict[str, str]:
    """Every generated file, relative to docs/, with its content."""
    files: dict[str, str] = {}
    out: list[str] = [
        "# HW truncation vs leader-epoch truncation",
        "",
        "<!-- Generated by `python docs/make_report.py` from BFS runs of the model; "
        "do not edit by hand. -->",
        "",
        f"![Each invariant's verdict by release and truncation mode]({PICTURE})",
        "",
        "What each truncation mode of the model breaks or keeps, found by exhaustive "
        "breadth-first search (so every counterexample is as short as any). A cell says "
        "`holds (N states)` when the property holds in all N distinct states reachable "
        "within the bounds (symmetry-reduced), or `VIOLATED (trace of K states)` with the "
        "length of the shortest counterexample. Each counterexample is an ITF file under "
        "`docs/traces/`; replay one with `replcheck replay docs/traces/FILE`.",
        "",
        "Every search is at message level (a fetch and an epoch exchange are a request "
        "and a later response); `--atomic` gives the coarse model.",
        "",
        "| mode | Kafka release | what it does that the release before it did not |",
        "|---|---|---|",
    ]
    previous = None
    for name in MODES:
        release = MODE_RELEASES[name]
        changes = _changes(previous, release) if previous else []
        out.append(f"| `{name}` | {release} | {'; '.join(changes) or 'the baseline'} |")
        previous = release

    sections: Sections = []

    def section(title: str, values: dict, modes, invariants, note: str = "", tag: str = "") -> None:
        configs = {m: make_config({**values, "mode": m}) for m in modes}
        ids = tuple(inv.id for inv in invariants)
        found = _search_all([(configs[m], ids) for m in modes])
        results: dict[str, SearchResult] = dict(zip(modes, found, strict=True))
        sections.append(
            (
                title,
                values,
                invariants,
                [
                    (f"{MODE_RELEASES[m]} ({m})" if m in MODE_RELEASES else m, results[m])
                    for m in modes
                ],
            )
        )
        rows = [inv.id for inv in invariants]
        cells = {(r, m): cell(results[m], r) for r in rows for m in modes}
        out.extend(
            [
                "",
                f"## {title}",
                "",
                f"Bounds: `{_bounds(values)}` (acks=all, min.insync.replicas=1 unless said).",
                "",
            ]
        )
        if note:
            out.extend([note, ""])
        out.append(markdown_table(rows, list(modes), cells))
        listed = False
        for m in modes:
            for v in results[m].violations.values():
                if not listed:
                    out.extend(["", "Shortest counterexamples:", ""])
                    listed = True
                name = f"{m}.{tag}{v.invariant}.itf.json"
                files[f"{TRACES}/{name}"] = _trace_doc(configs[m], v)
                out.append(
                    f"- **{m}**, `{v.invariant}` ({v.length} states, "
                    f"[{name}]({TRACES}/{name})): {summarize_violation(v)}"
                )

    section("All modes at the standard bounds", STANDARD, MODES, INVARIANTS)

    later_note = [
        "From 2.7 a leader's ISR change is a request to the controller (AlterIsr), which "
        "makes each state space about five times larger, so these releases run at the "
        "default bounds (3 epochs, not 4). Each column is the first release of a change "
        "that matters at these bounds (4.0.0 and later use KRaft; 4.1.0 has Eligible "
        "Leader Replicas on), and the last is the newest release, whose changes since 4.1.0 "
        "need a replaced disk (`--disk-loss`) to matter:",
        "",
        f"| release | what it does that the column before it did not (2.7.0: since "
        f"{MODE_RELEASES[MODES[-1]]}, `{MODES[-1]}`) |",
        "|---|---|",
    ]
    previous = MODE_RELEASES[MODES[-1]]
    for release in LATER_RELEASES:
        changes = _changes(previous, release)
        later_note.append(f"| {release} | {'; '.join(changes)} |")
        previous = release
    section(
        "Releases 2.7 to 4.4",
        LATER,
        LATER_RELEASES,
        INVARIANTS,
        note="\n".join(later_note),
    )

    out.extend(
        [
            "",
            "## Negative controls (kip320)",
            "",
            "Settings that trade durability away: the checker must show the loss even in the "
            "best mode. Each search checks only the invariant the setting is expected to break.",
            "",
            "| setting | what it stands for | invariant | verdict | counterexample |",
            "|---|---|---|---|---|",
        ]
    )
    controls = [
        (make_config({**STANDARD, **extra, "mode": "kip320"}), (inv_id,))
        for *_, extra, inv_id in NEGATIVE_CONTROLS
    ]
    for (label, meaning, _extra, inv_id), (config, _ids), result in zip(
        NEGATIVE_CONTROLS, controls, _search_all(controls), strict=True
    ):
        violation = result.violations.get(inv_id)
        if violation is None:
            out.append(f"| {label} | {meaning} | `{inv_id}` | {cell(result, inv_id)} | - |")
            continue
        slug = label.replace(" ", "-").replace("=", "")
        name = f"kip320.{slug}.{inv_id}.itf.json"
        files[f"{TRACES}/{name}"] = _trace_doc(config, violation)
        out.append(
            f"| {label} | {meaning} | `{inv_id}` | {cell(result, inv_id)} | "
            f"[{name}]({TRACES}/{name}): {summarize_violation(violation)} |"
        )

    out.extend(
        [
            "",
            "## Three replicas",
            "",
            "Searches on three replicas take minutes at message level; the bugs that need a "
            "third replica (KAFKA-7164, KAFKA-6880, KAFKA-7128) and this model's finding on "
            "controller failover (a re-elected leader that keeps stale follower offsets, "
            "found in every release from 0.11.0 to 3.9.1) are entries of the bug catalogue: "
            "see [kafka-bugs.md](kafka-bugs.md), generated by `python docs/make_bugs.py`.",
        ]
    )
    files[REPORT] = "\n".join(out) + "\n"
    files[PICTURE] = picture(sections)
    return files


def main() -> int:
    return generator_main(__doc__.splitlines()[0], build, REPORT, TRACES, ROOT / "docs")


if __name__ == "__main__":
    sys.exit(main())
