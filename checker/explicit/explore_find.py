"""The search behind ``replcheck explore``'s "find": from the page's current state, the
shortest path on to a violation of one invariant.

It is the checker's own BFS, unchanged: the engine is given a model whose only initial
state is the path's last state (:class:`FromState`, which delegates everything else to
the model), so it neither knows which model it runs nor where the path began, and its
counterexample is the shortest continuation, rebuilt as a concrete execution from that
state.  The page's server (``traces/explore_server.py``) sits below the engines in the
package's layers, so it is handed :func:`find_violation` by the explore command rather
than importing it.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any

from replcheck.checker.explicit.bfs import Progress, bfs, safety_memory_limit
from replcheck.model.interface import Model
from replcheck.traces.explore import Explorer, FindOutcome, FindRequest

__all__ = ["FromState", "find_violation"]

PROGRESS_EVERY = 0.5  # seconds between the progress the page polls


class FromState:
    """``model`` with ``state`` as its one initial state; every other call is the model's."""

    def __init__(self, model: Model, state: Hashable) -> None:
        self._model = model
        self._state = state

    def init_states(self) -> list[Hashable]:
        return [self._state]

    def __getattr__(self, name: str) -> Any:
        return getattr(self._model, name)


def find_violation(
    explorer: Explorer,
    request: FindRequest,
    on_progress: Callable[[int, int, float], None] | None = None,
) -> FindOutcome:
    """BFS from the last state of ``request.actions`` for ``request.invariant``, within its
    limits; the shortest violating continuation (``[]``: the state itself violates it)."""
    start = explorer.execute(request.actions)[-1][1]

    def progress(p: Progress) -> None:
        if on_progress is not None:
            on_progress(p.distinct_states, p.depth, p.seconds)

    result = bfs(
        FromState(explorer.model, start),
        [request.invariant],
        max_states=request.max_states,
        time_limit=request.time_limit,
        memory_limit=safety_memory_limit(),
        on_progress=progress,
        progress_every=PROGRESS_EVERY,
    )
    found = result.violations.get(request.invariant.id)
    if found is not None and found.error is not None:
        raise RuntimeError(f"the counterexample could not be rebuilt: {found.error}")
    return FindOutcome(
        status=result.status,
        states=result.distinct_states,
        depth=result.depth,
        seconds=result.seconds,
        steps=None if found is None else [step.action for step in found.trace[1:]],
        message=None if found is None else found.message,
    )
