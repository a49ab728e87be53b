"""Generate docs/kafka-bugs.md and its counterexamples under docs/bugs/ from the bug catalogue.

    python docs/make_bugs.py           # rerun every catalogue entry and rewrite the page
    python docs/make_bugs.py --check   # exit 1 if the committed page is stale

Nothing on the page is written by hand: the entries come from
checker/suites/kafka_bugs.toml and every verdict and trace from running them on the
current model (tests/test_catalogue.py fails until the page is regenerated).  The
page opens with the same verdicts as a picture, docs/kafka-bugs.svg (release class
by entry, drawn by docs/svg_matrix.py).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from replcheck.checker.suites.catalogue import EntryResult, load_catalogue, run_entry
from replcheck.cli.report import generator_main
from replcheck.model.kafka.releases import RELEASES, behaviour
from replcheck.traces.itf import trace_to_itf
from replcheck.traces.text import format_trace

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT / "docs") not in sys.path:  # docs/svg_matrix.py, however this script is loaded
    sys.path.insert(0, str(ROOT / "docs"))
import svg_matrix  # noqa: E402

PAGE = "kafka-bugs.md"
PICTURE = "kafka-bugs.svg"
TRACES = "bugs"
# The matrix's column groups, in this order; an entry's kind names its group.
GROUPS = {"bug": "bugs", "trade-off": "trade-offs", "finding": "findings", "rule": "rules"}
# The catalogue's verdicts (Verdict.violated: True, False, None), and releases it does not run.
VIOLATED = svg_matrix.VIOLATED._replace(label="violated: the model shows the entry's violation")
HOLDS = svg_matrix.HOLDS._replace(
    label="holds: the entry's violation is gone (by search or replay: hover the cell)"
)
INCOMPLETE = svg_matrix.INCOMPLETE._replace(label="not judged: the search stopped early")
OUTSIDE = svg_matrix.NOT_RUN._replace(
    key="not-affected", label="not affected: outside the entry's releases (not run)"
)


def _bounds(values: dict) -> str:
    return " ".join(
        f"{k}={str(v).lower() if isinstance(v, bool) else v}" for k, v in values.items()
    )


def _affects(r: EntryResult, release: str) -> bool:
    return r.entry.is_affected(release)


def _one_line(text: str) -> str:
    return " ".join(text.split())


def release_classes() -> list[list[str]]:
    """The releases in runs that behave alike (equal rules, equal state spaces: one
    verdict for the run), oldest first."""
    runs: list[list[str]] = []
    for release in RELEASES:
        if runs and behaviour(runs[-1][0]).rules == behaviour(release).rules:
            runs[-1].append(release)
        else:
            runs.append([release])
    return runs


def _span(releases: list[str]) -> str:
    return releases[0] if len(releases) == 1 else f"{releases[0]} – {releases[-1]}"


def _short(e) -> str:
    """A column's heading: the id and the issue, up to its first parenthesis."""
    issue = e.jira.split(" (")[0]
    return f"{e.id} {issue}" if issue and issue != "none known" else f"{e.id} (no JIRA)"


def _verdict_word(violated: bool | None) -> str:
    return "violated" if violated else "holds" if violated is False else "not judged"


def picture(results: list[EntryResult]) -> str:
    """The release-by-entry matrix: each cell the model's verdict for that entry in
    that class of releases (a verdict holds for every release of its class)."""
    entries = sorted(results, key=lambda r: list(GROUPS).index(r.entry.kind))
    classes = release_classes()
    columns = [
        svg_matrix.Label(
            _short(r.entry),
            title=f"{r.entry.id} ({r.entry.jira}; {r.entry.kind}): {r.entry.title}",
            href=f"{PAGE}#{svg_matrix.github_anchor(r.entry.id)}",
            group=GROUPS[r.entry.kind],
        )
        for r in entries
    ]
    rows = [
        svg_matrix.Label(_span(c), title=f"{_span(c)}: releases that behave alike in the model")
        for c in classes
    ]
    keys = {True: "violated", False: "holds", None: "incomplete"}
    cells = []
    used: set[str] = set()
    for c in classes:
        line = []
        for r in entries:
            e = r.entry
            mine = [v for v in r.verdicts if v.release in c]
            where = f"{e.id} ({e.jira}) in {_span(c)}"
            if not mine:
                cell = svg_matrix.Cell(
                    (OUTSIDE.key,),
                    f"{where}: not affected (catalogued for {e.affected_text}); not run",
                    columns[entries.index(r)].href,
                )
            else:
                said = []
                for v in mine:
                    rule = ""
                    if e.rule:  # the last verdict is the newest release's, keeping the rule
                        kept = v is r.verdicts[-1]
                        rule = " keeping the rule" if kept else " with the rule broken"
                    said.append(f"{v.release}{rule}: {_verdict_word(v.violated)} ({v.how})")
                cell = svg_matrix.Cell(
                    tuple(keys[v.violated] for v in mine),
                    f"{where}: " + "; ".join(said),
                    columns[entries.index(r)].href,
                )
            used.update(cell.categories)
            line.append(cell)
        cells.append(line)
    categories = [c for c in (VIOLATED, HOLDS, INCOMPLETE, OUTSIDE) if c.key in used]
    return svg_matrix.render(
        "Catalogued Kafka replication bugs: the model's verdict by release",
        rows,
        columns,
        cells,
        categories,
        corner="releases",
        notes=[
            "A row is a run of releases with the same rules in the model (one state space).",
            "rules: every release keeps the rule; ✗ is the rule broken on purpose, "
            "✓ the newest release keeping it.",
            f"Each column links to its entry on {PAGE}; hover a cell for how it was judged.",
        ],
    )


