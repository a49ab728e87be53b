"""The walk job on local[2]: finds the seeds' hw data loss, is deterministic, aggregates right,
keeps the walks done when Ctrl-C stops it, and walks the TLA+ spec as well.

Slow: these share one Spark session (seconds to start) and run several jobs; the default
run's smoke test is in test_walk_process.py.
"""

from __future__ import annotations

import json
import os
import signal
import threading
import time

import pytest

from replcheck.checker.spark import walks as spark_walk
from replcheck.checker.walks.walk import Walker, partition_bounds, rebuild, summarize
from replcheck.cli.main import main
from replcheck.invariants import select
from replcheck.model import KafkaReplication, make_config
from replcheck.model.tla.config import make_spec_config
from replcheck.traces.load import load_trace
from replcheck.traces.replay import execute

SEEDS = dict(replicas=2, records=1, epochs=3, crashes=1)  # the seeds' data loss (BFS: 11 states)
LOSS = "no-committed-data-loss"
WALKS, DEPTH = 2000, 20  # seed 0 finds the loss 3 times (walks 366, 396, 1513) in 2000 walks

pytestmark = pytest.mark.slow


def job(mode: str, partitions: int, invariants=None) -> spark_walk.WalkJob:
    return spark_walk.WalkJob(
        make_config(dict(mode=mode, **SEEDS)),
        walks=WALKS,
        depth=DEPTH,
        seed=0,
        partitions=partitions,
        invariant_ids=invariants,
    )


@pytest.fixture(scope="module")
def hw_runs(spark):
    """The same hw job with 1, 2 and 4 partitions: {partitions: summary}."""
    out = {}
    for partitions in (1, 2, 4):
        summary, df = spark_walk.run_job(spark, job("hw", partitions, [LOSS]))
        df.unpersist()
        out[partitions] = summary
    return out


def test_finds_hw_data_loss_and_exports_a_trace_that_replays(hw_runs, tmp_path):
    summary = hw_runs[2]
    assert summary.walks == WALKS
    assert summary.violations == {LOSS: 3}
    steps, walk_id, path, message = summary.shortest[LOSS]
    assert (steps, walk_id) == (12, 396) and len(path) == steps
    config = make_config(dict(mode="hw", **SEEDS))
    (inv,) = select([LOSS])
    ex = rebuild(config, inv, walk_id, steps, path, message, use_shrink=True)
    assert ex.length <= steps + 1
    from replcheck.traces.itf import trace_to_itf, write_itf

    out = tmp_path / "loss.itf.json"
    write_itf(out, trace_to_itf(config, ex.steps, ex.invariant, ex.message))
    loaded = load_trace(out)
    assert loaded.config == config and loaded.invariant == LOSS
    replayed = execute(KafkaReplication(loaded.config), loaded.actions)
    assert inv(replayed[-1][1]) is not None


def test_same_seed_same_answer_with_1_2_4_partitions(hw_runs):
    one, two, four = hw_runs[1], hw_runs[2], hw_runs[4]
    for other in (two, four):
        assert other.violations == one.violations
        assert other.shortest == one.shortest
        assert other.action_counts == one.action_counts
        assert (other.steps, other.ends) == (one.steps, one.ends)
        # HyperLogLog registers merge by max: the estimate does not depend on the split
        assert other.distinct_states_approx == one.distinct_states_approx


def test_spark_aggregation_matches_plain_python(hw_runs):
    walker = Walker(make_config(dict(mode="hw", **SEEDS)), [LOSS], depth=DEPTH)
    exact = summarize(walker.run_range(0, 0, WALKS))
    got = hw_runs[4]
    assert (got.walks, got.steps, got.ends) == (exact.walks, exact.steps, exact.ends)
    assert got.violations == exact.violations and got.shortest == exact.shortest
    assert got.action_counts == exact.action_counts
    assert abs(got.distinct_states_approx - exact.distinct_states) <= 0.1 * exact.distinct_states


def test_kip320_no_violation_and_coverage(spark):
    summary, df = spark_walk.run_job(spark, job("kip320", 2))
    df.unpersist()
    assert summary.violations == {} and summary.shortest == {}
    assert summary.steps > 0 and summary.distinct_states_approx > 0
    kinds = KafkaReplication(job("kip320", 2).config).action_kinds()
    assert tuple(summary.action_counts) == kinds  # one column per kind the model can take
    assert summary.action_counts["epoch_response"] > 0  # the leader-epoch exchange ran
    # The coarse steps exist only with --atomic, deliver_latest only with
    # controller_failover, alter_isr and diverging_truncate only from 2.7 and 2.8: the
    # job (2.1.0) takes none of them, so they have no column and the report names none.
    later = {"fetch", "truncate", "deliver_latest", "alter_isr", "diverging_truncate"}
    assert not later & set(summary.action_counts)
    assert summary.never_fired() == summary.never_fired(kinds) == []


