"""Loading a trace from a file: an ITF counterexample, or a hand-written list of actions.

Three shapes are accepted (see ``docs/traces.md``):

* an ITF file as ``replcheck check --trace-out`` writes it: the configuration in
  the top-level ``#meta.config``, and every state with the action that led to it;
* an ITF file whose states carry only ``#meta.action`` (hand-written: no
  recorded states to compare, the model computes them);
* a short JSON or TOML action list: ``config``, an optional ``invariant``, and
  ``actions`` written as ``"fetch(follower=r1, leader=r0)"``, ``"fetch 1 0"`` or
  ``{action = "fetch", follower = 1, leader = 0}``.

Everything that can be wrong with such a file raises :class:`TraceError` with
a one-line message naming the file and the place.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from replcheck.invariants import registry
from replcheck.model.interface import Action
from replcheck.model.kafka.config import Config, ConfigError, read_toml
from replcheck.model.kafka.replication import ACTION_PARAMS
from replcheck.model.kafka.state import NO_LEADER
from replcheck.model.registry import AnyConfig, action_params, config_from_dict
from replcheck.traces.itf import (
    MAX_DIGITS,
    TraceError,
    action_from_itf,
    check_itf_value,
    clip,
    make_action,
    parse_json,
    read_json,
)
from replcheck.traces.text import replica_set

__all__ = [
    "LoadedTrace",
    "TraceError",
    "load_trace",
    "parse_action",
    "trace_from_document",
    "trace_from_text",
]

# Parameters that name a replica and may be "no replica" (-1).
_MAY_BE_NOBODY = {("notice_crash", "new_leader")}


@dataclass
class LoadedTrace:
    """A trace ready to replay: configuration, actions, and what was recorded (if anything)."""

    path: str
    kind: str  # "itf" (states recorded), "itf-actions" or "actions" (hand-written)
    config: AnyConfig  # the Kafka model's Config, or the TLA+ spec's
    actions: list[Action]
    # recorded[k]: the ITF state after k actions (without #meta), or None when not recorded
    recorded: list[dict[str, Any] | None] = field(default_factory=list)
    invariant: str | None = None
    violation: str | None = None


def load_trace(path: str | Path) -> LoadedTrace:
    """Read and validate a trace file (``.toml`` is an action list; anything else is JSON)."""
    path = Path(path)
    data = read_toml(path, TraceError) if path.suffix.lower() == ".toml" else read_json(path)
    return trace_from_document(data, str(path))


def trace_from_text(text: str, name: str) -> LoadedTrace:
    """A trace from a file's text already read (``replcheck explore``'s page sends one):
    ``name`` is the file's name, which says TOML (``.toml``) or JSON and names it in errors."""
    if name.lower().endswith(".toml"):
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise TraceError(f"{name}: invalid TOML ({exc})") from None
        except (RecursionError, ValueError) as exc:
            raise TraceError(f"{name}: invalid TOML ({str(exc).split(';')[0]})") from None
    else:
        data = parse_json(text, name)
    return trace_from_document(data, name)


def trace_from_document(data: Any, where: str = "trace") -> LoadedTrace:
    """Validate an already parsed document (ITF or action list)."""
    if not isinstance(data, dict):
        raise TraceError(
            f"{where}: not a trace (expected a JSON object with 'states' (ITF) or 'actions')"
        )
    if "states" in data:
        return _from_itf(data, where)
    if "actions" in data:
        return _from_action_list(data, where)
    raise TraceError(
        f"{where}: not a trace: no 'states' list (ITF) and no 'actions' list (hand-written)"
    )


# ------------------------------------------------------------------ ITF


