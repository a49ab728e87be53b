"""The four calls of the Python API: check, replay, prove, walk.

Each takes the model's options as keywords (the keys of a ``--config`` TOML file:
``kafka="2.1.0"``, ``replicas=3``, ``records=2``, ``model="tla-kip320"``, ...) or a
``config`` (a TOML file's path, a mapping, or a configuration), checks every option
before any work starts (an ``InputError`` with one line, as the command line prints
it), and returns a result object (``replcheck.results``).  The command line is a
layer over these calls.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from replcheck.checker.explicit.bfs import Progress, Step, Violation, safety_memory_limit
from replcheck.checker.explicit.checkpoint import DEFAULT_EVERY as DEFAULT_CHECKPOINT_EVERY
from replcheck.checker.explicit.checkpoint import (
    CheckpointWriter,
    Saved,
    check_model_digest,
    model_digest,
)
from replcheck.checker.explicit.checkpoint import load as load_checkpoint
from replcheck.checker.explicit.parallel_bfs import parallel_bfs
from replcheck.invariants import registry
from replcheck.model.errors import InputError
from replcheck.model.interface import Action
from replcheck.model.kafka.config import Config
from replcheck.model.registry import AnyConfig, action_params, build_model
from replcheck.options import (
    DEFAULT_MEMORY,
    invariants_of,
    model_config,
    positive_int,
    seconds,
    whole_number,
)
from replcheck.options import memory as memory_budget
from replcheck.options import workers as worker_count
from replcheck.results import CheckResult, ProveResult, ReplayResult, WalkResult
from replcheck.traces.load import LoadedTrace, TraceError, load_trace, parse_action
from replcheck.traces.replay import replay_trace

__all__ = ["check", "prove", "replay", "walk"]

DEFAULT_PROVE_DEPTH = 12


def _flag(value: Any, name: str) -> bool | None:
    if value is not None and not isinstance(value, bool):
        raise InputError(f"{name}: expected True, False or None (got {value!r})")
    return value


def _workers(value: int | None) -> int:
    return worker_count(os.cpu_count() or 1 if value is None else value)


def check(
    config: Any = None,
    *,
    invariants: str | Iterable[str] | None = None,
    symmetry: bool | None = None,
    max_states: int | None = None,
    timeout: float | None = None,
    memory: int | str | None = DEFAULT_MEMORY,
    spill_dir: str | os.PathLike | None = None,
    checkpoint: str | os.PathLike | None = None,
    checkpoint_every: float = DEFAULT_CHECKPOINT_EVERY,
    resume: str | os.PathLike | None = None,
    workers: int | None = None,
    engine: str = "local",
    master: str | None = None,
    on_progress: Callable[[Progress], None] | None = None,
    **model_options: Any,
) -> CheckResult:
    """Exhaustive breadth-first search: every reachable state within the bounds, each
    invariant checked on each, each violation's counterexample as short as any.

    ``invariants``: ids (default: the default ones; ``"all"``: every one).
    ``symmetry``: reduce by renaming replicas (default: the model's choice).
    ``max_states`` and ``timeout`` (seconds) stop the search with what it found
    (``status`` says which).  ``memory`` (bytes or ``"4G"``; default 80% of this
    machine's memory; None: no limit) is the RAM of the visited states and the levels:
    past it they spill to a folder in ``spill_dir`` (default: the system's temporary
    folder), and the search goes on, limited by disk.  ``checkpoint``: a folder where
    the search's state is written every ``checkpoint_every`` seconds (at the next level
    boundary) and when it stops; ``resume``: such a folder, to go on from (the model,
    invariants and symmetry are the checkpoint's; it goes on writing checkpoints there
    unless ``checkpoint`` names another folder).  ``workers``: processes (default: the
    machine's cores).  ``engine="spark"`` runs the search as Spark jobs, a level at a
    time (``checker.spark.bfs``; ``master``: default ``local[*]``), its levels Parquet in
    ``checkpoint`` (default: a temporary folder); ``memory``, ``spill_dir`` and
    ``workers`` are then Spark's business.  ``on_progress`` is called every few
    seconds (Spark: every level) with a ``Progress``.  Ctrl-C stops the search too
    (``status == "interrupted"``), with what it found.
    """
    if engine not in ENGINES:
        raise InputError(f"engine: expected one of {', '.join(ENGINES)} (got {engine!r})")
    saved = None
    if resume is not None:
        point = resume_point(resume, engine)
        saved = point.saved
        if config is not None or model_options or invariants is not None or symmetry is not None:
            raise InputError(
                "resume: the model, invariants and symmetry are the checkpoint's; give no "
                "other model options or invariants"
            )
        identity = point.identity
        try:
            config, invariants, symmetry = (
                identity["config"],
                identity["invariants"],
                identity["symmetry"],
            )
        except KeyError as e:
            raise InputError(f"resume {resume}: the checkpoint does not say its {e}") from None
        if checkpoint is None:
            checkpoint = resume
    cfg = model_config(config, model_options)
    chosen = invariants_of(cfg, invariants)
    limit = positive_int(max_states, "max_states")
    time_limit = seconds(timeout, "timeout")
    every = seconds(checkpoint_every, "checkpoint_every")
    budget = _memory(memory)
    count = _workers(workers)
    model = build_model(cfg)
    symmetric = _flag(symmetry, "symmetry")
    if symmetric is None:
        symmetric = model.default_symmetry
    if engine == "spark":
        return _check_on_spark(
            cfg, chosen, symmetric, limit, time_limit, checkpoint, resume, master, on_progress
        )
    writer = None
    if checkpoint is not None:
        identity = {
            "config": cfg.to_dict(),
            "invariants": [inv.id for inv in chosen],
            "symmetry": symmetric,
            "model": model_digest(),
        }
        writer = CheckpointWriter(_folder(checkpoint, "checkpoint"), identity, every)
    found = parallel_bfs(
        model,
        chosen,
        workers=count,
        symmetry=symmetric,
        max_states=limit,
        time_limit=time_limit,
        memory_limit=safety_memory_limit(),
        ram_budget=budget,
        spill_dir=None if spill_dir is None else _folder(spill_dir, "spill_dir"),
        checkpoint=writer,
        resume=saved,
        on_progress=on_progress,
    )
    return _result(found, cfg, chosen, symmetric, None if writer is None else writer.folder)


ENGINES = ("local", "spark")


@dataclass
class ResumePoint:
    """Where a stopped search stands, read from its checkpoint folder without its states."""

    identity: dict[str, Any]  # its model, invariants, symmetry and model digest
    distinct: int
    depth: int
    complete: bool  # every level to ``depth`` expanded (else ``depth`` is under way)
    saved: Saved | None  # what the local engines resume from; None for a Spark search's


def resume_point(folder: str | os.PathLike, engine: str = "local") -> ResumePoint:
    """The checkpoint in ``folder``, for ``engine``; an :class:`InputError` if this code
    cannot resume it (none there, or one written by other model code)."""
    if engine == "spark":
        from replcheck.checker.spark.bfs import read_meta

        doc = read_meta(folder)
        point = ResumePoint(doc["identity"], doc["distinct"], doc["depth"], True, None)
    else:
        saved = load_checkpoint(folder)
        point = ResumePoint(saved.identity, saved.distinct, saved.depth, not saved.in_level, saved)
    check_model_digest(point.identity, f"resume {folder}")
    return point


def _check_on_spark(
    cfg: AnyConfig,
    chosen: Sequence[Any],
    symmetric: bool,
    limit: int | None,
    time_limit: float | None,
    checkpoint: str | os.PathLike | None,
    resume: str | os.PathLike | None,
    master: str | None,
    on_progress: Callable[[Progress], None] | None,
) -> CheckResult:
    """The search as Spark jobs (``checker.spark.bfs``), in a session of its own."""
    from replcheck.checker.spark import session as spark_session
    from replcheck.checker.spark.bfs import spark_bfs

    folder = None if checkpoint is None else _folder(checkpoint, "checkpoint")
    with spark_session.sigterm_as_ctrl_c():
        try:
            spark = spark_session.start_session(master)
        except KeyboardInterrupt:
            raise spark_session.StartInterrupted from None
        try:
            found = spark_bfs(
                spark,
                cfg,
                [inv.id for inv in chosen],
                symmetry=symmetric,
                max_states=limit,
                time_limit=time_limit,
                folder=folder,
                resume=resume is not None,
                on_progress=on_progress,
            )
        finally:
            spark_session.close_session(spark)
    return _result(found, cfg, chosen, symmetric, folder)


def _result(
    found: Any, cfg: AnyConfig, chosen: Sequence[Any], symmetric: bool, folder: Path | None
) -> CheckResult:
    """A search's result as ``check`` returns it."""
    return CheckResult(
        found.status,
        found.distinct_states,
        found.depth,
        found.seconds,
        found.transitions,
        found.violations,
        found.disk_bytes,
        config=cfg,
        invariants=tuple(inv.id for inv in chosen),
        symmetry=symmetric,
        checkpoint=None if folder is None else str(folder),
    )


def _folder(value: Any, name: str) -> Path:
    """A folder to write in: made if missing; an InputError if it cannot be."""
    if not isinstance(value, str | os.PathLike):
        raise InputError(f"{name}: expected a folder's path (got {value!r})")
    path = Path(value)
    if path.exists() and not path.is_dir():
        raise InputError(f"{name} {value}: not a folder")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise InputError(f"{name} {value}: cannot make the folder ({e.strerror})") from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise InputError(f"{name} {value}: not writable")
    return path


def _memory(value: Any) -> int | None:
    return memory_budget(value, "memory")


def replay(
    trace: str | Path | Sequence[Action | str] | LoadedTrace,
    config: Any = None,
    *,
    invariants: str | Iterable[str] | None = None,
    **model_options: Any,
) -> ReplayResult:
    """Re-execute a trace step by step.

    ``trace`` is a trace file (an ITF counterexample or a hand-written action list, as
    ``replcheck replay`` reads), or a list of actions (``Action`` or text such as
    ``"fetch(follower=r1, leader=r0)"``).  A file replays under its own configuration;
    given model options (say ``kafka="2.1.0"``), its actions replay under that
    configuration instead, without comparing the states it recorded: how the same
    steps fare in another release.  ``invariants``: those reported in ``violations``
    (default: the default ones and the one the trace records).
    """
    start = time.monotonic()
    loaded, recorded = _trace(trace, config, model_options)
    engine = replay_trace(loaded)
    ids = {inv.id for inv in invariants_of(loaded.config, invariants)}
    if recorded is not None:
        ids.add(recorded)
    steps = [Step(action, state) for action, state in engine.steps]
    violations = {}
    for inv in registry(loaded.config):  # registry order: the most important first
        if inv.id in ids and inv.id in engine.first_violated:
            at, message = engine.first_violated[inv.id]
            violations[inv.id] = Violation(inv.id, message, steps[: at + 1])
    divergence = engine.divergence
    return ReplayResult(
        loaded.config,
        steps,
        None if divergence is None else divergence.reason,
        None if divergence is None else divergence.step,
        dict(engine.first_violated),
        violations,
        recorded or engine.invariant,
        time.monotonic() - start,
        engine,
    )


def _trace(trace: Any, config: Any, options: dict[str, Any]) -> tuple[LoadedTrace, str | None]:
    """The trace to replay, under the configuration the call asks for, and the invariant
    it records.  Under another configuration the recorded states and the recorded
    violation are claims about the original one: they are not held against the replay."""
    if isinstance(trace, LoadedTrace):
        loaded = trace
    elif isinstance(trace, str | Path):
        loaded = load_trace(trace)
    elif isinstance(trace, Sequence):
        cfg = model_config(config, options)
        params = action_params(cfg)
        actions = [
            parse_action(a, f"actions[{k}]", params) if isinstance(a, str) else _action(a, k)
            for k, a in enumerate(trace, start=1)
        ]
        return LoadedTrace("actions", "actions", cfg, actions, [None] * (len(actions) + 1)), None
    else:
        raise InputError(
            f"trace: expected a trace file's path or a list of actions (got {type(trace).__name__})"
        )
    if config is None and not options:
        return loaded, loaded.invariant
    base = loaded.config.to_dict() if config is None else config
    cfg = model_config(base, options)
    known = {inv.id for inv in registry(cfg)}
    recorded = loaded.invariant if loaded.invariant in known else None
    steps = [None] * (len(loaded.actions) + 1)
    return LoadedTrace(loaded.path, "actions", cfg, loaded.actions, steps), recorded


def _action(value: Any, index: int) -> Action:
    if isinstance(value, Action):
        return value
    raise TraceError(f"actions[{index}]: expected an Action or text such as 'fetch(1, 0)'")


def prove(
    config: Any = None,
    *,
    invariants: str | Iterable[str] | None = None,
    depth: int = DEFAULT_PROVE_DEPTH,
    induction: bool = False,
    pdr: bool = False,
    lemmas: str | Iterable[str] | None = None,
    timeout: float | None = None,
    workers: int | None = None,
    on_depth: Callable[..., None] | None = None,
    on_step: Callable[..., None] | None = None,
    on_action: Callable[..., None] | None = None,
    on_frame: Callable[..., None] | None = None,
    **model_options: Any,
) -> ProveResult:
    """Symbolic checking with z3 (the Kafka model).

    Bounded model checking (the default): every execution of up to ``depth`` steps,
    depth by depth, so a counterexample is as short as any.  ``induction=True``: a
    proof for every depth by k-induction (k = 1 .. ``depth``), strengthened by the
    model's ``lemmas`` (ids; default: every lemma; ``"none"``: none), each proved too;
    ``workers`` share its step (default: the machine's cores).  ``timeout`` (seconds)
    stops either with the depth reached.  ``on_depth``, ``on_step`` and ``on_action``
    receive the engine's progress (see ``checker.symbolic.prove``).

    ``pdr=True``: a proof for every depth by IC3/PDR (``checker.symbolic.pdr``), which finds its
    own strengthening; the ``lemmas`` (default: every lemma) and the invariants not
    checked are offered as seeds, used only where PDR proves them.  A counterexample
    is confirmed, and shortened, by BMC.  ``on_frame(k, clauses, seconds)`` follows it.
    """
    from replcheck.checker.symbolic.pdr import pdr as run_pdr
    from replcheck.checker.symbolic.prove import bmc, k_induction
    from replcheck.model.kafka.replication import KafkaReplication
    from replcheck.model.kafka.symbolic.replication import KafkaSymbolic

    cfg = model_config(config, model_options)
    if not isinstance(cfg, Config):
        raise InputError(f"model: {cfg.model}: prove takes the Kafka model only")
    chosen = [inv.id for inv in invariants_of(cfg, invariants)]
    steps = positive_int(depth, "depth", optional=False)
    time_limit = seconds(timeout, "timeout")
    for name, flag in (("induction", induction), ("pdr", pdr)):
        if not isinstance(flag, bool):
            raise InputError(f"{name}: expected True or False (got {flag!r})")
    if induction and pdr:
        raise InputError("induction and pdr: choose one proof method")
    if lemmas is not None and not (induction or pdr):
        raise InputError("lemmas: only with induction=True or pdr=True")
    count = _workers(workers) if induction else 1
    symbolic = KafkaSymbolic(cfg)
    explicit = KafkaReplication(cfg)
    if pdr:
        wanted = properties(symbolic, chosen)
        others = [p for p in properties(symbolic, ["all"]) if p.id not in chosen]
        found = run_pdr(
            explicit,
            symbolic,
            wanted,
            seeds=[*strengthening(symbolic, lemmas), *others],
            time_limit=time_limit,
            on_frame=on_frame,
        )
        violations = {} if found.violation is None else {found.violation.invariant: found.violation}
        return ProveResult(
            cfg, "pdr", found.status, found.frames, found.seconds, tuple(chosen), violations, found
        )
    if induction:
        result = k_induction(
            explicit,
            symbolic,
            properties(symbolic, chosen),
            strengthening(symbolic, lemmas),
            steps,
            candidates=[*properties(symbolic, ["all"]), *strengthening(symbolic, None)],
            time_limit=time_limit,
            jobs=count,
            on_step=on_step,
            on_action=on_action,
        )
        found = result.violation
        violations = {} if found is None else {found.invariant: found}
        return ProveResult(
            cfg, "k-induction", result.status, result.k, result.seconds, tuple(chosen),
            violations, result,
        )  # fmt: skip
    bounded = bmc(
        explicit,
        symbolic,
        properties(symbolic, chosen),
        steps,
        time_limit=time_limit,
        on_depth=on_depth,
    )
    return ProveResult(
        cfg, "bmc", bounded.status, bounded.cleared, bounded.seconds, tuple(chosen),
        dict(bounded.violations), bounded,
    )  # fmt: skip


def properties(symbolic: Any, ids: str | Iterable[str] | None) -> list[Any]:
    """The invariants ``ids`` names as ``checker.symbolic.prove.Property``: each one's z3 form
    over ``symbolic`` (a ``KafkaSymbolic``), and its explicit check for the message."""
    from replcheck.checker.symbolic.prove import Property
    from replcheck.invariants.kafka.symbolic import Z3_INVARIANTS

    return [
        Property(inv.id, lambda s, f=Z3_INVARIANTS[inv.id]: f(symbolic, s), inv.check)
        for inv in invariants_of(symbolic.config, ids)
    ]


def strengthening(symbolic: Any, ids: str | Iterable[str] | None) -> list[Any]:
    """The model's lemmas ``ids`` names as ``checker.symbolic.prove.Lemma`` (None: every lemma;
    ``"none"``: none)."""
    from replcheck.checker.symbolic.prove import Lemma
    from replcheck.invariants.kafka.lemmas import LEMMAS

    known = {lem.id: lem for lem in LEMMAS}
    wanted = list(known) if ids is None else [ids] if isinstance(ids, str) else list(ids)
    if "none" in wanted:
        return []
    for lemma_id in wanted:
        if lemma_id not in known:
            raise InputError(f"lemma {lemma_id}: unknown lemma (known: {', '.join(known)})")
    return [
        Lemma(lem.id, lem.doc, lambda s, f=lem.holds: f(symbolic, s))
        for lem in (known[i] for i in wanted)
    ]


def walk(
    config: Any = None,
    *,
    walks: int = 10_000,
    depth: int = 100,
    seed: int = 0,
    swarm: bool = False,
    invariants: str | Iterable[str] | None = None,
    symmetry: bool | None = None,
    shrink: bool = True,
    spark: bool = False,
    master: str | None = None,
    partitions: int | None = None,
    spark_conf: Sequence[tuple[str, str]] = (),
    parquet: str | Path | None = None,
    progress: bool = False,
    on_start: Callable[[str, int, float], None] | None = None,
    **model_options: Any,
) -> WalkResult:
    """Seeded random walks, for bounds too large to exhaust.

    Walk ``i`` of ``seed`` is always the same walk, wherever it runs.  Each walk takes
    up to ``depth`` steps (chosen uniformly, or with ``swarm`` weights drawn per walk)
    and stops at its first violation; the shortest violating walk of each invariant is
    replayed and (with ``shrink``) shrunk.  By default the walks run in this process;
    with ``spark=True`` or a ``master`` (``"local[*]"``, the default on Spark, or a
    cluster's URL) they run as a Spark job: ``partitions`` tasks, ``spark_conf``
    settings, the per-walk rows written to ``parquet`` if given, ``progress`` lines on
    stderr, and ``on_start(master, partitions, startup_seconds)`` once Spark is up.
    Ctrl-C stops the walks and reports those done (``status == "interrupted"``).
    """
    cfg = model_config(config, model_options)
    chosen = invariants_of(cfg, invariants)
    count = positive_int(walks, "walks", optional=False)
    steps = positive_int(depth, "depth", optional=False)
    seed = whole_number(seed, "seed")
    tasks = positive_int(partitions, "partitions")
    for name, value in (("swarm", swarm), ("shrink", shrink), ("spark", spark)):
        if not isinstance(value, bool):
            raise InputError(f"{name}: expected True or False (got {value!r})")
    symmetric = _flag(symmetry, "symmetry")
    if symmetric is None:
        symmetric = build_model(cfg).default_symmetry
    if master is not None and (not isinstance(master, str) or not master.strip()):
        raise InputError("master: give a Spark master URL, e.g. local[*] or spark://host:7077")
    plan = _Walks(cfg, [inv.id for inv in chosen], count, steps, seed, swarm, symmetric, shrink)
    if master is None and not spark:
        if parquet is not None:
            raise InputError("parquet: the per-walk rows are a Spark table; give a master")
        return _walk_here(plan)
    return _walk_on_spark(plan, master, tasks, spark_conf, parquet, progress, on_start)


@dataclass(frozen=True)
class _Walks:
    """What to walk, checked: the same for walks here and on Spark."""

    config: AnyConfig
    invariants: list[str]
    walks: int
    depth: int
    seed: int
    swarm: bool
    symmetry: bool
    shrink: bool


def _counterexamples(
    cfg: AnyConfig, ids: list[str], shortest: dict[str, tuple], use_shrink: bool
) -> dict[str, Any]:
    """Each invariant's shortest violating walk, replayed (and shrunk), registry order."""
    from replcheck.checker.walks.walk import rebuild

    by_id = {inv.id: inv for inv in registry(cfg)}
    out = {}
    for inv_id in ids:
        if inv_id in shortest:
            walk_steps, walk_id, path, message = shortest[inv_id]
            out[inv_id] = rebuild(
                cfg, by_id[inv_id], walk_id, walk_steps, path, message, use_shrink
            )
    return out


def _as_violations(examples: dict[str, Any]) -> dict[str, Violation]:
    return {
        inv_id: Violation(inv_id, ex.message, [Step(a, s) for a, s in ex.steps])
        for inv_id, ex in examples.items()
    }


def _walk_here(plan: _Walks) -> WalkResult:
    """The walks in this process: the same walks Spark would run for this seed."""
    from replcheck.checker.explicit.bfs import interrupt_flag
    from replcheck.checker.walks.walk import Walker, summarize

    start = time.monotonic()
    walker = Walker(
        plan.config, plan.invariants, depth=plan.depth, swarm=plan.swarm, symmetry=plan.symmetry
    )
    done = []
    status = "complete"
    try:
        # Ctrl-C or SIGTERM ends the walks at the next walk's start (a walk takes
        # milliseconds); the walks done are reported.
        with interrupt_flag() as stopped:
            for walk_id in range(plan.walks):
                if stopped():
                    status = "interrupted"
                    break
                done.append(walker.walk(plan.seed, walk_id))
    except KeyboardInterrupt:  # not the main thread: Python's Ctrl-C
        status = "interrupted"
    summary = summarize(done, kinds=walker.kinds)
    examples = _counterexamples(plan.config, plan.invariants, summary.shortest, plan.shrink)
    return WalkResult(
        plan.config,
        status,
        summary.walks,
        plan.walks,
        summary.steps,
        plan.depth,
        time.monotonic() - start,
        summary.distinct_states,
        tuple(plan.invariants),
        _as_violations(examples),
        examples,
        summary,
    )


def _walk_on_spark(
    plan: _Walks,
    master: str | None,
    partitions: int | None,
    spark_conf: Sequence[tuple[str, str]],
    parquet: str | Path | None,
    progress: bool,
    on_start: Callable[[str, int, float], None] | None,
) -> WalkResult:
    """The walks as a Spark job.  Ctrl-C (or SIGTERM) while Spark starts raises
    KeyboardInterrupt (no walk ran); during the job it keeps the walks done."""
    from replcheck.checker.spark import session as spark_session
    from replcheck.checker.spark import walks as spark_walk

    with spark_session.sigterm_as_ctrl_c():
        started = time.monotonic()
        try:
            spark = spark_session.start_session(master, conf=spark_conf)
        except KeyboardInterrupt:  # start_session has ended the JVM it launched
            raise spark_session.StartInterrupted from None
        startup = time.monotonic() - started
        try:
            used = spark.sparkContext.master
            tasks = partitions or spark_walk.default_partitions(spark, plan.walks, plan.depth)
            tasks = min(tasks, plan.walks)
            job = spark_walk.WalkJob(
                plan.config,
                walks=plan.walks,
                depth=plan.depth,
                seed=plan.seed,
                partitions=tasks,
                swarm=plan.swarm,
                invariant_ids=plan.invariants,
                symmetry=plan.symmetry,
            )
            if on_start is not None:
                on_start(used, tasks, startup)
            walked = spark_walk.walk_job(spark, job, progress=progress)
            try:
                summary = spark_walk.aggregate(walked.df, job, walked.seconds)
                # Ctrl-C just as the last task finished cut nothing short: the run is complete.
                interrupted = walked.interrupted and summary.walks < plan.walks
                shortest = summary.shortest
                examples = _counterexamples(plan.config, plan.invariants, shortest, plan.shrink)
                if parquet is not None:
                    walked.df.write.mode("overwrite").parquet(str(parquet))
            finally:
                walked.close()
        finally:
            spark_session.close_session(spark)  # the JVM, its process group, the temporary folder
        return WalkResult(
            plan.config,
            "interrupted" if interrupted else "complete",
            summary.walks,
            plan.walks,
            summary.steps,
            plan.depth,
            time.monotonic() - started,
            summary.distinct_states_approx,
            tuple(plan.invariants),
            _as_violations(examples),
            examples,
            summary,
            master=used,
            partitions=summary.partitions,
            startup_seconds=startup,
        )
