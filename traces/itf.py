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

from replcheck.model.errors import InputError
from replcheck.model.interface import Action
from replcheck.model.kafka.config import Config, read_text
from replcheck.model.kafka.replication import ACTION_PARAMS, OPTION_ACTIONS, RELEASE_ACTIONS
from replcheck.model.kafka.state import (
    DIVERGING,
    FETCH_RESPONSE,
    MUST_TRUNCATE,
    NO_LEADER,
    NOT_TRUNCATED,
    OUT_OF_RANGE,
    TRUNCATE_PENDING,
    TRUNCATED,
    State,
    last_known_elr,
    last_known_names_nobody,
    members,
    record_epoch,
    record_id,
)
from replcheck.model.registry import AnyConfig, action_params

FORMAT_URL = "https://apalache-mc.org/docs/adr/015adr-trace.html"
VARS = ["controller", "replicas", "written", "crashes", "committed", "acked"]
# Fields added to the export after traces were published without them.  Such a trace
# does not record them, so replay does not compare them (record_owed: finding F3,
# 2026-11-27; alter_item: KAFKA-12686, 2026-11-27; fenced: --fencing, 2026-11-27;
# dir_unreported: KIP-858's directory report, 2026-11-28).  A trace that records one is
# held to it.
ADDED_FIELDS = frozenset({"record_owed", "alter_item", "fenced", "dir_unreported"})
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


def inflight_to_itf(inflight: tuple) -> dict[str, Any]:
    """The response on its way to a follower, as an ITF record with a ``kind``."""
    if not inflight:
        return {"kind": "none"}
    kind, offset, *rest = inflight
    if kind == FETCH_RESPONSE:
        hw, records = rest
        return {"kind": "fetch", "offset": big(offset), "hw": big(hw), "records": _records(records)}
    if kind == OUT_OF_RANGE:
        return {"kind": "out-of-range", "offset": big(offset), "leader_leo": big(rest[0])}
    if kind == DIVERGING:
        hw, epoch, end = rest
        return {
            "kind": "diverging",
            "offset": big(offset),
            "hw": big(hw),
            "diverging_epoch": big(epoch),
            "end_offset": big(end),
        }
    if kind == TRUNCATE_PENDING:
        epoch, end = offset, rest[0]
        return {"kind": "truncate-pending", "diverging_epoch": big(epoch), "end_offset": big(end)}
    answer_epoch, answer_offset = rest
    return {
        "kind": "epoch",
        "request_epoch": big(offset),
        "answer_epoch": big(answer_epoch),
        "answer_offset": big(answer_offset),
    }


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
                "pending_isr": _set(members(r.pending_isr)),
                "remote_leo": {
                    "#map": [[big(f), big(leo)] for f, leo in enumerate(r.remote_leo) if f != i]
                },
                "truncation": TRUNCATION_NAMES[r.truncation],
                "unwritten_epoch": big(r.unwritten_epoch),
                "pending": _set(members(r.pending)),
                "zk_current": bool(r.zk_current),
                "epoch_start": big(r.epoch_start),
                "clean_shutdown": bool(r.clean_shutdown),
                "record_owed": bool(r.record_owed),
                "alter_item": bool(r.alter_item),
                "fenced": bool(r.fenced),
                "dir_unreported": bool(r.dir_unreported),
                "inflight": inflight_to_itf(r.inflight),
            }
        )
    return {
        "controller": {
            "leader": big(s.ctrl_leader),
            "epoch": big(s.ctrl_epoch),
            "isr": _set(members(s.ctrl_isr)),
            "live": _set(members(s.ctrl_live)),
            "isr_written": bool(s.ctrl_isr_written),
            "elr": _set(members(s.ctrl_elr)),
            "last_known_elr": _set(
                [NO_LEADER] if last_known_names_nobody(s) else members(last_known_elr(s))
            ),
            "alter_requests": [
                {
                    "sender": big(sender),
                    "epoch": big(epoch),
                    "version_ok": bool(ok),
                    "isr": _set(members(isr)),
                    "restarted": _set(members(restarted)),
                }
                for sender, epoch, ok, isr, restarted in s.alter_requests
            ],
            "requests": [
                {"epoch": big(e), "leader": big(lead), "isr": _set(members(isr))}
                for e, (lead, isr) in enumerate(s.ctrl_history, start=1)
            ],
        },
        "replicas": replicas,
        "written": big(s.written),
        "crashes": big(s.crashes),
        "committed": _records(s.committed),
        "acked": _set(members(s.acked)),
    }


def action_to_itf(
    action: Action, params: dict[str, tuple[str, ...]] = ACTION_PARAMS
) -> dict[str, Any]:
    named = dict(zip(params[action.name], action.args, strict=True))
    return {"name": action.name, "params": {k: big(v) for k, v in named.items()}}


