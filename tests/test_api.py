"""The Python API (``import replcheck``): what docs/api.md promises."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from functools import cache
from pathlib import Path

import pytest

import replcheck
from replcheck.model import Action

ROOT = Path(__file__).resolve().parents[1]


@cache
def seeds_loss() -> replcheck.CheckResult:
    return replcheck.check(kafka="0.10.2", workers=2)


def test_check_finds_the_seeds_loss_in_0_10_2():
    result = seeds_loss()
    assert not result.holds and result.status == "complete"
    loss = result.violations["no-committed-data-loss"]
    assert loss.length == 11 and "committed record m1@e1" in loss.message
    assert loss.trace[0].action is None and all(s.action for s in loss.trace[1:])
    assert result.distinct_states == 99_913 and result.depth > 10 and result.seconds > 0
    assert result.verdicts["leader-in-isr"] == "holds"
    assert result.verdicts["no-committed-data-loss"] == "violated"


def test_check_holds_in_2_1_0():
    result = replcheck.check(kafka="2.1.0")
    assert result.holds and not result.violations and result.status == "complete"


def test_limits_stop_the_search_with_what_it_found():
    result = replcheck.check(kafka="2.1.0", replicas=3, max_states=2_000, workers=1)
    assert result.status == "max-states" and result.distinct_states == 2_000
    assert not result.holds  # nothing violated, but nothing proved either
    assert result.verdicts["hw-le-leo"] == "not violated (incomplete)"


def test_to_itf_replays_exactly(tmp_path):
    result = seeds_loss()
    document = result.to_itf()
    assert document["#meta"]["invariant"] == "no-committed-data-loss"
    path = tmp_path / "loss.itf.json"
    result.write_itf(path, "no-committed-data-loss")
    replayed = replcheck.replay(path)
    assert replayed.replays and not replayed.holds
    assert replayed.invariant == "no-committed-data-loss" and replayed.depth == 10
    assert [s.state for s in replayed.steps] == [
        s.state for s in result.violations["no-committed-data-loss"].trace
    ]


def test_replay_under_another_release(tmp_path):
    """The seeds' steps are all enabled in 2.1.0, and lose nothing there."""
    path = tmp_path / "loss.itf.json"
    seeds_loss().write_itf(path)
    there = replcheck.replay(path, kafka="2.1.0")
    assert there.replays and there.config.mode == "2.1.0"
    assert "no-committed-data-loss" not in there.violations


def test_replay_a_list_of_actions():
    result = replcheck.replay(["write(r0)", Action("fetch_request", (1, 0))], records=1)
    assert result.replays and result.depth == 2
    stuck = replcheck.replay(["fetch_request(1, 0)", "write(0)", "write(0)"], records=1)
    assert not stuck.replays and stuck.divergence_step == 3


def test_prove_bmc_and_induction():
    bmc = replcheck.prove(kafka="0.10.2", depth=4)
    assert bmc.method == "bmc" and bmc.holds and bmc.depth == 4
    assert bmc.distinct_states is None
    proof = replcheck.prove(
        kafka="2.1.0", records=1, epochs=1, induction=True, invariants="hw-le-leo", workers=1
    )
    assert proof.method == "k-induction" and proof.status == "proved" and proof.holds


def test_walks_here_are_the_walks_spark_runs():
    result = replcheck.walk(kafka="0.10.2", walks=300, seed=1)
    assert result.status == "complete" and result.walks == 300 and result.master is None
    assert result.violations and result.distinct_states > 100
    for inv_id, v in result.violations.items():
        assert replcheck.replay([s.action for s in v.trace[1:]]).first_violated[inv_id]
    assert replcheck.walk(kafka="0.10.2", walks=300, seed=1).counterexamples.keys() == (
        result.counterexamples.keys()
    )


@pytest.mark.parametrize(
    "call,options,message",
    [
        (replcheck.check, {"replicas": 9}, "replicas: must be 2..5 (got 9)"),
        (replcheck.check, {"bogus": 1}, "unknown key 'bogus'"),
        (replcheck.check, {"kafka": "2.1.0.1"}, "only releases before 1.0 have four parts"),
        (replcheck.check, {"invariants": ["all", "nope"]}, "unknown invariant 'nope'"),
        (replcheck.check, {"max_states": 0}, "max_states: must be at least 1"),
        (replcheck.check, {"timeout": float("inf")}, "timeout: expected a positive number"),
        (replcheck.check, {"memory": "-1G"}, "a size cannot be negative"),
        (replcheck.check, {"memory": 1000}, "memory: must be at least 64M"),
        (replcheck.check, {"workers": 100_000}, "workers: at most"),
        (replcheck.check, {"workers": 0}, "workers: must be at least 1"),
        (replcheck.check, {"symmetry": "yes"}, "symmetry: expected True, False or None"),
        (replcheck.check, {"config": 42}, "config: expected a TOML file's path"),
        (replcheck.check, {"config": "/no/such.toml"}, "/no/such.toml: no such file"),
        (replcheck.prove, {"model": "tla-kip320"}, "prove takes the Kafka model only"),
        (replcheck.prove, {"lemmas": "none"}, "lemmas: only with induction=True"),
        (replcheck.prove, {"induction": True, "lemmas": "nope"}, "lemma nope: unknown lemma"),
        (replcheck.walk, {"walks": 0}, "walks: must be at least 1"),
        (replcheck.walk, {"master": " "}, "master: give a Spark master URL"),
        (replcheck.walk, {"parquet": "x.parquet"}, "parquet: the per-walk rows are a Spark"),
        (replcheck.replay, {"trace": 7}, "trace: expected a trace file's path"),
        (replcheck.replay, {"trace": ["nope(1)"]}, "actions[1]"),
        (replcheck.replay, {"trace": "/no/such.itf.json"}, "no such file"),
    ],
)
def test_bad_input_is_one_input_error(call, options, message):
    options = dict(options)
    args = [options.pop("trace")] if "trace" in options else []
    with pytest.raises(replcheck.InputError) as caught:
        call(*args, **options)
    text = str(caught.value)
    assert message in text and "\n" not in text
    assert isinstance(caught.value, replcheck.ReplcheckError | ValueError)


