"""docs/prove.md's proof table: generated from the recorded runs, and (slow) true of
the current model where the recorded run settled a cell quickly."""

from __future__ import annotations

import importlib.util
import json

import pytest

import replcheck
from tests.conftest import DOCS

spec = importlib.util.spec_from_file_location("make_prove", DOCS / "make_prove.py")
make_prove = importlib.util.module_from_spec(spec)
spec.loader.exec_module(make_prove)

RECORD = json.loads(make_prove.RESULTS.read_text())
QUICK = 60  # seconds: cells settled within this are proved again by the slow suite


def test_the_table_is_the_recorded_runs():
    assert make_prove.page(RECORD) == make_prove.PAGE.read_text(), (
        "stale: run python docs/make_prove.py"
    )


def test_every_row_and_invariant_has_a_cell_and_each_violation_its_trace():
    rows = {(run["row"], run["replicas"]) for run in RECORD["runs"]}
    assert rows == {(row, rf) for row in make_prove.ROWS for rf in make_prove.REPLICAS}
    for run in RECORD["runs"]:
        assert set(run["cells"]) == set(make_prove.DEFAULTS)
        for inv, cell in run["cells"].items():
            if cell["status"] == "violated":
                name = make_prove._trace_file(run["row"], run["replicas"], inv)
                replayed = replcheck.replay(make_prove.FOLDER / name)
                assert replayed.replays and inv in replayed.violations
                assert replayed.violations[inv].length - 1 == cell["depth"]


def _quick_rows():
    for run in RECORD["runs"]:
        settled = {
            inv: cell
            for inv, cell in run["cells"].items()
            if cell["status"] != "open" and cell.get("seconds", QUICK + 1) <= QUICK
        }
        if settled:
            yield pytest.param(
                run["row"], run["replicas"], settled, id=f"{run['row']}-{run['replicas']}"
            )


@pytest.mark.slow
@pytest.mark.parametrize(("row", "replicas", "settled"), list(_quick_rows()))
def test_a_quickly_settled_cell_is_settled_the_same_way_again(row, replicas, settled):
    again = make_prove.prove_row(
        row, replicas, bfs_limit=2 * QUICK, pdr_limit=2 * QUICK, pdr_only=list(settled)
    )["cells"]
    for inv, cell in settled.items():
        assert again[inv]["status"] == cell["status"], inv
        assert again[inv].get("depth") == cell.get("depth"), inv
