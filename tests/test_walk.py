"""The pure-Python walk engine (no Spark): seeded walks, splitting, summaries, either model;
the walk command's input errors, exit codes and clean-up, with Spark faked."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from types import SimpleNamespace

import pytest

from replcheck.checker.walks.walk import (
    END_DEADLOCK,
    END_DEPTH,
    END_VIOLATION,
    Walker,
    partition_bounds,
    run_partition,
    sampled,
    summarize,
    swarm_weights,
    walk_rng,
)
from replcheck.cli.commands.walk import exit_code
from replcheck.cli.exits import EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE, EXIT_VIOLATION
from replcheck.cli.main import main
from replcheck.model import make_config
from replcheck.model.kafka.replication import ACTION_PARAMS
from replcheck.model.tla.config import make_spec_config
from replcheck.traces.replay import execute
from tests.conftest import sigint_default
from tests.stubs import ReachedSpark

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
    weights = swarm_weights(walk_rng(0, 0), ACTION_PARAMS)
    assert len(weights) == len(ACTION_PARAMS) and all(0.0 <= w <= 1.0 for w in weights)


def _walks_digest(results) -> str:
    """Every walk's id, length, end, invariant and path, hashed."""
    h = hashlib.sha256()
    for r in results:
        path = [(a.name, list(a.args)) for a in r.path or []]
        h.update(json.dumps([r.walk_id, r.steps, r.end, r.invariant, path]).encode())
    return h.hexdigest()[:16]


# Captured from the engine before it took any model (issue 11), when it built the Kafka
# model itself and drew swarm weights over model.kafka.replication.ACTION_PARAMS: the gate's swarm
# control (examples/gate.toml) and every seed quoted in the docs rely on these streams.
PINNED_KAFKA_WALKS = [
    (
        dict(mode="hw", replicas=2, records=1, epochs=3, crashes=1),
        dict(depth=20),
        (0, 400),
        # ("ead081fb82a6109b", 6764, {"deadlock": 83, "depth": 311, "violation": 6}, 1173)
        # until a leader before 2.1 could remove a caught-up follower from the ISR
        # (KAFKA-7152): more enabled shrinks, so other paths (the same shortest ones).
        ("4cea138c1f0749e4", 6665, {"deadlock": 91, "depth": 304, "violation": 5}, 1234),
        {"consistent-logs": (3, 11, 85), "no-committed-data-loss": (2, 12, 396)},
    ),
    (
        dict(mode="hw", replicas=3, records=2, epochs=3, crashes=1),
        dict(depth=30, swarm=True),
        (1, 300),
        # ("92f4ed511626799d", 8847, {"deadlock": 7, "depth": 289, "violation": 4}, 4778)
        # with consistent-logs (4, 12, 4) until a leader could remove several lagging
        # followers in one ISR change (shrink_isr_set, drawn 126 times): a new action
        # name changes the swarm's weights; ("1170e3924b836ac1", 8701, {"deadlock": 14,
        # "depth": 283, "violation": 3}, 4519) with consistent-logs 3 times until a caught-up
        # follower could leave the ISR before 2.1 (KAFKA-7152).
        ("8ccc67b5afce8372", 8618, {"deadlock": 19, "depth": 279, "violation": 2}, 4466),
        {"consistent-logs": (2, 10, 178)},
    ),
    (
        dict(mode="4.1.0", replicas=3),
        dict(depth=25, swarm=True, symmetry=False, fingerprint_rate=3),
        (2, 200),
        # Distinct states are sampled by fingerprint (rate 3): 3093 until issue 22 gave
        # each replica a clean_shutdown field, which changes every state's fingerprint;
        # 3126 until KAFKA-10706's fix cleared a follower's unwritten epoch (same walks);
        # ("156789103e253321", 4552, {"deadlock": 35, "depth": 165}, 3144) until a fenced
        # follower's removal kept the leader epoch (KRaft 3.6+, the action apply_isr):
        # other walks from there, with apply_isr drawn 59 times;
        # ("cea9b156cb6e1c0b", 4613, {"deadlock": 29, "depth": 171}, 3312) until a KRaft
        # leader could replay its own accepted change (reapply_isr, finding F3): a new
        # action name changes the swarm's weights, and reapply_isr is drawn 43 times;
        # ("54596fad4d5efc4d", 4630, {"deadlock": 27, "depth": 173}, 3465) until a 3.0+
        # leader proposed no ISR change while its last request was unanswered
        # (KAFKA-12686): fewer enabled shrinks and joins, so other paths;
        # ("7c566ae810bab3ff", 4606, {"deadlock": 29, "depth": 171}, 3264) until a leader
        # could remove several lagging followers at once (shrink_isr_set, drawn 48 times);
        # 3444 sampled distinct states until Replica.fenced (--fencing) changed every
        # state's fingerprint (same walks); 3318 until a KRaft broker stepped down on a
        # leaderless record (same walks, other states); 3339 until Replica.dir_unreported
        # (KIP-858's directory report) changed every state's fingerprint (same walks);
        # ("779190f6cef96982", 4745, {"deadlock": 17, "depth": 182, "violation": 1}, 3462)
        # until a leader proposed from a stale partition version too (more enabled shrinks
        # and joins, so other paths; the same shortest strong-isr walk).
        ("6d6a7fccc5dd1d94", 4757, {"deadlock": 18, "depth": 181, "violation": 1}, 3621),
        {"strong-isr": (1, 11, 177)},
    ),
]


