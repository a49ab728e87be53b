"""Checkpoint and resume: a search stopped anywhere and resumed, with any number of
workers, ends with the counts and counterexample lengths of one never stopped."""

from __future__ import annotations

import json
import signal
import subprocess
import sys

import pytest

import replcheck
from replcheck.checker.explicit.frontier import Level
from replcheck.options import model_config
from tests.conftest import interrupt_replcheck

HW = {"mode": "hw"}  # 99,913 states, five invariants violated
LOSSLESS = {"kafka": "2.1.0"}  # 80,536 states, none violated


def summary(result) -> tuple:
    lengths = {i: v.length for i, v in result.violations.items()}
    return result.status, result.distinct_states, result.depth, result.transitions, lengths


@pytest.fixture(scope="module")
def uninterrupted():
    return {
        name: summary(replcheck.check(workers=1, **cfg))
        for name, cfg in (("hw", HW), ("lossless", LOSSLESS))
    }


@pytest.mark.parametrize(("first", "then"), [(1, 1), (2, 2), (1, 2), (2, 1)])
@pytest.mark.parametrize("name", ["hw", "lossless"])
def test_stopped_at_max_states_and_resumed_twice(tmp_path, uninterrupted, name, first, then):
    cfg = HW if name == "hw" else LOSSLESS
    folder = tmp_path / "ck"
    stopped = replcheck.check(workers=first, max_states=20_000, checkpoint=folder, **cfg)
    assert stopped.status == "max-states" and stopped.checkpoint == str(folder)
    again = replcheck.check(workers=then, max_states=50_000, resume=folder)
    assert again.status == "max-states" and again.distinct_states == 50_000
    done = replcheck.check(workers=then, resume=folder)
    assert summary(done) == uninterrupted[name]


def test_stopped_at_its_time_limit_mid_level_and_resumed(tmp_path, uninterrupted):
    folder = tmp_path / "ck"
    stopped = replcheck.check(workers=1, timeout=0.5, checkpoint=folder, **LOSSLESS)
    assert stopped.status == "timeout" and stopped.distinct_states < 80_536
    doc = json.loads((folder / "checkpoint.json").read_text())
    assert doc["status"] == "timeout" and doc["distinct_states"] == stopped.distinct_states
    assert summary(replcheck.check(workers=2, resume=folder)) == uninterrupted["lossless"]


def test_resumed_mid_level_by_more_workers_evens_out_the_level_at_once(
    tmp_path, uninterrupted, monkeypatch
):
    """A one-worker checkpoint holds the rest of its level in one part: resumed by two
    workers, the first round shares it out (it used to wait for the next level, and one
    worker did the whole level alone)."""
    from replcheck.checker.explicit import parallel_bfs

    folder = tmp_path / "ck"
    stopped = replcheck.check(workers=1, max_states=30_000, checkpoint=folder, **LOSSLESS)
    doc = json.loads((folder / "checkpoint.json").read_text())
    assert stopped.status == "max-states" and doc["in_level"], doc
    plans = []
    real = parallel_bfs.balance
    monkeypatch.setattr(parallel_bfs, "balance", lambda sizes: plans.append(sizes) or real(sizes))
    level = Level.load([folder / doc["data"] / doc["parts"][0]["frontier"]])
    left = len(level)  # the states of the level still to expand
    level.close()
    assert summary(replcheck.check(workers=2, resume=folder)) == uninterrupted["lossless"]
    assert left > 1_000 and plans[0] == [left, 0], plans[:3]


def test_a_finished_search_resumed_answers_at_once(tmp_path, uninterrupted):
    folder = tmp_path / "ck"
    replcheck.check(workers=2, checkpoint=folder, **HW)
    assert summary(replcheck.check(workers=1, resume=folder)) == uninterrupted["hw"]
    assert len(list(folder.glob("data-*"))) == 1  # older checkpoints are dropped


def test_checkpoints_at_level_boundaries_while_it_runs(tmp_path, uninterrupted):
    folder = tmp_path / "ck"
    result = replcheck.check(workers=1, checkpoint=folder, checkpoint_every=1e-3, **LOSSLESS)
    assert summary(result) == uninterrupted["lossless"]
    doc = json.loads((folder / "checkpoint.json").read_text())
    assert doc["status"] == "complete" and doc["depth"] == result.depth


def test_resume_refuses_model_options(tmp_path):
    folder = tmp_path / "ck"
    replcheck.check(workers=1, max_states=1000, checkpoint=folder, **HW)
    with pytest.raises(replcheck.InputError, match="the checkpoint's"):
        replcheck.check(resume=folder, kafka="2.1.0")


def test_resume_takes_this_runs_workers_and_memory(tmp_path, uninterrupted):
    folder = tmp_path / "ck"
    replcheck.check(workers=1, max_states=1000, checkpoint=folder, **HW)
    code, out, err = cli("check", "--resume", str(folder), "--workers", "2", "--memory", "1G")
    assert code == 1 and "Traceback" not in err, err  # the hw mode's violations
    assert f"explored {uninterrupted['hw'][1]:,} distinct states" in out, out
    # Said before the states are read back: where the stopped search stood.
    assert err.startswith(f"resuming {folder}: 1,000 distinct states, "), err


