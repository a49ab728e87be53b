"""Random walks: one seeded walk, a range of walks, and their plain-Python summary.

A walk starts from the initial state and takes up to ``depth`` steps, each
chosen among the enabled actions, checking the invariants on every state; it
stops at the first violation (or when nothing is enabled).  Walk ``i`` of
seed ``S`` draws from its own generator, seeded from ``(S, i)`` alone, so it is
the same walk whichever process, partition or machine runs it -- that is what
lets Spark spread walks anywhere and still give reproducible answers.

With ``swarm`` (swarm testing, Groce et al., ISSTA 2012) each walk first draws
its own weights over the action kinds: every kind is switched off with
probability 1/2 and the rest get a random weight, so different walks stress
different corners (no checkpoints, no fetches, only crashes and elections...).
A walk whose enabled actions are all switched off picks uniformly among them.

This module has no Spark in it: ``checker.spark_walk`` runs :func:`run_range`
in Spark tasks, and the benchmark runs it in a plain loop to measure Spark's cost.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from checker.bfs import fingerprint
from invariants import Invariant, select
from model.config import Config, make_config
from model.interface import Action
from model.kafka import ACTION_PARAMS, KafkaReplication

KINDS: tuple[str, ...] = tuple(ACTION_PARAMS)  # action kinds, in a fixed order
_KIND_INDEX = {name: i for i, name in enumerate(KINDS)}
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
    counts: tuple[int, ...]  # how often each kind in KINDS fired
    fingerprints: list[int]  # distinct (sampled) fingerprints of the states it visited

    def to_row(self) -> tuple[Any, ...]:
        """The compact row a Spark task returns (see ``checker.spark_walk.SCHEMA``)."""
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


def swarm_weights(rng: random.Random) -> list[float]:
    """One walk's weights over KINDS: each kind off with probability SWARM_OFF, else (0, 1]."""
    weights = []
    for _ in KINDS:
        off = rng.random() < SWARM_OFF
        w = 1.0 - rng.random()  # (0, 1], drawn either way so the stream stays aligned
        weights.append(0.0 if off else w)
    return weights


def sampled(fp: int, rate: int) -> bool:
    """Keep one fingerprint in ``rate``, chosen by value (so the same state is either
    always kept or never, and distinct counts scale back up by ``rate``)."""
    return rate <= 1 or ((fp * _GOLDEN) & _MASK64) % rate == 0


class Walker:
    """Runs walks of one configuration.  Cheap to build; one per Spark task is fine."""

    def __init__(
        self,
        config: Config,
        invariant_ids: Sequence[str] | None = None,
        *,
        depth: int = 100,
        swarm: bool = False,
        symmetry: bool = True,
        fingerprint_rate: int = 1,
    ):
        self.config = config
        self.model = KafkaReplication(config)
        self.invariants: tuple[Invariant, ...] = select(invariant_ids)
        self.depth = depth
        self.swarm = swarm
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
        weights = swarm_weights(rng) if self.swarm else None
        actions, next_state, canon = self.model.actions, self.model.next_state, self.canon
        rate = self.fingerprint_rate
        state = self.init
        counts = [0] * len(KINDS)
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
                counts[_KIND_INDEX[action.name]] += 1
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
            path if found is not None else None,
            tuple(counts),
            fps,
        )

    def run_range(self, seed: int, start: int, stop: int) -> Iterator[WalkResult]:
        for walk_id in range(start, stop):
            yield self.walk(seed, walk_id)


def _same(state: Any) -> Any:
    return state


def _choose(rng: random.Random, enabled: list[Action], weights: list[float] | None) -> Action:
    if weights is None:
        return enabled[int(rng.random() * len(enabled))]
    ws = [weights[_KIND_INDEX[a.name]] for a in enabled]
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
    symmetry: bool = True,
    fingerprint_rate: int = 1,
    should_stop: Callable[[], bool] | None = None,
) -> Iterator[tuple[Any, ...]]:
    """One Spark task's work: the rows of its share of the walks.

    ``should_stop`` is asked after every walk: once it says yes (Ctrl-C on the driver)
    the task ends with the walks it has finished, so they are kept and reported.
    """
    walker = Walker(
        make_config(config_dict),
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
    action_counts: dict[str, int] = field(default_factory=dict)
    distinct_states: int = 0  # exact here; approximate in the Spark job

    def never_fired(self, kinds: Sequence[str] = KINDS) -> list[str]:
        """The action kinds (of ``kinds``: those the configuration can take) no walk took."""
        return [k for k in kinds if not self.action_counts.get(k)]


def summarize(results: Iterable[WalkResult], fingerprint_rate: int = 1) -> Summary:
    """Exact plain-Python aggregate (the reference for the Spark aggregation)."""
    out = Summary(action_counts={k: 0 for k in KINDS})
    seen: set[int] = set()
    for r in results:
        out.walks += 1
        out.steps += r.steps
        out.ends[r.end] = out.ends.get(r.end, 0) + 1
        for kind, n in zip(KINDS, r.counts, strict=True):
            out.action_counts[kind] += n
        seen.update(r.fingerprints)
        if r.invariant is not None:
            out.violations[r.invariant] = out.violations.get(r.invariant, 0) + 1
            best = out.shortest.get(r.invariant)
            if best is None or (r.steps, r.walk_id) < best[:2]:
                out.shortest[r.invariant] = (r.steps, r.walk_id, list(r.path or []), r.message)
    out.distinct_states = len(seen) * max(1, fingerprint_rate)
    return out
