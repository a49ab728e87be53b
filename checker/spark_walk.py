"""Random walks as a Spark job, and their aggregation with DataFrames.

The driver splits walk ids ``0..walks-1`` into ``partitions`` contiguous
ranges; each Spark task runs its range with :func:`checker.walk.run_partition`
in its own Python worker and returns one compact row per walk (:data:`SCHEMA`).
The rows become a DataFrame that is cached once and then aggregated: totals,
violations per invariant with the shortest violating walk of each, action
coverage, and ``approx_count_distinct`` over the state fingerprints.

Everything Spark-specific lives here, imported lazily by ``replcheck walk``, so
the rest of replcheck runs without pyspark or Java.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import sys
import tempfile
import threading
import time
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from checker.walk import END_DEADLOCK, END_DEPTH, END_VIOLATION, KINDS, run_partition
from model.config import Config
from model.interface import Action

APP_NAME = "replcheck-walk"
ENDS = (END_VIOLATION, END_DEPTH, END_DEADLOCK)
DEFAULT_MASTER = "local[*]"
PACKAGES = ("model", "invariants", "checker", "traces")  # what executors must import

# Quiet Spark: WARN and above, minus warnings every normal run prints.
LOG4J2 = """\
rootLogger.level = warn
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{HH:mm:ss} %p %c{1}: %m%n%ex{short}
logger.native.name = org.apache.hadoop.util.NativeCodeLoader
logger.native.level = error
logger.utils.name = org.apache.spark.util.Utils
logger.utils.level = error
logger.shutdown.name = org.apache.spark.util.ShutdownHookManager
logger.shutdown.level = error
logger.blockmanager.name = org.apache.spark.storage.BlockManager
logger.blockmanager.level = error
logger.taskset.name = org.apache.spark.scheduler.TaskSetManager
logger.taskset.level = error
logger.pythonrunner.name = org.apache.spark.api.python.PythonRunner
logger.pythonrunner.level = error
logger.stringutils.name = org.apache.spark.util.SparkStringUtils
logger.stringutils.level = error
"""


class SparkUnavailable(Exception):
    """pyspark or Java is missing, or Spark would not start: one line for the user."""


def _spark_types():
    from pyspark.sql import types as T

    return T


def schema():
    """One row per walk.  ``path`` is set only for violating walks."""
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
                T.StructType([T.StructField(k, T.IntegerType(), False) for k in KINDS]),
                False,
            ),
            T.StructField("fingerprints", T.ArrayType(T.LongType(), False), False),
        ]
    )


# ------------------------------------------------------------------ session


def find_java() -> str | None:
    home = os.environ.get("JAVA_HOME")
    if home:
        candidate = os.path.join(home, "bin", "java")
        return candidate if os.access(candidate, os.X_OK) else None
    return shutil.which("java")


def is_local(master: str) -> bool:
    return master == "local" or master.startswith("local[") or master.startswith("local-")


def under_spark_submit() -> bool:
    """True when spark-submit started this Python driver (it passes its gateway port)."""
    return "PYSPARK_GATEWAY_PORT" in os.environ


def active_session():
    """The SparkSession already running in this process (a notebook, a test), or None."""
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        return None
    return SparkSession.getActiveSession()


def start_session(
    master: str | None,
    *,
    conf: Sequence[tuple[str, str]] = (),
):
    """A SparkSession for the walk job, quiet, with executors able to import replcheck.

    ``master`` None means spark-submit's master when run under spark-submit, else
    ``local[*]``.  Raises SparkUnavailable with a one-line reason.
    """
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        raise SparkUnavailable(
            "pyspark is not installed (pip install pyspark; it needs Java 17 or later)"
        ) from None
    submitted = under_spark_submit()
    if not submitted and find_java() is None:
        where = "JAVA_HOME/bin/java" if os.environ.get("JAVA_HOME") else "java on PATH"
        raise SparkUnavailable(
            f"Spark needs Java 17 or later and found no {where} (install a JDK, or set JAVA_HOME)"
        )
    if master is None and not submitted:
        master = DEFAULT_MASTER
    if master is not None and is_local(master):
        # Executors must run this interpreter (a venv's replcheck would otherwise
        # start workers on whatever python3 is on PATH); bind to loopback.
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")

    log_dir = tempfile.mkdtemp(prefix="replcheck-spark-")
    log_conf = os.path.join(log_dir, "log4j2.properties")
    Path(log_conf).write_text(LOG4J2, encoding="utf-8")
    builder = SparkSession.builder.appName(APP_NAME)
    if master is not None:
        builder = builder.master(master)
    builder = (
        builder.config("spark.driver.extraJavaOptions", f"-Dlog4j2.configurationFile={log_conf}")
        .config("spark.ui.showConsoleProgress", "false")  # see ProgressReporter
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "1")  # the aggregates are a few rows
        .config("spark.sql.debug.maxToStringFields", "100")
        .config("spark.python.worker.reuse", "true")
    )
    for key, value in conf:
        builder = builder.config(key, value)
    try:
        spark = builder.getOrCreate()
    except Exception as exc:  # the JVM did not start or the master is unreachable
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise SparkUnavailable(f"Spark did not start: {first}") from None
    spark.sparkContext.setLogLevel("WARN")
    if not is_local(spark.sparkContext.master):
        spark.sparkContext.addPyFile(_package_zip(log_dir))
    return spark


def _package_zip(folder: str) -> str:
    """replcheck's packages as one zip for executors that do not have it installed."""
    root = Path(__file__).resolve().parent.parent
    path = os.path.join(folder, "replcheck_packages.zip")
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for package in PACKAGES:
            for source in sorted((root / package).rglob("*.py")):
                zf.write(source, source.relative_to(root).as_posix())
    return path


