"""Exhaustive breadth-first search with fingerprints and parent links.

Like TLC, the visited set stores only a 64-bit fingerprint of each state and its
parent's, in flat arrays (:class:`checker.explicit.visited.VisitedTable`, about 32 bytes a
state), on disk past a RAM budget (``checker.explicit.spill``).  A counterexample is rebuilt
afterwards by walking the parent links back to the initial state and re-executing
the model forward, picking at each step the successor with the next fingerprint.
So the search keeps full states only for the levels, compressed in chunks once a
level grows long and on disk past the budget (``checker.explicit.frontier``), and every
counterexample is a real execution of the model, as short as any.  A search can
be checkpointed and resumed (``checker.explicit.checkpoint``, ``checker.explicit.storage``).
"""

from __future__ import annotations

import gc
import os
import resource
import signal
import sys
import threading
import time
from collections.abc import Callable, Hashable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field

from replcheck.checker.explicit.checkpoint import CheckpointWriter, Saved
from replcheck.checker.explicit.frontier import Level
from replcheck.checker.explicit.storage import Storage
from replcheck.checker.explicit.visited import MASK64, NO_PARENT, as_key
from replcheck.invariants import Invariant
from replcheck.model.errors import ReplcheckError
from replcheck.model.interface import Action, Model, state_codec


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
    disk_bytes: int = 0  # the most the visited set and levels held on disk (spilled)

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


