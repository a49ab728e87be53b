"""``check --engine spark``: the local engines' counts, depths, transitions and
counterexample lengths; --max-states and --resume from its Parquet levels.

Slow: a level is a few Spark jobs (about a second each on local[2]); the checks of
its options that need no Spark run by default, and the command itself runs on a
standalone cluster in test_standalone.py.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading

import pytest

from replcheck.checker.explicit.parallel_bfs import parallel_bfs
from replcheck.checker.spark import bfs as module
from replcheck.checker.spark.bfs import spark_bfs
from replcheck.cli.exits import EXIT_INTERRUPTED
from replcheck.invariants import select
from replcheck.model.registry import build_model, config_from_dict
from tests.spark.test_walk_process import assert_clean

SEEDS = {"records": 1, "epochs": 3}  # hw: the seeds' data loss, 9,544 states
SPEC = {"model": "tla-kip320", "replicas": 2}  # every invariant holds


def summary(result) -> tuple:
    lengths = {i: v.length for i, v in result.violations.items()}
    return result.status, result.distinct_states, result.depth, result.transitions, lengths


def _setup(values: dict) -> tuple:
    from replcheck.invariants import registry

    config = config_from_dict(dict(values))
    model = build_model(config)
    return config, model, select(None, registry(config))


@pytest.fixture(scope="module")
def on_spark(spark):
    """Each configuration's search on Spark (the tests below share them)."""
    runs = {}
    for name, values in (("hw", SEEDS), ("spec", SPEC)):
        config, model, invariants = _setup(values)
        ids = [i.id for i in invariants]
        runs[name] = spark_bfs(spark, config, ids, symmetry=model.default_symmetry)
    return runs


@pytest.mark.slow
@pytest.mark.parametrize(("name", "values"), [("hw", SEEDS), ("spec", SPEC)])
def test_the_same_verdicts_as_the_local_engine(on_spark, name, values):
    _, model, invariants = _setup(values)
    local = parallel_bfs(model, invariants, workers=2, symmetry=model.default_symmetry)
    assert summary(on_spark[name]) == summary(local)
    for inv, v in on_spark[name].violations.items():  # a real execution to the violation
        assert v.error is None and v.length == local.violations[inv].length


@pytest.mark.slow
def test_max_states_then_resume_from_the_parquet_levels(spark, on_spark, tmp_path):
    config, _, invariants = _setup(SEEDS)
    ids = [i.id for i in invariants]
    stopped = spark_bfs(spark, config, ids, symmetry=True, max_states=2_000, folder=tmp_path)
    assert stopped.status == "max-states" and stopped.distinct_states == 2_000
    resumed = spark_bfs(spark, config, ids, symmetry=True, folder=tmp_path, resume=True)
    assert summary(resumed) == summary(on_spark["hw"])
    assert (tmp_path / "spark-bfs.json").is_file()


@pytest.mark.slow
def test_a_ctrl_c_while_a_level_is_read_ends_the_search_as_interrupted(spark, monkeypatch):
    """Reading a level runs a Spark job too (CI caught a Ctrl-C cancelling one and the
    failed read escaping as a traceback): the search stops as interrupted, with the
    levels done."""
    config, _, invariants = _setup(SEEDS)
    real = module._Levels.read
    calls = []

    def read_then_ctrl_c(self, session, depth):
        calls.append(depth)
        if depth == 2 and calls.count(2) == 3:  # level 2 counted, checked; now expanded
            os.kill(os.getpid(), signal.SIGINT)  # handled at once, in this thread
            raise RuntimeError("the job reading the level was cancelled")
        return real(self, session, depth)

    monkeypatch.setattr(module._Levels, "read", read_then_ctrl_c)
    ids = [i.id for i in invariants]
    seen = {}
    result = spark_bfs(
        spark, config, ids, symmetry=True, on_progress=lambda p: seen.update({p.depth: p})
    )
    for thread in threading.enumerate():  # its cancelling must not reach the next test's jobs
        if thread.name == "replcheck-cancel":
            thread.join(60)
    spark.sparkContext.setLogLevel("WARN")  # the interrupt turned Spark's log off
    assert result.status == "interrupted" and result.depth == 2 and sorted(seen) == [1, 2]
    assert result.distinct_states == seen[2].distinct_states > seen[1].distinct_states


def cli(*argv: str) -> tuple[int, str, str]:
    proc = subprocess.run(
        [sys.executable, "-m", "replcheck", *argv], capture_output=True, text=True, timeout=600
    )
    return proc.returncode, proc.stdout, proc.stderr


def test_resume_of_a_folder_with_no_spark_levels_exits_2_before_spark_starts(tmp_path):
    code, out, err = cli("check", "--engine", "spark", "--resume", str(tmp_path))
    assert code == 2 and out == ""
    assert err.strip() == (
        f"replcheck: error: --resume {tmp_path}: no Spark BFS checkpoint there "
        "(spark-bfs.json is missing)"
    )


@pytest.mark.parametrize(
    "flag",
    [["--spill-dir", "x"], ["--checkpoint-every", "60"], ["--workers", "2"], ["--memory", "1G"]],
)
def test_local_engine_options_are_refused_with_spark(flag):
    code, out, err = cli("check", "--engine", "spark", *flag)
    assert code == 2 and out == ""
    assert err.startswith(f"replcheck: error: {flag[0]}: an option of the local engine")


@pytest.mark.slow
@pytest.mark.parametrize("stop", ["ctrl-c", "sigterm-in-the-background"])
def test_stopped_mid_search_it_reports_what_it_found_and_leaves_nothing_behind(walk_process, stop):
    """Ctrl-C on a Spark BFS mid-search, or SIGTERM on one in the background (SIGINT
    ignored): exit 130, the JSON report of the levels done, no stack trace or ERROR
    line, no JVM and no temporary file left."""
    run = walk_process(
        *("--engine", "spark", "--master", "local[1]", "--kafka", "2.1.0", "--records", "3"),
        "--json",
        command="check",
        background=stop != "ctrl-c",
    )
    run.wait_for_stderr("depth 3,")
    run.interrupt() if stop == "ctrl-c" else run.terminate()
    code = run.wait(120)
    err = run.stderr()
    assert_clean(err)
    doc = json.loads(run.stdout())
    assert code == EXIT_INTERRUPTED and doc["status"] == "interrupted", err
    assert 97 <= doc["distinct_states"] < 468_612, doc
    assert run.survivors(settle=3.0) == []
    assert run.tmp_left() == []
