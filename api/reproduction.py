"""``replcheck.reproduce``: a trace, or a catalogue entry's steps, taken by a real Kafka
cluster on loopback (replcheck.cluster), and whether the acknowledged records survive."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from replcheck.cluster.plan import ClusterPlan, cluster_plan
from replcheck.cluster.runner import Reproduction, StepRun
from replcheck.cluster.runner import reproduce as run_on_cluster
from replcheck.conformance import entry_steps
from replcheck.model.errors import InputError
from replcheck.model.kafka.config import Config
from replcheck.options import model_config, positive_int
from replcheck.run import _trace
from replcheck.traces.replay import NotEnabled

__all__ = ["ReproduceReport", "reproduce"]


@dataclass
class ReproduceReport:
    """Every run of one trace on fresh clusters of one release."""

    release: str
    name: str
    plan: ClusterPlan
    runs: list[Reproduction]
    folder: Path
    seconds: float

    @property
    def lost(self) -> int:
        return sum(r.verdict == "lost" for r in self.runs)

    @property
    def verdict(self) -> str:
        """ "lost" if a run lost an acknowledged record, else "interrupted", "timed out"
        or "kept" (every run finished and kept every acknowledged record)."""
        verdicts = {r.verdict for r in self.runs}
        for v in ("lost", "interrupted", "timed out"):
            if v in verdicts:
                return v
        return "kept"

    def __repr__(self) -> str:
        return (
            f"ReproduceReport({self.name} on Kafka {self.release}: lost in {self.lost} of "
            f"{len(self.runs)} runs; {self.seconds:.0f} s)"
        )


def reproduce(
    trace: Any = None,
    config: Any = None,
    *,
    entry: str | None = None,
    steps_of: str | None = None,
    runs: int = 1,
    out: str | Path | None = None,
    on_step: Callable[[int, StepRun], None] | None = None,
    on_run: Callable[[int, Path], None] | None = None,
    **model_options: Any,
) -> ReproduceReport:
    """Takes a trace on a fresh KRaft cluster of Kafka ``kafka=``, ``runs`` times.

    Give ``trace`` (a trace file or a list of actions, as ``replay`` takes) or ``entry``
    (a bug catalogue id: its pinned steps in that release).  ``steps_of``: take the
    steps as the model of that release takes them, on the cluster of ``kafka=`` (a
    negative control: an affected release's steps on a fixed one).  Each run's logs and report
    go under ``out`` (default ``replcheck-runs/<name>-<release>-<time>``); the cluster's
    processes, ports and data are gone when it returns, interrupted or not.  ``on_run(n,
    folder)`` is called as run ``n`` starts, ``on_step(n, step)`` after each step.  Raises
    :class:`InputError` before any work for a bad argument, a trace the model does not
    take, or a step no real cluster can be made to take."""
    start = time.monotonic()
    given = [n for n, v in (("trace", trace), ("entry", entry)) if v is not None]
    if len(given) != 1:
        raise InputError("reproduce: give one of trace or entry")
    for name, hook in (("on_step", on_step), ("on_run", on_run)):
        if hook is not None and not callable(hook):
            raise InputError(f"{name}: expected a function (got {type(hook).__name__})")
    runs = positive_int(runs, "runs")
    cluster_release = None
    if steps_of is not None:
        if "kafka" not in model_options:
            raise InputError("steps_of: say which release's cluster takes them (kafka=...)")
        cluster_release = model_config(None, {"kafka": model_options["kafka"]}).mode
        model_options = {**model_options, "kafka": steps_of}
    if entry is not None:
        cfg, actions, name = _entry(entry, config, model_options)
    else:
        loaded, _recorded = _trace(trace, config, model_options)
        if not isinstance(loaded.config, Config):
            raise InputError(
                f"reproduce runs the Kafka model's traces (this one is {loaded.config.model})"
            )
        cfg, actions = loaded.config, list(loaded.actions)
        name = Path(trace).stem if isinstance(trace, str | Path) else "trace"
    try:
        plan = cluster_plan(cfg, actions)
    except NotEnabled as exc:
        raise InputError(
            f"the model of Kafka {cfg.mode} does not take this trace: {exc} (a fixed "
            "release? steps_of=<an affected release> takes that one's steps here)"
        ) from None
    folder = Path(out) if out is not None else _default_folder(name, cfg.mode)
    if folder.exists() and any(folder.iterdir()):
        raise InputError(f"out: {folder} exists and is not empty")
    results: list[Reproduction] = []
    for n in range(1, runs + 1):
        each = None if on_step is None else (lambda s, n=n: on_step(n, s))
        place = folder / f"run-{n}" if runs > 1 else folder
        if on_run is not None:
            on_run(n, place)
        result = run_on_cluster(plan, place, each, release=cluster_release)
        results.append(result)
        if result.interrupted:
            break
    release = cluster_release or cfg.mode
    return ReproduceReport(release, name, plan, results, folder, time.monotonic() - start)


def _default_folder(name: str, release: str) -> Path:
    stamp = time.strftime("%Y%m%d-%H%M%S")
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", name)
    return Path("replcheck-runs") / f"{safe}-{release}-{stamp}"


def _entry(entry: str, config: Any, options: dict[str, Any]) -> tuple[Config, list[Any], str]:
    cfg, (steps,) = entry_steps(entry, config, options)
    if not steps:
        raise InputError(f"entry {entry}: no pinned steps to take (the catalogue has none)")
    return cfg, steps, entry
