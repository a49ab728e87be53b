"""``replcheck explore``: take a model's steps by hand, in a browser, and keep the path.

A counterexample shows one execution; to ask "and if the follower had fetched
first?" a person wants to take the steps themselves, see each state as the
timeline draws it, and see at once which invariant breaks.  The server is a thin
JSON API over the ``Model`` interface: every request names the whole path (the
actions from the initial state, in the action-list syntax of ``traces/load.py``,
separated by ``/``) and the server re-executes it, so it keeps nothing between
requests and a URL (``#/steps/<path>``) reproduces a state.  It serves its own page
and API only, and reads no file a request names.  Only the view is chosen by the
kind of configuration, as ITF export does: the Kafka model's lanes, or any other
model's fields as a table.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any

from replcheck.invariants import Invariant, registry
from replcheck.model.errors import InputError
from replcheck.model.interface import Action
from replcheck.model.kafka.config import Config
from replcheck.model.registry import AnyConfig, action_docs, action_params, build_model
from replcheck.traces.html import render_plain_state, render_state
from replcheck.traces.itf import trace_to_itf
from replcheck.traces.load import parse_action, trace_from_text
from replcheck.traces.replay import NotEnabled, execute, replay_trace
from replcheck.traces.text import describe_action, state_changes

SEPARATOR = "/"  # between the steps of a path
MAX_PATH_CHARS = 10_000  # paths are short (ten steps: 250); a request past this is not one
MAX_BODY_BYTES = 4 * 2**20  # a POST's body: a trace of 50 steps on 5 replicas is ~0.3 MiB
# A find's limits: the defaults the page offers, and the most a request may ask for.
FIND_MAX_STATES, FIND_TIME_LIMIT = 200_000, 30.0
FIND_MAX_STATES_CAP, FIND_TIME_LIMIT_CAP = 50_000_000, 3600.0

__all__ = ["ExploreError", "Explorer", "FindFunction", "FindOutcome", "FindRequest"]


class ExploreError(InputError):
    """A path that cannot be taken, or a server that cannot start: one line."""


Steps = list[tuple[Action | None, Hashable]]


@dataclass
class FindRequest:
    """A search the page asked for: from the end of ``actions``, for ``invariant``."""

    actions: list[Action]
    invariant: Invariant
    max_states: int
    time_limit: float


@dataclass
class FindOutcome:
    """What a search from a path's last state established.  ``status`` is the engine's
    (``complete``, ``all-violated``, ``max-states``, ``timeout``, ``memory``);
    ``steps`` the shortest continuation into a violation, or None if none was found."""

    status: str
    states: int
    depth: int
    seconds: float
    steps: list[Action] | None
    message: str | None = None


# The search behind "find": (explorer, request, on_progress(states, depth, seconds)).
# The engines live above this layer (README, "Where things live"), so the server is given
# one: ``replcheck explore`` wires in ``replcheck.checker.explicit.explore_find.find_violation``.
FindFunction = Callable[["Explorer", FindRequest, Callable[[int, int, float], None]], FindOutcome]


class Explorer:
    """A configuration's model, the paths through it, and what each path's last state is.

    Stateless: each call re-executes the path it is given from the initial state.
    """

    def __init__(self, config: AnyConfig, start: Sequence[Action] = ()) -> None:
        self.config = config
        self.model = build_model(config)
        self.kafka = isinstance(config, Config)
        self.params = action_params(config)
        self.docs = action_docs(config)
        self.invariants = registry(config)
        self.start = list(start)
        self.execute(self.start)  # the path to start on must be one

    # ------------------------------------------------------------------ paths

    def step_text(self, action: Action) -> str:
        """One step as the path writes it: ``fetch(follower=r1,leader=r0)``."""
        return self.label(action).replace(" ", "")

    def label(self, action: Action) -> str:
        """One step as the step table prints it: ``fetch(follower=r1, leader=r0)``."""
        return describe_action(action, None if self.kafka else self.params)

    def path_text(self, actions: Sequence[Action]) -> str:
        return SEPARATOR.join(self.step_text(a) for a in actions)

    def parse_path(self, text: str) -> list[Action]:
        """The actions of ``a/b/c`` (each in the action-list syntax); '' is the initial state."""
        if len(text) > MAX_PATH_CHARS:
            raise ExploreError(f"path: longer than {MAX_PATH_CHARS:,} characters")
        text = text.strip().strip(SEPARATOR)
        if not text:
            return []
        parts = text.split(SEPARATOR)
        actions = []
        for index, part in enumerate(parts, start=1):
            if not part.strip():
                raise ExploreError(f"path: step {index} is empty (two '{SEPARATOR}' in a row)")
            try:
                actions.append(parse_action(part, f"path: step {index}", self.params))
            except InputError as exc:
                raise ExploreError(str(exc)) from None
        return actions

    def execute(self, actions: Sequence[Action]) -> Steps:
        """[(None, initial), (action 1, state 1), ...]; each action must be enabled."""
        try:
            return execute(self.model, actions)
        except NotEnabled as e:
            names = ", ".join(self.label(a) for a in e.enabled) or "none"
            raise ExploreError(
                f"path: step {e.step}: {self.label(e.action)} is not enabled (enabled: {names})"
            ) from None

    # ------------------------------------------------------------------ views

    def state(self, actions: Sequence[Action]) -> dict[str, Any]:
        """Everything the page shows for a path (see docs/explore.md, ``/api/state``)."""
        steps = self.execute(actions)
        action, state = steps[-1]
        prev = steps[-2][1] if len(steps) > 1 else None
        last = len(steps) - 1
        statuses = self._invariants(steps)
        holding = [
            inv for inv, s in zip(self.invariants, statuses, strict=True) if not s["violated"]
        ]
        return {
            "config": self.config.describe(),
            "model": "kafka" if self.kafka else self.config.model,
            "path": self.path_text(actions),
            "start": self.path_text(self.start),
            "steps": [
                {"index": k, "step": self.step_text(a), "label": self.label(a)}
                for k, (a, _s) in enumerate(steps)
                if a is not None
            ],
            "view": self._view(state, prev, action, last),
            "changes": self._changes(prev, state),
            "enabled": [
                {
                    "step": self.step_text(a),
                    "label": self.label(a),
                    "action": a.name,
                    "description": self.docs.get(a.name, ""),
                    **self._preview(state, a, holding),
                }
                for a in dict.fromkeys(self.model.actions(state))
            ],
            "invariants": statuses,
            "violations": [
                {"id": s["id"], "message": s["message"]} for s in statuses if s["violated"]
            ],
        }

    def _view(self, state: Any, prev: Any, action: Action | None, step: int) -> str:
        if self.kafka:
            return render_state(state, prev, action, step)
        text = self.label(action) if action is not None else "initial state"
        return render_plain_state(state, prev, text, step)

    def _changes(self, prev: Any, state: Any) -> list[str]:
        if prev is None:
            return []
        if self.kafka:
            return state_changes(prev, state)
        fields = zip(state._fields, state, prev, strict=True)
        return [f"{name} = {now!r}" for name, now, before in fields if now != before]

    def _preview(self, state: Any, action: Action, holding: Sequence[Invariant]) -> dict[str, Any]:
        """Where an enabled action leads: the step's changes, and which of the invariants
        ``holding`` in ``state`` it breaks (the page shows both on the action's button)."""
        after = self.model.next_state(state, action)
        breaks = [inv.id for inv in holding if inv(after) is not None]
        return {"changes": self._changes(state, after), "breaks": breaks}

    def _invariants(self, steps: Steps) -> list[dict[str, Any]]:
        """Each invariant in the last state, and the first step along the path to break it."""
        out = []
        for inv in self.invariants:
            messages = [inv(s) for _a, s in steps]
            first = next((k for k, m in enumerate(messages) if m is not None), None)
            message = messages[-1]
            out.append(
                {
                    "id": inv.id,
                    "description": inv.description,
                    "default": inv.default,
                    "violated": message is not None,
                    "message": message,
                    "first_violated_step": first,
                }
            )
        return out

    def headline(self, state: Any) -> tuple[str | None, str | None]:
        """The invariant a trace ending in ``state`` records: the first one it violates,
        those checked by default before the others (registry order)."""
        ordered = [i for i in self.invariants if i.default] + [
            i for i in self.invariants if not i.default
        ]
        for inv in ordered:
            message = inv(state)
            if message is not None:
                return inv.id, message
        return None, None

    # ------------------------------------------------------------ load, find

    def load(self, text: str, name: str) -> dict[str, Any]:
        """A trace's text (ITF or an action list, as ``replcheck replay`` reads a file) as a
        path of this model: it must be of this configuration and replay exactly."""
        trace = trace_from_text(text, name)
        if trace.config.to_dict() != self.config.to_dict():
            raise ExploreError(
                f"{name}: a trace of {trace.config.describe()}, not of this server's "
                f"{self.config.describe()} (replcheck explore --trace {name} serves its own)"
            )
        result = replay_trace(trace, self.model)
        if result.divergence is not None:
            div = result.divergence
            raise ExploreError(f"{name}: does not replay here: step {div.step}: {div.reason}")
        return {
            "path": self.path_text(trace.actions),
            "steps": len(trace.actions),
            "kind": trace.kind,
            "invariant": result.invariant,
        }

    def find_request(self, body: Any) -> FindRequest:
        """A find's request (``{"steps", "invariant", "max_states", "time_limit"}``),
        checked: the path taken, a known invariant, limits within the caps."""
        if not isinstance(body, dict):
            raise ExploreError("find: the body must be a JSON object (steps, invariant, ...)")
        unknown = sorted(set(body) - {"steps", "invariant", "max_states", "time_limit"})
        if unknown:
            raise ExploreError(f"find: unknown key {unknown[0]!r}"[:200])
        steps = body.get("steps", "")
        if not isinstance(steps, str):
            raise ExploreError("find: steps: expected the path as text")
        actions = self.parse_path(steps)
        self.execute(actions)  # a path that cannot be taken is refused before a search
        ids = {inv.id: inv for inv in self.invariants}
        wanted = body.get("invariant")
        if wanted not in ids:
            raise ExploreError(
                f"find: invariant: expected one of {', '.join(ids)} (got {wanted!r})"[:300]
            )
        max_states = body.get("max_states", FIND_MAX_STATES)
        if type(max_states) is not int or not 1 <= max_states <= FIND_MAX_STATES_CAP:
            raise ExploreError(
                f"find: max_states: expected a whole number from 1 to "
                f"{FIND_MAX_STATES_CAP:,} (got {max_states!r})"[:200]
            )
        time_limit = body.get("time_limit", FIND_TIME_LIMIT)
        if (
            type(time_limit) not in (int, float)
            or not 0 < time_limit <= FIND_TIME_LIMIT_CAP  # NaN fails this too
        ):
            raise ExploreError(
                f"find: time_limit: expected seconds, more than 0 and at most "
                f"{FIND_TIME_LIMIT_CAP:g} (got {time_limit!r})"[:200]
            )
        return FindRequest(actions, ids[wanted], max_states, float(time_limit))

    # ----------------------------------------------------------------- export

    def export_itf(self, actions: Sequence[Action]) -> dict[str, Any]:
        """The path as ``check --trace-out`` writes a trace (``replcheck replay`` reads it)."""
        steps = self.execute(actions)
        invariant, message = self.headline(steps[-1][1])
        return trace_to_itf(self.config, steps, invariant, message)

    def export_actions(self, actions: Sequence[Action]) -> dict[str, Any]:
        """The path as a hand-written JSON action list (``replcheck replay`` reads it)."""
        steps = self.execute(actions)
        invariant, message = self.headline(steps[-1][1])
        doc: dict[str, Any] = {
            "description": f"a path taken in replcheck explore ({len(actions)} steps)",
            "config": self.config.to_dict(),
        }
        if invariant is not None:
            doc["invariant"], doc["violation"] = invariant, message
        doc["actions"] = [self.label(a) for a in actions]
        return doc