@pytest.mark.parametrize("values, options, run, pinned, violations", PINNED_KAFKA_WALKS)
def test_kafka_walks_are_the_same_as_before_the_engine_took_any_model(
    values, options, run, pinned, violations
):
    """Same seed, same walks: the random stream (uniform and swarm), the paths, the
    verdicts and the states visited are those of the Kafka-only engine."""
    seed, walks = run
    w = Walker(make_config(values), **options)
    results = list(w.run_range(seed, 0, walks))
    summary = summarize(results, options.get("fingerprint_rate", 1), kinds=w.kinds)
    digest, steps, ends, distinct = pinned
    assert (_walks_digest(results), summary.steps, summary.ends) == (digest, steps, ends)
    assert summary.distinct_states == distinct
    for inv_id, (n, length, walk_id) in violations.items():
        assert summary.violations[inv_id] == n and summary.shortest[inv_id][:2] == (length, walk_id)
    assert sum(summary.violations.values()) == ends.get(END_VIOLATION, 0)


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
    w = walker(depth=30, model={"mode": "kip320"})
    summary = summarize(w.run_range(0, 0, 300))
    assert summary.violations == {} and summary.steps > 0
    assert tuple(summary.action_counts) == w.kinds == w.model.action_kinds()
    assert summary.action_counts["epoch_response"] > 0  # followers did truncate by epoch
    assert "truncate" not in summary.action_counts  # the coarse step exists only with --atomic
    assert summary.never_fired() == []


# ------------------------------------------------------------- the TLA+ spec

HW3 = {"model": "tla-hw", "replicas": 3}  # breaks WeakIsr (BFS: a trace of 9 states)


def test_a_spec_walk_finds_weak_isr_broken_and_the_path_replays():
    config = make_spec_config(HW3)
    w = Walker(config, ["weak-isr"], depth=30)
    assert w.kinds == config.build().action_kinds()  # the Next disjuncts of the hw module
    assert "BecomeFollowerTruncateToHighWatermark" in w.kinds
    assert w.symmetry is False  # the spec's default, as TLC counts
    results = list(w.run_range(1, 0, 300))
    for r in results:
        assert sum(r.counts) == r.steps <= 30 and r.kinds == w.kinds
    summary = summarize(results, kinds=w.kinds)
    assert set(summary.action_counts) == set(w.kinds) and summary.violations["weak-isr"] > 0
    steps, walk_id, path, message = summary.shortest["weak-isr"]
    assert steps >= 8  # no walk beats BFS's shortest counterexample (8 actions)
    (inv,) = w.invariants
    assert inv(execute(w.model, path)[-1][1]) == message
    again = Walker(config, ["weak-isr"], depth=30, swarm=True)
    assert [again.walk(1, i) for i in range(30)] == [again.walk(1, i) for i in range(30)]


