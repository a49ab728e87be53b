"""docs/hw-vs-leader-epoch.md is generated, never hand-edited: fail when it is stale."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parent.parent / "docs"


def _generator():
    spec = importlib.util.spec_from_file_location("make_report", DOCS / "make_report.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow  # about a minute: it re-runs every search of the report; CI runs it
def test_committed_report_matches_the_model():
    gen = _generator()
    files = gen.build()
    stale = [
        rel
        for rel, content in files.items()
        if not (DOCS / rel).exists() or (DOCS / rel).read_text(encoding="utf-8") != content
    ]
    committed = {p.relative_to(DOCS).as_posix() for p in (DOCS / gen.TRACES).glob("*.itf.json")}
    orphans = sorted(committed - set(files))
    assert not stale and not orphans, (
        f"stale: {stale}, orphaned traces: {orphans}; run: python docs/make_report.py"
    )


def test_report_says_what_the_seeds_say():
    text = (DOCS / "hw-vs-leader-epoch.md").read_text(encoding="utf-8")
    row = next(line for line in text.splitlines() if line.startswith("| `no-committed-data-loss`"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[1].startswith("VIOLATED")  # hw loses committed data
    assert cells[4].startswith("holds")  # kip320 keeps it at the standard bounds
