"""Exhaustive breadth-first search with fingerprints and parent links.

Like TLC, the visited set stores only a 64-bit fingerprint of each state and a
link to the state it was first reached from, in flat arrays
(:class:`checker.visited.VisitedTable`, about 32 bytes a state).  A
counterexample is rebuilt afterwards by walking the parent links back to the
initial state and re-executing the model forward, picking at each step the
successor with the next fingerprint.  So the search keeps full states only for
the frontier, compressed in chunks once a level grows long (:class:`Level`), and
every counterexample is a real execution of the model, as short as any.
"""

from __future__ import annotations

import gc
import os
import pickle
import resource
import sys
import time
import zlib
from collections.abc import Callable, Hashable, Iterator, Sequence
from dataclasses import dataclass, field

from replcheck.checker.visited import MASK64, NO_PARENT, VisitedTable, as_key
from replcheck.invariants import Invariant
from replcheck.model.errors import ReplcheckError
from replcheck.model.interface import Action, Model


@dataclass
class Step:
    """One state of a counterexample and the action that led to it (None for the first)."""

    action: Action | None
    state: Hashable


@dataclass
class Violation:
    invariant: str
    message: str
    trace: list[Step]
    # Set when the counterexample could not be rebuilt (``trace`` then holds the part
    # that could): an internal error, reported beside the violation.
    error: str | None = None

    @property
    def length(self) -> int:
        """Number of states in the counterexample, the initial one included."""
        return len(self.trace)


@dataclass
class Progress:
    distinct_states: int
    queue: int
    depth: int
    seconds: float
    violations: int

    @property
    def states_per_second(self) -> float:
        return self.distinct_states / self.seconds if self.seconds > 0 else 0.0


@dataclass
class SearchResult:
    """What a search established.  ``status`` is one of:

    ``complete`` (every reachable state was visited), ``all-violated`` (stopped
    because every checked invariant already had a counterexample),
    ``max-states`` (stopped at the bound), ``timeout`` (stopped at the time limit),
    ``memory`` (stopped at the memory budget) or ``interrupted`` (Ctrl-C).
    """

    status: str
    distinct_states: int
    depth: int
    seconds: float
    transitions: int
    violations: dict[str, Violation] = field(default_factory=dict)

    @property
    def exhaustive(self) -> bool:
        return self.status in ("complete", "all-violated")

    @property
    def collision_probability(self) -> float:
        """Chance that two distinct states shared a 64-bit fingerprint (a missed state)."""
        n = self.distinct_states
        return min(1.0, n * n / 2.0**65)


def peak_memory_bytes() -> int:
    """This process's peak resident memory (ru_maxrss is KiB on Linux, bytes on macOS)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024


def default_memory_budget() -> int | None:
    """80% of this machine's memory: stop with a report before the OOM killer strikes."""
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None
    return int(total * 0.8) if total > 0 else None


def fingerprint(state: Hashable) -> int:
    """64-bit fingerprint.  States hold only ints and tuples, whose hash does not
    depend on PYTHONHASHSEED, so fingerprints agree across processes."""
    return hash(state)