def value_to_itf(value: Any) -> Any:
    """Any model's state, plainly: named tuples become records, tuples ``#tup``, ints
    ``#bigint`` (the fallback for a model without a view of its own, such as the spec)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return big(value)
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return {name: value_to_itf(v) for name, v in zip(value._fields, value, strict=True)}
    if isinstance(value, tuple):
        return {"#tup": [value_to_itf(v) for v in value]}
    raise TypeError(f"cannot write {type(value).__name__} as ITF")


def encode_state(config: Any, state: Any) -> dict[str, Any]:
    """The Kafka model's readable view of a state, or the plain one for other models."""
    return state_to_itf(state) if isinstance(config, Config) else value_to_itf(state)


def trace_to_itf(
    config: AnyConfig,
    steps: Sequence[tuple[Action | None, Any]],
    invariant: str | None = None,
    message: str | None = None,
) -> dict[str, Any]:
    """The whole document for a sequence of (action that led here, state).  ``config``
    is the Kafka model's ``Config``, or the spec's, whose states are written plainly."""
    params = action_params(config)
    states = []
    for index, (action, state) in enumerate(steps):
        entry: dict[str, Any] = {
            "#meta": {
                "index": index,
                "action": action_to_itf(action, params) if action is not None else None,
            }
        }
        entry.update(encode_state(config, state))
        states.append(entry)
    kafka = isinstance(config, Config)
    meta: dict[str, Any] = {
        "format": "ITF",
        "format-description": FORMAT_URL,
        "source": "replcheck",
        "description": (
            f"counterexample to {invariant}"
            if invariant
            else f"execution of the {'Kafka' if kafka else config.model} model"
        ),
        "config": config.to_dict(),
    }
    if invariant is not None:
        meta["invariant"] = invariant
        meta["violation"] = message
    variables = list(VARS) if kafka else list(steps[0][1]._fields)
    return {"#meta": meta, "vars": variables, "states": states}


def write_itf(path: str | Path, document: dict[str, Any]) -> None:
    Path(path).write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")


# ------------------------------------------------------------------ reading


class TraceError(InputError):
    """A file that is not a usable trace; the message is one line naming the file and place."""


MAX_NESTING = 64  # a replcheck trace nests about 8 levels; far deeper is not a trace
MAX_DIGITS = 100  # no count in a partition model comes near; past it is not a trace


def read_json(path: str | Path) -> Any:
    """The parsed JSON of ``path``, or a one-line TraceError (missing, unreadable, invalid)."""
    return parse_json(read_text(path, TraceError, "ITF JSON"), str(path))


