"""What the API's calls return: one result type per call, with the same core.

Every result says whether the invariants it checked ``holds``, gives each violated
invariant's counterexample in ``violations`` (an id -> :class:`Violation`, whose
``trace`` is a list of :class:`Step`: the action taken and the state it led to), and
how much it did (``distinct_states``, ``depth``, ``seconds``).  ``to_itf()`` turns a
counterexample into an ITF document (as Apalache and Quint write them) that
``replcheck replay`` and :func:`replcheck.replay` read back.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from replcheck.checker.explicit.bfs import SearchResult, Step, Violation
from replcheck.model.errors import InputError
from replcheck.model.registry import AnyConfig
from replcheck.traces.itf import trace_to_itf, write_itf

if TYPE_CHECKING:  # z3 and the walk engine load only when a proof or a walk runs
    from replcheck.checker.symbolic.pdr import PdrResult
    from replcheck.checker.symbolic.prove import BmcResult, InductionResult
    from replcheck.checker.walks.walk import Counterexample, Summary

__all__ = [
    "CheckResult",
    "ProveResult",
    "ReplayResult",
    "Step",
    "Violation",
    "WalkResult",
]


class _Counterexamples:
    """The ITF export every result offers (it needs ``config`` and ``violations``)."""

    config: AnyConfig
    violations: dict[str, Violation]

    def violation(self, invariant: str | None = None) -> Violation:
        """``invariant``'s violation, or the first (the most important) one."""
        if not self.violations:
            raise InputError("no invariant was violated: there is no counterexample")
        if invariant is None:
            return next(iter(self.violations.values()))
        if invariant not in self.violations:
            violated = ", ".join(self.violations)
            raise InputError(f"invariant {invariant!r} was not violated (violated: {violated})")
        return self.violations[invariant]

    def to_itf(self, invariant: str | None = None) -> dict[str, Any]:
        """The counterexample to ``invariant`` (default: the first) as an ITF document."""
        v = self.violation(invariant)
        steps = [(s.action, s.state) for s in v.trace]
        return trace_to_itf(self.config, steps, v.invariant, v.message)

    def write_itf(self, path: str | Path, invariant: str | None = None) -> None:
        """Write :meth:`to_itf` to ``path`` (the file ``replcheck replay`` reads)."""
        write_itf(path, self.to_itf(invariant))


@dataclass
class CheckResult(SearchResult, _Counterexamples):
    """Exhaustive BFS (:func:`replcheck.check`).  ``status``: ``complete``,
    ``all-violated`` (stopped once every invariant had a counterexample), ``max-states``,
    ``timeout``, ``memory`` or ``interrupted``; each counterexample is as short as any."""

    config: AnyConfig = None  # type: ignore[assignment]
    invariants: tuple[str, ...] = ()
    symmetry: bool = True
    checkpoint: str | None = None  # the folder the search's last checkpoint is in

    @property
    def holds(self) -> bool:
        """Every checked invariant holds on every reachable state (within the bounds)."""
        return self.exhaustive and not self.violations

    @property
    def verdicts(self) -> dict[str, str]:
        """Each invariant: ``violated``, ``holds`` or ``not violated (incomplete)``."""
        word = "holds" if self.exhaustive else "not violated (incomplete)"
        return {i: "violated" if i in self.violations else word for i in self.invariants}


@dataclass
class ProveResult(_Counterexamples):
    """z3 (:func:`replcheck.prove`): bounded model checking (``method`` ``bmc``),
    k-induction (``k-induction``) or IC3/PDR (``pdr``).

    ``holds``: BMC cleared every depth up to the bound with no violation, or
    k-induction proved the invariants for every depth.  ``depth``: BMC's cleared depth
    (every execution of at most that many steps is safe), the k of the induction, or
    PDR's frames.
    ``engine`` is the engine's own result (k-induction's counterexample to induction,
    BMC's per-depth times).  ``distinct_states`` is None: a proof counts no states.
    """

    config: AnyConfig
    method: str
    status: str
    depth: int
    seconds: float
    invariants: tuple[str, ...]
    violations: dict[str, Violation]
    engine: BmcResult | InductionResult | PdrResult
    distinct_states: None = None

    @property
    def holds(self) -> bool:
        if self.method == "bmc":
            return self.status == "complete" and not self.violations
        return self.status == "proved"


@dataclass
class WalkResult(_Counterexamples):
    """Random walks (:func:`replcheck.walk`).  ``holds`` only says no walk found a
    violation: walks prove nothing.  Each counterexample is a violating walk replayed
    and (unless ``shrink=False``) shrunk; ``counterexamples`` adds where it came from.

    ``distinct_states`` is exact for walks run here and approximate on Spark
    (``approx_count_distinct``); ``depth`` is the longest walk allowed.
    """

    config: AnyConfig
    status: str  # "complete" or "interrupted" (Ctrl-C: ``walks`` were done)
    walks: int
    walks_requested: int
    steps: int
    depth: int
    seconds: float
    distinct_states: int
    invariants: tuple[str, ...]
    violations: dict[str, Violation]
    counterexamples: dict[str, Counterexample]
    summary: Summary
    master: str | None = None  # the Spark master; None: walked in this process
    partitions: int = 1
    startup_seconds: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def holds(self) -> bool:
        return not self.violations

    @property
    def interrupted(self) -> bool:
        return self.status == "interrupted"


@dataclass
class ReplayResult(_Counterexamples):
    """A trace re-executed step by step (:func:`replcheck.replay`).

    ``replays``: every action was enabled and led to the recorded state (where the
    trace recorded one), and a recorded violation happened; otherwise ``divergence``
    says where and why.  ``violations``: each invariant the replayed states violate,
    with the trace up to its first violating state.  ``holds``: none is violated.
    """

    config: AnyConfig
    steps: list[Step]
    divergence: str | None
    divergence_step: int | None
    first_violated: dict[str, tuple[int, str]]
    violations: dict[str, Violation]
    invariant: str | None  # the one the trace records, else the first violated
    seconds: float
    engine: Any = None  # traces.replay.ReplayResult, for the views

    @property
    def replays(self) -> bool:
        return self.divergence is None

    @property
    def holds(self) -> bool:
        return not self.violations

    @property
    def depth(self) -> int:
        """Actions replayed."""
        return len(self.steps) - 1

    @property
    def distinct_states(self) -> int:
        seen: set[Hashable] = {step.state for step in self.steps}
        return len(seen)