def _from_itf(data: dict[str, Any], where: str) -> LoadedTrace:
    meta = data.get("#meta", {})
    if not isinstance(meta, dict):
        raise TraceError(f"{where}: #meta must be an object")
    states = data["states"]
    if not isinstance(states, list) or not states:
        raise TraceError(f"{where}: 'states' must be a non-empty list")
    if "config" not in meta:
        # Never guess the model: a trace replayed under other bounds means nothing.
        raise TraceError(f"{where}: #meta.config is missing (the model keys the trace ran with)")
    config = _config(meta["config"], where, "#meta.config")
    invariant, violation = _invariant(meta.get("invariant"), meta.get("violation"), where, config)

    actions: list[Action] = []
    recorded: list[dict[str, Any] | None] = []
    # A hand-written ITF may start with the first action: the initial state is implied.
    first_meta = states[0].get("#meta", {}) if isinstance(states[0], dict) else {}
    implied_initial = isinstance(first_meta, dict) and first_meta.get("action") is not None
    if implied_initial:
        recorded.append(None)
    for index, entry in enumerate(states):
        at = f"{where}: states[{index}]"
        if not isinstance(entry, dict):
            raise TraceError(f"{at}: expected an object")
        state_meta = entry.get("#meta", {})
        if not isinstance(state_meta, dict):
            raise TraceError(f"{at}: #meta must be an object")
        values = {k: v for k, v in entry.items() if k != "#meta"}
        check_itf_value(values, at)
        recorded.append(values or None)
        raw_action = state_meta.get("action")
        if index == 0 and not implied_initial:
            continue  # the initial state: no action led to it
        if raw_action is None:
            raise TraceError(f"{at}: no #meta.action (which action led to this state?)")
        action = action_from_itf(raw_action, at, action_params(config))
        _check_range(action, config, at)
        actions.append(action)
    kind = "itf" if any(r is not None for r in recorded) else "itf-actions"
    return LoadedTrace(where, kind, config, actions, recorded, invariant, violation)


# ----------------------------------------------------------- action lists

# Action names: the Kafka model's (``fetch_request``) and the TLA+ spec's (``BecomeLeader``).
_CALL = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*(?:\((.*)\))?\s*$")


def parse_action(
    text: str, where: str = "action", params: dict[str, tuple[str, ...]] = ACTION_PARAMS
) -> Action:
    """``fetch(follower=r1, leader=r0)``, ``fetch(1, 0)`` or ``fetch 1 0`` as an Action.

    Values are replica names (``r1``), integers, or ``-``/``none`` for "no replica".
    """
    text = text.strip()
    words = text.split()
    if len(words) > 1 and "(" not in text:
        name, parts = words[0], words[1:]
    else:
        match = _CALL.match(text)
        if not match:
            raise TraceError(
                f"{where}: cannot read action {clip(text)} (e.g. 'fetch(follower=r1, "
                "leader=r0)' or 'fetch 1 0')"
            )
        name, inner = match.group(1), match.group(2) or ""
        # Commas inside a set (``followers={r1,r2}``) do not separate parameters.
        parts = [p.strip() for p in re.split(r",(?![^{]*\})", inner) if p.strip()]
    named: dict[str, int] = {}
    positional: list[int] = []
    for part in parts:
        if "=" in part:
            key, _, value = part.partition("=")
            named[key.strip()] = _value(value.strip(), where)
        else:
            positional.append(_value(part, where))
    if named and positional:
        raise TraceError(f"{where}: {clip(text)}: give parameters all by name or all in order")
    return make_action(name, named if named else positional, where, params)


def _value(text: str, where: str) -> int:
    low = text.lower()
    if low.startswith("{") and low.endswith("}"):  # a set of replicas, as a bitmask
        mask = 0
        for member in (m.strip() for m in low[1:-1].split(",") if m.strip()):
            if not re.fullmatch(r"r?\d{1,2}", member):
                raise TraceError(f"{where}: {clip(text)}: {clip(member)} is not a replica")
            mask |= 1 << int(member.lstrip("r"))
        return mask
    if low in ("-", "none", "nobody"):
        return NO_LEADER
    if re.fullmatch(rf"r?-?\d{{1,{MAX_DIGITS}}}", low):
        return int(low.lstrip("r"))
    raise TraceError(f"{where}: {clip(text)} is not a replica (r0, r1, ...) or a number")