def test_spec_walks_split_into_partitions_like_kafka_walks():
    config = make_spec_config({"model": "tla-kip320", "replicas": 3})
    kw = dict(seed=2, walks=20, partitions=2, depth=15, swarm=True)
    rows = [r for p in range(2) for r in run_partition(config.to_dict(), None, **kw, index=p)]
    w = Walker(config, depth=15, swarm=True)
    assert rows == [r.to_row() for r in w.run_range(2, 0, 20)]
    assert {inv.id for inv in w.invariants} == {"type-ok", "weak-isr", "strong-isr"}


def test_kip320_spec_holds_on_walks_and_takes_every_kind():
    w = Walker(make_spec_config({"model": "tla-kip320", "replicas": 3}), depth=30, swarm=True)
    summary = summarize(w.run_range(0, 0, 300), kinds=w.kinds)
    assert summary.violations == {} and summary.never_fired() == []


def test_swarm_weights_do_not_depend_on_the_configuration():
    """Drawn over every action name of the model: hw and a coarse 3.5.0 take different
    kinds, yet a walk of the same seed and id switches the same kinds off in both."""
    hw, coarse = walker(swarm=True), walker(swarm=True, model={"mode": "3.5.0", "atomic": True})
    assert hw.kinds != coarse.kinds
    assert hw._weights(walk_rng(3, 9)) == coarse._weights(walk_rng(3, 9))


