"""Re-executing a list of actions against the model, checking each is enabled.

:func:`execute` runs a plain action list; :func:`replay_trace` replays a loaded
trace file and checks every recorded state and the recorded violation.
"""

from __future__ import annotations

import json
from collections.abc import Hashable, Iterable
from dataclasses import dataclass, field
from typing import Any

from replcheck.invariants import registry
from replcheck.model.interface import Action, Model
from replcheck.model.kafka.config import Config
from replcheck.model.registry import AnyConfig, action_params, build_model
from replcheck.traces.itf import ADDED_FIELDS, encode_state, plain
from replcheck.traces.load import LoadedTrace
from replcheck.traces.text import describe_action


class NotEnabled(Exception):
    """The action at ``step`` (1-based) is not enabled in the state before it."""

    def __init__(self, step: int, action: Action, enabled: list[Action]):
        self.step, self.action, self.enabled = step, action, enabled
        names = ", ".join(f"{a.name}{a.args}" for a in enabled) or "none"
        super().__init__(
            f"step {step}: {action.name}{action.args} is not enabled (enabled: {names})"
        )


def execute(
    model: Model, actions: Iterable[Action], start: Hashable | None = None
) -> list[tuple[Action | None, Hashable]]:
    """Run ``actions`` from ``start`` (default: the first initial state).

    Returns [(None, start), (action1, state1), ...]; raises NotEnabled at the
    first action whose precondition does not hold.
    """
    state = model.init_states()[0] if start is None else start
    steps: list[tuple[Action | None, Hashable]] = [(None, state)]
    for index, action in enumerate(actions, start=1):
        enabled = list(model.actions(state))
        if action not in enabled:
            raise NotEnabled(index, action, enabled)
        state = model.next_state(state, action)
        steps.append((action, state))
    return steps


# ------------------------------------------------------- replaying a trace file


@dataclass
class Divergence:
    """Where a replay stopped agreeing with the file: ``step`` (0 = initial state) and how."""

    step: int
    reason: str


@dataclass
class ReplayResult:
    """What re-executing a loaded trace established.

    ``steps`` are the (action, state) pairs the model computed, up to the
    divergence if there is one; ``first_violated`` maps each invariant to the
    first step whose state violates it, with the message.
    """

    trace: LoadedTrace
    steps: list[tuple[Action | None, Any]]
    divergence: Divergence | None = None
    first_violated: dict[str, tuple[int, str]] = field(default_factory=dict)

    @property
    def invariant(self) -> str | None:
        """The recorded invariant, else the first invariant the replay violated."""
        if self.trace.invariant is not None:
            return self.trace.invariant
        return next(iter(self.first_violated), None)

    @property
    def message(self) -> str | None:
        inv = self.invariant
        if inv is None or not self.steps:
            return None
        by_id = {i.id: i for i in registry(self.trace.config)}
        return by_id[inv](self.steps[-1][1])

    @property
    def broken_step(self) -> int | None:
        """The first step where the invariant of interest is violated."""
        inv = self.invariant
        return self.first_violated[inv][0] if inv in self.first_violated else None

    @property
    def ok(self) -> bool:
        return self.divergence is None


def replay_trace(trace: LoadedTrace, model: Model | None = None) -> ReplayResult:
    """Re-execute ``trace``: each action must be enabled and lead to the recorded state.

    A recorded invariant must be violated by the final state.  Stops at the
    first disagreement (``ReplayResult.divergence``).
    """
    config = trace.config
    model = model or build_model(config)
    invariants = registry(config)
    by_id = {inv.id: inv for inv in invariants}
    # The Kafka model's view names replicas (r0, r1); another model's shows numbers.
    params = None if isinstance(config, Config) else action_params(config)
    state = model.init_states()[0]
    result = ReplayResult(trace, [(None, state)])

    def seen(index: int, s: Any) -> None:
        for inv in invariants:
            if inv.id not in result.first_violated:
                message = inv(s)
                if message is not None:
                    result.first_violated[inv.id] = (index, message)

    diff = _differs(trace.recorded[0] if trace.recorded else None, state, config)
    if diff:
        result.divergence = Divergence(0, f"the initial state differs from the model's: {diff}")
        return result
    seen(0, state)
    for index, action in enumerate(trace.actions, start=1):
        enabled = list(model.actions(state))
        if action not in enabled:
            names = ", ".join(describe_action(a, params) for a in enabled) or "none"
            result.divergence = Divergence(
                index, f"{describe_action(action, params)} is not enabled (enabled: {names})"
            )
            return result
        state = model.next_state(state, action)
        result.steps.append((action, state))
        recorded = trace.recorded[index] if index < len(trace.recorded) else None
        diff = _differs(recorded, state, config)
        if diff:
            result.divergence = Divergence(
                index,
                f"after {describe_action(action, params)} the recorded state differs from the "
                f"model's: {diff}",
            )
            return result
        seen(index, state)
    if trace.invariant is not None and by_id[trace.invariant](state) is None:
        result.divergence = Divergence(
            len(trace.actions),
            f"the final state does not violate {trace.invariant}, as the trace records",
        )
    return result


def _differs(recorded: dict[str, Any] | None, state: Any, config: AnyConfig, limit: int = 3) -> str:
    """'' if ``recorded`` (ITF values) is ``state``, else the first differences, readable."""
    if recorded is None:
        return ""
    want = plain(recorded)
    have = plain(encode_state(config, state))
    if want == have:
        return ""
    out: list[str] = []
    _diff(want, have, "", out)
    shown = "; ".join(out[:limit])
    if len(out) > limit:
        shown += f"; and {len(out) - limit} more"
    return shown


def _diff(want: Any, have: Any, path: str, out: list[str]) -> None:
    if isinstance(want, dict) and isinstance(have, dict):
        for key in list(want) + [k for k in have if k not in want]:
            sub = f"{path}.{key}" if path else str(key)
            if key not in want:
                if key not in ADDED_FIELDS:
                    out.append(f"{sub} missing from the trace")
            elif key not in have:
                out.append(f"{sub} is not part of the model's state")
            else:
                _diff(want[key], have[key], sub, out)
        return
    if (
        isinstance(want, list)
        and isinstance(have, list)
        and len(want) == len(have)
        and all(isinstance(x, dict) for x in want + have)
    ):
        for k, (a, b) in enumerate(zip(want, have, strict=True)):
            _diff(a, b, f"{path}[{k}]", out)
        return
    if want != have:
        out.append(f"{path or 'state'} recorded {_short(want)}, model {_short(have)}")


def _short(value: Any) -> str:
    if isinstance(value, list) and all(
        isinstance(x, dict) and set(x) == {"epoch", "id"} for x in value
    ):
        return "[" + " ".join(f"m{x['id']}@e{x['epoch']}" for x in value) + "]"
    return json.dumps(value)[:80]