# ---------------------------------------------------------------------- job


@dataclass
class WalkJob:
    config: Config
    walks: int
    depth: int
    seed: int
    partitions: int
    swarm: bool = False
    invariant_ids: Sequence[str] | None = None
    symmetry: bool = True
    fingerprint_rate: int = 1


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

    @property
    def never_fired(self) -> list[str]:
        return [k for k in KINDS if not self.action_counts.get(k)]


def walk_dataframe(spark, job: WalkJob):
    """The per-walk DataFrame (lazy: nothing runs until an action)."""
    config_dict = job.config.to_dict()
    ids = list(job.invariant_ids) if job.invariant_ids else None
    seed, walks, parts, depth = job.seed, job.walks, job.partitions, job.depth
    swarm, symmetry, rate = job.swarm, job.symmetry, job.fingerprint_rate

    def task(index: int, _rows):
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
        )

    sc = spark.sparkContext
    sc.setJobDescription(f"replcheck walk: {walks:,} walks x depth {depth}")
    rdd = sc.parallelize(range(parts), parts).mapPartitionsWithIndex(task)
    return spark.createDataFrame(rdd, schema(), verifySchema=False)


class JobFailed(Exception):
    """The Spark job failed (not cancelled): one line saying why."""


def run_walks(spark, job: WalkJob):
    """Run the walks (the Spark job proper) into a cached DataFrame; returns it and seconds.

    Ctrl-C cancels the job and raises KeyboardInterrupt; a failed job raises JobFailed.
    """
    from pyspark import StorageLevel

    df = walk_dataframe(spark, job).persist(StorageLevel.MEMORY_AND_DISK)
    start = time.monotonic()
    with cancel_on_interrupt(spark) as interrupted:
        try:
            df.count()  # everything after this reads the cache
        except Exception as exc:
            if interrupted.is_set():
                raise KeyboardInterrupt from None
            raise JobFailed(failure_line(exc)) from None
    if interrupted.is_set():
        raise KeyboardInterrupt
    return df, time.monotonic() - start


