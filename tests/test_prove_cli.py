"""``replcheck prove`` through the command line: verdicts, the ITF trace, proofs, bad input."""

from __future__ import annotations

import json

import pytest

from replcheck.cli.commands import prove as prove_command
from replcheck.cli.main import main
from tests.conftest import interrupt_replcheck

SMALL = ["--kafka", "2.1.0", "--records", "1", "--epochs", "2", "--unclean"]


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_bmc_finds_the_unclean_loss_and_its_trace_replays(capsys, tmp_path):
    trace = tmp_path / "loss.itf.json"
    code, out, err = run(
        capsys, "prove", *SMALL, "--depth", "6", "--json", "--trace-out", str(trace)
    )
    doc = json.loads(out)
    assert code == 1 and doc["engine"] == "bmc" and doc["status"] == "complete"
    assert doc["violations"]["no-committed-data-loss"]["depth"] == 5
    assert doc["invariants"]["hw-le-leo"] == "holds to depth 6"
    assert "depth 5: violated" in err  # progress on stderr
    code, out, _ = run(capsys, "replay", str(trace))
    assert code == 0 and "no-committed-data-loss" in out  # replays exactly


def test_a_clear_depth_exits_0(capsys):
    code, out, _ = run(capsys, "prove", *SMALL, "--depth", "3", "--quiet")
    assert code == 0 and "result: holds to depth 3" in out


def test_induction_proves_hw_le_leo_on_one_epoch(capsys):
    argv = ["--kafka", "2.1.0", "--records", "1", "--epochs", "1", "--quiet"]
    code, out, _ = run(capsys, "prove", *argv, "--induction", "--invariant", "hw-le-leo")
    assert code == 0 and "proved for all depths at these bounds" in out


def test_induction_without_lemmas_shows_a_cti(capsys):
    argv = ["--kafka", "2.1.0", "--quiet", "--induction", "--lemma", "none", "--depth", "1"]
    code, out, _ = run(capsys, "prove", *argv, "--invariant", "hw-le-leo")
    assert code == 3 and "Counterexample to induction" in out and "result: cti" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--depth", "0"], "--depth"),
        (["--lemma", "records-unique"], "--lemma: only with --induction or --pdr"),
        (["--pdr", "--induction"], "choose one proof method"),
        (["--pdr", "--lemma", "no-such"], "unknown lemma"),
        (["--induction", "--lemma", "no-such"], "unknown lemma"),
        (["--invariant", "no-such"], "unknown invariant"),
        (["--model", "tla-kip320"], "unrecognized arguments"),
        (["--timeout", "-1"], "--timeout"),
    ],
)
def test_bad_input_is_one_line(capsys, argv, message):
    code, out, err = run(capsys, "prove", *argv)
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1


def test_list_lemmas(capsys):
    code, out, _ = run(capsys, "prove", "--list-lemmas")
    assert code == 0 and "records-unique:" in out


def test_ctrl_c_reports_the_depth_reached():
    """Ctrl-C cancels z3's query (or stops BMC between two): prove reports it as
    interrupted, with no traceback from a half-built z3 term (2 runs in 20 before)."""
    code, out, err = interrupt_replcheck(
        ["prove", "--json"], 0.5, ready_err=lambda line: line.startswith("depth 3: clear")
    )
    assert out.strip() and "Traceback" not in err, (code, err)
    doc = json.loads(out)
    assert code == 130 and doc["status"] == "interrupted", err
    assert doc["cleared_depth"] >= 3 and "Traceback" not in err


def test_ctrl_c_stops_the_induction_step_and_its_workers():
    """The step runs in worker processes; Ctrl-C reports the k reached, and no worker
    outlives the run (communicate() would wait for their stderr otherwise)."""
    argv = ["prove", "--kafka", "2.1.0", "--replicas", "3", "--induction", "--json"]
    code, out, err = interrupt_replcheck(
        [*argv, "--workers", "2"], 2.0, ready_err=lambda line: line.startswith("base case")
    )
    assert out.strip() and "Traceback" not in err, (code, err)
    doc = json.loads(out)
    assert code == 130 and doc["status"] == "interrupted" and doc["k"] == 1, err
    assert "Traceback" not in err