@pytest.mark.parametrize(
    "argv, words",
    [
        (["--walks", "0"], "--walks"),
        (["--depth", "x"], "--depth"),
        (["--seed", "-1"], "--seed"),
        (["--spark-conf", "novalue"], "KEY=VALUE"),
        (["--invariant", "nope"], "unknown invariant"),
        (["--replicas", "9"], "replicas"),
        (["--model", "tla-kip320", "--records", "2"], "--records: a Kafka model option"),
        (["--model", "tla-hw", "--mode", "kip320"], "--mode: a Kafka model option"),
        (["--log-size", "2"], "--log-size: a constant of the TLA+ spec"),
        (["--model", "tla-hw", "--invariant", "hw-le-leo"], "unknown invariant 'hw-le-leo'"),
        (["--model", "tla-hw", "--replicas", "9"], "replicas: expected a whole number 1-5"),
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
    from replcheck.checker.spark import session as spark_session
    from replcheck.checker.spark import walks as spark_walk

    closed: list[object] = []
    monkeypatch.setattr(spark_session, "start_session", lambda *a, **k: FakeSpark)
    monkeypatch.setattr(spark_session, "close_session", closed.append)
    monkeypatch.setattr(spark_walk, "default_partitions", lambda *a: 2)
    return closed


def _raise(exc: BaseException):
    def go(*_a: object, **_k: object):
        raise exc

    return go


def test_ctrl_c_while_spark_starts_is_one_line_and_exit_130(monkeypatch, capsys):
    from replcheck.checker.spark import session as spark_session

    monkeypatch.setattr(spark_session, "start_session", _raise(KeyboardInterrupt()))
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
    from replcheck.checker.spark import session as spark_session
    from replcheck.checker.spark import walks as spark_walk

    if exc == "job":
        exc = spark_session.JobFailed("ValueError: boom")
    monkeypatch.setattr(spark_walk, "walk_job", _raise(exc))
    assert main(["walk", "--walks", "10", "--quiet"]) == code
    assert capsys.readouterr().err == line
    assert fake_session == [FakeSpark]


def test_missing_java_is_one_line(monkeypatch, tmp_path, capsys):
    from replcheck.checker.spark import session as spark_session

    monkeypatch.setattr(spark_session, "active_session", lambda: None)
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "no-jdk"))
    monkeypatch.delenv("PYSPARK_GATEWAY_PORT", raising=False)
    assert main(["walk", "--walks", "10"]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and ("Java" in err or "pyspark" in err)


@pytest.fixture
def plain_spark(monkeypatch, fake_session):
    """The walk job runs in this process, as the plain-Python walks Spark's would equal."""
    from replcheck.checker.spark import walks as spark_walk

    def walk_job(_spark, job, **_kw):
        return SimpleNamespace(df=job, seconds=0.5, interrupted=False, close=lambda: None)

    def aggregate(job, _job, seconds):
        w = Walker(
            job.config, job.invariant_ids, depth=job.depth, swarm=job.swarm, symmetry=job.symmetry
        )
        s = summarize(w.run_range(job.seed, 0, job.walks), kinds=job.kinds)
        return spark_walk.SparkSummary(
            s.walks, s.steps, s.ends, s.violations, s.shortest, s.action_counts,
            s.distinct_states, seconds, 0.0, job.partitions,
        )  # fmt: skip

    monkeypatch.setattr(spark_walk, "walk_job", walk_job)
    monkeypatch.setattr(spark_walk, "aggregate", aggregate)


SPEC_WALK = ["walk", "--model", "tla-hw", "--replicas", "3", "--walks", "200", "--depth", "30"]


def test_the_command_walks_the_spec(plain_spark, capsys):
    assert main([*SPEC_WALK, "--seed", "1", "--invariant", "weak-isr", "--json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert (doc["model"], doc["mode"], doc["config"]["replicas"]) == ("tla-hw", None, 3)
    assert doc["invariant"] == "weak-isr" and doc["violations"]["weak-isr"] > 0
    assert doc["symmetry"] is False  # the spec's default, as TLC counts
    kinds = make_spec_config(HW3).build().action_kinds()
    assert tuple(doc["action_counts"]) == kinds and doc["never_fired"] == []
    example = doc["counterexamples"]["weak-isr"]
    assert 9 <= example["trace_length"] <= example["walk_steps"] + 1  # BFS's is 9 states

    assert main([*SPEC_WALK, "--seed", "1", "--invariant", "weak-isr", "--quiet"]) == 1
    out = capsys.readouterr().out
    assert out.startswith("replcheck walk: model=tla-hw (KafkaTruncateToHighWatermark.tla)")
    assert "action coverage: ControllerElectLeader " in out
    assert "Shortest counterexample to weak-isr (" in out and "; shrunk):" in out
    assert "  1  ControllerElectLeader(new_leader=" in out  # the spec's own words
    assert "=> weak-isr violated: " in out and out.rstrip().endswith("result: violated")


def test_the_command_reports_a_spec_that_holds(plain_spark, capsys):
    argv = ["walk", "--model", "tla-kip320", "--replicas", "3", "--walks", "100", "--symmetry"]
    assert main([*argv, "--json", "--quiet"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["result"] == "not violated" and doc["symmetry"] is True
    assert set(doc["violations"]) == {"type-ok", "weak-isr", "strong-isr"}


@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM"])
def test_a_stop_signal_ends_walks_here_with_those_done(sig):
    """replcheck.walk in this process (the API's default): Ctrl-C or SIGTERM, here sent
    by the process to itself as walk 5 starts, ends the walks at the next one; the six
    done are reported.  In a child process: without the handler the signal would end
    the test run."""
    script = f"""
import json, signal
import replcheck
from replcheck.checker.walks import walk as walks

real = walks.Walker.walk
def walk(self, seed, walk_id):
    if walk_id == 5:
        signal.raise_signal(signal.{sig})
    return real(self, seed, walk_id)
walks.Walker.walk = walk
r = replcheck.walk(kafka="4.1.0", replicas=3, walks=1000, seed=7)
print(json.dumps([r.status, r.walks, r.walks_requested]))
"""
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        preexec_fn=sigint_default,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == ["interrupted", 6, 1000]