def safety_memory_limit() -> int | None:
    """95% of this machine's memory: whatever the budget of the visited set and levels,
    a search stops with a report here rather than meet the OOM killer."""
    budget = default_memory_budget()
    return None if budget is None else budget // 80 * 95


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
    ram_budget: int | None = None,
    spill_dir: str | os.PathLike | None = None,
    checkpoint: CheckpointWriter | None = None,
    resume: Saved | None = None,
    on_progress: Callable[[Progress], None] | None = None,
    progress_every: float = 3.0,
) -> SearchResult:
    """Visit every reachable state level by level and check each invariant on it.

    Keeps going after a violation until every invariant has its (shortest)
    counterexample or the state space is exhausted, so one run gives a verdict
    for each invariant.  ``time_limit`` (seconds) and ``memory_limit`` (bytes of
    peak resident memory) stop the search cleanly with what it found so far.
    ``ram_budget`` (bytes) bounds the visited set and the levels in RAM: past it they
    spill to a folder in ``spill_dir`` (default: the system's temporary folder).
    ``checkpoint`` writes the search's state at level boundaries and when it stops;
    ``resume`` goes on from one (the same model, invariants and symmetry).
    """
    if symmetry is None:  # the model's choice (Kafka: on; the TLA+ spec: off, as TLC)
        symmetry = model.default_symmetry
    canon = model.representative if symmetry else _same
    space = Storage(ram_budget, spill_dir, state_codec(model))
    found: dict[str, tuple[int, str]] = {}  # invariant id -> (fingerprint, message)
    pending = list(invariants)

    def check(fp: int, state: Hashable) -> None:
        for inv in pending:
            message = inv.check(state)
            if message is not None:
                found[inv.id] = (fp, message)
        if len(found) != len(invariants) - len(pending):
            pending[:] = [inv for inv in pending if inv.id not in found]

    if resume is None:
        visited = space.visited()
        frontier, next_level, in_level = space.level(), space.level(), False
        depth = transitions = 0
        before = 0.0
        for init in model.init_states():
            state = canon(init)
            fp = fingerprint(state)
            if visited.add(fp & MASK64, NO_PARENT):
                frontier.append((fp, state))
                check(fp, state)
    else:
        visited, frontier, next_level, retry = space.resume(resume)
        in_level, depth, transitions = resume.in_level, resume.depth, resume.transitions
        before = resume.seconds
        wanted = {inv.id for inv in invariants}
        found.update((i, (fp, m)) for i, fp, m in resume.found if i in wanted)
        pending[:] = [inv for inv in pending if inv.id not in found]
        for parent_fp, succ in retry.drain():  # states a stopped parallel round deferred
            fp = fingerprint(succ)
            if visited.add(fp & MASK64, parent_fp):
                next_level.append((fp, succ))
                check(fp, succ)

    start = time.monotonic()
    next_report = start + progress_every
    actions, next_state, add = model.actions, model.next_state, visited.add
    deadline = start + time_limit if time_limit is not None else 0.0
    status = "complete"
    expanded = 0
    clean = True  # False if Ctrl-C raised mid-update: no checkpoint of a torn state
    # States are tuples of ints: they form no reference cycles, so the cyclic collector
    # has nothing to free, yet its full passes over millions of live states took a
    # quarter of a long run (measured).  Off for the search, back on after it.
    collecting = gc.isenabled()
    gc.disable()
    try:
        with interrupt_flag() as interrupted:
            while pending:
                if not in_level:
                    if not frontier:
                        break
                    if max_states is not None and len(visited) >= max_states:
                        status = "max-states"
                        break
                    if checkpoint is not None and checkpoint.due():
                        space.save(
                            checkpoint,
                            visited,
                            frontier,
                            None,
                            depth,
                            transitions,
                            before + time.monotonic() - start,
                            found,
                            "level",
                        )
                    depth += 1
                    next_level, in_level = space.level(), True
                while status == "complete" and (batch := frontier.take(Level.CHUNK)):
                    for k, (parent_fp, state) in enumerate(batch):
                        taken = 0
                        for action in actions(state):
                            taken += 1
                            succ = canon(next_state(state, action))
                            fp = hash(succ)  # fingerprint(succ)
                            if not add(fp & MASK64, parent_fp):  # as_key(fp)
                                continue
                            next_level.append((fp, succ))
                            check(fp, succ)
                            if max_states is not None and len(visited) >= max_states:
                                status = "max-states"
                                break
                        if status == "max-states":  # expanded again on resume: not counted
                            frontier.push_front(batch[k:])
                            break
                        transitions += taken
                        expanded += 1
                        if expanded & 0xFF == 0:
                            now = time.monotonic()
                            space.note_disk(visited, frontier, next_level)
                            if interrupted():
                                status = "interrupted"
                            elif deadline and now >= deadline:
                                status = "timeout"
                            elif memory_limit and peak_memory_bytes() >= memory_limit:
                                status = "memory"
                            elif on_progress is not None and now >= next_report:
                                next_report = now + progress_every
                                on_progress(
                                    Progress(
                                        len(visited),
                                        len(next_level),
                                        depth,
                                        before + now - start,
                                        len(found),
                                    )
                                )
                            if status != "complete":
                                frontier.push_front(batch[k + 1 :])
                                break
                if status != "complete":
                    break
                if not pending:  # every invariant violated: the level need not finish
                    break
                frontier.close()
                frontier, next_level, in_level = next_level, space.level(), False
                if not frontier:
                    depth -= 1  # the last level produced nothing new
        if status == "complete" and not pending and (frontier or in_level):
            status = "all-violated"
    except KeyboardInterrupt:
        status = "interrupted"
        clean = False
    finally:
        if collecting:
            gc.enable()

    seconds = before + time.monotonic() - start
    if checkpoint is not None and clean:
        space.save(
            checkpoint,
            visited,
            frontier,
            next_level if in_level else None,
            depth,
            transitions,
            seconds,
            found,
            status,
        )
    violations = {}
    exact = model.canonical if symmetry else _same
    for inv in invariants:  # registry order: the most important violation first
        if inv.id in found:
            fp, message = found[inv.id]
            chain = visited.chain(fp & MASK64)
            violations[inv.id] = violation(model, inv, message, chain, canon, exact)
    if status == "complete" and violations and len(violations) == len(invariants):
        status = "all-violated"
    disk = space.disk_peak(visited, frontier, next_level)
    result = SearchResult(status, len(visited), depth, seconds, transitions, violations, disk)
    frontier.close()
    next_level.close()
    visited.close()
    return result


# The signals that stop a search cleanly, each with its default handling in Python.
STOP_SIGNALS = ((signal.SIGINT, signal.default_int_handler), (signal.SIGTERM, signal.SIG_DFL))


@contextmanager
def interrupt_flag() -> Iterator[Callable[[], bool]]:
    """While a search runs, Ctrl-C (SIGINT) or SIGTERM sets a flag it reads between
    states (or rounds) instead of raising in the middle of an update, so what it stops
    with is whole: a checkpoint can be written, workers can still answer for the traces.
    SIGTERM is what ends a run in the background (``nohup``, ``timeout``, a batch
    scheduler), where the shell has SIGINT ignored.  Only in the main thread, and for
    each signal only while it has Python's default handling (else it keeps its own)."""
    hits: list[int] = []
    installed = []
    if threading.current_thread() is threading.main_thread():
        for sig, default in STOP_SIGNALS:
            if signal.getsignal(sig) is default:
                signal.signal(sig, lambda _sig, _frame: hits.append(1))
                installed.append((sig, default))
    try:
        yield lambda: bool(hits)
    finally:
        for sig, default in installed:
            signal.signal(sig, default)


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
