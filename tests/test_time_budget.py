"""``--time-budget`` (tests/time_budget.py), as CI runs the slow set: run in a child pytest
on a small suite of its own, so nothing here depends on how fast the machine is (a budget
of 0 has run out before the first test; an hour outlasts these tests)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

SUITE = """
import pytest

def test_a(): pass
def test_b(): pass
@pytest.mark.ci_always
def test_c(): pass
def test_d(): pass
def test_e(): pass
@pytest.mark.ci_always
def test_f(): pass
"""


def run_pytest(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    (tmp_path / "test_suite.py").write_text(SUITE)
    (tmp_path / "pytest.ini").write_text("[pytest]\nmarkers =\n    ci_always: always\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "pytest", "-p", "tests.time_budget", "-p", "no:cacheprovider"]
    return subprocess.run(
        [*command, "-c", str(tmp_path / "pytest.ini"), "--rootdir", str(tmp_path), *args],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )


def order(tmp_path: Path, *args: str) -> list[str]:
    done = run_pytest(tmp_path, "--collect-only", "-q", *args)
    assert done.returncode == 0, done.stdout + done.stderr
    return [line.split("::")[1] for line in done.stdout.splitlines() if "::" in line]


def test_without_a_budget_nothing_changes(tmp_path):
    assert order(tmp_path) == ["test_a", "test_b", "test_c", "test_d", "test_e", "test_f"]
    done = run_pytest(tmp_path, "-q")
    assert done.returncode == 0 and "6 passed" in done.stdout, done.stdout
    assert "time budget" not in done.stdout


def test_ci_always_tests_lead_and_rotate_shuffles_the_rest(tmp_path):
    orders = {n: order(tmp_path, "--time-budget", "3600", "--rotate", str(n)) for n in range(4)}
    for tests in orders.values():
        assert tests == ["test_c", "test_f", "test_a", "test_b", "test_d", "test_e"]
    # Whole modules are shuffled (each keeps its order, so its fixtures are built once).
    (tmp_path / "test_other.py").write_text("def test_x(): pass\ndef test_y(): pass\n")
    orders = {n: order(tmp_path, "--time-budget", "3600", "--rotate", str(n)) for n in range(4)}
    for tests in orders.values():
        assert tests[:2] == ["test_c", "test_f"]
        assert tests[2:] in (
            ["test_a", "test_b", "test_d", "test_e", "test_x", "test_y"],
            ["test_x", "test_y", "test_a", "test_b", "test_d", "test_e"],
        )
    assert len({tuple(tests) for tests in orders.values()}) > 1  # the seed changes the order
    assert order(tmp_path, "--time-budget", "3600", "--rotate", "3") == orders[3]  # and only it


@pytest.mark.parametrize("workers", ["0", "2"])
def test_a_spent_budget_skips_all_but_ci_always_and_names_them(tmp_path, workers):
    # With -n 2 the deadline reaches the test processes from the controller.
    done = run_pytest(tmp_path, "-n", workers, "-rs", "--time-budget", "0", "--rotate", "3")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 passed, 4 skipped" in done.stdout, done.stdout  # the ci_always ones ran
    assert "0 s (--rotate 3): 2 tests ran, 4 left out for time" in done.stdout, done.stdout
    named = [line for line in done.stdout.splitlines() if line.startswith("  not run: ")]
    assert sorted(line.rsplit("::", 1)[1] for line in named) == [f"test_{c}" for c in "abde"]


def test_an_ample_budget_runs_everything(tmp_path):
    done = run_pytest(tmp_path, "-n", "2", "--time-budget", "3600")
    assert done.returncode == 0 and "6 passed" in done.stdout, done.stdout
    assert "3600 s (--rotate 0): 6 tests ran, 0 left out for time" in done.stdout, done.stdout


def test_a_negative_budget_is_refused_in_one_line(tmp_path):
    done = run_pytest(tmp_path, "--time-budget", "-5")
    assert done.returncode == 4, done.stdout + done.stderr
    assert (
        "--time-budget: -5 is not 0 or more seconds" in done.stderr
        and "Traceback" not in done.stderr
    )
