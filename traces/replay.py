"""Re-executing a list of actions against the model, checking each is enabled."""

from __future__ import annotations

from collections.abc import Hashable, Iterable

from model.interface import Action, Model


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
