"""Random walks as a Spark job, and their aggregation with DataFrames.

The driver splits walk ids ``0..walks-1`` into ``partitions`` contiguous
ranges; each Spark task runs its range with :func:`checker.walks.walk.run_partition`
in its own Python worker and returns one compact row per walk (:func:`schema`).
The rows become a DataFrame that is cached once and then aggregated: totals,
violations per invariant with the shortest violating walk of each, action
coverage, and ``approx_count_distinct`` over the state fingerprints.  The job
runs either model (the Kafka model or the TLA+ spec): the schema's action-count
columns are the run's model's ``action_kinds()``.

The session itself (start-up, interrupts, clean-up) is ``checker.spark.session``'s;
both are imported lazily by ``replcheck walk``, so the rest of replcheck runs
without pyspark or Java.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, TextIO

from replcheck.checker.spark.session import (
    _EXIT_DIRS,
    JobFailed,
    cancel_on_interrupt,
    failure_line,
    is_local,
)
from replcheck.checker.walks.walk import END_DEADLOCK, END_DEPTH, END_VIOLATION, run_partition
from replcheck.model.interface import Action
from replcheck.model.registry import AnyConfig, build_model

ENDS = (END_VIOLATION, END_DEPTH, END_DEADLOCK)


def _spark_types():
    from pyspark.sql import types as T

    return T


def schema(kinds: Sequence[str]):
    """One row per walk, with one action-count column per kind of ``kinds`` (the run's
    model's).  ``path`` is set only for violating walks."""
    T = _spark_types()
    return T.StructType(
        [
            T.StructField("walk_id", T.LongType(), False),
            T.StructField("steps", T.IntegerType(), False),
            T.StructField("end", T.StringType(), False),
            T.StructField("invariant", T.StringType(), True),
            T.StructField("message", T.StringType(), True),
            T.StructField(
                "path",
                T.ArrayType(
                    T.StructType(
                        [
                            T.StructField("name", T.StringType(), False),
                            T.StructField("args", T.ArrayType(T.IntegerType(), False), False),
                        ]
                    ),
                    False,
                ),
                True,
            ),
            T.StructField(
                "action_counts",
                T.StructType([T.StructField(k, T.IntegerType(), False) for k in kinds]),
                False,
            ),
            T.StructField("fingerprints", T.ArrayType(T.LongType(), False), False),
        ]
    )


# ---------------------------------------------------------------------- job


@dataclass
class WalkJob:
    config: AnyConfig  # the Kafka model's Config or the TLA+ spec's SpecConfig
    walks: int
    depth: int
    seed: int
    partitions: int
    swarm: bool = False
    invariant_ids: Sequence[str] | None = None
    symmetry: bool | None = None  # None: the model's default_symmetry
    fingerprint_rate: int = 1

    @property
    def kinds(self) -> tuple[str, ...]:
        """The action kinds the walks count: the schema's action-count columns."""
        return tuple(build_model(self.config).action_kinds())


@dataclass
class SparkSummary:
    walks: int
    steps: int
    ends: dict[str, int]
    violations: dict[str, int]
    shortest: dict[str, tuple[int, int, list[Action], str]]  # inv -> (steps, walk, path, msg)
    action_counts: dict[str, int]
    distinct_states_approx: int
    job_seconds: float
    aggregate_seconds: float
    partitions: int
    extra: dict[str, Any] = field(default_factory=dict)

    def never_fired(self, kinds: Sequence[str] | None = None) -> list[str]:
        """The action kinds (of ``kinds``, default: every kind counted) no walk took."""
        chosen = self.action_counts if kinds is None else kinds
        return [k for k in chosen if not self.action_counts.get(k)]


STOP_PROPERTY = "replcheck.walk.stop"  # a Spark local property: see walk_job
STOP_GRACE = 5.0  # seconds the tasks get to stop by themselves before the job is cancelled


def _stopped(stop_file: str | None) -> bool:
    """In a Spark task: whether the driver has stopped the walk job (Ctrl-C)."""
    from pyspark import TaskContext

    if stop_file is not None and os.path.exists(stop_file):
        return True
    context = TaskContext.get()
    return context is not None and context.getLocalProperty(STOP_PROPERTY) is not None


def walk_dataframe(spark: Any, job: WalkJob, stop_file: str | None = None) -> Any:
    """The per-walk DataFrame (lazy: nothing runs until an action).

    ``stop_file`` (local masters: the executors share this machine): once it exists,
    a running task ends after its current walk and a task not started yet walks nothing.
    """
    config_dict = job.config.to_dict()
    ids = list(job.invariant_ids) if job.invariant_ids else None
    seed, walks, parts, depth = job.seed, job.walks, job.partitions, job.depth
    swarm, symmetry, rate = job.swarm, job.symmetry, job.fingerprint_rate

    def task(index: int, _rows):
        if _stopped(stop_file):  # after Ctrl-C: a partition not walked yet stays empty
            return iter(())
        return run_partition(
            config_dict,
            ids,
            seed=seed,
            walks=walks,
            partitions=parts,
            index=index,
            depth=depth,
            swarm=swarm,
            symmetry=symmetry,
            fingerprint_rate=rate,
            should_stop=None if stop_file is None else partial(os.path.exists, stop_file),
        )

    sc = spark.sparkContext
    sc.setJobDescription(f"replcheck walk: {walks:,} walks x depth {depth}")
    rdd = sc.parallelize(range(parts), parts).mapPartitionsWithIndex(task)
    return spark.createDataFrame(rdd, schema(job.kinds), verifySchema=False)


@dataclass
class WalkRun:
    """The walk job's rows (a cached DataFrame) and whether Ctrl-C stopped the job early.

    After Ctrl-C ``df`` holds exactly the walks that were finished: on a local master
    each running task ends after its current walk (a stop file) and keeps its rows;
    on a cluster the job is cancelled and the finished tasks' rows stay cached.  Any
    partition not walked then stays empty when a later action (the aggregation, the
    Parquet export) asks for it (the stop file, or :data:`STOP_PROPERTY`).
    """

    spark: Any
    df: Any
    stop_dir: str | None = None
    seconds: float = 0.0
    interrupted: bool = False

    def close(self) -> None:
        """Drop the cached rows and the stop marks (the session may be shared)."""
        with contextlib.suppress(Exception):
            self.df.unpersist()
        with contextlib.suppress(Exception):
            self.spark.sparkContext.setLocalProperty(STOP_PROPERTY, None)
        if self.stop_dir is not None:
            shutil.rmtree(self.stop_dir, ignore_errors=True)


JOB_PROPERTIES = ("spark.jobGroup.id", "spark.job.description", "spark.job.interruptOnCancel")
INTERRUPT_NOTICE = "replcheck: interrupted; stopping the walks, then reporting those done"


def walk_job(
    spark: Any,
    job: WalkJob,
    *,
    progress: bool = False,
    out: TextIO | None = None,
    cooperative: bool | None = None,
    notice: str = INTERRUPT_NOTICE,
) -> WalkRun:
    """Run the walks (the Spark job proper) into a cached DataFrame.

    Ctrl-C stops the job and returns the walks finished (``interrupted`` set; a second
    Ctrl-C raises KeyboardInterrupt); a failed job raises JobFailed.  ``progress``
    prints walks done every few seconds on ``out`` (stderr).  ``cooperative`` (default:
    on a local master) stops the tasks with a stop file rather than by cancelling them;
    ``notice`` is the line printed on Ctrl-C.
    """
    from pyspark import StorageLevel

    sc = spark.sparkContext
    if cooperative is None:
        cooperative = is_local(sc.master)
    stop_dir = tempfile.mkdtemp(prefix="replcheck-stop-") if cooperative else None
    if stop_dir is not None:
        _EXIT_DIRS.append(stop_dir)  # WalkRun.close removes it; this, if no one calls close
    stop_file = None if stop_dir is None else os.path.join(stop_dir, "stop")
    run = WalkRun(spark, None, stop_dir)
    try:
        run.df = walk_dataframe(spark, job, stop_file).persist(StorageLevel.MEMORY_AND_DISK)
        group = f"replcheck-walk-{uuid.uuid4().hex}"
        sc.setJobGroup(group, f"replcheck walk: {job.walks:,} walks x depth {job.depth}")
        reporter = ProgressReporter(spark, job.walks, job.partitions, group=group, out=out)

        def stop_walks() -> None:
            reporter.stop()
            if stop_file is not None:
                Path(stop_file).touch()

        start = time.monotonic()
        with (
            cancel_on_interrupt(
                spark,
                group,
                notice=notice,
                on_interrupt=stop_walks,
                grace=STOP_GRACE if stop_file is not None else 0.0,
            ) as interrupted,
            reporter if progress else contextlib.nullcontext(),
        ):
            try:
                run.df.count()  # everything after this reads the cache
            except Exception as exc:
                if not interrupted.is_set():
                    raise JobFailed(failure_line(exc)) from None
        run.interrupted = interrupted.is_set()
        run.seconds = time.monotonic() - start
    except BaseException:
        run.close()
        raise
    finally:
        for key in JOB_PROPERTIES:
            with contextlib.suppress(Exception):
                sc.setLocalProperty(key, None)
    if run.interrupted:
        sc.setLocalProperty(STOP_PROPERTY, "1")
    return run


def run_walks(spark: Any, job: WalkJob) -> tuple[Any, float]:
    """Run the walks into a cached DataFrame; returns it and the job's seconds.

    Ctrl-C cancels the job and raises KeyboardInterrupt; a failed job raises JobFailed.
    (``replcheck walk`` uses :func:`walk_job`, which keeps the walks done on Ctrl-C.)
    """
    notice = "replcheck: interrupted; cancelling the Spark job"
    run = walk_job(spark, job, cooperative=False, notice=notice)  # no WalkRun to close
    if run.interrupted:
        run.close()
        raise KeyboardInterrupt
    return run.df, run.seconds


def run_job(spark, job: WalkJob):
    """Run the walks once (cached) and aggregate them; returns (summary, cached DataFrame)."""
    df, job_seconds = run_walks(spark, job)
    return aggregate(df, job, job_seconds), df


def aggregate(df, job: WalkJob, job_seconds: float = 0.0) -> SparkSummary:
    """Totals, violations and the shortest violating walk per invariant, action coverage,
    approximate distinct states -- three small Spark jobs over the cached rows."""
    from pyspark.sql import functions as F

    start = time.monotonic()
    kinds = job.kinds
    totals = df.agg(
        F.count(F.lit(1)).alias("walks"),
        F.coalesce(F.sum("steps"), F.lit(0)).alias("steps"),
        *(F.count(F.when(F.col("end") == end, 1)).alias(f"end_{end}") for end in ENDS),
        *(F.coalesce(F.sum(F.col("action_counts")[k]), F.lit(0)).alias(f"n_{k}") for k in kinds),
    ).first()
    ends = {end: int(totals[f"end_{end}"]) for end in ENDS}
    violating = (
        df.where(F.col("invariant").isNotNull())
        .groupBy("invariant")
        .agg(
            F.count("*").alias("n"),
            # min over a struct orders by its fields: fewest steps, then lowest walk id
            F.min(F.struct("steps", "walk_id", "path", "message")).alias("best"),
        )
        .collect()
    )
    distinct = (
        df.select(F.explode("fingerprints").alias("fp"))
        .agg(F.approx_count_distinct("fp", rsd=0.02).alias("n"))
        .first()["n"]
    )
    aggregate_seconds = time.monotonic() - start

    shortest = {}
    for row in violating:
        best = row["best"]
        path = [Action(step["name"], tuple(step["args"])) for step in best["path"] or []]
        shortest[row["invariant"]] = (best["steps"], best["walk_id"], path, best["message"])
    return SparkSummary(
        walks=totals["walks"],
        steps=int(totals["steps"]),
        ends=ends,
        violations={row["invariant"]: row["n"] for row in violating},
        shortest=shortest,
        action_counts={k: int(totals[f"n_{k}"]) for k in kinds},
        distinct_states_approx=int((distinct or 0) * max(1, job.fingerprint_rate)),
        job_seconds=job_seconds,
        aggregate_seconds=aggregate_seconds,
        partitions=job.partitions,
    )


STEPS_PER_TASK = 200_000  # a few seconds of walking: small next to a task's cost, fine-grained


def default_partitions(spark, walks: int, depth: int) -> int:
    """At least four tasks per core (load balance, progress), more for long jobs so each
    task walks about STEPS_PER_TASK steps at most; never more tasks than walks."""
    cores = spark.sparkContext.defaultParallelism
    by_size = -(-walks * depth // STEPS_PER_TASK)
    return max(1, min(walks, max(4 * cores, by_size)))


class ProgressReporter:
    """Walk-job progress on stderr from Spark's status tracker, every few seconds.

    Spark's own console bar numbers stages and also shows the short aggregation
    stages, so replcheck prints walks instead: done (from finished tasks), running
    tasks, elapsed time.  The walk stage is the first stage of ``partitions`` tasks in
    the walk job's group (other jobs, even with as many tasks, are not counted).

    Running tasks come from the stage's active-task count, which the status store
    keeps from listener events; start-up sets ``spark.ui.liveUpdate.period=0`` so it
    is not stale (see SESSION_DEFAULTS).  Spark posts the start of the task that takes
    a freed slot before the end of the task that freed it, so for a few milliseconds
    a finished task still counts as active: the count is bounded by the slots (cores)
    and by the tasks not finished.
    """

    def __init__(
        self,
        spark: Any,
        walks: int,
        partitions: int,
        every: float = 3.0,
        out: TextIO | None = None,
        *,
        group: str | None = None,
        tracker: Any = None,
        slots: int | None = None,
    ):
        sc = spark.sparkContext if spark is not None else None
        self.tracker = tracker if tracker is not None else sc.statusTracker()
        if slots is None:
            slots = sc.defaultParallelism if sc is not None else 1
        self.slots = max(1, slots)
        self.walks, self.partitions, self.every = walks, partitions, every
        self.group = group
        self.out = out if out is not None else sys.stderr
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="replcheck-progress", daemon=True)
        self._start = time.monotonic()
        self._last: tuple[int, int] | None = None

    def __enter__(self) -> ProgressReporter:
        self._start = time.monotonic()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
        self._thread.join(timeout=self.every + 1)

    def stop(self) -> None:
        """No more lines (Ctrl-C: the job is being cancelled)."""
        self._stop.set()

    def _walk_stage(self) -> Any:
        tracker = self.tracker
        if self.group is None:
            stage_ids = list(tracker.getActiveStageIds())
        else:
            stage_ids = []
            for job_id in tracker.getJobIdsForGroup(self.group):
                info = tracker.getJobInfo(job_id)
                if info is not None:
                    stage_ids.extend(info.stageIds)
        for stage_id in sorted(set(stage_ids)):
            info = tracker.getStageInfo(stage_id)
            if info is not None and info.numTasks == self.partitions:
                return info
        return None

    def sample(self) -> tuple[int, int] | None:
        """(tasks done, tasks running) of the walk stage; None before it is known."""
        info = self._walk_stage()
        if info is None:
            return None
        done = min(info.numCompletedTasks, self.partitions)
        running = max(0, min(info.numActiveTasks, self.slots, self.partitions - done))
        return done, running

    def line(self, done: int, running: int, seconds: float) -> str:
        walks = self.walks * done // self.partitions
        return (
            f"walks: {walks:,} of {self.walks:,} done ({done}/{self.partitions} tasks, "
            f"{running} running), {seconds:,.0f} s"
        )

    def _run(self) -> None:
        while not self._stop.wait(self.every):
            try:
                sample = self.sample()
            except Exception:  # the session is going away (Ctrl-C, shutdown)
                return
            if self._stop.is_set() or sample is None or sample == self._last or sum(sample) == 0:
                continue
            self._last = sample
            print(self.line(*sample, time.monotonic() - self._start), file=self.out, flush=True)
