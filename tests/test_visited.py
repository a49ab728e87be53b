"""The BFS visited table and serialized levels: numbers stay put, order is kept, results agree."""

from __future__ import annotations

import random

from replcheck.checker.explicit.bfs import bfs
from replcheck.checker.explicit.frontier import Level
from replcheck.checker.explicit.visited import NO_PARENT, VisitedTable, as_key
from replcheck.invariants import select
from replcheck.model import KafkaReplication, make_config
from replcheck.model.interface import state_codec
from replcheck.model.kafka.state import Replica, State


def test_numbers_and_parents_survive_growth():
    table = VisitedTable(capacity=4)
    rng = random.Random(7)
    keys = [rng.getrandbits(64) for _ in range(5000)]  # grows the index many times
    for number, key in enumerate(keys):
        assert table.add(key, number - 1 if number else NO_PARENT) == number
    assert len(table) == 5000 and table.add(keys[1234], 0) == -1  # already there: unchanged
    assert [table.find(k) for k in keys[:3]] == [0, 1, 2] and table.find(12345) == -1
    assert table.parents[9] == 8 and table.parents[0] == NO_PARENT
    assert table.bytes_used < 5000 * 48


def test_as_key_is_unsigned_64_bit():
    assert as_key(-1) == 2**64 - 1 and as_key(5) == 5


def test_a_pickled_level_keeps_its_order(monkeypatch):
    monkeypatch.setattr(Level, "PICKLE_FROM", 5)
    monkeypatch.setattr(Level, "CHUNK", 3)
    level = Level()
    items = [(n, ("state", n)) for n in range(20)]
    for item in items:
        level.append(item)
    assert len(level) == 20 and level.chunks  # some went into pickled chunks
    assert list(level.drain()) == items and len(level) == 0


def test_bfs_with_every_level_pickled_agrees(monkeypatch):
    model = KafkaReplication(make_config({"mode": "hw"}))
    plain = bfs(model, select(None))
    monkeypatch.setattr(Level, "PICKLE_FROM", 1)
    monkeypatch.setattr(Level, "CHUNK", 7)
    pickled = bfs(model, select(None))
    assert pickled.distinct_states == plain.distinct_states == 99_913
    lengths = {inv: v.length for inv, v in plain.violations.items()}
    assert {inv: v.length for inv, v in pickled.violations.items()} == lengths


def test_kafka_states_cross_a_level_as_plain_tuples_and_come_back_whole(monkeypatch, tmp_path):
    """The Kafka model's codec (marshal of plain tuples): every state of a search comes
    back equal, as a State of Replicas, in order, from RAM, from a spill file and from a
    saved level; without a codec a level pickles."""
    model = KafkaReplication(make_config({"mode": "4.1.0", "replicas": 3}))
    codec = state_codec(model)
    assert codec is not None
    states, frontier = [], model.init_states()
    while len(states) < 3000:
        states += frontier
        frontier = [model.next_state(s, a) for s in frontier for a in model.actions(s)]
    items = [(hash(s) ^ 5, s) for s in states]
    monkeypatch.setattr(Level, "PICKLE_FROM", 1)
    monkeypatch.setattr(Level, "CHUNK", 64)
    level = Level(ram_limit=20_000, spill_dir=tmp_path, codec=codec)
    level.extend(items)
    assert level.spilled and level.chunks
    level.save(tmp_path / "saved.bin")
    for back in (
        list(level.drain()),
        list(Level.load([tmp_path / "saved.bin"], codec=codec).drain()),
    ):
        assert back == items
        assert all(
            type(s) is State and all(type(r) is Replica for r in s.replicas) for _, s in back
        )
    assert state_codec(object()) is None
