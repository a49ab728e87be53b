"""Shrinking counterexamples: the library function and ``replcheck shrink``."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from replcheck.checker.explicit.bfs import bfs
from replcheck.cli.main import main
from replcheck.invariants import UnknownInvariant, select
from replcheck.model import KafkaReplication, make_config
from replcheck.traces.load import load_trace
from replcheck.traces.shrink import ShrinkError, first_violation, shrink
from tests.conftest import A
from tests.test_seed_scenarios import DATA_LOSS, DIVERGENCE_LOSSY, DIVERGENCE_LOSSY_STEPS

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
LOSS = "no-committed-data-loss"

# The BFS data loss with irrelevant steps mixed in: idle fetches before the
# write, repeated fetches, a checkpoint, and a crash and restart of r0.
PADDED = [
    A("fetch", 1, 0),
    A("fetch", 1, 0),
    A("write", 0),
    *[A("fetch", 1, 0)] * 7,
    A("checkpoint_hw", 0),
    A("crash", 1, 1),
    A("restart", 1),
    A("deliver_latest", 1),
    A("crash", 0, 1),
    A("restart", 0),
    A("elect", 1),
    A("deliver", 1),
]


@pytest.fixture(scope="module")
def model():
    return KafkaReplication(make_config(DATA_LOSS))


@pytest.fixture(scope="module")
def bfs_actions(model):
    result = bfs(model, select([LOSS]))
    return [step.action for step in result.violations[LOSS].trace[1:]]


def is_one_minimal(model, actions, inv_id):
    (inv,) = select([inv_id])
    if first_violation(model, actions, inv.check) != len(actions):
        return False
    return all(
        first_violation(model, actions[:k] + actions[k + 1 :], inv.check) is None
        for k in range(len(actions))
    )


def is_subsequence(short, long):
    it = iter(long)
    return all(any(a == b for b in it) for a in short)


def test_bfs_trace_is_already_minimal(model, bfs_actions):
    assert len(bfs_actions) == 8
    assert shrink(model, bfs_actions, LOSS) == bfs_actions


def test_padded_trace_shrinks_back_to_bfs_length(model, bfs_actions):
    (inv,) = select([LOSS])
    assert first_violation(model, PADDED, inv.check) == len(PADDED)  # the padding is valid
    shrunk = shrink(model, PADDED, LOSS)
    assert len(shrunk) == len(bfs_actions)
    assert is_subsequence(shrunk, PADDED)
    assert is_one_minimal(model, shrunk, LOSS)


def test_steps_after_the_violation_are_cut(model, bfs_actions):
    state = model.init_states()[0]
    for action in bfs_actions:
        state = model.next_state(state, action)
    longer = bfs_actions + [next(iter(model.actions(state)))]
    assert shrink(model, longer, LOSS) == bfs_actions


def test_randomly_padded_traces_shrink_to_one_minimal_subsequences(model, bfs_actions):
    (inv,) = select([LOSS])
    rng = random.Random(3)
    for _ in range(3):
        seq = list(bfs_actions)
        for _ in range(30):  # insert random enabled actions that keep the violation at the end
            k = rng.randrange(len(seq))
            state = model.init_states()[0]
            for action in seq[:k]:
                state = model.next_state(state, action)
            candidate = seq[:k] + [rng.choice(list(model.actions(state)))] + seq[k:]
            if first_violation(model, candidate, inv.check) == len(candidate):
                seq = candidate
        shrunk = shrink(model, seq, LOSS)
        assert is_subsequence(shrunk, seq) and is_one_minimal(model, shrunk, LOSS)
        assert len(bfs_actions) <= len(shrunk) < len(seq)


def test_shrink_refuses_what_does_not_violate(model, bfs_actions):
    with pytest.raises(ShrinkError):
        shrink(model, bfs_actions[:3], LOSS)
    with pytest.raises(ShrinkError):
        shrink(model, [A("fetch", 0, 1)], LOSS)  # not enabled
    with pytest.raises(UnknownInvariant):
        shrink(model, bfs_actions, "nope")


def test_divergence_example_is_minimal_for_consistent_logs():
    model = KafkaReplication(make_config(DIVERGENCE_LOSSY))
    shrunk = shrink(model, DIVERGENCE_LOSSY_STEPS, "consistent-logs")
    assert is_one_minimal(model, shrunk, "consistent-logs")


# ------------------------------------------------------------------ the command


def test_shrink_command_writes_a_replayable_trace(tmp_path, capsys, bfs_actions):
    padded = tmp_path / "padded.json"
    text = [f"{a.name} {' '.join(map(str, a.args))}" for a in PADDED]
    padded.write_text(json.dumps({"config": DATA_LOSS, "invariant": LOSS, "actions": text}))
    out = tmp_path / "short.itf.json"
    assert main(["shrink", str(padded), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert f"{LOSS}: {len(PADDED)} steps -> 8 steps" in printed
    assert main(["replay", str(out)]) == 0
    assert len(load_trace(out).actions) == len(bfs_actions)


def test_shrink_command_json_on_example(tmp_path, capsys):
    out = tmp_path / "s.itf.json"
    example = str(EXAMPLES / "seed-divergence-unclean.itf.json")
    args = ["shrink", example, "--out", str(out), "--json", "--invariant", LOSS]
    assert main(args) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["invariant"] == LOSS and doc["steps_after"] <= doc["steps_before"]


def test_shrink_command_nothing_to_shrink(tmp_path, capsys):
    trace = tmp_path / "t.json"
    trace.write_text(json.dumps({"config": DATA_LOSS, "actions": ["write 0"]}))
    out = tmp_path / "o.itf.json"
    assert main(["shrink", str(trace), "--out", str(out)]) == 1
    assert "violates no invariant" in capsys.readouterr().out
    assert not out.exists()


@pytest.mark.parametrize(
    "content,extra,expected",
    [
        (None, [], "no such file"),
        ("{oops", [], "invalid JSON"),
        ('{"hello": 1}', [], "not a trace"),
        ('{"actions": ["warp 1"]}', [], "unknown action 'warp'"),
        ('{"actions": [], "config": {"mode": "kip999"}}', [], "is not a Kafka release"),
        ('{"actions": []}', ["--invariant", "nope"], "unknown invariant 'nope'"),
    ],
)
def test_shrink_bad_input_exit_2(tmp_path, capsys, content, extra, expected):
    path = tmp_path / "in.json"
    if content is not None:
        path.write_text(content)
    out = tmp_path / "out.itf.json"
    assert main(["shrink", str(path), "--out", str(out), *extra]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1 and expected in captured.err
    assert not out.exists()


def test_shrink_out_folder_missing(tmp_path, capsys):
    example = str(EXAMPLES / "bfs-data-loss.itf.json")
    assert main(["shrink", example, "--out", str(tmp_path / "no" / "x.json")]) == 2
    assert "does not exist" in capsys.readouterr().err
