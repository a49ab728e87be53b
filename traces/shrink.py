"""Shrinking a counterexample: delta debugging over its action list.

A candidate (a subsequence of the actions) is kept when, re-executed from the
initial state, every action is enabled and some state violates the same
invariant; it is then cut right after the first violating state.  ``ddmin``
(Zeller and Hildebrandt) removes ever smaller chunks until no single action can
be removed: the result is 1-minimal.  It need not be the shortest
counterexample (BFS finds that), but it usually is close, and it is a
subsequence of the original, so it tells the same story.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

from replcheck.invariants import INVARIANTS, Invariant, select
from replcheck.model.errors import InputError
from replcheck.model.interface import Action, Model

__all__ = ["ShrinkError", "first_violation", "shrink"]


class ShrinkError(InputError):
    """The actions given do not replay, or do not violate the invariant: nothing to shrink."""


def first_violation(
    model: Model, actions: Sequence[Action], check, start: Hashable | None = None
) -> int | None:
    """How many actions it takes to violate ``check``; None if never, or an action is disabled.

    0 means the initial state already violates it.
    """
    state = model.init_states()[0] if start is None else start
    if check(state) is not None:
        return 0
    for index, action in enumerate(actions, start=1):
        if not any(action == a for a in model.actions(state)):
            return None
        state = model.next_state(state, action)
        if check(state) is not None:
            return index
    return None


def shrink(
    model: Model,
    actions: list[Action],
    invariant_id: str,
    registry: Sequence[Invariant] = INVARIANTS,
) -> list[Action]:
    """A 1-minimal subsequence of ``actions`` that still violates ``invariant_id``.

    Every action of the result is enabled where it occurs, and its last state
    is the first one that violates the invariant.  Raises ShrinkError if
    ``actions`` itself is not such a sequence, UnknownInvariant (a ValueError)
    for an unknown id (in ``registry``, the invariants of ``model``).
    """
    (inv,) = select([invariant_id], registry)
    cache: dict[tuple[Action, ...], int | None] = {}

    def test(candidate: list[Action]) -> int | None:
        key = tuple(candidate)
        if key not in cache:
            cache[key] = first_violation(model, candidate, inv.check)
        return cache[key]

    end = test(list(actions))
    if end is None:
        raise ShrinkError(
            f"the actions do not violate {invariant_id} (or one of them is not enabled)"
        )
    seq = list(actions[:end])
    n = 2
    while len(seq) >= 2:
        size = len(seq)
        bounds = [size * k // n for k in range(n + 1)]
        for k in range(n):
            candidate = seq[: bounds[k]] + seq[bounds[k + 1] :]
            end = test(candidate)
            if end is not None:
                seq = candidate[:end]
                n = max(n - 1, 2)
                break
        else:
            if n >= size:
                break
            n = min(2 * n, size)
    # ddmin ends with n == len(seq) and no single removal working, except when
    # the sequence got to length < 2; make 1-minimality explicit all the same.
    changed = True
    while changed:
        changed = False
        for k in range(len(seq)):
            end = test(seq[:k] + seq[k + 1 :])
            if end is not None:
                seq = (seq[:k] + seq[k + 1 :])[:end]
                changed = True
                break
    return seq
