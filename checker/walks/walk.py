"""Random walks: one seeded walk, a range of walks, and their plain-Python summary.

A walk starts from the initial state and takes up to ``depth`` steps, each
chosen among the enabled actions, checking the invariants on every state; it
stops at the first violation (or when nothing is enabled).  Walk ``i`` of
seed ``S`` draws from its own generator, seeded from ``(S, i)`` alone, so it is
the same walk whichever process, partition or machine runs it -- that is what
lets Spark spread walks anywhere and still give reproducible answers.

The walker knows no model: it takes a configuration of either (the Kafka
model's Config or the TLA+ spec's SpecConfig), builds the model through
``model.registry``, and counts the kinds ``model.action_kinds()`` names.

With ``swarm`` (swarm testing, Groce et al., ISSTA 2012) each walk first draws
its own weights over the action kinds: every kind is switched off with
probability 1/2 and the rest get a random weight, so different walks stress
different corners (no checkpoints, no fetches, only crashes and elections...).
A walk whose enabled actions are all switched off picks uniformly among them.
The weights are drawn over every action name of the model (the registry's
``action_params``, in its fixed order), not only this configuration's kinds: a
kind's weight in walk ``i`` of seed ``S`` is then the same in the configurations
that name the same kinds (hw and kip320 switch the same kinds off).  Kinds that
only some configurations have (KRaft's ``apply_isr``, ``shrink_isr_set`` on three
or more replicas, an option's) shift the weights of the kinds after them.

This module has no Spark in it: ``checker.spark.walks`` runs :func:`run_range`
in Spark tasks, and the benchmark runs it in a plain loop to measure Spark's cost.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from replcheck.checker.explicit.bfs import fingerprint
from replcheck.invariants import Invariant, registry, select
from replcheck.model.interface import Action
from replcheck.model.registry import AnyConfig, action_params, build_model, config_from_dict
from replcheck.traces.replay import execute
from replcheck.traces.shrink import shrink

SWARM_OFF = 0.5  # chance that a swarm walk switches an action kind off

END_VIOLATION, END_DEPTH, END_DEADLOCK = "violation", "depth", "deadlock"
_MASK64 = (1 << 64) - 1
_GOLDEN = 0x9E3779B97F4A7C15


@dataclass
class WalkResult:
    """What one walk did.  ``path`` is only kept when the walk found a violation."""

    walk_id: int
    steps: int
    end: str  # END_VIOLATION, END_DEPTH or END_DEADLOCK
    invariant: str | None
    message: str | None
    path: list[Action] | None
    counts: tuple[int, ...]  # how often each of ``kinds`` fired
    fingerprints: list[int]  # distinct (sampled) fingerprints of the states it visited
    kinds: tuple[str, ...] = field(default=(), compare=False, repr=False)  # the walker's kinds

    def to_row(self) -> tuple[Any, ...]:
        """The compact row a Spark task returns (see ``checker.spark.walks.schema``)."""
        path = None
        if self.path is not None:
            path = [(a.name, list(a.args)) for a in self.path]
        return (
            self.walk_id,
            self.steps,
            self.end,
            self.invariant,
            self.message,
            path,
            self.counts,
            self.fingerprints,
        )


def walk_rng(seed: int, walk_id: int) -> random.Random:
    """Walk ``walk_id``'s own generator.  String seeds go through SHA-512, so nearby
    (seed, id) pairs get unrelated streams, and the result does not depend on
    PYTHONHASHSEED or on the process."""
    return random.Random(f"replcheck-walk:{seed}:{walk_id}")


def swarm_weights(rng: random.Random, names: Sequence[str]) -> list[float]:
    """One walk's weights over ``names``: each off with probability SWARM_OFF, else (0, 1]."""
    weights = []
    for _ in names:
        off = rng.random() < SWARM_OFF
        w = 1.0 - rng.random()  # (0, 1], drawn either way so the stream stays aligned
        weights.append(0.0 if off else w)
    return weights


def sampled(fp: int, rate: int) -> bool:
    """Keep one fingerprint in ``rate``, chosen by value (so the same state is either
    always kept or never, and distinct counts scale back up by ``rate``)."""
    return rate <= 1 or ((fp * _GOLDEN) & _MASK64) % rate == 0