def build() -> dict[str, str]:
    """Every generated file, relative to docs/, with its content."""
    results = [run_entry(entry) for entry in load_catalogue()]
    files: dict[str, str] = {}
    out = [
        "# Kafka replication bugs, release by release",
        "",
        "<!-- Generated by `python docs/make_bugs.py` from `checker/suites/kafka_bugs.toml` "
        "and runs of the model; do not edit by hand. -->",
        "",
        f"![The model's verdict for each catalogue entry, release by release]({PICTURE})",
        "",
        "Each entry of the catalogue (`checker/suites/kafka_bugs.toml`) is a bug or documented "
        "trade-off of Kafka's partition replication, with the releases it affected.  "
        "`replcheck catalogue` holds the model to it: every release of the affected range "
        "(one per distinct behaviour of the release table) must violate the entry's "
        "invariant at its bounds, and the first fixed release (and any release of the range "
        "whose branch got the fix backported) must not, either by "
        "exhaustive search at the same bounds or, where another bug of that release still "
        "breaks the invariant there, along the affected release's counterexample replayed "
        "under the fixed release.  Where the shortest counterexample at the bounds is "
        "another bug's, the entry pins its own interleaving (`steps`).  Each counterexample "
        f"is an ITF file under `docs/{TRACES}/`; replay one with "
        f"`replcheck replay docs/{TRACES}/ID.itf.json`.",
        "",
        "## Which bugs does my release have?",
        "",
        "| release | bugs (ids below) | trade-offs and findings |",
        "|---|---|---|",
    ]
    groups: list[tuple[list[str], tuple[str, str]]] = []
    for release in RELEASES:
        bugs = ", ".join(
            r.entry.id for r in results if r.entry.kind == "bug" and _affects(r, release)
        )
        other = ", ".join(
            r.entry.id for r in results if r.entry.kind != "bug" and _affects(r, release)
        )
        if groups and groups[-1][1] == (bugs, other):
            groups[-1][0].append(release)
        else:
            groups.append(([release], (bugs, other)))
    for releases, (bugs, other) in groups:
        span = releases[0] if len(releases) == 1 else f"{releases[0]} – {releases[-1]}"
        out.append(f"| {span} | {bugs or 'none catalogued'} | {other} |")

    out.extend(
        [
            "",
            "## The catalogue",
            "",
            "| id | issue | affected | fixed in | breaks | verdicts of the model |",
            "|---|---|---|---|---|---|",
        ]
    )
    for r in results:
        e = r.entry
        verdicts = "; ".join(
            f"{v.release}: {'violated' if v.violated else 'holds' if v.violated is False else '?'}"
            for v in r.verdicts
        )
        mark = "" if r.ok else " **(does not behave as catalogued)**"
        anchor = svg_matrix.github_anchor(e.id)
        out.append(
            f"| [{e.id}](#{anchor}) | {e.jira} | {e.affected_text} | {e.fixed_text} "
            f"| `{e.invariant}` | {verdicts}{mark} |"
        )

    for r in results:
        e = r.entry
        out.extend(["", f"## {e.id}", "", f"**{e.title}** ({e.jira}; {e.kind})", ""])
        out.append(_one_line(e.mechanism))
        out.extend(["", f"- Bounds: `{_bounds(e.bounds)}`; invariant `{e.invariant}`."])
        for v in r.verdicts:
            role = "fixed" if v.release in (e.fixed, *e.backports) else "affected"
            out.append(f"- {v.release} ({role}): {v.how}.")
        if e.note:
            out.extend(["", _one_line(e.note)])
        if r.trace:
            name = f"{e.id}.itf.json"
            config = e.config(r.trace_release)
            doc = trace_to_itf(config, r.trace, e.invariant, r.message)
            files[f"{TRACES}/{name}"] = json.dumps(doc, indent=1) + "\n"
            out.extend(
                [
                    "",
                    f"Counterexample in {r.trace_release} ({len(r.trace)} states, "
                    f"[{name}]({TRACES}/{name})): {r.message}",
                    "",
                    "```",
                    *format_trace(r.trace),
                    "```",
                ]
            )
    files[PAGE] = "\n".join(out) + "\n"
    files[PICTURE] = picture(results)
    return files


def main() -> int:
    return generator_main(__doc__.splitlines()[0], build, PAGE, TRACES, ROOT / "docs")


if __name__ == "__main__":
    sys.exit(main())
