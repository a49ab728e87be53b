"""``replcheck.conform``: a trace, a catalogue entry's steps or random walks, run through
the model and through Kafka's own classes side by side (replcheck.harness)."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from replcheck.checker.suites.catalogue import load_catalogue
from replcheck.harness.build import build, family_of
from replcheck.harness.conform import ConformResult, check_expressible, conform_many, walk_paths
from replcheck.model.errors import InputError
from replcheck.model.kafka.config import Config
from replcheck.options import model_config, positive_int, whole_number
from replcheck.run import _trace
from replcheck.traces.replay import NotEnabled

__all__ = ["ConformReport", "conform"]


@dataclass
class ConformReport:
    """What the runs showed: one ConformResult per trace, in order."""

    release: str
    results: list[ConformResult]
    seconds: float

    @property
    def agrees(self) -> bool:
        return all(r.verdict == "agrees" for r in self.results)

    @property
    def counts(self) -> Counter[str]:
        return Counter(r.verdict for r in self.results)

    def __repr__(self) -> str:
        counts = ", ".join(f"{v} {k}" for k, v in sorted(self.counts.items()))
        return f"ConformReport(kafka {self.release}: {counts}; {self.seconds:.1f} s)"


def conform(
    trace: Any = None,
    config: Any = None,
    *,
    entry: str | None = None,
    walks: int | None = None,
    seed: int = 0,
    depth: int = 30,
    swarm: bool = True,
    batch: int = 50,
    on_batch: Callable[[int, int], None] | None = None,
    **model_options: Any,
) -> ConformReport:
    """Runs steps through the model and through Kafka ``kafka=`` (its jars from Maven).

    Give one of ``trace`` (a trace file or a list of actions, as ``replay`` takes),
    ``entry`` (a bug catalogue id: its pinned steps in that release) or ``walks`` (that
    many seeded random walks of the configuration, ``depth`` steps each).  Raises
    :class:`InputError` before any work for a bad argument, and for a release or trace
    the harness cannot run (no Java or Maven, a ZooKeeper-mode trace)."""
    start = time.monotonic()
    given = [n for n, v in (("trace", trace), ("entry", entry), ("walks", walks)) if v is not None]
    if len(given) != 1:
        raise InputError("conform: give one of trace, entry or walks")
    if on_batch is not None and not callable(on_batch):
        raise InputError(f"on_batch: expected a function (got {type(on_batch).__name__})")
    batch = positive_int(batch, "batch")
    if entry is not None:
        cfg, paths = entry_steps(entry, config, model_options)
    elif walks is not None:
        walks = positive_int(walks, "walks")
        seed = whole_number(seed, "seed")
        depth = positive_int(depth, "depth")
        cfg = _kafka_config(model_config(config, model_options))
        paths = walk_paths(cfg, walks, seed, depth, bool(swarm))
    else:
        loaded, _recorded = _trace(trace, config, model_options)
        cfg = _kafka_config(loaded.config)
        paths = [list(loaded.actions)]
    check_expressible(cfg)
    family_of(cfg.mode)
    # Walks come in batches that share one build; a trace is built for only once the
    # model has taken it (conform_many), so a step the model refuses needs no build.
    harness = build(cfg.mode) if walks is not None else None
    results: list[ConformResult] = []
    for first in range(0, len(paths), batch):
        try:
            results += conform_many(cfg, paths[first : first + batch], harness=harness)
        except NotEnabled as exc:  # a trace the model itself does not take
            raise InputError(
                f"the model of Kafka {cfg.mode} does not take this trace: {exc}"
            ) from None
        if on_batch is not None:
            on_batch(len(results), len(paths))
    return ConformReport(cfg.mode, results, time.monotonic() - start)


def _kafka_config(cfg: Any) -> Config:
    if not isinstance(cfg, Config):
        raise InputError(f"conform runs the Kafka model's traces (this one is {cfg.model})")
    return cfg


def entry_steps(entry: str, config: Any, options: dict[str, Any]) -> tuple[Config, list[list[Any]]]:
    """A catalogue entry's configuration and pinned steps in the release ``kafka=``."""
    found = {e.id: e for e in load_catalogue()}
    if entry not in found:
        raise InputError(f"entry: no catalogue entry {entry!r} (known: {', '.join(found)})")
    e = found[entry]
    if "kafka" not in options:
        raise InputError(
            f"entry {entry}: say which release (kafka=...); it affects {e.affected_text}"
        )
    release = model_config(None, {"kafka": options["kafka"]}).mode
    if config is not None or set(options) - {"kafka"}:
        raise InputError(f"entry {entry}: its bounds are the catalogue's; give only kafka=")
    return e.config(release), [list(e.steps_for(release))]
