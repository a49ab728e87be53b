"""``replcheck walk`` as a real process: a whole run, and Ctrl-C at start-up and mid-job.

Each run gets a fresh TMPDIR and a marker in its environment; afterwards no process
carrying the marker (Python, spark-submit, JVM, Python workers) may be alive and the
TMPDIR must be empty (replcheck's temporary folder, Spark's scratch and the JVM's
temporary files all live there).
"""

from __future__ import annotations

import json
import re
import time

import pytest

from replcheck.cli.exits import EXIT_INTERRUPTED, EXIT_OK, EXIT_VIOLATION

SEEDS = ["--mode", "hw", "--replicas", "2", "--records", "1", "--epochs", "3", "--crashes", "1"]
LOSS = "no-committed-data-loss"
JVM_NOTICE = "WARNING: Using incubator modules"  # the JVM's own start-up line (docs/spark.md)
KIP320_3R = ["--mode", "kip320", "--replicas", "3", "--records", "2", "--epochs", "3"]
KIP320_3R += ["--crashes", "2"]


def replcheck_lines(err: str) -> list[str]:
    """stderr without the JVM's start-up notice; nothing else may be there."""
    return [line for line in err.splitlines() if line and not line.startswith(JVM_NOTICE)]


def assert_clean(err: str) -> None:
    assert "Traceback" not in err and "\tat " not in err, err
    assert "Exception" not in err and "ERROR" not in err, err


def test_a_whole_run_reports_exports_and_leaves_nothing_behind(walk_process, tmp_path):
    """The smoke test of the Spark path (in the default run): the seeds' loss in 1,200
    walks, --out written, exit 1, then no process and no temporary file left."""
    out = tmp_path / "out" / "nested"  # --out creates missing folders
    run = walk_process(
        *SEEDS,
        *("--walks", "1200", "--depth", "20", "--invariant", LOSS, "--partitions", "2"),
        *("--master", "local[2]", "--json", "--quiet", "--out", str(out)),
    )
    assert run.wait() == EXIT_VIOLATION, run.stderr()
    doc = json.loads(run.stdout())
    assert doc["result"] == "violated" and doc["interrupted"] is False
    assert doc["walks"] == doc["walks_requested"] == 1200
    assert doc["violations"] == {LOSS: 2}
    assert doc["counterexamples"][LOSS]["walk"] == 396
    assert (out / f"{LOSS}.itf.json").is_file() and (out / "walks.parquet").is_dir()
    assert json.loads((out / "summary.json").read_text())["walks"] == 1200
    assert_clean(run.stderr())
    assert replcheck_lines(run.stderr()) == []
    assert run.survivors() == []  # the command waits for its JVM to exit
    assert run.tmp_left() == []


@pytest.mark.slow
@pytest.mark.parametrize("delay", [0.5, 2.0, 4.0, 7.0])
def test_ctrl_c_while_spark_starts_leaves_no_jvm(walk_process, delay):
    """Ctrl-C at any moment of start-up (Python imports, spark-submit, the JVM's
    launcher, the gateway, SparkContext): exit 130, one line, no JVM left minutes later
    (used to be an orphan with parent pid 1), no temporary folder."""
    run = walk_process("--walks", "200000", "--depth", "50", "--master", "local[2]", "--quiet")
    time.sleep(delay)
    run.interrupt()
    code = run.wait(90)
    err = run.stderr()
    assert_clean(err)
    if "stopping the walks" in err:
        # Spark was up before the Ctrl-C (an idle machine starts it in under 7 s): the
        # walks done are reported, a violation among them exits 1, else 130.
        assert code in (EXIT_VIOLATION, EXIT_INTERRUPTED), err
    else:
        assert code == EXIT_INTERRUPTED, err
        (line,) = replcheck_lines(err)  # exactly one line
        assert line.startswith("replcheck: interrupted"), err
    assert run.survivors(settle=3.0) == []
    assert run.tmp_left() == []


