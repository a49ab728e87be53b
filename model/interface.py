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
        """A member of ``state``'s symmetry class, used when the search reduces by symmetry.
        It may pick different members for different states of one class (cheaper)."""
        ...

    def canonical(self, state: Hashable) -> Hashable:
        """The one member of ``state``'s symmetry class that every member maps to (exact).
        Searches use it only to rebuild a counterexample as a concrete execution."""
        ...

    def action_params(self, action: Action) -> dict[str, int]:
        """The action's parameters by name, for traces and messages."""
        ...

    # Optional, both or neither: ``plain_state(state)`` gives the state as plain tuples,
    # ints and strings, and ``state_from_plain`` builds it back.  A search's levels then
    # serialize states with ``marshal`` instead of ``pickle`` (checker.explicit.frontier): for a
    # NamedTuple state that is several times cheaper.  See :func:`state_codec`.


def state_codec(model: Model) -> tuple | None:
    """The model's (plain_state, state_from_plain) pair, or None if it has none."""
    plain = getattr(model, "plain_state", None)
    back = getattr(model, "state_from_plain", None)
    return None if plain is None or back is None else (plain, back)


def successors(model: Model, state: Hashable) -> Iterator[tuple[Action, Hashable]]:
    """Every (action, next state) pair from ``state``."""
    for action in model.actions(state):
        yield action, model.next_state(state, action)


class SymbolicModel(Protocol):
    """What ``replcheck prove`` needs: the same transition system as z3 terms.

    A symbolic state is whatever the model chooses (typically a tuple of z3
    terms, one per variable); the engine only passes it back.  Action instances
    have concrete args, so the transition relation is a disjunction of
    ``guard(s, a) and t == effect(s, a)`` over :meth:`instances`.
    """

    def fresh(self, tag: str) -> object:
        """A symbolic state of fresh z3 constants whose names carry ``tag``."""
        ...

    def domain(self, s: object) -> object:
        """Every variable of ``s`` within the range the explicit model's states use."""
        ...

    def init(self, s: object) -> object:
        """``s`` is one of the explicit model's initial states."""
        ...

    def instances(self) -> list[Action]:
        """Every action, with concrete args, that can be enabled in some state."""
        ...

    def guard(self, s: object, action: Action) -> object:
        """``action`` is enabled in ``s`` (a z3 BoolRef)."""
        ...

    def effect(self, s: object, action: Action) -> object:
        """The symbolic state ``action`` leads to from ``s`` (meaningful where the guard holds)."""
        ...

    def variables(self, s: object) -> list:
        """Every z3 term of ``s`` (and of an ``effect``), in one fixed order."""
        ...

    def same(self, s: object, t: object) -> object:
        """``s`` and ``t`` are the same state (a z3 BoolRef)."""
        ...

    def encode(self, state: Hashable) -> object:
        """A concrete explicit state as a symbolic state of z3 values."""
        ...

    def decode(self, solution: object, s: object) -> Hashable:
        """The explicit state ``s`` stands for in the z3 model ``solution``."""
        ...
