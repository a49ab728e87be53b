"""Counterexamples in the Informal Trace Format (Apalache ADR-015).

An ITF file is ``{"#meta", "vars", "states"}``; every integer is written as
``{"#bigint": "<digits>"}``, sets as ``{"#set": [...]}``, maps as
``{"#map": [[k, v], ...]}``.  The configuration goes in the top-level
``#meta`` so a trace carries everything needed to replay it; each state's
``#meta`` holds its index and the action (name and parameters) that led to it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from model.config import Config
from model.interface import Action
from model.kafka import ACTION_PARAMS
from model.state import (
    MUST_TRUNCATE,
    NOT_TRUNCATED,
    TRUNCATED,
    State,
    members,
    record_epoch,
    record_id,
)

FORMAT_URL = "https://apalache-mc.org/docs/adr/015adr-trace.html"
VARS = ["controller", "replicas", "written", "crashes", "committed", "acked"]
TRUNCATION_NAMES = {
    TRUNCATED: "truncated",
    MUST_TRUNCATE: "must-truncate",
    NOT_TRUNCATED: "not-truncated",
}


def big(n: int) -> dict[str, str]:
    return {"#bigint": str(n)}


def _set(values: Sequence[int]) -> dict[str, list]:
    return {"#set": [big(v) for v in values]}


def _records(log: Sequence[int]) -> list[dict[str, Any]]:
    return [{"epoch": big(record_epoch(x)), "id": big(record_id(x))} for x in log]


def state_to_itf(s: State) -> dict[str, Any]:
    """One state as ITF values, keyed by the names in :data:`VARS`."""
    replicas = []
    for i, r in enumerate(s.replicas):
        replicas.append(
            {
                "id": big(i),
                "alive": bool(r.alive),
                "epoch": big(r.epoch),
                "leader": big(r.leader),
                "log": _records(r.log),
                "leo": big(len(r.log)),
                "hw": big(r.hw),
                "hw_checkpoint": big(r.hw_checkpoint),
                "isr": _set(members(r.isr)),
                "remote_leo": {
                    "#map": [[big(f), big(leo)] for f, leo in enumerate(r.remote_leo) if f != i]
                },
                "truncation": TRUNCATION_NAMES[r.truncation],
                "unwritten_epoch": big(r.unwritten_epoch),
                "pending": _set(members(r.pending)),
            }
        )
    return {
        "controller": {
            "leader": big(s.ctrl_leader),
            "epoch": big(s.ctrl_epoch),
            "isr": _set(members(s.ctrl_isr)),
            "live": _set(members(s.ctrl_live)),
        },
        "replicas": replicas,
        "written": big(s.written),
        "crashes": big(s.crashes),
        "committed": _records(s.committed),
        "acked": _set(members(s.acked)),
    }


def action_to_itf(action: Action) -> dict[str, Any]:
    params = dict(zip(ACTION_PARAMS[action.name], action.args, strict=True))
    return {"name": action.name, "params": {k: big(v) for k, v in params.items()}}


def trace_to_itf(
    config: Config,
    steps: Sequence[tuple[Action | None, State]],
    invariant: str | None = None,
    message: str | None = None,
) -> dict[str, Any]:
    """The whole document for a sequence of (action that led here, state)."""
    states = []
    for index, (action, state) in enumerate(steps):
        entry: dict[str, Any] = {
            "#meta": {
                "index": index,
                "action": action_to_itf(action) if action is not None else None,
            }
        }
        entry.update(state_to_itf(state))
        states.append(entry)
    meta: dict[str, Any] = {
        "format": "ITF",
        "format-description": FORMAT_URL,
        "source": "replcheck",
        "description": (
            f"counterexample to {invariant}" if invariant else "execution of the Kafka model"
        ),
        "config": config.to_dict(),
    }
    if invariant is not None:
        meta["invariant"] = invariant
        meta["violation"] = message
    return {"#meta": meta, "vars": list(VARS), "states": states}


def write_itf(path: str | Path, document: dict[str, Any]) -> None:
    Path(path).write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
