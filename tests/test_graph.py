"""``replcheck graph`` and checker.explicit.graph: the reachable state graph agrees with
BFS, for the Kafka model and for the TLA+ spec."""

from __future__ import annotations

import json

import pytest

nx = pytest.importorskip("networkx", reason="networkx is not installed")

from replcheck.checker.explicit.bfs import bfs  # noqa: E402
from replcheck.checker.explicit.graph import build_graph, graph_facts, to_dot  # noqa: E402
from replcheck.cli.main import main  # noqa: E402
from replcheck.invariants import INVARIANTS, TLA_INVARIANTS  # noqa: E402
from replcheck.model import KafkaReplication, make_config  # noqa: E402
from replcheck.model.interface import Action  # noqa: E402
from replcheck.model.tla.config import make_spec_config  # noqa: E402
from replcheck.model.tla.spec import ACTION_PARAMS as SPEC_PARAMS  # noqa: E402
from replcheck.traces.load import parse_action  # noqa: E402
from replcheck.traces.replay import execute  # noqa: E402

SMALL = dict(mode="hw", replicas=2, records=1, epochs=3, crashes=1)
SMALL_FLAGS = ["--records", "1", "--epochs", "3", "--crashes", "1"]


@pytest.fixture(scope="module")
def small():
    model = KafkaReplication(make_config(SMALL))
    sg = build_graph(model, INVARIANTS, max_states=20_000)
    return model, sg, graph_facts(sg)


def test_graph_agrees_with_bfs(small):
    model, sg, facts = small
    result = bfs(model, INVARIANTS, symmetry=False)
    assert result.status == "complete"
    assert facts.states == result.distinct_states
    assert facts.edges == result.transitions
    for inv in INVARIANTS:
        path = facts.shortest[inv.id]
        if inv.id in result.violations:
            assert path is not None
            assert len(path[1]) == result.violations[inv.id].length - 1
        else:
            assert path is None and facts.violating[inv.id] == 0


def test_shortest_paths_replay_to_violations(small):
    model, sg, facts = small
    by_id = {inv.id: inv for inv in INVARIANTS}
    for inv_id, path in facts.shortest.items():
        if path is None:
            continue
        target, texts = path
        steps = execute(model, [parse_action(t) for t in texts])
        assert steps[-1][1] == sg.states[target]
        assert by_id[inv_id](steps[-1][1]) is not None


def test_deadlocks_and_safe_states(small):
    model, sg, facts = small
    for node in facts.deadlocks:
        assert list(model.actions(sg.states[node])) == []
    g = sg.graph
    bad = {n for nodes in sg.violating.values() for n in nodes}
    safe = [n for n in g.nodes if not g.nodes[n]["violation_reachable"]]
    assert len(safe) == facts.safe > 0
    for node in safe[:50]:  # spot-check with networkx's own reachability
        assert not (nx.descendants(g, node) | {node}) & bad


@pytest.mark.parametrize("suffix", [".graphml", ".json", ".dot"])
def test_command_writes_each_format(tmp_path, capsys, suffix, small):
    _, sg, _ = small
    nodes, edges = sg.graph.number_of_nodes(), sg.graph.number_of_edges()
    out = tmp_path / f"g{suffix}"
    assert main(["graph", *SMALL_FLAGS, "--out", str(out)]) == 1  # hw mode has violations
    printed = capsys.readouterr().out
    assert f"{nodes:,} states, {edges:,} edges" in printed
    bad = len(sg.violating["no-committed-data-loss"])
    assert f"no-committed-data-loss: {bad} violating state(s); shortest path 10 steps" in printed
    assert "states from which no violation is reachable: " in printed
    if suffix == ".graphml":
        g = nx.read_graphml(out)
        assert g.number_of_nodes() == nodes and g.number_of_edges() == edges
        assert any(d["violated"] for _, d in g.nodes(data=True))
    elif suffix == ".json":
        g = nx.node_link_graph(json.loads(out.read_text()), edges="edges")
        assert g.number_of_nodes() == nodes
    else:
        text = out.read_text()
        assert text.startswith("digraph replcheck {") and text.rstrip().endswith("}")
        assert text.count(" -> ") == edges


def test_command_json_facts(tmp_path, capsys):
    out = tmp_path / "g.json"
    args = ["graph", *SMALL_FLAGS, "--mode", "kip320", "--out", str(out), "--json"]
    code = main(args)
    doc = json.loads(capsys.readouterr().out)
    assert doc["config"]["mode"] == "kip320"
    violated = [k for k, v in doc["invariants"].items() if v["violating_states"]]
    assert code == (1 if violated else 0)
    assert doc["invariants"]["no-committed-data-loss"]["violating_states"] == 0


def test_dot_escapes_quotes():
    g = nx.MultiDiGraph()
    g.add_node(0, label='say "hi"', violated="", initial=True)
    assert 'say \\"hi\\"' in to_dot(g)