class Walker:
    """Runs walks of one configuration (of any model).  Cheap to build; one per Spark task
    is fine."""

    def __init__(
        self,
        config: AnyConfig,
        invariant_ids: Sequence[str] | None = None,
        *,
        depth: int = 100,
        swarm: bool = False,
        symmetry: bool | None = None,
        fingerprint_rate: int = 1,
        keep_paths: bool = False,
        check: bool = True,
    ):
        """``symmetry`` (whether fingerprints are of the symmetry-reduced state; the walks
        are the same either way): None is the model's choice, ``default_symmetry``.
        ``keep_paths``: every walk keeps its actions, not only one that found a violation
        (``replcheck conform --walks`` replays them on Kafka); ``check``: False walks the
        full depth without checking invariants."""
        self.config = config
        self.model = build_model(config)
        self.invariants: tuple[Invariant, ...] = (
            select(invariant_ids, registry(config)) if check else ()
        )
        self.keep_paths = keep_paths
        self.kinds: tuple[str, ...] = tuple(self.model.action_kinds())  # counted, in this order
        self._kind_index = {name: i for i, name in enumerate(self.kinds)}
        # Swarm weights are drawn over every action name of the model (see the module doc).
        self.weight_names: tuple[str, ...] = tuple(action_params(config))
        missing = [k for k in self.kinds if k not in self.weight_names]
        if missing:
            raise ValueError(f"action kinds without parameters: {', '.join(missing)}")
        self.depth = depth
        self.swarm = swarm
        if symmetry is None:
            symmetry = self.model.default_symmetry
        self.symmetry = symmetry
        self.canon = self.model.representative if symmetry else _same
        self.fingerprint_rate = max(1, fingerprint_rate)
        self.init = self.model.init_states()[0]

    def _check(self, state: Any) -> tuple[str, str] | None:
        for inv in self.invariants:
            message = inv.check(state)
            if message is not None:
                return inv.id, message
        return None

    def walk(self, seed: int, walk_id: int) -> WalkResult:
        rng = walk_rng(seed, walk_id)
        weights = self._weights(rng) if self.swarm else None
        actions, next_state, canon = self.model.actions, self.model.next_state, self.canon
        kind_index = self._kind_index
        rate = self.fingerprint_rate
        state = self.init
        counts = [0] * len(self.kinds)
        path: list[Action] = []
        seen: set[int] = set()
        fps: list[int] = []

        def note(s: Any) -> None:
            fp = fingerprint(canon(s))
            if fp not in seen:
                seen.add(fp)
                if sampled(fp, rate):
                    fps.append(fp)

        note(state)
        end, found = END_DEPTH, self._check(state)
        if found is not None:
            end = END_VIOLATION
        else:
            for _ in range(self.depth):
                enabled = list(actions(state))
                if not enabled:
                    end = END_DEADLOCK
                    break
                action = _choose(rng, enabled, weights)
                state = next_state(state, action)
                counts[kind_index[action.name]] += 1
                path.append(action)
                note(state)
                found = self._check(state)
                if found is not None:
                    end = END_VIOLATION
                    break
        invariant, message = found if found is not None else (None, None)
        return WalkResult(
            walk_id,
            len(path),
            end,
            invariant,
            message,
            path if found is not None or self.keep_paths else None,
            tuple(counts),
            fps,
            self.kinds,
        )

    def _weights(self, rng: random.Random) -> dict[str, float]:
        """This walk's swarm weights, by action name."""
        return dict(zip(self.weight_names, swarm_weights(rng, self.weight_names), strict=True))

    def run_range(self, seed: int, start: int, stop: int) -> Iterator[WalkResult]:
        for walk_id in range(start, stop):
            yield self.walk(seed, walk_id)


def _same(state: Any) -> Any:
    return state


def _choose(rng: random.Random, enabled: list[Action], weights: dict[str, float] | None) -> Action:
    if weights is None:
        return enabled[int(rng.random() * len(enabled))]
    ws = [weights[a.name] for a in enabled]
    total = sum(ws)
    if total <= 0.0:  # every enabled kind is switched off: fall back to uniform
        return enabled[int(rng.random() * len(enabled))]
    x = rng.random() * total
    for action, w in zip(enabled, ws, strict=True):
        x -= w
        if x < 0.0:
            return action
    return enabled[-1]  # rounding: x was within an ulp of total


def partition_bounds(walks: int, partitions: int, index: int) -> tuple[int, int]:
    """Walk ids [start, stop) of partition ``index`` when ``walks`` are split evenly."""
    return walks * index // partitions, walks * (index + 1) // partitions