def bfs(
    model: Model,
    invariants: Sequence[Invariant],
    *,
    symmetry: bool | None = None,
    max_states: int | None = None,
    time_limit: float | None = None,
    memory_limit: int | None = None,
    on_progress: Callable[[Progress], None] | None = None,
    progress_every: float = 3.0,
) -> SearchResult:
    """Visit every reachable state level by level and check each invariant on it.

    Keeps going after a violation until every invariant has its (shortest)
    counterexample or the state space is exhausted, so one run gives a verdict
    for each invariant.  ``time_limit`` (seconds) and ``memory_limit`` (bytes of
    peak resident memory) stop the search cleanly with what it found so far.
    """
    if symmetry is None:  # the model's choice (Kafka: on; the TLA+ spec: off, as TLC)
        symmetry = model.default_symmetry
    canon = model.representative if symmetry else _same
    start = time.monotonic()
    visited = VisitedTable()
    found: dict[str, tuple[int, str]] = {}  # invariant id -> (state number, message)
    pending = list(invariants)
    frontier = Level()
    transitions = 0
    expanded = 0
    depth = 0
    status = "complete"

    def check(number: int, state: Hashable) -> None:
        for inv in pending:
            message = inv.check(state)
            if message is not None:
                found[inv.id] = (number, message)
        if len(found) != len(invariants) - len(pending):
            pending[:] = [inv for inv in pending if inv.id not in found]

    for init in model.init_states():
        state = canon(init)
        number = visited.add(as_key(fingerprint(state)), NO_PARENT)
        if number >= 0:
            frontier.append((number, state))
            check(number, state)

    next_report = start + progress_every
    actions, next_state, add = model.actions, model.next_state, visited.add
    deadline = start + time_limit if time_limit is not None else 0.0
    last = max_states - 1 if max_states is not None else -1  # the number of the last state
    # States are tuples of ints: they form no reference cycles, so the cyclic collector
    # has nothing to free, yet its full passes over millions of live states took a
    # quarter of a long run (measured).  Off for the search, back on after it.
    collecting = gc.isenabled()
    gc.disable()
    try:
        while frontier and pending:
            if max_states is not None and len(visited) >= max_states:
                status = "max-states"
                break
            depth += 1
            next_level = Level()
            full = False  # max_states reached: not one state more
            for parent_number, state in frontier.drain():
                for action in actions(state):
                    transitions += 1
                    succ = canon(next_state(state, action))
                    number = add(hash(succ) & MASK64, parent_number)  # as_key(fingerprint)
                    if number < 0:
                        continue
                    next_level.append((number, succ))
                    check(number, succ)
                    if number == last:
                        full = True
                        break
                expanded += 1
                if expanded & 0xFF == 0 and (on_progress or deadline or memory_limit):
                    now = time.monotonic()
                    if deadline and now >= deadline:
                        status = "timeout"
                        break
                    if memory_limit and peak_memory_bytes() >= memory_limit:
                        status = "memory"
                        break
                    if on_progress is not None and now >= next_report:
                        next_report = now + progress_every
                        on_progress(
                            Progress(len(visited), len(next_level), depth, now - start, len(found))
                        )
                if full:
                    break
            if status in ("timeout", "memory"):
                break
            frontier = next_level
            if not next_level:
                depth -= 1  # the last level produced nothing new
        if frontier and not pending:
            status = "all-violated"
    except KeyboardInterrupt:
        status = "interrupted"
    finally:
        if collecting:
            gc.enable()

    seconds = time.monotonic() - start
    violations = {}
    exact = model.canonical if symmetry else _same
    for inv in invariants:  # registry order: the most important violation first
        if inv.id in found:
            number, message = found[inv.id]
            chain = visited.chain(number)
            violations[inv.id] = violation(model, inv, message, chain, canon, exact)
    if status == "complete" and violations and len(violations) == len(invariants):
        status = "all-violated"
    return SearchResult(status, len(visited), depth, seconds, transitions, violations)


def _same(state: Hashable) -> Hashable:
    return state


def violation(
    model: Model,
    inv: Invariant,
    message: str,
    chain: Sequence[int],
    canon: Callable[[Hashable], Hashable],
    exact: Callable[[Hashable], Hashable],
) -> Violation:
    """The violation of ``inv`` at the end of ``chain``, its counterexample rebuilt.

    If the rebuild fails, the violation is still reported, with what could be rebuilt
    and the reason in ``error``.
    """
    try:
        trace = trace_from_chain(model, chain, canon, exact)
    except RebuildError as e:
        return Violation(inv.id, message, e.steps, error=str(e))
    # Re-evaluate on the concrete final state so the message names the replicas as
    # the trace does (they may differ from the search's representative).
    return Violation(inv.id, inv(trace[-1].state) or message, trace)


class RebuildError(ReplcheckError):
    """A counterexample's chain of fingerprints could not be re-executed; ``steps`` holds
    the execution up to where it broke.  Only a fingerprint collision or a model whose
    actions do not commute with its symmetry should cause it."""

    def __init__(self, message: str, steps: list[Step]) -> None:
        super().__init__(message)
        self.steps = steps


