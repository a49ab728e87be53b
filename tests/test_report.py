"""docs/hw-vs-leader-epoch.md is generated, never hand-edited: fail when it is stale."""

from __future__ import annotations

import pytest

from tests.conftest import DOCS, regenerate


@pytest.mark.ci_always
@pytest.mark.slow  # two to four minutes: it re-runs every search of the report; CI runs it first
def test_committed_report_matches_the_model():
    _gen, _files, stale = regenerate("make_report.py")
    assert not stale, f"stale: {stale}; run: python docs/make_report.py"


def test_report_says_what_the_seeds_say():
    text = (DOCS / "hw-vs-leader-epoch.md").read_text(encoding="utf-8")
    row = next(line for line in text.splitlines() if line.startswith("| `no-committed-data-loss`"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[1].startswith("VIOLATED")  # hw loses committed data
    assert cells[4].startswith("holds")  # kip320 keeps it at the standard bounds