def test_cli_walk_json_and_out(spark, tmp_path, capsys):
    out = tmp_path / "run"
    args = ["walk", "--mode", "hw", *(f"--{k}={v}" for k, v in SEEDS.items())]
    args += ["--walks", "2000", "--depth", "20", "--invariant", LOSS, "--partitions", "2"]
    code = main([*args, "--json", "--quiet", "--out", str(out)])
    doc = json.loads(capsys.readouterr().out)
    assert code == 1
    assert doc["walks"] == 2000 and doc["violations"] == {LOSS: 3}
    assert doc["shortest_trace_length"] <= 12 and doc["steps_per_second"] > 0
    assert doc["master"].startswith("local") and doc["distinct_states_approx"] > 0
    assert (out / f"{LOSS}.itf.json").is_file() and (out / "walks.parquet").is_dir()
    rows = spark.read.parquet(str(out / "walks.parquet"))
    assert rows.count() == 2000 and rows.where("invariant IS NOT NULL").count() == 3
    assert spark.sparkContext._jsc is not None  # the shared session is still alive


def _ctrl_c_once_a_task_is_done(spark, partitions: int) -> threading.Thread:
    """Send this process SIGINT once the walk stage has a finished task."""
    tracker = spark.sparkContext.statusTracker()

    def watch() -> None:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            for stage_id in tracker.getActiveStageIds():
                info = tracker.getStageInfo(stage_id)
                if info and info.numTasks == partitions and info.numCompletedTasks >= 1:
                    os.kill(os.getpid(), signal.SIGINT)
                    return
            time.sleep(0.05)

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    return thread


@pytest.mark.parametrize("cooperative", [True, False], ids=["local-stop-file", "cancel"])
def test_ctrl_c_keeps_exactly_the_walks_done(spark, cooperative):
    """Ctrl-C mid-job: the DataFrame holds exactly the walks finished -- each one the
    same row as the plain-Python walk of that id -- and later actions do not walk more.
    With the stop file (local masters) a running task keeps the walks it finished (a
    prefix of its range); with cancellation (clusters) only whole tasks count."""
    partitions, walks = 24, 24 * 150
    job = spark_walk.WalkJob(
        make_config(dict(mode="kip320", replicas=3, records=2, epochs=3, crashes=2)),
        walks=walks,
        depth=60,
        seed=5,
        partitions=partitions,
    )
    previous = signal.signal(signal.SIGINT, lambda *_: None)  # a late SIGINT must not hurt
    try:
        watcher = _ctrl_c_once_a_task_is_done(spark, partitions)
        run = spark_walk.walk_job(spark, job, cooperative=cooperative)
        watcher.join(5)
    finally:
        signal.signal(signal.SIGINT, previous)
    try:
        assert run.interrupted
        rows = sorted(run.df.collect(), key=lambda r: r["walk_id"])
        again = run.df.count()
        summary = spark_walk.aggregate(run.df, job, run.seconds)
    finally:
        run.close()
    assert 0 < len(rows) < walks and again == len(rows) == summary.walks
    walker = Walker(job.config, depth=job.depth)
    by_partition: dict[int, list[int]] = {}
    for row in rows:
        expected = walker.walk(job.seed, row["walk_id"]).to_row()
        assert tuple(row["action_counts"]) == expected[6] and row["steps"] == expected[1]
        assert row["fingerprints"] == expected[7] and row["end"] == expected[2]
        index = next(
            i
            for i in range(partitions)
            if row["walk_id"] < partition_bounds(walks, partitions, i)[1]
        )
        by_partition.setdefault(index, []).append(row["walk_id"])
    for index, ids in by_partition.items():
        first, end = partition_bounds(walks, partitions, index)
        assert ids == list(range(first, first + len(ids)))  # a prefix of the task's range
        if not cooperative:
            assert len(ids) == end - first  # a cancelled job keeps whole tasks only
    exact = summarize(walker.walk(job.seed, r["walk_id"]) for r in rows)
    assert summary.steps == exact.steps and summary.action_counts == exact.action_counts
    assert {end: n for end, n in summary.ends.items() if n} == exact.ends


def test_the_spec_walks_on_spark_as_in_plain_python(spark):
    """The TLA+ HW-truncation spec on 3 replicas: the schema's action-count columns are the
    spec's Next disjuncts, the aggregate is the plain-Python one, WeakIsr is broken."""
    config = make_spec_config({"model": "tla-hw", "replicas": 3})
    spec_job = spark_walk.WalkJob(
        config, walks=400, depth=30, seed=1, partitions=3, invariant_ids=["weak-isr"]
    )
    summary, df = spark_walk.run_job(spark, spec_job)
    try:
        columns = df.schema["action_counts"].dataType.fieldNames()
    finally:
        df.unpersist()
    walker = Walker(config, ["weak-isr"], depth=30)
    assert columns == list(walker.kinds) == list(config.build().action_kinds())
    exact = summarize(walker.run_range(1, 0, 400), kinds=walker.kinds)
    assert (summary.walks, summary.steps) == (exact.walks, exact.steps)
    assert {end: n for end, n in summary.ends.items() if n} == exact.ends
    assert summary.violations == exact.violations and summary.violations["weak-isr"] > 0
    assert summary.shortest == exact.shortest and summary.action_counts == exact.action_counts
