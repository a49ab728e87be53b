"""Replaying trace files: the examples, hand-written traces, divergences and bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from replcheck.cli.main import main
from replcheck.model import KafkaReplication, make_config
from replcheck.traces.itf import trace_to_itf
from replcheck.traces.load import TraceError, load_trace, parse_action
from replcheck.traces.replay import execute, replay_trace
from replcheck.traces.text import describe_action
from tests.conftest import A
from tests.test_seed_scenarios import DATA_LOSS, DATA_LOSS_STEPS

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
EXAMPLE_FILES = sorted(p.name for p in EXAMPLES.iterdir() if ".itf.json" in p.name) + [
    "data-loss.actions.toml"
]


def data_loss_document() -> dict:
    config = make_config(DATA_LOSS)
    steps = execute(KafkaReplication(config), DATA_LOSS_STEPS)
    return trace_to_itf(config, steps, "no-committed-data-loss", "lost")


def write(tmp_path: Path, document, name: str = "t.itf.json") -> str:
    path = tmp_path / name
    text = document if isinstance(document, str) else json.dumps(document)
    path.write_text(text, encoding="utf-8")
    return str(path)


@pytest.mark.parametrize("name", EXAMPLE_FILES)
def test_examples_replay_exactly(name, capsys):
    assert main(["replay", str(EXAMPLES / name)]) == 0
    out = capsys.readouterr().out
    assert "violated (first at step" in out
    assert "<= violated here" in out
    assert out.rstrip().splitlines()[-1].startswith("result: ")


def test_step_table_shows_replicas_controller_and_changes(capsys):
    assert main(["replay", str(EXAMPLES / "seed-data-loss.itf.json")]) == 0
    out = capsys.readouterr().out
    header = next(line for line in out.splitlines() if line.startswith("step"))
    assert header.split() == ["step", "action", "r0", "r1", "controller"]
    assert "fetch(follower=r1, leader=r0)" in out
    assert "*L e1 [m1@e1] hw=1 leo=1" in out  # r0's HW moves at step 3, marked changed
    assert "changed: r0.hw 0->1" in out
    assert "r1 dropped m1@e1 from offset 0" in out
    assert "controller: leader r0->r1 epoch 1->2" in out
    final = [line for line in out.splitlines() if line.startswith("=> ")]
    assert final == [
        "=> no-committed-data-loss violated (first at step 9): committed record m1@e1 at "
        "offset 0 is missing from leader r1's log (LEO 0, epoch 2)"
    ]


def test_json_output(capsys):
    assert main(["replay", str(EXAMPLES / "bfs-data-loss.itf.json"), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["result"] == "replayed"
    assert doc["invariant"] == "no-committed-data-loss"
    assert doc["violated_at_step"] == len(doc["steps"]) - 1
    assert doc["steps"][1]["action"] == {"name": "write", "params": {"leader": {"#bigint": "0"}}}


def test_hand_written_formats_agree():
    toml = load_trace(EXAMPLES / "data-loss.actions.toml")
    itf = load_trace(EXAMPLES / "data-loss.actions.itf.json")
    full = load_trace(EXAMPLES / "seed-data-loss.itf.json")
    assert toml.actions == itf.actions == full.actions == DATA_LOSS_STEPS
    assert toml.config == itf.config == full.config
    assert (toml.kind, itf.kind, full.kind) == ("actions", "itf-actions", "itf")


def test_json_action_list_and_implied_initial_state(tmp_path):
    doc = {
        "config": DATA_LOSS,
        "actions": ["write 0", {"action": "fetch", "follower": 1, "leader": 0}],
    }
    result = replay_trace(load_trace(write(tmp_path, doc, "a.json")))
    assert result.ok and len(result.steps) == 3
    itf = {"states": [{"#meta": {"action": {"name": "write", "params": {"leader": 0}}}}]}
    itf["#meta"] = {"config": DATA_LOSS}
    result = replay_trace(load_trace(write(tmp_path, itf)))
    assert result.ok and result.steps[1][0] == A("write", 0)


@pytest.mark.parametrize(
    "text,action",
    [
        ("fetch(follower=r1, leader=r0)", A("fetch", 1, 0)),
        ("fetch(1, 0)", A("fetch", 1, 0)),
        ("fetch 1 0", A("fetch", 1, 0)),
        ("notice_crash(replica=r0, new_leader=-)", A("notice_crash", 0, -1)),
        ("restart(replica=r1)", A("restart", 1)),
        ("shrink_isr_set(leader=r0, followers={r1,r2})", A("shrink_isr_set", 0, 6)),
        ("shrink_isr_set(leader=r0, followers={ r1, r2 })", A("shrink_isr_set", 0, 6)),
        ("shrink_isr_set 0 6", A("shrink_isr_set", 0, 6)),
    ],
)
def test_parse_action(text, action):
    assert parse_action(text) == action


def test_a_set_of_followers_reads_back_as_the_trace_shows_it():
    action = A("shrink_isr_set", 1, 0b1101)
    shown = describe_action(action)
    assert shown == "shrink_isr_set(leader=r1, followers={r0,r2,r3})"
    assert parse_action(shown) == action


@pytest.mark.parametrize(
    "followers,expected",
    [
        ("{r1}", "followers={r1} is not a set of two or more replicas"),
        ("{r1,r7}", "followers={r1,r7} is not a set of two or more replicas"),
        ("{r1,x}", "'x' is not a replica"),
    ],
)
def test_a_bad_set_of_followers_is_one_line(tmp_path, capsys, followers, expected):
    trace = tmp_path / "t.toml"
    trace.write_text(
        'config = { kafka = "4.1.0", replicas = 3 }\n'
        f'actions = ["shrink_isr_set(leader=r0, followers={followers})"]\n'
    )
    assert main(["replay", str(trace)]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and expected in err and "t.toml: actions[1]" in err


def test_a_set_shrink_needs_three_replicas(tmp_path, capsys):
    trace = tmp_path / "t.toml"
    trace.write_text(
        'config = { kafka = "4.1.0", replicas = 2 }\n'
        'actions = ["shrink_isr_set(leader=r0, followers={r1,r2})"]\n'
    )
    assert main(["replay", str(trace)]) == 2
    assert "exists only in configurations of three or more replicas" in capsys.readouterr().err


def test_no_invariant_recorded_is_informational(tmp_path, capsys):
    doc = {"config": DATA_LOSS, "actions": ["write 0"]}
    assert main(["replay", write(tmp_path, doc, "a.json")]) == 0
    assert "no invariant is violated" in capsys.readouterr().out


# ------------------------------------------------------------ divergences: exit 1


def test_changed_recorded_state_diverges(tmp_path, capsys):
    doc = data_loss_document()
    doc["states"][3]["replicas"][0]["hw"] = {"#bigint": "0"}
    assert main(["replay", write(tmp_path, doc)]) == 1
    out = capsys.readouterr().out
    assert (
        "DIVERGES at step 3: after fetch(follower=r1, leader=r0) the recorded state differs "
        "from the model's: replicas[0].hw recorded 0, model 1" in out
    )
    assert out.rstrip().endswith("result: diverged")


def test_a_trace_from_before_record_owed_replays(tmp_path, capsys):
    """Traces published before the export had ``record_owed`` (finding F3) do not record
    it, so replay does not compare it; a trace that records it is held to it."""
    config = make_config({"mode": "4.1.0", "records": 1})
    owed = execute(
        KafkaReplication(config), [A("write", 0), A("shrink_isr", 0, 1), A("alter_isr", 0)]
    )
    assert [s.replicas[0].record_owed for _a, s in owed] == [0, 0, 0, 1]
    doc = trace_to_itf(config, owed)
    assert doc["states"][3]["replicas"][0]["record_owed"] is True
    assert main(["replay", write(tmp_path, doc)]) == 0
    doc["states"][3]["replicas"][0]["record_owed"] = False
    assert main(["replay", write(tmp_path, doc)]) == 1
    assert "replicas[0].record_owed recorded false, model true" in capsys.readouterr().out
    for state in doc["states"]:
        for r in state["replicas"]:
            del r["record_owed"]
    assert main(["replay", write(tmp_path, doc)]) == 0


def test_action_not_enabled_diverges(tmp_path, capsys):
    doc = {"config": DATA_LOSS, "actions": ["write 0", "fetch(follower=r0, leader=r1)"]}
    assert main(["replay", write(tmp_path, doc, "a.json")]) == 1
    out = capsys.readouterr().out
    assert "DIVERGES at step 2: fetch(follower=r0, leader=r1) is not enabled (enabled:" in out


def test_missing_violation_diverges(tmp_path, capsys):
    doc = {"config": DATA_LOSS, "invariant": "no-committed-data-loss", "actions": ["write 0"]}
    assert main(["replay", write(tmp_path, doc, "a.json")]) == 1
    assert "does not violate no-committed-data-loss" in capsys.readouterr().out


def test_trace_replayed_under_another_known_mode_diverges(tmp_path, capsys):
    doc = data_loss_document()
    doc["#meta"]["config"]["mode"] = "kip320"
    assert main(["replay", write(tmp_path, doc)]) == 1
    assert "DIVERGES at step 0: the initial state differs" in capsys.readouterr().out


# ------------------------------------------------------------- bad input: exit 2


def _not_itf(doc):
    doc["states"][2]["#meta"]["action"]["name"] = "teleport"
    return doc


def _bad_mode(doc):
    doc["#meta"]["config"]["mode"] = "zookeeper-less"
    return doc


def _bad_replica(doc):
    doc["states"][1]["#meta"]["action"]["params"]["leader"] = {"#bigint": "7"}
    return doc


def _no_action(doc):
    del doc["states"][4]["#meta"]["action"]
    return doc


def _bad_invariant(doc):
    doc["#meta"]["invariant"] = "no-such-thing"
    return doc


def _bad_param(doc):
    doc["states"][1]["#meta"]["action"]["params"] = {"replica": {"#bigint": "0"}}
    return doc


BAD = {
    "unknown action": (_not_itf, "unknown action 'teleport'"),
    "another mode": (_bad_mode, "is not a Kafka release (expected X.Y.Z such as 2.1.0"),
    "replica out of range": (_bad_replica, "leader=7 is not a replica"),
    "no action": (_no_action, "states[4]: no #meta.action"),
    "unknown invariant": (_bad_invariant, "unknown invariant 'no-such-thing'"),
    "wrong parameter": (_bad_param, "write: missing 'leader'"),
}


@pytest.mark.parametrize("case", list(BAD))
def test_invalid_traces_exit_2_with_one_line(case, tmp_path, capsys):
    mutate, expected = BAD[case]
    html = tmp_path / "out.html"
    assert main(["replay", write(tmp_path, mutate(data_loss_document())), "--html", str(html)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("\n") == 1 and expected in captured.err
    assert captured.err.startswith("replcheck: error: ")
    assert not html.exists()


@pytest.mark.parametrize(
    "content,expected",
    [
        (None, "no such file"),
        ("{not json", "invalid JSON at line 1"),
        ("[1, 2]", "not a trace"),
        ('{"vars": ["x"]}', "no 'states' list"),
        ('{"states": []}', "'states' must be a non-empty list"),
        ('{"states": [{"x": 1}], "#meta": {"config": "hw"}}', "#meta.config must be an object"),
        ('{"#meta": {}, "vars": [], "states": [{}]}', "#meta.config is missing"),
        ('{"actions": ["fly 0"]}', "unknown action 'fly'"),
        ('{"actions": "write 0"}', "'actions' must be a list"),
        ('{"actions": ["write(leader=r0"]}', "cannot read action"),
        ('{"actions": ["write 0 1"]}', "write takes 1 parameter(s)"),
        ('{"actions": [], "config": {"replicas": 9}}', "replicas: must be 2..5"),
    ],
)
def test_bad_files_exit_2(tmp_path, capsys, content, expected):
    path = str(tmp_path / "missing.json") if content is None else write(tmp_path, content, "x.json")
    assert main(["replay", path]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("\n") == 1 and expected in captured.err, captured.err


def test_bad_toml_exit_2(tmp_path, capsys):
    assert main(["replay", write(tmp_path, "actions = [", "x.toml")]) == 2
    assert "invalid TOML" in capsys.readouterr().err


def test_load_errors_are_value_errors(tmp_path):
    with pytest.raises(TraceError):
        load_trace(tmp_path / "nope.itf.json")
    assert issubclass(TraceError, ValueError)
