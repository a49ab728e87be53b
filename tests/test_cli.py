"""The replcheck command line: exit codes, --json fields, the ITF file, bad input."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from replcheck.cli.main import main
from tests.conftest import interrupt_replcheck

SMALL = ["--records", "1", "--epochs", "3", "--crashes", "1", "--quiet"]


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_default_check_finds_the_seed_data_loss(capsys):
    code, out, _ = run(capsys, "check", "--quiet")
    assert code == 1
    assert "no-committed-data-loss  VIOLATED (trace of 11 states)" in out
    assert "committed record m1@e1 at offset 0 is missing" in out
    assert "result: violated" in out


def test_holds_exits_zero(capsys):
    code, out, _ = run(capsys, "check", "--mode", "kip320", *SMALL)
    assert code == 0
    assert "result: holds" in out


def test_json_fields(capsys):
    code, out, _ = run(capsys, "check", "--mode", "hw", "--json", *SMALL)
    assert code == 1
    doc = json.loads(out)
    assert doc["result"] == "violated"
    assert doc["invariant"] == "no-committed-data-loss"
    assert doc["trace_length"] == 11
    assert doc["distinct_states"] > 100 and doc["depth"] > 5 and doc["seconds"] >= 0
    assert doc["mode"] == "hw"
    assert doc["config"] == {
        "mode": "hw",
        "replicas": 2,
        "records": 1,
        "epochs": 3,
        "crashes": 1,
        "acks": -1,
        "min_insync_replicas": 1,
        "unclean_election": False,
        "lossy_crash": False,
        "controller_failover": False,
        "clean_shutdown": False,
        "disk_loss": False,
        "fencing": False,
        "atomic": False,
        "kraft": False,
        "elr": False,
        "broken_rule": "",
        "ibp": "",
        "metadata_version": "",
    }
    assert doc["invariants"]["hw-le-leo"] == "holds"
    assert doc["violations"]["no-committed-data-loss"]["trace_length"] == 11


def test_json_when_everything_holds(capsys):
    code, out, _ = run(capsys, "check", "--mode", "kip320", "--json", *SMALL)
    doc = json.loads(out)
    assert code == 0 and doc["result"] == "holds"
    assert doc["invariant"] is None and doc["trace_length"] is None


def test_trace_out_writes_itf(capsys, tmp_path):
    path = tmp_path / "loss.itf.json"
    code, out, _ = run(
        capsys, "check", "--invariant", "no-committed-data-loss", "--trace-out", str(path), *SMALL
    )
    assert code == 1 and str(path) in out
    doc = json.loads(path.read_text())
    assert doc["#meta"]["format"] == "ITF"
    assert doc["#meta"]["invariant"] == "no-committed-data-loss"
    assert doc["#meta"]["config"]["mode"] == "hw"
    assert doc["vars"] == ["controller", "replicas", "written", "crashes", "committed", "acked"]
    states = doc["states"]
    assert len(states) == 11
    assert states[0]["#meta"] == {"index": 0, "action": None}
    assert states[1]["#meta"]["action"] == {"name": "write", "params": {"leader": {"#bigint": "0"}}}
    assert states[1]["replicas"][0]["log"] == [{"epoch": {"#bigint": "1"}, "id": {"#bigint": "1"}}]

    # ITF: every integer is a #bigint, never a bare JSON number.
    def no_bare_ints(value):
        if isinstance(value, dict):
            return all(no_bare_ints(v) for k, v in value.items() if k != "#meta")
        if isinstance(value, list):
            return all(no_bare_ints(v) for v in value)
        return not isinstance(value, int) or isinstance(value, bool)

    assert all(no_bare_ints(s) for s in states)


def test_no_trace_file_when_nothing_is_violated(capsys, tmp_path):
    path = tmp_path / "none.itf.json"
    code, out, _ = run(capsys, "check", "--mode", "kip320", "--trace-out", str(path), *SMALL)
    assert code == 0 and not path.exists() and "nothing was written" in out


def test_config_file_and_flag_override(capsys, tmp_path):
    cfg = tmp_path / "bounds.toml"
    cfg.write_text('mode = "kip320"\nreplicas = 2\nrecords = 1\nepochs = 2\ncrashes = 1\n')
    code, out, _ = run(capsys, "check", "--config", str(cfg), "--json", "--quiet")
    assert code == 0 and json.loads(out)["mode"] == "kip320"
    code, out, _ = run(capsys, "check", "--config", str(cfg), "--mode", "hw", "--json", "--quiet")
    assert code == 1 and json.loads(out)["mode"] == "hw"


def test_compare_table(capsys):
    code, out, _ = run(capsys, "compare", "--modes", "hw,kip320", *SMALL)
    assert code == 1
    header = next(line for line in out.splitlines() if line.startswith("invariant"))
    assert header.split() == ["invariant", "hw", "kip320"]
    row = next(line for line in out.splitlines() if line.startswith("no-committed-data-loss"))
    assert "VIOLATED (trace of 11 states)" in row and "holds (" in row


def test_compare_json(capsys):
    code, out, _ = run(capsys, "compare", "--modes", "kip101,kip320", "--json", *SMALL)
    doc = json.loads(out)
    assert doc["modes"] == ["kip101", "kip320"]
    assert set(doc["table"]["hw-le-leo"]) == {"kip101", "kip320"}
    assert doc["results"]["kip320"]["result"] == "holds"


def test_list_invariants(capsys):
    code, out, _ = run(capsys, "list-invariants")
    ids = [line.split()[0] for line in out.splitlines()]
    assert code == 0 and ids == [
        "no-committed-data-loss",
        "acked-writes-durable",
        "consistent-logs",
        "hw-le-leo",
        "strong-isr",
        "leader-in-isr",
        "follower-hw-committed",
        "hw-monotonic",
    ]
    marks = {line.split()[0]: line.split()[1] for line in out.splitlines()}
    assert marks["hw-monotonic"] == "on" and marks["follower-hw-committed"] == "default"


def test_max_states_is_reported_and_is_not_a_pass(capsys):
    code, out, _ = run(
        capsys, "check", "--mode", "kip320", "--max-states", "200", "--json", "--quiet"
    )
    doc = json.loads(out)
    assert code == 3 and doc["result"] == "incomplete" and doc["status"] == "max-states"


@pytest.mark.parametrize(
    "argv,fragment",
    [
        (["check", "--replicas", "7"], "replicas: must be 2..5 (got 7)"),
        (["check", "--mode", "zk"], "argument --mode: invalid choice: 'zk'"),
        (["check", "--acks", "2"], "acks: expected one of all, 1, 0"),
        (["check", "--min-isr", "3"], "min_insync_replicas: must be 1..2 (got 3)"),
        (["check", "--records", "x"], "argument --records: invalid int value: 'x'"),
        (["check", "--invariant", "nope"], "unknown invariant 'nope'"),
        (["check", "--max-states", "0"], "must be at least 1"),
        (["check", "--config", "/no/such.toml"], "/no/such.toml: no such file"),
        (["check", "--trace-out", "/no/such/dir/t.json"], "does not exist"),
        (["compare", "--modes", "hw,zk"], "--modes: 'zk' is not a Kafka release"),
        (
            ["check", "--kafka", "5.0"],
            "argument --kafka: Kafka 5.0.0 is newer than this model covers",
        ),
        (["check", "--kafka", "2.6.3", "--kraft"], "kraft: Kafka 2.6.3 has no production KRaft"),
        (["check", "--kafka", "4.0.0", "--no-kraft"], "kraft: Kafka 4.0.0 has no ZooKeeper mode"),
        (["check", "--kafka", "3.9.1", "--elr"], "elr: Kafka 3.9.1 has no Eligible Leader"),
        (["check", "--break-rule", "maximal-isr"], "broken_rule: Kafka 0.10.2 has no maximal-isr"),
        (
            ["check", "--kafka", "3.9.1", "--break-rule", "isr-join-by-fetch"],
            "broken_rule: isr-join-by-fetch is a KRaft rule (kraft = true, --kraft)",
        ),
        (
            ["check", "--kafka", "4.1", "--ibp", "3.9"],
            "ibp: a KRaft cluster has a metadata.version instead (metadata_version)",
        ),
        (
            ["check", "--kafka", "3.6.0", "--kraft", "--metadata-version", "3.7-IV0"],
            "metadata_version: Kafka 3.6.0 runs at most 3.6-IV2 (got 3.7-IV0)",
        ),
        (
            ["check", "--kafka", "2.8.0", "--ibp", "2.8-IV7"],
            "ibp: '2.8-IV7' is not a Kafka version (known: 0.8.0 to 4.4-IV2)",
        ),
        (
            ["check", "--kafka", "4.1.0", "--metadata-version", "3.2"],
            "metadata_version: Kafka 4.1.0 runs at 3.3-IV3 or later (got 3.2-IV0)",
        ),
        (["check", "--kafka", "1.1.2"], "Kafka 1.1.2 was never released"),
        (["frobnicate"], "invalid choice: 'frobnicate'"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(capsys, argv, fragment):
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert out == ""
    assert err.count("\n") == 1 and fragment in err and err.startswith("replcheck: error:")


@pytest.mark.parametrize(
    "content,fragment",
    [
        ("mode = \n", "invalid TOML"),
        ('replicas = "three"\n', "replicas: expected an integer"),
        ("colour = 1\n", "unknown key 'colour'"),
        ("unclean_election = 1\n", "unclean_election: expected true or false"),
    ],
)
def test_bad_config_file(capsys, tmp_path, content, fragment):
    cfg = tmp_path / "bad.toml"
    cfg.write_text(content)
    code, out, err = run(capsys, "check", "--config", str(cfg))
    assert code == 2 and out == "" and fragment in err and str(cfg) in err


def test_console_script_runs_as_a_process():
    """The installed entry point, end to end: exit code and a single error line."""
    proc = subprocess.run(
        [sys.executable, "-m", "replcheck", "check", "--epochs", "0"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2
    assert proc.stderr.strip() == "replcheck: error: epochs: must be 1..1000 (got 0)"
    assert "Traceback" not in proc.stderr


def test_ctrl_c_stops_cleanly_and_reports(tmp_path):
    """SIGINT during a long search: a report of what was explored, no traceback, exit 130."""
    argv = ["check", "--mode", "kip320", "--replicas", "3", "--records", "3", "--crashes", "2"]
    code, out, err = interrupt_replcheck(
        [*argv, "--epochs", "4", "--json"], 0.5, ready_err=lambda line: "distinct states" in line
    )
    assert code == 130, err
    doc = json.loads(out)
    assert doc["status"] == "interrupted" and doc["result"] == "interrupted"
    assert doc["distinct_states"] > 0
    assert "Traceback" not in err


def test_kafka_release_in_toml_and_compare(capsys, tmp_path):
    cfg = tmp_path / "k.toml"
    cfg.write_text('kafka = "2.0"\nrecords = 1\nepochs = 3\n')
    code, out, _ = run(capsys, "check", "--config", str(cfg), "--json")
    assert code == 0 and json.loads(out)["config"]["mode"] == "2.0.0"  # 2.0 reads as 2.0.0
    code, out, _ = run(capsys, "compare", "--kafka", "0.10.2,2.1", "--json", *SMALL)
    doc = json.loads(out)
    assert code == 1 and doc["modes"] == ["0.10.2", "2.1.0"]
    assert doc["results"]["0.10.2"]["result"] == "violated"
    assert doc["results"]["2.1.0"]["result"] == "holds"


def test_workers_change_nothing_but_the_time(capsys):
    docs = []
    for workers in ("1", "2"):
        code, out, _ = run(capsys, "check", "--mode", "hw", "--json", "--workers", workers, *SMALL)
        assert code == 1
        docs.append(json.loads(out))
    for key in ("distinct_states", "depth", "transitions", "status"):
        assert docs[0][key] == docs[1][key]
    lengths = [{k: v["trace_length"] for k, v in d["violations"].items()} for d in docs]
    assert lengths[0] == lengths[1] and lengths[0]  # the same shortest lengths, not the same paths
    code, _out, err = run(capsys, "check", "--workers", "0")
    assert code == 2 and "--workers" in err
