"""The TLA+ reference spec through the command line: check, the ITF file, replay, bad input."""

from __future__ import annotations

import json

import pytest

from replcheck.cli.main import main


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_check_counts_the_states_tlc_counts(capsys):
    code, out, _ = run(capsys, "check", "--model", "tla-kip320", "--quiet", "--json")
    doc = json.loads(out)
    assert code == 0 and doc["result"] == "holds" and doc["distinct_states"] == 28_939
    assert doc["model"] == "tla-kip320" and doc["config"]["max_leader_epoch"] == 3
    assert set(doc["invariants"]) == {"type-ok", "weak-isr", "strong-isr"}  # the defaults


def test_symmetry_counts_orbits_on_request(capsys):
    """Off by default for the spec (TLC's counts); --symmetry counts one state per orbit:
    28,939 states are 14,470 orbits (only the initial state is its own mirror image)."""
    code, out, _ = run(capsys, "check", "--model", "tla-kip320", "--symmetry", "--quiet", "--json")
    doc = json.loads(out)
    assert code == 0 and doc["symmetry"] is True and doc["distinct_states"] == 14_470
    code, out, _ = run(capsys, "check", "--model", "tla-kip320", "--quiet")
    assert code == 0 and "no symmetry: the spec's states, as TLC counts them" in out


def test_a_counterexample_is_written_and_replays(capsys, tmp_path):
    trace = tmp_path / "weak.itf.json"
    argv = ["check", "--model", "tla-hw", "--replicas", "3", "--invariant", "weak-isr"]
    code, out, _ = run(capsys, *argv, "--quiet", "--trace-out", str(trace))
    assert code == 1 and "weak-isr   VIOLATED (trace of 9 states)" in out
    last = out.split("=> weak-isr violated")[0].splitlines()
    assert any(line.startswith("  8  BecomeFollowerTruncateToHighWatermark(") for line in last)
    doc = json.loads(trace.read_text())
    assert doc["#meta"]["config"]["model"] == "tla-hw" and len(doc["states"]) == 9
    assert doc["vars"][0] == "replica_log"
    code, out, _ = run(capsys, "replay", str(trace))
    assert code == 0 and "replays exactly (8 steps), ends in the recorded violation" in out

    shorter = tmp_path / "short.itf.json"
    code, out, _ = run(capsys, "shrink", str(trace), "--out", str(shorter), "--quiet")
    assert code == 0 and out.startswith("weak-isr: 8 steps -> 8 steps")  # BFS's: already minimal

    # A recorded state the spec does not reach is reported, not replayed over.
    doc["states"][4]["next_record_id"] = {"#bigint": "7"}
    trace.write_text(json.dumps(doc))
    code, out, _ = run(capsys, "replay", str(trace))
    assert code == 1 and "DIVERGES at step 4" in out and "next_record_id recorded 7" in out


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--model", "tla-kip320", "--records", "3"], "--records: a Kafka model option"),
        (["--model", "tla-kip320", "--kafka", "2.1"], "--kafka: a Kafka model option"),
        (["--log-size", "3"], "--log-size: a constant of the TLA+ spec"),
        (["--model", "tla-kip320", "--max-leader-epoch", "999"], "max_leader_epoch: expected"),
        (["--model", "tla-kip101", "--invariant", "acked-writes-durable"], "unknown invariant"),
        (["--model", "tla-kip999"], "argument --model: invalid choice"),
    ],
)
def test_bad_input_is_one_line(capsys, argv, message):
    code, out, err = run(capsys, "check", *argv)
    assert code == 2 and out == ""
    assert err.startswith("replcheck: error: ") and message in err and err.count("\n") == 1


def test_html_is_refused_for_a_spec_trace(capsys, tmp_path):
    trace = tmp_path / "t.itf.json"
    run(capsys, "check", "--model", "tla-hw", "--quiet", "--trace-out", str(trace))
    code, _out, err = run(capsys, "replay", str(trace), "--html", str(tmp_path / "t.html"))
    assert code == 2 and "the timeline view is the Kafka model's" in err
