"""The search past its RAM budget: levels and the visited set on disk give the counts,
depths and counterexample lengths of a search in RAM."""

from __future__ import annotations

import random

import pytest

import replcheck.checker.explicit.spill as spill
from replcheck.checker.explicit.frontier import Level
from replcheck.checker.explicit.parallel_bfs import parallel_bfs
from replcheck.checker.explicit.spill import SpillingVisited, saved_entries
from replcheck.checker.explicit.visited import NO_PARENT
from replcheck.model.registry import build_model
from replcheck.options import invariants_of, model_config


def test_a_level_past_its_budget_spills_and_reads_back_in_order(tmp_path):
    level = Level(ram_limit=2_000, spill_dir=tmp_path)
    level.PICKLE_FROM = 0
    items = [(i, (i, i * 7 % 13)) for i in range(20_000)]
    level.extend(items)
    assert level.spilled and level.ram_bytes <= 2_000 and len(level) == 20_000
    assert level.take(5) == items[:5]
    level.push_front(items[3:5])
    saved = tmp_path / "level.bin"
    level.save(saved)
    assert list(level.drain()) == items[3:]
    level.close()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith("level-")]
    again = Level.load([saved, saved])
    assert len(again) == 2 * len(items[3:]) and list(again.drain()) == 2 * items[3:]


def test_a_truncated_level_file_is_an_error_not_a_short_level(tmp_path):
    level = Level()
    level.extend((i, (i,)) for i in range(10))
    path = tmp_path / "level.bin"
    level.save(path)
    path.write_bytes(path.read_bytes()[:-3])
    with pytest.raises(ValueError, match="truncated"):
        Level.load([path])


def test_the_visited_set_past_its_budget_goes_to_sorted_runs(tmp_path, monkeypatch):
    monkeypatch.setattr(spill, "_MIN_TABLE_BYTES", 1 << 12)
    rng = random.Random(1)
    keys = [rng.getrandbits(64) for _ in range(50_000)]
    visited = SpillingVisited(ram_limit=1 << 14, spill_dir=tmp_path)
    assert all(visited.add(k, i) for i, k in enumerate(keys))
    assert visited.spilled and len(visited) == len(keys)
    assert len(visited.runs) <= 8  # merged as they accumulate
    assert not any(visited.add(k, 0) for k in keys[::7])
    assert visited.parent_of(keys[123]) == 123 and visited.parent_of(keys[-1]) == len(keys) - 1
    assert visited.parent_of(rng.getrandbits(64) | 1) in (None, *range(len(keys)))
    checkpoint = tmp_path / "ck"
    checkpoint.mkdir()
    saved = visited.save(checkpoint, "v")
    visited.close()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith("replcheck-spill-")]
    again = SpillingVisited.load(checkpoint, saved, 1 << 14, tmp_path)
    assert len(again) == len(keys) and again.parent_of(keys[40_000]) == 40_000
    assert sorted(k for k, _ in saved_entries(checkpoint, saved)) == sorted(keys)
    again.close()


def test_a_chain_follows_parents_through_ram_and_disk(tmp_path, monkeypatch):
    monkeypatch.setattr(spill, "_MIN_TABLE_BYTES", 1 << 12)
    visited = SpillingVisited(ram_limit=1 << 12, spill_dir=tmp_path)
    previous = NO_PARENT
    for key in range(1, 3_000):
        visited.add(key * 0x9E3779B97F4A7C15 % (1 << 63), previous)
        previous = key * 0x9E3779B97F4A7C15 % (1 << 63)
    assert visited.spilled
    chain = visited.chain(previous)
    assert len(chain) == 2_999 and chain[-1] == previous
    visited.close()


def _search(config: dict, workers: int, **kw):
    cfg = model_config(None, config)
    return parallel_bfs(build_model(cfg), invariants_of(cfg, None), workers=workers, **kw)


def _summary(result) -> tuple:
    lengths = {i: v.length for i, v in result.violations.items()}
    return result.status, result.distinct_states, result.depth, result.transitions, lengths


# One worker and two, on two configurations; the other pairs in the slow run.
@pytest.mark.parametrize(
    ("config", "workers"),
    [
        ({"mode": "hw"}, 1),
        ({"kafka": "2.1.0"}, 2),
        pytest.param({"mode": "hw"}, 2, marks=pytest.mark.slow),
        pytest.param({"kafka": "2.1.0"}, 1, marks=pytest.mark.slow),
    ],
)
def test_a_search_that_spills_finds_what_one_in_ram_finds(tmp_path, monkeypatch, workers, config):
    monkeypatch.setattr(spill, "_MIN_TABLE_BYTES", 1 << 12)
    monkeypatch.setattr(Level, "PICKLE_FROM", 0)
    in_ram = _search(config, workers)
    spilled = _search(config, workers, ram_budget=200_000, spill_dir=tmp_path)
    assert _summary(spilled) == _summary(in_ram)
    assert spilled.disk_bytes > 0 and in_ram.disk_bytes == 0
    assert list(tmp_path.iterdir()) == []  # the spill folder goes with the search
