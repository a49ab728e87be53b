"""The pure-Python walk engine (no Spark): seeded walks, splitting, summaries; the walk
command's input errors, exit codes and clean-up, with Spark faked."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from checker.cli import EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE, EXIT_VIOLATION, main
from checker.commands.walk import exit_code
from checker.walk import (
    END_DEADLOCK,
    END_DEPTH,
    END_VIOLATION,
    KINDS,
    Walker,
    partition_bounds,
    run_partition,
    sampled,
    summarize,
    swarm_weights,
    walk_rng,
)
from model import make_config
from tests.stubs import ReachedSpark
from traces.replay import execute

SEEDS = dict(mode="hw", replicas=2, records=1, epochs=3, crashes=1)
LOSS = "no-committed-data-loss"


def walker(**kw) -> Walker:
    values = dict(SEEDS)
    invariants = kw.pop("invariants", None)
    values.update(kw.pop("model", {}))
    return Walker(make_config(values), invariants, **kw)


def test_a_walk_depends_only_on_seed_and_id():
    a, b = walker(depth=40), walker(depth=40)
    for walk_id in (0, 1, 7, 1091):
        assert a.walk(3, walk_id) == b.walk(3, walk_id)
    assert walk_rng(0, 1).random() != walk_rng(1, 0).random()
    runs = [a.walk(0, i) for i in range(50)]
    assert len({tuple(r.fingerprints) for r in runs}) > 10  # walks differ from one another


def test_swarm_walks_are_seeded_too():
    a, b = walker(swarm=True), walker(swarm=True)
    assert [a.walk(5, i) for i in range(20)] == [b.walk(5, i) for i in range(20)]
    weights = swarm_weights(walk_rng(0, 0))
    assert len(weights) == len(KINDS) and all(0.0 <= w <= 1.0 for w in weights)


def test_walk_results_are_consistent():
    w = walker(depth=25)
    for walk_id in range(200):
        r = w.walk(0, walk_id)
        assert sum(r.counts) == r.steps <= 25
        assert r.end in (END_VIOLATION, END_DEPTH, END_DEADLOCK)
        assert (r.end == END_DEPTH) == (r.steps == 25 and r.invariant is None)
        assert (r.invariant is None) == (r.path is None) == (r.message is None)
        assert len(set(r.fingerprints)) == len(r.fingerprints) >= 1


def test_finds_the_seeds_data_loss_and_the_path_replays():
    w = walker(depth=20, invariants=[LOSS])
    summary = summarize(w.run_range(0, 0, 2000))
    assert summary.violations == {LOSS: 3}
    steps, walk_id, path, message = summary.shortest[LOSS]
    assert (steps, walk_id) == (12, 396)
    (inv,) = w.invariants
    final = execute(w.model, path)[-1][1]
    assert inv(final) == message


def test_partitions_cover_every_walk_once():
    for walks, parts in [(10, 3), (7, 7), (1000, 8), (5, 1)]:
        ids = [i for p in range(parts) for i in range(*partition_bounds(walks, parts, p))]
        assert ids == list(range(walks))
    config = make_config(SEEDS)
    rows = [
        row
        for p in range(3)
        for row in run_partition(
            config.to_dict(), None, seed=4, walks=30, partitions=3, index=p, depth=15, swarm=False
        )
    ]
    assert rows == [r.to_row() for r in walker(depth=15).run_range(4, 0, 30)]


def test_a_task_told_to_stop_keeps_the_walks_it_finished():
    """Ctrl-C on a local master: the task ends after its current walk, rows intact."""
    config = make_config(SEEDS)
    asked = []

    def should_stop() -> bool:
        asked.append(1)
        return len(asked) >= 4

    kw = dict(seed=4, walks=30, partitions=3, index=1, depth=15, swarm=False)
    rows = list(run_partition(config.to_dict(), None, **kw, should_stop=should_stop))
    assert rows == [r.to_row() for r in walker(depth=15).run_range(4, 10, 14)]
    assert len(list(run_partition(config.to_dict(), None, **kw))) == 10


def test_fingerprint_sampling_keeps_the_same_states_everywhere():
    full, half = walker(depth=30), walker(depth=30, fingerprint_rate=4)
    for walk_id in range(20):
        a, b = full.walk(0, walk_id), half.walk(0, walk_id)
        assert b.fingerprints == [fp for fp in a.fingerprints if sampled(fp, 4)]
        assert a.steps == b.steps


def test_kip320_holds_on_these_walks():
    summary = summarize(walker(depth=30, model={"mode": "kip320"}).run_range(0, 0, 300))
    assert summary.violations == {} and summary.steps > 0
    assert summary.action_counts["epoch_response"] > 0  # followers did truncate by epoch
    assert summary.action_counts["truncate"] == 0  # the coarse step exists only with --atomic


@pytest.mark.parametrize(
    "argv, words",
    [
        (["--walks", "0"], "--walks"),
        (["--depth", "x"], "--depth"),
        (["--seed", "-1"], "--seed"),
        (["--spark-conf", "novalue"], "KEY=VALUE"),
        (["--invariant", "nope"], "unknown invariant"),
        (["--replicas", "9"], "replicas"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(argv, words, capsys):
    assert main(["walk", *argv]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert words in err and err.count("\n") == 1


def test_out_is_created_or_refused_in_one_line(tmp_path, capsys, no_spark):
    f = tmp_path / "file"
    f.write_text("x")
    assert main(["walk", "--out", str(f)]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert err == f"replcheck: error: --out {f}: exists and is not a folder\n"
    nested = tmp_path / "no" / "such"
    with pytest.raises(ReachedSpark):  # created (parents too) before Spark starts
        main(["walk", "--out", str(nested)])
    assert nested.is_dir()


def test_exit_codes_violation_wins_over_interrupted():
    assert exit_code(violated=True, interrupted=True) == EXIT_VIOLATION
    assert exit_code(violated=True, interrupted=False) == EXIT_VIOLATION
    assert exit_code(violated=False, interrupted=True) == EXIT_INTERRUPTED == 130
    assert exit_code(violated=False, interrupted=False) == EXIT_OK == 0


class FakeSpark:
    sparkContext = SimpleNamespace(master="local[1]")


@pytest.fixture
def fake_session(monkeypatch):
    """start_session hands out a fake; records close_session calls."""
    from checker import spark_walk

    closed: list[object] = []
    monkeypatch.setattr(spark_walk, "start_session", lambda *a, **k: FakeSpark)
    monkeypatch.setattr(spark_walk, "close_session", closed.append)
    monkeypatch.setattr(spark_walk, "default_partitions", lambda *a: 2)
    return closed


def _raise(exc: BaseException):
    def go(*_a: object, **_k: object):
        raise exc

    return go


def test_ctrl_c_while_spark_starts_is_one_line_and_exit_130(monkeypatch, capsys):
    from checker import spark_walk

    monkeypatch.setattr(spark_walk, "start_session", _raise(KeyboardInterrupt()))
    assert main(["walk", "--walks", "10"]) == EXIT_INTERRUPTED
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == "replcheck: interrupted while Spark was starting; no walks ran\n"


@pytest.mark.parametrize(
    "exc, code, line",
    [
        (KeyboardInterrupt(), EXIT_INTERRUPTED, "replcheck: interrupted\n"),
        (
            "job",
            EXIT_USAGE,
            "replcheck: error: the Spark job failed: ValueError: boom\n",
        ),
    ],
    ids=["second-ctrl-c", "job-failed"],
)
def test_the_session_is_closed_on_every_way_out(monkeypatch, capsys, fake_session, exc, code, line):
    from checker import spark_walk

    if exc == "job":
        exc = spark_walk.JobFailed("ValueError: boom")
    monkeypatch.setattr(spark_walk, "walk_job", _raise(exc))
    assert main(["walk", "--walks", "10", "--quiet"]) == code
    assert capsys.readouterr().err == line
    assert fake_session == [FakeSpark]


def test_missing_java_is_one_line(monkeypatch, tmp_path, capsys):
    from checker import spark_walk

    monkeypatch.setattr(spark_walk, "active_session", lambda: None)
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "no-jdk"))
    monkeypatch.delenv("PYSPARK_GATEWAY_PORT", raising=False)
    assert main(["walk", "--walks", "10"]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and ("Java" in err or "pyspark" in err)