def test_a_long_induction_step_shows_progress(capsys, monkeypatch):
    monkeypatch.setattr(prove_command, "PROGRESS_EVERY", 0.0)
    _on_depth, on_step, on_action, _on_frame = prove_command._progress(quiet=False)
    on_step("base", 1, 0.1)
    on_action(1, 3, 60)
    on_action(1, 60, 60)  # the step's own line follows: no progress line for the last
    err = capsys.readouterr().err
    assert "induction step at k=1: 3 of 60 actions refuted (0 s)" in err
    assert "60 of 60" not in err


TINY = ["--kafka", "2.1.0", "--records", "1", "--epochs", "2", "--quiet"]


def test_pdr_proves_hw_le_leo_and_prints_its_invariant(capsys):
    code, out, err = run(capsys, "prove", *TINY, "--pdr", "--invariant", "hw-le-leo")
    assert code == 0 and "result: proved" in out and not err
    assert "Inductive invariant (checked again by a fresh solver)" in out
    # Its clauses are over the trace view's names, one relating a replica's HW to its
    # log length (what hw-le-leo needs beyond the lemmas).
    clauses = [line.strip() for line in out.splitlines() if line.startswith("  not (")]
    assert any(".hw" in c and ".log_len" in c for c in clauses)
    code, out, _ = run(capsys, "prove", *TINY, "--pdr", "--invariant", "hw-le-leo", "--json")
    doc = json.loads(out)
    assert doc["engine"] == "pdr" and doc["status"] == "proved"
    # (z3's choices depend on what the process has built before, so the clauses of
    # a second run may differ; each run's invariant is checked before it is shown.)
    assert any(".hw" in c and ".log_len" in c for c in doc["inductive_invariant"]["clauses"])


def test_pdr_agrees_with_check_on_a_violation_and_bmc_shortens_it(capsys, tmp_path):
    """The unclean election loses a committed record; PDR finds it, BMC confirms it at
    the depth BFS reports, and the trace replays."""
    trace = tmp_path / "pdr.itf.json"
    argv = [*SMALL, "--invariant", "no-committed-data-loss"]
    code, out, _ = run(capsys, "prove", *argv, "--pdr", "--json", "--trace-out", str(trace))
    doc = json.loads(out)
    assert code == 1 and doc["status"] == "violated"
    assert doc["violation"]["pdr_depth"] >= doc["violation"]["depth"]
    code, out, _ = run(capsys, "check", *argv, "--json")
    bfs_depth = json.loads(out)["trace_length"] - 1
    assert doc["violation"]["depth"] == bfs_depth
    code, out, _ = run(capsys, "replay", str(trace))
    assert code == 0 and "no-committed-data-loss" in out


def test_pdr_shows_progress_per_frame(capsys):
    argv = [a for a in TINY if a != "--quiet"]
    code, _, err = run(capsys, "prove", *argv, "--pdr", "--invariant", "hw-le-leo")
    assert code == 0 and "pdr: frame 1 done" in err


def test_ctrl_c_stops_pdr_with_the_frame_reached():
    argv = ["prove", "--kafka", "4.1.0", "--pdr", "--json"]
    # Interrupt once a frame is done (not after a fixed time: on a loaded machine the
    # import alone can take seconds, and a Ctrl-C before the search starts has nothing
    # to report).
    code, out, err = interrupt_replcheck(argv, 0.5, ready_err=lambda line: "frame 1 done" in line)
    doc = json.loads(out)
    assert code == 130 and doc["status"] == "interrupted" and doc["frames"] >= 1, err
    assert "Traceback" not in err


def test_pdr_past_its_time_limit_exits_3_with_the_frame_reached(capsys):
    argv = ["--kafka", "4.1.0", "--pdr", "--timeout", "2", "--json", "--quiet"]
    code, out, _ = run(capsys, "prove", *argv)
    doc = json.loads(out)
    assert code == 3 and doc["status"] == "timeout" and doc["inductive_invariant"] is None
    code, out, _ = run(capsys, "prove", *argv[:-2])
    assert code == 3 and "stopped (timeout) at frame" in out and "result: timeout" in out