def parse_json(text: str, where: str) -> Any:
    """``text`` parsed as JSON, or a one-line TraceError naming ``where`` (a file's name)."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise TraceError(
            f"{where}: invalid JSON at line {exc.lineno} column {exc.colno} ({exc.msg})"
        ) from None
    except RecursionError:
        raise TraceError(f"{where}: JSON nested too deeply to be a trace") from None
    except ValueError as exc:  # an integer past Python's 4,300-digit conversion limit
        raise TraceError(f"{where}: invalid JSON ({str(exc).split(';')[0]})") from None
    _check_nesting(data, where)
    return data


def _check_nesting(data: Any, where: str) -> None:
    """Refuse documents nested deeper than MAX_NESTING, without recursing into them."""
    stack = [(data, 1)]
    while stack:
        value, depth = stack.pop()
        if depth > MAX_NESTING:
            raise TraceError(f"{where}: JSON nested more than {MAX_NESTING} levels deep")
        if isinstance(value, dict):
            stack.extend((v, depth + 1) for v in value.values())
        elif isinstance(value, list):
            stack.extend((v, depth + 1) for v in value)


def clip(value: Any, width: int = 40) -> str:
    """``repr(value)`` cut to ``width`` characters: user input quoted in a one-line error."""
    text = repr(value)
    return text if len(text) <= width else text[: width - 3] + "..."


def _digits(text: Any) -> bool:
    return (
        isinstance(text, str)
        and 0 < len(text.removeprefix("-")) <= MAX_DIGITS
        and text.removeprefix("-").isascii()
        and text.removeprefix("-").isdigit()
    )


def itf_int(value: Any, where: str) -> int:
    """An ITF integer (``{"#bigint": "3"}``, or a plain JSON integer as people write by hand)."""
    if isinstance(value, dict) and set(value) == {"#bigint"}:
        value = value["#bigint"]
        if _digits(value):
            return int(value)
    elif isinstance(value, int) and not isinstance(value, bool) and abs(value) < 10**MAX_DIGITS:
        return value
    raise TraceError(f"{where}: expected an integer, got {json.dumps(value)[:60]}")


def check_itf_value(value: Any, where: str) -> None:
    """Raise a TraceError naming the place if ``value`` is not well-formed ITF.

    Recorded states are compared with the model's after :func:`plain`; this makes
    sure plain() can read them (``#bigint`` digits, ``#set``/``#tup`` lists,
    ``#map`` lists of pairs).  The nesting is already bounded by :func:`read_json`.
    """
    if isinstance(value, list):
        for k, item in enumerate(value):
            check_itf_value(item, f"{where}[{k}]")
        return
    if value is None or isinstance(value, (bool, str)):
        return  # compared as they are
    if isinstance(value, int):
        itf_int(value, where)
        return
    if not isinstance(value, dict):  # a float: JSON numbers in ITF are integers
        raise TraceError(f"{where}: {json.dumps(value)} is not an ITF value (integers only)")
    if "#bigint" in value:
        itf_int(value, where)
        return
    for tag in ("#set", "#tup"):
        if tag in value:
            if set(value) != {tag} or not isinstance(value[tag], list):
                raise TraceError(f"{where}: {tag} must be the only key, holding a list")
            check_itf_value(value[tag], f"{where}.{tag}")
            return
    if "#map" in value:
        pairs = value["#map"]
        if set(value) != {"#map"} or not isinstance(pairs, list):
            raise TraceError(f"{where}: #map must be the only key, holding a list of pairs")
        for k, pair in enumerate(pairs):
            if not isinstance(pair, list) or len(pair) != 2:
                raise TraceError(f"{where}.#map[{k}]: expected a [key, value] pair")
            check_itf_value(pair, f"{where}.#map[{k}]")
        return
    for key, item in value.items():
        name = key if key.isidentifier() else json.dumps(key)  # one line, whatever the key
        check_itf_value(item, f"{where}.{name}")


def plain(value: Any) -> Any:
    """ITF values as plain Python: ints for ``#bigint``, sorted lists for sets, dicts for maps.

    The value must have passed :func:`check_itf_value`.
    """
    if isinstance(value, dict):
        if set(value) == {"#bigint"}:
            return int(value["#bigint"])
        if set(value) == {"#set"}:
            items = [plain(v) for v in value["#set"]]
            try:
                return sorted(items)
            except TypeError:
                return items
        if set(value) == {"#map"}:
            return {json.dumps(plain(k)): plain(v) for k, v in value["#map"]}
        if set(value) == {"#tup"}:
            return [plain(v) for v in value["#tup"]]
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value


def action_from_itf(
    entry: Any, where: str, params: dict[str, tuple[str, ...]] = ACTION_PARAMS
) -> Action:
    """``{"name": ..., "params": {...}}`` (as :func:`action_to_itf` writes it) as an Action
    of the model whose action names and parameters are ``params``."""
    if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
        raise TraceError(f"{where}: expected an action {{name, params}}")
    given = entry.get("params", {})
    if not isinstance(given, dict):
        raise TraceError(f"{where}: action params must be an object")
    extra = set(entry) - {"name", "params"}
    if extra:
        raise TraceError(f"{where}: unexpected key {clip(sorted(extra)[0])} in the action")
    values = {key: itf_int(value, f"{where}: {key}") for key, value in given.items()}
    return make_action(entry["name"], values, where, params)


def make_action(
    name: str,
    values: dict[str, int] | list[int],
    where: str,
    params: dict[str, tuple[str, ...]] = ACTION_PARAMS,
) -> Action:
    """An Action from its name and parameters (by name, or in order), checked against the
    model's ``params`` (the Kafka model's unless told)."""
    if name not in params:
        if name in OPTION_ACTIONS and name in RELEASE_ACTIONS:  # the model knows which is off
            option = OPTION_ACTIONS[name]
            raise TraceError(
                f"{where}: action {name!r} needs the option {option} = true "
                f"(--{option.replace('_', '-')}) and exists only in {RELEASE_ACTIONS[name]}; "
                "not in this configuration"
            )
        if name in OPTION_ACTIONS and name in ACTION_PARAMS:
            option = OPTION_ACTIONS[name]
            raise TraceError(
                f"{where}: action {name!r} needs the option {option} = true in the "
                f"configuration (--{option.replace('_', '-')})"
            )
        if name in RELEASE_ACTIONS:
            raise TraceError(
                f"{where}: action {name!r} exists only in {RELEASE_ACTIONS[name]}, "
                "not in this configuration"
            )
        known = ", ".join(params)
        raise TraceError(f"{where}: unknown action {clip(name)} (known: {known})")
    names = params[name]
    if isinstance(values, list):
        if len(values) != len(names):
            raise TraceError(
                f"{where}: {name} takes {len(names)} parameter(s) "
                f"({', '.join(names)}), got {len(values)}"
            )
        return Action(name, tuple(values))
    missing = [p for p in names if p not in values]
    unknown = [p for p in values if p not in names]
    if missing or unknown:
        problem = f"missing {missing[0]!r}" if missing else f"unknown parameter {clip(unknown[0])}"
        raise TraceError(f"{where}: {name}: {problem} (parameters: {', '.join(names)})")
    return Action(name, tuple(values[p] for p in names))
