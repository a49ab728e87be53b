"""ITF files: readable by a third-party ITF reader (itf-py), and read back by replcheck."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from replcheck.traces.itf import TraceError, action_from_itf, itf_int, plain, state_to_itf
from replcheck.traces.load import load_trace, trace_from_document
from replcheck.traces.replay import replay_trace

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
FULL = sorted(EXAMPLES.glob("*.itf.json"))


@pytest.mark.parametrize("path", FULL, ids=lambda p: p.name)
def test_itf_py_parses_the_examples(path):
    itf_py = pytest.importorskip("itf_py", reason="itf-py is not installed (pip install itf-py)")
    document = json.loads(path.read_text())
    trace = itf_py.trace_from_json(document)
    assert len(trace.states) == len(document["states"])
    loaded = load_trace(path)
    if loaded.kind != "itf":
        return
    first, last = trace.states[0], trace.states[-1]
    assert first.meta["action"] is None
    assert last.meta["action"]["name"] == loaded.actions[-1].name
    assert set(last.values) == set(trace.vars)
    replica = first.values["replicas"][0]
    assert replica.leader == 0 and replica.alive is True and replica.isr == frozenset({0, 1})
    final = replay_trace(loaded).steps[-1][1]
    for i, rep in enumerate(last.values["replicas"]):
        assert [(x.epoch, x.id) for x in rep.log] == [
            (r >> 8, r & 0xFF) for r in final.replicas[i].log
        ]
        assert rep.hw == final.replicas[i].hw
    assert last.values["controller"].leader == final.ctrl_leader


def test_itf_py_round_trip_replays(tmp_path):
    itf_py = pytest.importorskip("itf_py", reason="itf-py is not installed (pip install itf-py)")
    document = json.loads((EXAMPLES / "bfs-data-loss.itf.json").read_text())
    again = itf_py.trace_to_json(itf_py.trace_from_json(document))
    loaded = trace_from_document(json.loads(json.dumps(again)), "round-trip")
    result = replay_trace(loaded)
    assert result.ok and result.broken_step == len(loaded.actions)


def test_plain_and_ints():
    trace = load_trace(EXAMPLES / "seed-data-loss.itf.json")
    assert plain(trace.recorded[0]) == plain(json.loads(json.dumps(trace.recorded[0])))
    assert itf_int({"#bigint": "-1"}, "x") == -1 and itf_int(3, "x") == 3
    with pytest.raises(TraceError, match="expected an integer"):
        itf_int("3", "x")
    with pytest.raises(TraceError, match="unknown action"):
        action_from_itf({"name": "nap", "params": {}}, "x")


def test_state_to_itf_is_json_with_bigints_only():
    loaded = load_trace(EXAMPLES / "seed-data-loss.itf.json")
    state = replay_trace(loaded).steps[-1][1]
    text = json.dumps(state_to_itf(state))

    def ints(value):
        if isinstance(value, dict):
            return [x for v in value.values() for x in ints(v)]
        if isinstance(value, list):
            return [x for v in value for x in ints(v)]
        return [value] if isinstance(value, int) and not isinstance(value, bool) else []

    assert ints(json.loads(text)) == []  # every integer is a #bigint
