"""Turning a search result into what users read: verdicts, JSON, tables."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from html import escape
from pathlib import Path
from typing import Any
from urllib.parse import quote

from replcheck.checker.explicit.bfs import SearchResult, Violation
from replcheck.invariants import Invariant
from replcheck.traces.text import describe_action


def result_word(result: SearchResult) -> str:
    """``violated`` if any counterexample; ``holds`` if exhaustive; ``interrupted`` if
    Ctrl-C stopped it (exit 130, as every command says it); else ``incomplete`` (a
    limit stopped it, exit 3)."""
    if result.violations:
        return "violated"
    if result.exhaustive:
        return "holds"
    return "interrupted" if result.status == "interrupted" else "incomplete"


def verdicts(result: SearchResult, invariants: Sequence[Invariant]) -> dict[str, str]:
    out = {}
    for inv in invariants:
        if inv.id in result.violations:
            out[inv.id] = "violated"
        else:
            out[inv.id] = "holds" if result.exhaustive else "not violated (search incomplete)"
    return out


def cell(result: SearchResult, inv_id: str) -> str:
    """One table cell: 'holds (N states)' or 'VIOLATED (trace of K states)'."""
    violation = result.violations.get(inv_id)
    if violation is not None:
        return f"VIOLATED (trace of {violation.length} states)"
    if result.exhaustive:
        return f"holds ({result.distinct_states:,} states)"
    return f"not violated ({result.distinct_states:,} states, incomplete)"


def to_json(
    config: Any,
    result: SearchResult,
    invariants: Sequence[Invariant],
    *,
    symmetry: bool,
    trace_out: str | None = None,
) -> dict[str, Any]:
    first = next(iter(result.violations.values()), None)
    return {
        "result": result_word(result),
        "invariant": first.invariant if first else None,
        "message": first.message if first else None,
        "trace_length": first.length if first else None,
        "trace_file": trace_out if first else None,
        "status": result.status,
        "distinct_states": result.distinct_states,
        "transitions": result.transitions,
        "depth": result.depth,
        "seconds": round(result.seconds, 3),
        "states_per_second": round(result.distinct_states / result.seconds)
        if result.seconds > 0
        else None,
        "model": getattr(config, "model", "kafka"),
        "mode": getattr(config, "mode", None),  # the Kafka release; None for the spec
        "symmetry": symmetry,
        "fingerprint_collision_probability": result.collision_probability,
        "disk_bytes": result.disk_bytes,  # the most the states held on disk past --memory
        "checkpoint": getattr(result, "checkpoint", None),
        "config": config.to_dict(),
        "invariants": verdicts(result, invariants),
        "violations": {
            v.invariant: {"trace_length": v.length, "message": v.message}
            | ({"trace_error": v.error} if v.error else {})
            for v in result.violations.values()
        },
    }


def rebuild_errors(result: SearchResult) -> list[str]:
    """One line for each counterexample that could not be rebuilt (an internal error:
    the violation stands, its trace is cut where the rebuild broke)."""
    return [
        f"internal error: {v.invariant}'s counterexample: {v.error}; the violation stands, "
        f"its trace is cut after {max(v.length - 1, 0)} steps"
        for v in result.violations.values()
        if v.error
    ]


def table(rows: Sequence[str], columns: Sequence[str], cells: dict[tuple[str, str], str]) -> str:
    """A plain aligned text table: rows x columns."""
    header = ["invariant", *columns]
    body = [[row, *(cells[(row, col)] for col in columns)] for row in rows]
    widths = [max(len(line[k]) for line in [header, *body]) for k in range(len(header))]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    lines = [fmt.format(*header), fmt.format(*("-" * w for w in widths))]
    lines += [fmt.format(*line) for line in body]
    return "\n".join(line.rstrip() for line in lines)


def markdown_table(
    rows: Sequence[str], columns: Sequence[str], cells: dict[tuple[str, str], str]
) -> str:
    """The same table as :func:`table`, as GitHub-flavoured Markdown."""
    lines = ["| invariant | " + " | ".join(columns) + " |"]
    lines.append("|---" * (len(columns) + 1) + "|")
    for row in rows:
        lines.append(f"| `{row}` | " + " | ".join(cells[(row, c)] for c in columns) + " |")
    return "\n".join(lines)


PAGE_STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; max-width: 80em; }
table { border-collapse: collapse; margin: 1em 0; }
th, td { border: 1px solid #ccc; padding: .35em .7em; text-align: left; vertical-align: top; }
th { background: #f4f4f4; }
td.violated { background: #fde2e1; color: #8a1c14; font-weight: 600; }
td.holds { background: #e3f5e1; color: #1d5c1a; }
td.incomplete { background: #fff3cd; color: #6b4e00; }
td.violated a { color: inherit; }
.links { font-size: .85em; font-weight: normal; margin-top: .2em; }
.links a { margin-right: .6em; }
.note { background: #fff3cd; border-left: 4px solid #b8860b; padding: .4em .8em; }
.counterexample { margin: 1em 0; padding: .2em 1em .6em; border-left: 4px solid #c62828;
  background: #fdf3f3; }
.counterexample h3 { margin: .5em 0 .3em; font-size: 1.05em; }
.counterexample:target { outline: 2px solid #1565c0; }
code { font-family: ui-monospace, monospace; }
"""


