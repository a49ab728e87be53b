"""The walk job on local[2]: finds the seeds' hw data loss, is deterministic, aggregates right."""

from __future__ import annotations

import json

import pytest

from checker import spark_walk
from checker.cli import main
from checker.commands.walk import rebuild
from checker.walk import KINDS, Walker, summarize
from invariants import select
from model import KafkaReplication, make_config
from traces.load import load_trace
from traces.replay import execute

SEEDS = dict(replicas=2, records=1, epochs=2, crashes=1)  # the seeds' data loss (BFS: 9 states)
LOSS = "no-committed-data-loss"
WALKS, DEPTH = 2000, 20  # seed 0 finds the loss twice (walks 1091 and 1731) in 2000 walks


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
    assert summary.violations == {LOSS: 2}
    steps, walk_id, path, message = summary.shortest[LOSS]
    assert (steps, walk_id) == (11, 1091) and len(path) == steps
    config = make_config(dict(mode="hw", **SEEDS))
    (inv,) = select([LOSS])
    ex = rebuild(config, inv, walk_id, steps, path, message, use_shrink=True)
    assert ex.length <= steps + 1
    from traces.itf import trace_to_itf, write_itf

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
    assert set(summary.action_counts) == set(KINDS)
    assert summary.action_counts["truncate"] > 0  # the leader-epoch exchange ran
    # deliver_latest needs controller_failover, which this job leaves off.
    assert summary.never_fired == ["deliver_latest"]


def test_cli_walk_json_and_out(spark, tmp_path, capsys):
    out = tmp_path / "run"
    args = ["walk", "--mode", "hw", *(f"--{k}={v}" for k, v in SEEDS.items())]
    args += ["--walks", "2000", "--depth", "20", "--invariant", LOSS, "--partitions", "2"]
    code = main([*args, "--json", "--quiet", "--out", str(out)])
    doc = json.loads(capsys.readouterr().out)
    assert code == 1
    assert doc["walks"] == 2000 and doc["violations"] == {LOSS: 2}
    assert doc["shortest_trace_length"] <= 12 and doc["steps_per_second"] > 0
    assert doc["master"].startswith("local") and doc["distinct_states_approx"] > 0
    assert (out / f"{LOSS}.itf.json").is_file() and (out / "walks.parquet").is_dir()
    rows = spark.read.parquet(str(out / "walks.parquet"))
    assert rows.count() == 2000 and rows.where("invariant IS NOT NULL").count() == 2
    assert spark.sparkContext._jsc is not None  # the shared session is still alive