@pytest.mark.parametrize(
    "extra,expected",
    [
        (["--out", "g.png"], "expected a name ending in .graphml, .dot, .json"),
        (["--out", "g.dot", "--replicas", "9"], "replicas: must be 2..5"),
        (["--out", "g.dot", "--invariant", "nope"], "unknown invariant 'nope'"),
        (["--out", "missing/g.dot"], "does not exist"),
        (["--out", "g.dot", "--config", "none.toml"], "no such file"),
        (["--out", "g.dot", "--log-size", "1"], "--log-size: a constant of the TLA+ spec"),
    ],
)
def test_bad_input_exit_2(tmp_path, capsys, monkeypatch, extra, expected):
    monkeypatch.chdir(tmp_path)
    assert main(["graph", *SMALL_FLAGS, *extra]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1 and expected in captured.err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "extra,expected",
    [
        (["--max-states", "100"], "more than 100 reachable states (--max-states)"),
        (["--timeout", "0.000001"], "--timeout 1e-06 s reached after"),
        (["--memory", "64M"], "--memory budget reached after"),
    ],
)
def test_a_graph_past_its_limits_is_incomplete_exit_3(
    tmp_path, capsys, monkeypatch, extra, expected
):
    """Half a graph answers nothing: exit 3 (incomplete), one line, no file written."""
    monkeypatch.chdir(tmp_path)
    assert main(["graph", *SMALL_FLAGS, "--out", "g.dot", *extra]) == 3
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1 and expected in captured.err
    assert "incomplete" in captured.err and "nothing written" in captured.err
    assert list(tmp_path.iterdir()) == []


def test_an_incomplete_graph_in_json(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["graph", *SMALL_FLAGS, "--out", "g.json", "--max-states", "50", "--json"]) == 3
    doc = json.loads(capsys.readouterr().out)
    assert doc["result"] == "incomplete" and doc["states_built"] == 50 and doc["out"] is None
    assert list(tmp_path.iterdir()) == []


# The HW-truncation spec at small constants: 2,149 states, WeakIsr broken (BFS: 9 states).
SPEC = {"model": "tla-hw", "log_size": 1, "max_records": 1, "max_leader_epoch": 2}
SPEC_FLAGS = ["--model", "tla-hw", "--log-size", "1", "--max-records", "1"]
SPEC_FLAGS += ["--max-leader-epoch", "2"]


def _spec_action(text: str) -> Action:
    """``LeaderWrite(replica=0, id=1, offset=0)`` back into an Action."""
    name, _, inner = text.rstrip(")").partition("(")
    named = dict(part.split("=") for part in inner.split(", ") if part)
    assert tuple(named) == SPEC_PARAMS[name]
    return Action(name, tuple(int(v) for v in named.values()))


@pytest.fixture(scope="module")
def spec():
    model = make_spec_config(SPEC).build()
    sg = build_graph(model, TLA_INVARIANTS, max_states=10_000)
    return model, sg, graph_facts(sg)


def test_the_spec_graph_agrees_with_bfs_and_its_paths_replay(spec):
    model, sg, facts = spec
    result = bfs(model, TLA_INVARIANTS, symmetry=False)
    assert result.status == "complete" and facts.states == result.distinct_states == 2149
    assert facts.edges == result.transitions
    assert len(facts.shortest["weak-isr"][1]) == result.violations["weak-isr"].length - 1 == 8
    for inv in TLA_INVARIANTS:
        path = facts.shortest[inv.id]
        if path is None:
            assert inv.id not in result.violations
            continue
        target, texts = path
        steps = execute(model, [_spec_action(t) for t in texts])
        assert steps[-1][1] == sg.states[target] and inv(steps[-1][1]) is not None
    first = sg.graph.nodes[0]
    assert first["label"].startswith("replica_log=((), ())") and first["initial"]


def test_the_command_builds_the_spec_graph(tmp_path, capsys, spec):
    _, sg, facts = spec
    out = tmp_path / "spec.dot"
    assert main(["graph", *SPEC_FLAGS, "--out", str(out)]) == 1  # WeakIsr is broken
    printed = capsys.readouterr().out
    assert printed.startswith("replcheck graph: model=tla-hw (KafkaTruncateToHighWatermark.tla)")
    assert f"{facts.states:,} states, {facts.edges:,} edges" in printed
    bad = facts.violating["weak-isr"]
    assert f"weak-isr: {bad} violating state(s); shortest path 8 steps" in printed
    assert "ControllerElectLeader(new_leader=0)" in printed
    assert out.read_text().count(" -> ") == facts.edges

    out = tmp_path / "spec.json"
    argv = ["graph", "--model", "tla-kip320", *SPEC_FLAGS[2:], "--out", str(out)]
    assert main([*argv, "--json", "--invariant", "weak-isr", "--invariant", "strong-isr"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["config"]["model"] == "tla-kip320" and doc["symmetry"] is False
    assert set(doc["invariants"]) == {"weak-isr", "strong-isr"}
    assert main([*argv, "--json", "--symmetry"]) in (0, 1)
    assert json.loads(capsys.readouterr().out)["states"] < doc["states"]  # orbits


@pytest.mark.parametrize(
    "extra,expected",
    [
        (["--records", "1"], "--records: a Kafka model option"),
        (["--invariant", "hw-le-leo"], "unknown invariant 'hw-le-leo'"),
    ],
)
def test_bad_spec_input_exit_2(tmp_path, capsys, monkeypatch, extra, expected):
    monkeypatch.chdir(tmp_path)
    assert main(["graph", *SPEC_FLAGS, "--out", "g.dot", *extra]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1 and expected in captured.err
    assert list(tmp_path.iterdir()) == []
