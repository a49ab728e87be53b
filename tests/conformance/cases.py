"""Kafka's own tests as conformance cases: loading and checking them.

Each ``cases/*.toml`` file holds the scenarios taken from one Kafka test class,
one ``[[case]]`` each: the Kafka file, test and tag it was read at, the release
the model replays it under, the model's bounds, the test's steps as an action
list, and its assertions as expectations about the replayed states.  The format
is in ``README.md`` beside this module; ``table.py`` renders the README's table.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from replcheck.invariants import INVARIANTS
from replcheck.model import KafkaReplication, make_config
from replcheck.model.interface import Action
from replcheck.model.kafka.state import (
    MUST_TRUNCATE,
    NO_LEADER,
    NOT_TRUNCATED,
    TRUNCATED,
    State,
    last_known_elr,
    members,
    record_name,
)
from replcheck.traces.load import parse_action
from replcheck.traces.replay import execute

CASES_DIR = Path(__file__).parent / "cases"
CASE_KEYS = {
    "name", "kafka_file", "kafka_test", "tag", "release", "asserts", "shows",
    "config", "steps", "expect", "before_fix", "missing", "differs",
}  # fmt: skip
EXPECT_KEYS = {"after", "controller", "committed", "acked", "holds", "violates", "enabled",
               "disabled"}  # fmt: skip
TRUNCATION_NAMES = {TRUNCATED: "truncated", MUST_TRUNCATE: "must_truncate",
                    NOT_TRUNCATED: "not_truncated"}  # fmt: skip
INVARIANT_BY_ID = {inv.id: inv for inv in INVARIANTS}


@dataclass
class Case:
    """One scenario of a Kafka test; ``missing`` says what the model cannot express."""

    source: str  # cases/<file>.toml
    name: str
    kafka_file: str
    kafka_test: str
    tag: str
    release: str
    asserts: str
    shows: str
    config: dict[str, Any] = field(default_factory=dict)
    steps: list[str] = field(default_factory=list)
    expect: list[dict[str, Any]] = field(default_factory=list)
    before_fix: dict[str, Any] | None = None
    missing: str = ""
    # A known difference between the model and the Kafka test, with the reason: the
    # expectations (Kafka's) must then fail somewhere, so the case flips when it is fixed.
    differs: str = ""

    @property
    def replayable(self) -> bool:
        return bool(self.steps) and not self.missing

    def model(self, release: str | None = None) -> KafkaReplication:
        values = {**self.config, "kafka": release or self.release}
        return KafkaReplication(make_config(values, f"{self.source} {self.name}: "))

    def actions(self) -> list[Action]:
        return [parse_action(text, f"{self.source} {self.name}") for text in self.steps]


def load_cases() -> list[Case]:
    cases = []
    for path in sorted(CASES_DIR.glob("*.toml")):
        data = tomllib.loads(path.read_text())
        for raw in data.get("case", []):
            unknown = set(raw) - CASE_KEYS
            assert not unknown, f"{path.name}: {raw.get('name')}: unknown keys {unknown}"
            cases.append(Case(source=path.name, **raw))
    names = [c.name for c in cases]
    assert len(names) == len(set(names)), "case names must be unique"
    return cases


# ------------------------------------------------------------ state views


def replica_name(i: int) -> str:
    return "none" if i == NO_LEADER else f"r{i}"


def replica_view(s: State, i: int) -> dict[str, Any]:
    """One replica as the expectations name its fields."""
    r = s.replicas[i]
    return {
        "alive": bool(r.alive),
        "epoch": r.epoch,
        "leader": replica_name(r.leader),
        "log": [record_name(x) for x in r.log],
        "leo": r.leo,
        "hw": r.hw,
        "hw_checkpoint": r.hw_checkpoint,
        "isr": [replica_name(m) for m in members(r.isr)],
        "pending_isr": [replica_name(m) for m in members(r.pending_isr)],
        "remote_leo": list(r.remote_leo),
        "truncation": TRUNCATION_NAMES[r.truncation],
        "epoch_start": r.epoch_start,
        "in_flight": bool(r.inflight),
        "clean_shutdown": bool(r.clean_shutdown),
    }


def controller_view(s: State) -> dict[str, Any]:
    return {
        "leader": replica_name(s.ctrl_leader),
        "epoch": s.ctrl_epoch,
        "isr": [replica_name(m) for m in members(s.ctrl_isr)],
        "elr": [replica_name(m) for m in members(s.ctrl_elr)],
        "last_known_elr": [replica_name(m) for m in members(last_known_elr(s))],
        "live": [replica_name(m) for m in members(s.ctrl_live)],
        "alter_requests": len(s.alter_requests),
    }


def mismatches(model: KafkaReplication, s: State, expect: dict[str, Any]) -> list[str]:
    """What in state ``s`` differs from one expectation (empty: it holds)."""
    out = []
    for key, want in expect.items():
        if key == "after":
            continue
        if key.startswith("r") and key[1:].isdigit():
            view = replica_view(s, int(key[1:]))
            out += _compare(key, view, want)
        elif key == "controller":
            out += _compare("controller", controller_view(s), want)
        elif key == "committed":
            have = [record_name(x) for x in s.committed]
            if have != want:
                out.append(f"committed: expected {want}, have {have}")
        elif key == "acked":
            have = [f"m{m}" for m in members(s.acked)]
            if have != want:
                out.append(f"acked: expected {want}, have {have}")
        elif key in ("holds", "violates"):
            for inv_id in want:
                verdict = INVARIANT_BY_ID[inv_id](s)
                if key == "holds" and verdict is not None:
                    out.append(f"{inv_id}: expected to hold, violated: {verdict}")
                if key == "violates" and verdict is None:
                    out.append(f"{inv_id}: expected a violation, it holds")
        elif key in ("enabled", "disabled"):
            enabled = set(model.actions(s))
            for text in want:
                action = parse_action(text, key)
                if (action in enabled) != (key == "enabled"):
                    out.append(f"{text}: expected {key}")
        else:
            raise AssertionError(f"unknown expectation key {key!r} (known: {EXPECT_KEYS})")
    return out


def _compare(where: str, view: dict[str, Any], want: dict[str, Any]) -> list[str]:
    out = []
    for name, value in want.items():
        if name not in view:
            raise AssertionError(f"{where}: unknown field {name!r} (known: {sorted(view)})")
        if view[name] != value:
            out.append(f"{where}.{name}: expected {value!r}, have {view[name]!r}")
    return out


def first_violation(model: KafkaReplication, actions: list[Action], inv_id: str) -> int | None:
    """The first step (0 = initial state) whose state violates ``inv_id``, replaying
    ``actions`` under ``model``; None if none does."""
    for index, (_action, state) in enumerate(execute(model, actions)):
        if INVARIANT_BY_ID[inv_id](state) is not None:
            return index
    return None