def trace_from_chain(
    model: Model,
    chain: Sequence[int],
    canon: Callable[[Hashable], Hashable],
    exact: Callable[[Hashable], Hashable] = _same,
) -> list[Step]:
    """Re-execute the model from an initial state through the states with these
    fingerprints: a concrete execution whose i-th state is in the symmetry class of the
    search's i-th state.

    The search stored ``canon`` of each state, and ``canon`` need not pick the same
    member for every state of a class (``model.kafka.symmetry.representative`` does not), so
    a concrete successor of a concrete state may have another fingerprint than the
    search's state of that class.  So the search's own path of representatives is
    re-executed beside the concrete one, and at each step the concrete successor is the
    first with the next fingerprint or, failing that, the first in the class of the
    search's next state, as ``exact`` (the model's exact canonical form) tells.
    Raises :class:`RebuildError` if neither exists.
    """
    keys = [as_key(fp) for fp in chain]
    state = next((s for s in model.init_states() if as_key(fingerprint(canon(s))) == keys[0]), None)
    if state is None:
        raise RebuildError("no initial state has the counterexample's first fingerprint", [])
    searched = canon(state)  # the search's state at this step
    steps = [Step(None, state)]
    for want in keys[1:]:
        searched = next(
            (
                succ
                for action in model.actions(searched)
                if as_key(fingerprint(succ := canon(model.next_state(searched, action)))) == want
            ),
            None,
        )
        step = (
            None if searched is None else _concrete_step(model, state, want, searched, canon, exact)
        )
        if step is None:
            raise RebuildError(
                f"could not rebuild the counterexample past step {len(steps) - 1} of "
                f"{len(keys) - 1} (a fingerprint collision?)",
                steps,
            )
        steps.append(step)
        state = step.state
    return steps


def _concrete_step(
    model: Model,
    state: Hashable,
    want: int,
    searched: Hashable,
    canon: Callable[[Hashable], Hashable],
    exact: Callable[[Hashable], Hashable],
) -> Step | None:
    """The step from ``state`` into the class of the search's state ``searched`` (whose
    fingerprint is ``want``): by fingerprint if one matches, else by exact class."""
    successors = [(action, model.next_state(state, action)) for action in model.actions(state)]
    for action, succ in successors:
        if as_key(fingerprint(canon(succ))) == want:
            return Step(action, succ)
    goal = exact(searched)
    for action, succ in successors:
        if exact(succ) == goal:
            return Step(action, succ)
    return None


class Level:
    """One BFS level of (state number, state) pairs.  A long level is kept in chunks,
    pickled and zlib-compressed: about 17 bytes a Kafka state instead of a kilobyte of
    objects (pickling 150, compressing 1 microsecond), which is what keeps the whole
    search under 64 bytes a visited state.  A short level stays a plain list."""

    CHUNK = 4096
    PICKLE_FROM = 65_536  # states in the level before chunks are pickled

    def __init__(self) -> None:
        self.chunks: list[bytes] = []
        self.buffer: list[tuple[int, Hashable]] = []
        self.size = 0

    def __len__(self) -> int:
        return self.size

    def append(self, item: tuple[int, Hashable]) -> None:
        self.buffer.append(item)
        self.size += 1
        if self.size >= self.PICKLE_FROM and len(self.buffer) >= self.CHUNK:
            data = pickle.dumps(self.buffer, pickle.HIGHEST_PROTOCOL)
            self.chunks.append(zlib.compress(data, 3))
            self.buffer = []

    def drain(self) -> Iterator[tuple[int, Hashable]]:
        """The items in the order they came, each chunk freed once it is read."""
        chunks, buffer = self.chunks, self.buffer
        self.chunks, self.buffer, self.size = [], [], 0
        chunks.reverse()
        while chunks:
            yield from pickle.loads(zlib.decompress(chunks.pop()))
        yield from buffer