def test_no_counterexample_to_export():
    with pytest.raises(replcheck.InputError, match="no invariant was violated"):
        replcheck.check(kafka="2.1.0", records=1).to_itf()
    with pytest.raises(replcheck.InputError, match="'leader-in-isr' was not violated"):
        seeds_loss().to_itf("leader-in-isr")


def test_importing_the_package_loads_neither_z3_nor_spark():
    code = "import sys, replcheck; print(sorted({'z3', 'pyspark'} & set(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.stdout.strip() == "[]", done.stderr


def test_only_replcheck_is_importable_at_the_top(tmp_path):
    """Installed, the package is one name: model, checker, ... are its parts."""
    code = (
        "import importlib.util as u; import replcheck.model, replcheck.checker.explicit.bfs; "
        "print([n for n in ('model', 'checker', 'invariants', 'traces', 'api') if u.find_spec(n)])"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path
    )
    assert done.stdout.strip() == "[]", done.stderr
    module = subprocess.run(
        [sys.executable, "-m", "replcheck", "check", "--records", "1", "--quiet"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert module.returncode == 1 and "result: violated" in module.stdout


def test_the_wheel_holds_one_package(tmp_path):
    """``pip install .`` installs what the wheel holds: replcheck/ and its metadata."""
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(ROOT)],
        capture_output=True,
        text=True,
        # The wheel's contents are the question, not the compiled modules (tests/
        # test_compiled.py): building them again would take half a minute.
        env={**os.environ, "REPLCHECK_PURE_PYTHON": "1"},
    )  # fmt: skip
    # pip builds in isolation, with setuptools and Cython from the package index.  Only
    # when the index cannot give them (offline) is there no wheel to look at; any other
    # failure fails.
    offline = [f"No matching distribution found for {need}" for need in ("setuptools", "Cython")]
    if done.returncode != 0 and any(text in done.stderr for text in offline):
        pytest.skip("cannot build a wheel here: pip found no setuptools or Cython to build with")
    assert done.returncode == 0, done.stderr
    (wheel,) = tmp_path.glob("replcheck-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    tops = {name.split("/")[0] for name in names}
    assert tops == {"replcheck", next(t for t in tops if t.endswith(".dist-info"))}
    for part in (
        "replcheck/__init__.py",
        "replcheck/__main__.py",
        "replcheck/model/kafka/replication.py",
        "replcheck/model/kafka/symbolic/state.py",
        "replcheck/model/tla/spec.py",
        "replcheck/invariants/kafka/lemmas.py",
        "replcheck/cli/commands/check.py",
        "replcheck/checker/suites/kafka_bugs.toml",
        "replcheck/traces/itf.py",
        "replcheck/harness/jvm/pom.xml",  # conform builds the harness from these sources
        "replcheck/cluster/jvm/pom.xml",  # reproduce builds its jars and client from these
        "replcheck/cluster/jvm/src/main/java/replcheck/cluster/ClusterClient.java",
        "replcheck/cluster/runner.py",
    ):
        assert part in names
    jvm = ROOT / "harness" / "jvm" / "src"
    sources = {
        f"replcheck/harness/jvm/src/{p.relative_to(jvm).as_posix()}" for p in jvm.rglob("*.scala")
    }
    assert sources and sources <= set(names), sorted(sources - set(names))


def _doc_blocks() -> list[str]:
    text = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    return [block.split("```", 1)[0] for block in text.split("```python\n")[1:]]


@pytest.mark.parametrize("index", [0, 2, 4])
def test_the_examples_in_docs_api_run(index, tmp_path, monkeypatch):
    """The page's quick examples (the first, another release, errors) run as written
    and say what their comments say; the long sweeps are left to the reader."""
    blocks = _doc_blocks()
    monkeypatch.chdir(tmp_path)
    if index == 2:  # it replays the file the first block writes
        exec(blocks[0], {})
    namespace: dict = {"replcheck": replcheck}  # later blocks assume the first's import
    exec(blocks[index], namespace)
    if index == 0:
        assert namespace["result"].holds is False and namespace["loss"].length == 11
        assert (tmp_path / "loss.itf.json").is_file()
    if index == 2:
        assert namespace["there"].replays and namespace["there"].config.mode == "2.1.0"
        assert "no-committed-data-loss" not in namespace["there"].violations


def test_the_docs_api_blocks_are_the_ones_tested():
    blocks = _doc_blocks()
    assert 'replcheck.check(kafka="0.10.2")' in blocks[0]
    assert 'kafka="2.1.0")' in blocks[2] and "replicas=9" in blocks[4]