@contextlib.contextmanager
def cancel_on_interrupt(spark):
    """While the driver waits for a job, Ctrl-C cancels Spark's jobs from another thread.

    PySpark's own handler cancels from inside the interrupted Py4J call, which
    re-enters the gateway connection and prints tracebacks; here the main thread
    keeps waiting until the cancelled job returns, then raises KeyboardInterrupt.
    """
    interrupted = threading.Event()
    if threading.current_thread() is not threading.main_thread():
        yield interrupted
        return
    sc = spark.sparkContext

    def cancel() -> None:
        with contextlib.suppress(Exception):
            sc.setLogLevel("OFF")  # killed tasks and workers are expected now
            sc.cancelAllJobs()

    def on_sigint(signum, frame) -> None:
        if interrupted.is_set():
            raise KeyboardInterrupt  # a second Ctrl-C: stop waiting
        interrupted.set()
        print("replcheck: cancelling the Spark job...", file=sys.stderr, flush=True)
        threading.Thread(target=cancel, name="replcheck-cancel", daemon=True).start()

    previous = signal.signal(signal.SIGINT, on_sigint)
    try:
        yield interrupted
    finally:
        signal.signal(signal.SIGINT, previous)


def failure_line(exc: BaseException) -> str:
    """The most useful line of a Spark failure (the Python error behind it, if any)."""
    text = str(exc)
    found = re.findall(r"^(?:[\w.]+\.)?(\w+(?:Error|Exception): .+)$", text, re.M)
    python = [f for f in found if not f.startswith(("Py4JJavaError", "SparkException"))]
    if python:
        return python[-1].strip()
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[0] if lines else type(exc).__name__


def run_job(spark, job: WalkJob):
    """Run the walks once (cached) and aggregate them; returns (summary, cached DataFrame)."""
    df, job_seconds = run_walks(spark, job)
    return aggregate(df, job, job_seconds), df


def aggregate(df, job: WalkJob, job_seconds: float = 0.0) -> SparkSummary:
    """Totals, violations and the shortest violating walk per invariant, action coverage,
    approximate distinct states -- three small Spark jobs over the cached rows."""
    from pyspark.sql import functions as F

    start = time.monotonic()
    totals = df.agg(
        F.count(F.lit(1)).alias("walks"),
        F.coalesce(F.sum("steps"), F.lit(0)).alias("steps"),
        *(F.count(F.when(F.col("end") == end, 1)).alias(f"end_{end}") for end in ENDS),
        *(F.coalesce(F.sum(f"action_counts.{k}"), F.lit(0)).alias(k) for k in KINDS),
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
        action_counts={k: int(totals[k]) for k in KINDS},
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
    tasks, elapsed time.
    """

    def __init__(self, spark, walks: int, partitions: int, every: float = 3.0, out=None):
        self.sc = spark.sparkContext
        self.walks, self.partitions, self.every = walks, partitions, every
        self.out = out if out is not None else sys.stderr
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="replcheck-progress", daemon=True)
        self._start = time.monotonic()
        self._last: tuple[int, int] | None = None

    def __enter__(self) -> ProgressReporter:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=self.every + 1)

    def _run(self) -> None:
        while not self._stop.wait(self.every):
            try:
                tracker = self.sc.statusTracker()
                done = running = 0
                for stage_id in tracker.getActiveStageIds():
                    info = tracker.getStageInfo(stage_id)
                    if info is not None and info.numTasks == self.partitions:
                        done += info.numCompletedTasks
                        running += info.numActiveTasks
            except Exception:  # the session is going away (Ctrl-C, shutdown)
                return
            if self._stop.is_set() or (done, running) == self._last or done + running == 0:
                continue
            self._last = (done, running)
            seconds = time.monotonic() - self._start
            walks = self.walks * done // self.partitions
            print(
                f"walks: {walks:,} of {self.walks:,} done ({done}/{self.partitions} tasks, "
                f"{running} running), {seconds:,.0f} s",
                file=self.out,
                flush=True,
            )