def _interrupt_after_first_task(run) -> None:
    run.wait_for_stderr("tasks, ")  # the first progress line
    while not re.search(r"walks: [1-9][\d,]* of", run.stderr()):
        if run.proc.poll() is not None:
            raise AssertionError(run.stderr())
        time.sleep(0.2)
    run.interrupt()


@pytest.mark.slow
def test_ctrl_c_mid_job_reports_the_walks_done(walk_process, tmp_path, spark):
    """kip320 (no violation): Ctrl-C after some tasks finished stops the job, and the
    report, summary.json and walks.parquet cover exactly the walks done; exit 130."""
    out = tmp_path / "out"
    walks = 20_000  # 40 tasks of about a second each
    run = walk_process(
        *KIP320_3R,
        *("--walks", str(walks), "--partitions", "40", "--master", "local[2]"),
        *("--out", str(out)),
    )
    _interrupt_after_first_task(run)
    assert run.wait() == EXIT_INTERRUPTED, run.stderr()
    text = run.stdout()
    found = re.search(r"^interrupted: ([\d,]+) of ([\d,]+) walks done", text, re.M)
    assert found, text
    done = int(found.group(1).replace(",", ""))
    assert 500 <= done < walks and found.group(2) == f"{walks:,}"
    assert f"result: interrupted; not violated in the {done:,} walks done" in text
    doc = json.loads((out / "summary.json").read_text())
    assert doc["interrupted"] is True and doc["result"] == "interrupted"
    assert doc["walks"] == done and doc["walks_requested"] == walks
    rows = spark.read.parquet(str(out / "walks.parquet"))
    assert rows.count() == done and rows.select("walk_id").distinct().count() == done
    err = run.stderr()
    assert_clean(err)
    assert [line for line in replcheck_lines(err) if not line.startswith("walks: ")] == [
        f"replcheck walk: {walks:,} walks on local[2] in 40 tasks "
        + re.search(r"\(Spark started in [\d.]+ s\)", err).group(0),
        "replcheck: interrupted; stopping the walks, then reporting those done",
    ]
    assert run.survivors() == []
    assert run.tmp_left() == []


@pytest.mark.slow
def test_ctrl_c_mid_job_after_a_violation_still_exits_1(walk_process, tmp_path):
    """A violation found before the stop is still a violation: exit 1, the shrunk trace
    printed and written, the report marked interrupted."""
    out = tmp_path / "out"
    run = walk_process(
        *("--mode", "hw", "--walks", "40000", "--partitions", "40", "--master", "local[2]"),
        *("--out", str(out), "--depth", "30"),
    )
    _interrupt_after_first_task(run)
    assert run.wait() == EXIT_VIOLATION, run.stderr()
    text = run.stdout()
    assert re.search(r"^interrupted: [\d,]+ of 40,000 walks done", text, re.M), text
    assert "Shortest counterexample to " in text and text.rstrip().endswith("result: violated")
    doc = json.loads((out / "summary.json").read_text())
    assert doc["interrupted"] is True and doc["result"] == "violated"
    assert 0 < doc["walks"] < 40_000
    first = doc["invariant"]
    assert (out / f"{first}.itf.json").is_file()
    assert_clean(run.stderr())
    assert run.survivors() == [] and run.tmp_left() == []


@pytest.mark.slow
def test_a_complete_run_without_violation_exits_0(walk_process):
    """Not violated in N walks: exit 0 (no proof, and the result line says so)."""
    run = walk_process(
        *KIP320_3R, *("--walks", "200", "--depth", "30", "--master", "local[1]", "--quiet")
    )
    assert run.wait() == EXIT_OK, run.stderr()
    assert (
        run.stdout()
        .rstrip()
        .endswith("result: not violated in 200 walks (random walks prove nothing)")
    )
    assert run.survivors() == [] and run.tmp_left() == []