def run_partition(
    config_dict: dict[str, Any],
    invariant_ids: Sequence[str] | None,
    *,
    seed: int,
    walks: int,
    partitions: int,
    index: int,
    depth: int,
    swarm: bool,
    symmetry: bool | None = None,
    fingerprint_rate: int = 1,
    should_stop: Callable[[], bool] | None = None,
) -> Iterator[tuple[Any, ...]]:
    """One Spark task's work: the rows of its share of the walks.  ``config_dict`` is
    the configuration's ``to_dict()`` (either model's: ``model.registry`` reads it).

    ``should_stop`` is asked after every walk: once it says yes (Ctrl-C on the driver)
    the task ends with the walks it has finished, so they are kept and reported.
    """
    walker = Walker(
        config_from_dict(config_dict),
        invariant_ids,
        depth=depth,
        swarm=swarm,
        symmetry=symmetry,
        fingerprint_rate=fingerprint_rate,
    )
    first, end = partition_bounds(walks, partitions, index)
    for result in walker.run_range(seed, first, end):
        yield result.to_row()
        if should_stop is not None and should_stop():
            return


# ----------------------------------------------------------------- summaries


@dataclass
class Summary:
    """The aggregate of many walks (what the Spark job computes with DataFrames)."""

    walks: int = 0
    steps: int = 0
    ends: dict[str, int] = field(default_factory=dict)
    violations: dict[str, int] = field(default_factory=dict)  # invariant -> violating walks
    shortest: dict[str, tuple[int, int, list[Action], str]] = field(default_factory=dict)
    # invariant -> (steps, walk id, path, message) of its shortest violating walk (lowest id
    # among equally short ones)
    action_counts: dict[str, int] = field(default_factory=dict)  # per kind of the model
    distinct_states: int = 0  # exact here; approximate in the Spark job

    def never_fired(self, kinds: Sequence[str] | None = None) -> list[str]:
        """The action kinds (of ``kinds``, default: every kind counted) no walk took."""
        chosen = self.action_counts if kinds is None else kinds
        return [k for k in chosen if not self.action_counts.get(k)]


def summarize(
    results: Iterable[WalkResult],
    fingerprint_rate: int = 1,
    kinds: Sequence[str] | None = None,
) -> Summary:
    """Exact plain-Python aggregate (the reference for the Spark aggregation).  Action
    counts are per kind of ``kinds`` (a Walker's), or else of the walks' own kinds."""
    out = Summary(action_counts={k: 0 for k in kinds or ()})
    seen: set[int] = set()
    for r in results:
        out.walks += 1
        out.steps += r.steps
        out.ends[r.end] = out.ends.get(r.end, 0) + 1
        for kind, n in zip(r.kinds, r.counts, strict=True):
            out.action_counts[kind] = out.action_counts.get(kind, 0) + n
        seen.update(r.fingerprints)
        if r.invariant is not None:
            out.violations[r.invariant] = out.violations.get(r.invariant, 0) + 1
            best = out.shortest.get(r.invariant)
            if best is None or (r.steps, r.walk_id) < best[:2]:
                out.shortest[r.invariant] = (r.steps, r.walk_id, list(r.path or []), r.message)
    out.distinct_states = len(seen) * max(1, fingerprint_rate)
    return out


# ------------------------------------------------------------ counterexamples


@dataclass
class Counterexample:
    invariant: str
    message: str
    walk_id: int
    walk_steps: int  # actions in the violating walk as found
    steps: list[tuple[Action | None, Any]]  # the (possibly shrunk) trace, initial state first
    shrunk: str  # "shrunk" or "shrink disabled"
    trace_file: str | None = None

    @property
    def length(self) -> int:
        """States in the trace, the initial one included (as ``check`` counts)."""
        return len(self.steps)


def _violation_prefix(steps, inv: Invariant):
    """The trace up to its first state violating ``inv``, and the message; None if none."""
    for k, (_, state) in enumerate(steps):
        message = inv(state)
        if message is not None:
            return steps[: k + 1], message
    return None


def rebuild(
    config: AnyConfig,
    inv: Invariant,
    walk_id: int,
    walk_steps: int,
    path: list[Action],
    message: str,
    use_shrink: bool,
) -> Counterexample:
    """Replay a violating walk (on Spark's driver) and shrink it, unless told not to."""
    model = build_model(config)
    steps = execute(model, path)
    found = _violation_prefix(steps, inv)
    if found is None:  # pragma: no cover - the walk saw this violation on this very path
        raise RuntimeError(f"walk {walk_id} does not violate {inv.id} when replayed")
    steps, message = found
    status = "shrink disabled"
    if use_shrink:
        # shrink keeps only sequences that still violate, so this cannot come back None.
        smaller = shrink(model, [a for a, _ in steps[1:]], inv.id, registry(config))
        steps, message = _violation_prefix(execute(model, smaller), inv)
        status = "shrunk"
    return Counterexample(inv.id, message, walk_id, walk_steps, steps, status)
