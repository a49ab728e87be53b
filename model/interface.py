"""The small interface every model offers the checker.

In the spirit of Stateright's ``Model`` trait: initial states, the actions
enabled in a state, and the state an action leads to.  Actions are plain data
(a name and its parameters) so a trace can be written down and replayed.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Iterator
from typing import NamedTuple, Protocol


class Action(NamedTuple):
    """One step: ``name`` plus positional ``args`` whose names the model declares."""

    name: str
    args: tuple[int, ...] = ()


class Model(Protocol):
    """What the checkers need from a transition system."""

    def init_states(self) -> list[Hashable]: ...

    def actions(self, state: Hashable) -> Iterable[Action]:
        """The actions whose preconditions hold in ``state``."""
        ...

    def next_state(self, state: Hashable, action: Action) -> Hashable:
        """The state ``action`` leads to; only called with an enabled action."""
        ...

    # Whether a search reduces by symmetry unless the user says otherwise.
    default_symmetry: bool

    def representative(self, state: Hashable) -> Hashable:
        """A member of ``state``'s symmetry class, used when the search reduces by symmetry."""
        ...

    def action_params(self, action: Action) -> dict[str, int]:
        """The action's parameters by name, for traces and messages."""
        ...


def successors(model: Model, state: Hashable) -> Iterator[tuple[Action, Hashable]]:
    """Every (action, next state) pair from ``state``."""
    for action in model.actions(state):
        yield action, model.next_state(state, action)