def _action_entry(entry: Any, where: str, params: dict[str, tuple[str, ...]]) -> Action:
    if isinstance(entry, str):
        return parse_action(entry, where, params)
    if isinstance(entry, dict):
        if isinstance(entry.get("params"), dict) and "name" in entry:
            return action_from_itf(entry, where, params)
        name = entry.get("action", entry.get("name"))
        if not isinstance(name, str):
            raise TraceError(f'{where}: an action table needs action = "NAME"')
        values = {}
        for key, value in entry.items():
            if key in ("action", "name"):
                continue
            values[key] = _value(value, where) if isinstance(value, str) else value
            if isinstance(values[key], bool) or not isinstance(values[key], int):
                raise TraceError(f"{where}: {key}: expected a replica or a number")
        return make_action(name, values, where, params)
    raise TraceError(f"{where}: expected an action as text or a table")


def _from_action_list(data: dict[str, Any], where: str) -> LoadedTrace:
    known = {"config", "model", "invariant", "violation", "actions", "description"}
    extra = sorted(set(data) - known)
    if extra:
        raise TraceError(
            f"{where}: unknown key {clip(extra[0])} (known: {', '.join(sorted(known))})"
        )
    config = _config(data.get("config", data.get("model", {})), where, "config")
    invariant, violation = _invariant(data.get("invariant"), data.get("violation"), where, config)
    entries = data["actions"]
    if not isinstance(entries, list):
        raise TraceError(f"{where}: 'actions' must be a list")
    actions = []
    for index, entry in enumerate(entries, start=1):
        at = f"{where}: actions[{index}]"
        action = _action_entry(entry, at, action_params(config))
        _check_range(action, config, at)
        actions.append(action)
    recorded: list[dict[str, Any] | None] = [None] * (len(actions) + 1)
    return LoadedTrace(where, "actions", config, actions, recorded, invariant, violation)


# ----------------------------------------------------------------- checks


def _config(values: Any, where: str, key: str) -> AnyConfig:
    if not isinstance(values, dict):
        raise TraceError(f"{where}: {key} must be an object of model keys")
    try:
        return config_from_dict(values, where=f"{where}: {key}: ")
    except ConfigError as exc:
        raise TraceError(str(exc)) from None


def _invariant(
    inv: Any, violation: Any, where: str, config: AnyConfig
) -> tuple[str | None, str | None]:
    if inv is None:
        return None, None
    known = [i.id for i in registry(config)]
    if inv not in known:
        raise TraceError(f"{where}: unknown invariant {clip(inv)} (known: {', '.join(known)})")
    return inv, violation if isinstance(violation, str) else None


def _check_range(action: Action, config: AnyConfig, where: str) -> None:
    if not isinstance(config, Config):
        return  # the spec's actions are checked by replaying them (each must be enabled)
    for name, value in zip(ACTION_PARAMS[action.name], action.args, strict=True):
        if name == "keep":
            if value < 0:
                raise TraceError(f"{where}: {action.name}: keep must be >= 0 (got {value})")
            continue
        if name == "followers":  # a set of replicas: a bitmask of two or more
            if not 0 < value < 1 << config.replicas or value.bit_count() < 2:
                shown = replica_set(value) if 0 < value < 1 << 16 else clip(value)
                raise TraceError(
                    f"{where}: {action.name}: followers={shown} is not a set of two or more "
                    f"replicas of this configuration (e.g. {{r1,r2}}; replicas 0.."
                    f"{config.replicas - 1})"
                )
            continue
        low = NO_LEADER if (action.name, name) in _MAY_BE_NOBODY else 0
        if not low <= value < config.replicas:
            raise TraceError(
                f"{where}: {action.name}: {name}={value} is not a replica of this "
                f"configuration (replicas 0..{config.replicas - 1})"
            )