def cli(*argv: str) -> tuple[int, str, str]:
    proc = subprocess.run(
        [sys.executable, "-m", "replcheck", *argv], capture_output=True, text=True, timeout=600
    )
    return proc.returncode, proc.stdout, proc.stderr


@pytest.mark.parametrize(
    ("sig", "workers"),
    [(signal.SIGINT, "1"), (signal.SIGTERM, "2")],
    ids=["ctrl-c", "sigterm-in-the-background"],
)
def test_ctrl_c_leaves_a_checkpoint_that_resumes_to_the_same_verdict(tmp_path, sig, workers):
    """What a user types: a long run with --checkpoint, Ctrl-C, then --resume (with the
    default workers).  A run in the background (``nohup ... &``: SIGINT ignored) stops
    the same way on SIGTERM, as a batch scheduler or ``timeout`` ends it."""
    folder = tmp_path / "ck"
    model = ["--kafka", "2.1.0", "--records", "3"]  # 468,612 states: about 12 s on one core
    argv = ["check", *model, "--workers", workers, "--checkpoint", str(folder), "--json"]
    ready = lambda line: "distinct" in line  # noqa: E731
    code, out, err = interrupt_replcheck(argv, 0.2, ready_err=ready, sig=sig)
    assert code == 130 and "Traceback" not in err, err
    stopped = json.loads(out)
    assert stopped["status"] == "interrupted" and stopped["checkpoint"] == str(folder)
    code, out, err = cli("check", "--resume", str(folder), "--json", "--quiet")
    assert code == 0, err
    resumed = json.loads(out)
    # What the same search gives uninterrupted (replcheck.check(kafka="2.1.0", records=3);
    # test_stopped_at_max_states_and_resumed_twice runs such pairs side by side).
    assert resumed["distinct_states"] == 468_612 > stopped["distinct_states"]
    assert (resumed["status"], resumed["depth"], resumed["transitions"]) == (
        "complete",
        33,
        1_368_240,
    )
    assert resumed["config"] == model_config(None, {"kafka": "2.1.0", "records": 3}).to_dict()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--resume", "{tmp}/none"], "--resume {tmp}/none: no such folder"),
        (["--resume", "{tmp}"], "--resume {tmp}: no checkpoint there (checkpoint.json is missing)"),
        (["--checkpoint", "{tmp}/file"], "checkpoint {tmp}/file: not a folder"),
        (["--resume", "{tmp}/ck", "--kafka", "2.1.0"], "the checkpoint's; drop --kafka"),
        # --no-kraft is a model flag too; --workers, this run's, is not named.
        (["--resume", "{tmp}/ck", "--no-kraft", "--workers", "2"], "checkpoint's; drop --kraft\n"),
        (["--resume", "{tmp}/bad"], "--resume {tmp}/bad/checkpoint.json: not a checkpoint"),
        (
            ["--resume", "{tmp}/sk"],
            "{tmp}/sk: a Spark BFS checkpoint; resume it with --engine spark",
        ),
    ],
)
def test_bad_checkpoint_options_exit_2_with_one_line(tmp_path, argv, message):
    (tmp_path / "file").write_text("")
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "checkpoint.json").write_text("{")
    (tmp_path / "sk").mkdir()
    (tmp_path / "sk" / "spark-bfs.json").write_text("{}")
    replcheck.check(workers=1, max_states=500, checkpoint=tmp_path / "ck", **HW)
    code, out, err = cli("check", *(a.format(tmp=tmp_path) for a in argv))
    assert code == 2 and out == "", err
    assert len(err.strip().splitlines()) == 1 and message.format(tmp=tmp_path) in err, err


@pytest.mark.parametrize(
    ("digest", "said"), [("0" * 16, "another version"), (None, "an earlier version")]
)
def test_a_checkpoint_of_other_model_code_is_refused(tmp_path, digest, said):
    """A model change between a stop and its resume (a replcheck upgrade, an edited rule)
    would mix two state spaces in one search: the checkpoint records a digest of the
    model's and invariants' source, and resume refuses any other (or none)."""
    folder = tmp_path / "ck"
    replcheck.check(workers=1, max_states=500, checkpoint=folder, **HW)
    meta = folder / "checkpoint.json"
    doc = json.loads(meta.read_text())
    assert len(doc["identity"]["model"]) == 16
    replcheck.check(resume=folder, max_states=600)  # the same code: it goes on
    doc = json.loads(meta.read_text())
    if digest is None:
        del doc["identity"]["model"]
    else:
        doc["identity"]["model"] = digest
    meta.write_text(json.dumps(doc))
    code, out, err = cli("check", "--resume", str(folder))
    assert code == 2 and out == "", err
    assert err.strip() == (
        f"replcheck: error: resume {folder}: the checkpoint was written by {said} of the "
        "model's rules or invariants; continuing it would mix two state spaces: start the "
        "search again"
    )


def test_the_resume_command_suggested_names_the_spark_engine_for_its_folders():
    from types import SimpleNamespace

    from replcheck.cli.commands.check import resume_command

    result = SimpleNamespace(checkpoint="/data/ck")
    assert resume_command(SimpleNamespace(engine="local"), result) == (
        "replcheck check --resume /data/ck"
    )
    assert resume_command(SimpleNamespace(engine="spark"), result) == (
        "replcheck check --engine spark --resume /data/ck"
    )