def html_page(
    title: str,
    intro: str,
    tables: Sequence[tuple[str, str]],
    *,
    notes: Sequence[str] = (),
) -> str:
    """A self-contained HTML page (inline style, nothing fetched) of (heading, HTML) sections.

    ``intro`` and ``notes`` are plain text (escaped here); a note is a warning
    the reader must not miss, e.g. a search that stopped before exhausting.
    """
    note_html = "".join(f'<p class="note">{escape(n)}</p>\n' for n in notes)
    body = "\n".join(f"<h2>{escape(h)}</h2>\n{t}" for h, t in tables)
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{escape(title)}</title>
<style>{PAGE_STYLE}</style></head>
<body><h1>{escape(title)}</h1><p>{escape(intro)}</p>
{note_html}{body}
</body></html>
"""


def relative_href(path: str, page_dir: str) -> str:
    """A link from a page in ``page_dir`` to ``path``, relative so the two can move together."""
    target = os.path.abspath(path)
    try:
        rel = os.path.relpath(target, os.path.abspath(page_dir))
    except ValueError:  # another drive (Windows): no relative path exists
        return Path(target).as_uri()
    return quote(Path(rel).as_posix())


def _html_links(links: Sequence[tuple[str, str]]) -> str:
    """(label, href) pairs as one line of links; empty when there are none."""
    if not links:
        return ""
    items = "".join(f'<a href="{escape(href)}">{escape(label)}</a>' for label, href in links)
    return f'<div class="links">{items}</div>'


def html_table(
    rows: Sequence[str],
    columns: Sequence[str],
    cells: dict[tuple[str, str], str],
    *,
    hrefs: Mapping[tuple[str, str], str] | None = None,
    links: Mapping[tuple[str, str], Sequence[tuple[str, str]]] | None = None,
) -> str:
    """The :func:`table` as HTML, each cell coloured by its verdict.

    ``hrefs[(row, col)]`` makes that cell's text a link (e.g. to its explanation
    on the page); ``links[(row, col)]`` adds (label, href) links under the text
    (e.g. to the counterexample's trace files).
    """
    hrefs = hrefs or {}
    links = links or {}
    head = "".join(f"<th>{escape(c)}</th>" for c in columns)
    out = [f"<table><tr><th>invariant</th>{head}</tr>"]
    for row in rows:
        tds = []
        for c in columns:
            text = cells[(row, c)]
            if text.startswith("VIOLATED"):
                kind = "violated"
            elif text.startswith("holds"):
                kind = "holds"
            else:
                kind = "incomplete"
            shown = escape(text)
            if (row, c) in hrefs:
                shown = f'<a href="{escape(hrefs[(row, c)])}">{shown}</a>'
            extra = _html_links(links.get((row, c), ()))
            tds.append(f'<td class="{kind}">{shown}{extra}</td>')
        out.append(f"<tr><td><code>{escape(row)}</code></td>{''.join(tds)}</tr>")
    out.append("</table>")
    return "\n".join(out)


def html_counterexample(
    anchor: str, mode: str, violation: Violation, links: Sequence[tuple[str, str]] = ()
) -> str:
    """One counterexample explained as ``--markdown`` does, with links to its files.

    ``anchor`` is the element id the verdict table links to.
    """
    return (
        f'<div class="counterexample" id="{escape(anchor)}">'
        f"<h3>{escape(mode)}: <code>{escape(violation.invariant)}</code> "
        f"(trace of {violation.length} states)</h3>"
        f"<p>{escape(summarize_violation(violation))}</p>{_html_links(links)}</div>"
    )


def summarize_violation(violation: Violation) -> str:
    """One sentence: the steps that lead to the violation, then what is broken."""
    names = [describe_action(s.action) for s in violation.trace[1:] if s.action is not None]
    compact: list[str] = []
    for name in names:  # fold repeats: fetch(...) x2
        if compact and compact[-1].split(" x")[0] == name:
            head, _, count = compact[-1].partition(" x")
            compact[-1] = f"{head} x{int(count or 1) + 1}"
        else:
            compact.append(name)
    message = violation.message
    if message[:2].istitle():  # "Committed ..." -> "committed ...", but keep "ISR ..."
        message = message[0].lower() + message[1:]
    return f"After {', '.join(compact)}: {message}."


# ------------------------------------------------------- generated documentation


def stale_files(files: dict[str, str], folder: Path, traces: str) -> list[str]:
    """Generated files (paths relative to ``folder``) whose committed copy is missing or
    differs, then committed ``traces/*.itf.json`` that the generator no longer writes."""
    stale = [
        rel
        for rel, text in files.items()
        if not (folder / rel).exists() or (folder / rel).read_text(encoding="utf-8") != text
    ]
    committed = {p.relative_to(folder).as_posix() for p in (folder / traces).glob("*.itf.json")}
    return stale + sorted(committed - set(files))


def write_files(files: dict[str, str], folder: Path, traces: str) -> None:
    """Write the generated files under ``folder`` and remove traces no longer generated."""
    (folder / traces).mkdir(parents=True, exist_ok=True)
    for old in (folder / traces).glob("*.itf.json"):
        if old.relative_to(folder).as_posix() not in files:
            old.unlink()
    for rel, text in files.items():
        (folder / rel).write_text(text, encoding="utf-8")


def generator_main(description: str, build, page: str, traces: str, folder: Path) -> int:
    """The command line of a docs generator: write its files, or with --check exit 1
    if the committed ones are stale."""
    import argparse

    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--check", action="store_true", help="exit 1 if the page is stale")
    args = parser.parse_args()
    files = build()
    if args.check:
        stale = stale_files(files, folder, traces)
        for rel in stale:
            print(f"stale: {folder.name}/{rel}")
        return 1 if stale else 0
    write_files(files, folder, traces)
    others = [rel for rel in files if rel != page and not rel.startswith(f"{traces}/")]
    count = len(files) - 1 - len(others)
    also = "".join(f", {folder.name}/{rel}" for rel in others)
    print(f"wrote {folder.name}/{page}{also} and {count} traces under {folder.name}/{traces}/")
    return 0
