"""Random walks as a Spark job, and their aggregation with DataFrames.

The driver splits walk ids ``0..walks-1`` into ``partitions`` contiguous
ranges; each Spark task runs its range with :func:`checker.walk.run_partition`
in its own Python worker and returns one compact row per walk (:func:`schema`).
The rows become a DataFrame that is cached once and then aggregated: totals,
violations per invariant with the shortest violating walk of each, action
coverage, and ``approx_count_distinct`` over the state fingerprints.  The job
runs either model (the Kafka model or the TLA+ spec): the schema's action-count
columns are the run's model's ``action_kinds()``.

Everything Spark-specific lives here, imported lazily by ``replcheck walk``, so
the rest of replcheck runs without pyspark or Java.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib
import logging
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
import warnings
import zipfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, TextIO

from replcheck.checker.walk import END_DEADLOCK, END_DEPTH, END_VIOLATION, run_partition
from replcheck.model.errors import ReplcheckError
from replcheck.model.interface import Action
from replcheck.model.registry import AnyConfig, build_model

APP_NAME = "replcheck-walk"
ENDS = (END_VIOLATION, END_DEPTH, END_DEADLOCK)
DEFAULT_MASTER = "local[*]"
# What executors must import: the package and its parts (each its own folder).
PACKAGES = (
    "replcheck",
    "replcheck.model",
    "replcheck.invariants",
    "replcheck.traces",
    "replcheck.checker",
)

# Quiet Spark: WARN and above, minus warnings every normal run prints.
LOG4J2 = """\
rootLogger.level = warn
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{HH:mm:ss} %p %c{1}: %m%n%notEmpty{  %ex{short.message}%n}
appender.console.layout.alwaysWriteExceptions = false
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


class StartInterrupted(KeyboardInterrupt):
    """Ctrl-C while Spark was starting (the JVM it launched is ended): no walk ran."""


class SparkUnavailable(ReplcheckError):
    """pyspark or Java is missing, or Spark would not start: one line for the user."""


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


def active_session() -> Any:
    """The SparkSession already running in this process (a notebook, a test), or None.

    Judged by the SparkContext, not by the JVM's per-thread active session: a session
    started in another thread must be shared too (one SparkContext per process).
    """
    try:
        from pyspark import SparkContext
        from pyspark.sql import SparkSession
    except ImportError:
        return None
    if SparkContext._active_spark_context is None:
        return None
    return SparkSession.builder.getOrCreate()


@dataclass
class _Owned:
    """What start_session set up for one session, so that close_session can undo all of it."""

    temp_dir: str | None  # log4j config, Spark's scratch folders, the package zip
    stop: bool  # False for a shared session (a notebook's, a test's): leave it running
    proc: subprocess.Popen | None = None  # the JVM launched here, leader of its own group
    gateway: Any = None  # its Py4J gateway
    users: int = 1  # start_session calls not yet matched by close_session


_OWNED: dict[int, tuple[Any, _Owned]] = {}  # id(session) -> (session, what to undo)
_OWNED_LOCK = threading.Lock()
_EXIT_DIRS: list[str] = []  # removed when Python exits (a shared session's zip, stop files)


def start_session(
    master: str | None,
    *,
    conf: Sequence[tuple[str, str]] = (),
) -> Any:
    """A SparkSession for the walk job, quiet, with executors able to import replcheck.

    ``master`` None means spark-submit's master when run under spark-submit, else
    ``local[*]``.  Raises SparkUnavailable with a one-line reason, and KeyboardInterrupt
    on Ctrl-C during start-up -- after killing the JVM it had launched, so nothing is
    left running.  Hand the session to :func:`close_session` when done (or let the
    interpreter exit: an exit hook closes what is still open).
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
    local = master is not None and is_local(master)
    if local:
        # Executors must run this interpreter (a venv's replcheck would otherwise
        # start workers on whatever python3 is on PATH); bind to loopback.
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    _quiet_py4j()

    existing = active_session()
    if existing is not None:
        return _share(existing, conf)
    temp_dir = tempfile.mkdtemp(prefix="replcheck-spark-")
    try:
        options = _options(master, conf, temp_dir, local)
        if submitted:  # spark-submit owns the JVM: connect to it here, stop the session after
            builder = SparkSession.builder
            for key, value in options.items():
                builder = builder.config(key, value)
            try:
                spark = builder.getOrCreate()
                _prepare(spark, temp_dir)
            except Exception as exc:
                raise SparkUnavailable(f"Spark did not start: {_first_line(exc)}") from None
            _register(spark, _Owned(temp_dir, stop=True))
            return spark
        return _launch(options, temp_dir)
    except BaseException:
        shutil.rmtree(temp_dir, ignore_errors=True)
        raise


def close_session(spark: Any) -> None:
    """Undo what start_session did: stop the session it started, end its JVM (and
    everything in the JVM's process group), remove its temporary folder.  A shared
    session is left running.  Never raises: the JVM may already be gone after Ctrl-C."""
    with _OWNED_LOCK:
        entry = _OWNED.get(id(spark))
        if entry is None or entry[0] is not spark:
            return
        entry[1].users -= 1
        if entry[1].users > 0:  # shared with a caller that has not closed it yet
            return
        del _OWNED[id(spark)]
    with _shielded():
        _close(*entry)


@atexit.register
def _close_all() -> None:
    """Whatever is still open when Python exits (Ctrl-C in an unlucky spot, a script
    that never called close_session): no JVM and no temporary folder outlives us."""
    with _OWNED_LOCK:
        entries = list(_OWNED.values())
        _OWNED.clear()
    with _shielded():
        for entry in entries:
            _close(*entry)
        for folder in _EXIT_DIRS:
            shutil.rmtree(folder, ignore_errors=True)


@contextlib.contextmanager
def _shielded() -> Iterator[None]:
    """Clean-up is not cut short by another Ctrl-C (it is bounded: at most ~20 s when
    the JVM will not exit), or a JVM and its folder would outlive the run after all."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, lambda *_: None)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _register(spark, owned: _Owned) -> None:
    with _OWNED_LOCK:
        entry = _OWNED.get(id(spark))
        if entry is not None and entry[0] is spark:
            entry[1].users += 1  # started here before: the first caller's cleanup stands
        else:
            _OWNED[id(spark)] = (spark, owned)


def _share(spark, conf: Sequence[tuple[str, str]]):
    """Use a session that is already running: SQL settings apply, the rest need a new JVM."""
    from pyspark.sql import SparkSession

    builder = SparkSession.builder
    for key, value in [*SESSION_DEFAULTS.items(), *conf]:
        if key.startswith("spark.sql."):
            builder = builder.config(key, value)
    spark = builder.getOrCreate()
    if not is_local(spark.sparkContext.master):
        folder = tempfile.mkdtemp(prefix="replcheck-spark-")
        _EXIT_DIRS.append(folder)  # executors may fetch the zip for as long as the session runs
        spark.sparkContext.addPyFile(_package_zip(folder))
    _register(spark, _Owned(None, stop=False))
    return spark


SESSION_DEFAULTS = {
    "spark.ui.showConsoleProgress": "false",  # see ProgressReporter
    "spark.ui.enabled": "false",
    # The status store behind ProgressReporter otherwise writes a stage's counts at most
    # every 100 ms: a task start written and the end just before it not, and the stage
    # shows one task too many running until the next write (seconds, with long tasks).
    "spark.ui.liveUpdate.period": "0",
    "spark.sql.shuffle.partitions": "1",  # the aggregates are a few rows
    "spark.sql.debug.maxToStringFields": "100",
    "spark.python.worker.reuse": "true",
}


def _options(
    master: str | None, conf: Sequence[tuple[str, str]], temp_dir: str, local: bool
) -> dict[str, str]:
    """The session's settings: replcheck's defaults, then the user's --spark-conf."""
    log_conf = os.path.join(temp_dir, "log4j2.properties")
    Path(log_conf).write_text(LOG4J2, encoding="utf-8")
    options = {"spark.app.name": APP_NAME}
    if master is not None:
        options["spark.master"] = master
    java_options = [f"-Dlog4j2.configurationFile={log_conf}"]
    if local:
        # The JVM's temporary files and Spark's scratch (block manager, shuffle, spilled
        # cache: spark.local.dir defaults to java.io.tmpdir) go under temp_dir, so removing
        # it leaves nothing behind, even after a killed JVM.
        scratch = os.path.join(temp_dir, "scratch")
        os.mkdir(scratch)
        java_options.append(f"-Djava.io.tmpdir={scratch}")
    java_key = "spark.driver.extraJavaOptions"
    options[java_key] = " ".join(
        f'"{o}"' if any(c.isspace() for c in o) else o for o in java_options
    )
    options.update(SESSION_DEFAULTS)
    mine = options[java_key]
    options.update(conf)
    if options[java_key] != mine:  # the user's JVM options come after replcheck's
        options[java_key] = f"{mine} {options[java_key]}"
    return options


def _prepare(spark, temp_dir: str) -> None:
    spark.sparkContext.setLogLevel("WARN")
    if not is_local(spark.sparkContext.master):
        spark.sparkContext.addPyFile(_package_zip(temp_dir))


def _first_line(exc: BaseException) -> str:
    """Why Spark did not start, in one line: the Java exception behind a Py4J error."""
    try:
        text = str(exc)
    except Exception:  # a Py4J error whose JVM is gone
        return type(exc).__name__
    for line in text.splitlines():
        found = re.match(r"(?::\s*)?(?:[\w$]+\.)+(\w+(?:Error|Exception)): (.+)", line.strip())
        if found:
            return f"{found.group(1)}: {found.group(2).strip()}"
    return failure_line(exc)


class _Startup:
    """Starts the JVM and the session in a helper thread, so that Ctrl-C stays with the
    main thread: it kills the JVM's process group at once (the JVM ignores SIGINT, and
    Py4J would otherwise be interrupted mid-call) and then waits for the helper to fail.

    pyspark launches the JVM with ``spark-submit`` (a Popen inside
    ``pyspark.java_gateway.launch_gateway``); replcheck wraps that Popen to learn the
    process as soon as it exists and starts it in a new session, so that its whole group
    (launcher JVM, gateway JVM, Python workers) can be signalled.  A Ctrl-C before the
    gateway answered used to leave a JVM behind for good: pyspark removes the folder the
    JVM reports its port in, the JVM's main thread dies on that, and its Py4J server
    thread keeps it alive with no one to stop it.
    """

    def __init__(self, options: dict[str, str], temp_dir: str):
        self.options, self.temp_dir = options, temp_dir
        self.lock = threading.Lock()
        self.done = threading.Event()
        self.proc: subprocess.Popen | None = None
        self.gateway: Any = None
        self.spark: Any = None
        self.error: BaseException | None = None
        self.error_line = ""
        self.interrupted_at: float | None = None
        self.hard = False

    # -- helper thread

    def run(self) -> None:
        try:
            self._start()
        except BaseException as exc:  # reported by the main thread
            self.error = exc
            self.error_line = _first_line(exc)  # now: a Py4J error asks the JVM for its text
        finally:
            self.done.set()

    def _start(self) -> None:
        from pyspark import SparkConf, SparkContext, java_gateway
        from pyspark.sql import SparkSession

        conf = SparkConf()
        for key, value in self.options.items():
            conf.set(key, value)
        original = java_gateway.Popen

        def popen(*args: Any, **kwargs: Any) -> subprocess.Popen:
            proc = original(*args, **kwargs)
            self._adopt(proc)
            return proc

        java_gateway.Popen = popen
        try:
            gateway = java_gateway.launch_gateway(conf, popen_kwargs={"start_new_session": True})
        finally:
            java_gateway.Popen = original
        self.gateway = gateway
        if self.proc is None and getattr(gateway, "proc", None) is not None:
            self._adopt(gateway.proc)
        self._check()
        SparkContext(conf=conf, gateway=gateway)
        self._check()
        builder = SparkSession.builder
        for key, value in self.options.items():
            builder = builder.config(key, value)
        self.spark = builder.getOrCreate()
        self._check()
        _prepare(self.spark, self.temp_dir)

    def _adopt(self, proc: subprocess.Popen) -> None:
        with self.lock:
            self.proc = proc
            interrupted = self.interrupted_at is not None
        if interrupted:
            _signal_group(proc, signal.SIGTERM)

    def _check(self) -> None:
        if self.interrupted_at is not None:
            raise KeyboardInterrupt

    # -- main thread

    def interrupt(self, *_signal: object) -> None:
        """Ctrl-C: end the JVM now (SIGTERM: its shutdown hooks run; again: SIGKILL)."""
        with self.lock:
            self.hard = self.interrupted_at is not None
            if self.interrupted_at is None:
                self.interrupted_at = time.monotonic()
            proc = self.proc
        if proc is not None:
            _signal_group(proc, signal.SIGKILL if self.hard else signal.SIGTERM)

    def wait(self) -> None:
        while not self.done.wait(0.1):
            if self.interrupted_at is None:
                continue
            waited = time.monotonic() - self.interrupted_at
            if waited > 10 and not self.hard:
                self.interrupt()
            if waited > 20:
                return  # the helper is stuck; _close ends what it started


def _launch(options: dict[str, str], temp_dir: str):
    """Start a JVM and a session on it; Ctrl-C or a failure leaves nothing running."""
    startup = _Startup(options, temp_dir)
    helper = threading.Thread(target=startup.run, name="replcheck-spark-start", daemon=True)
    in_main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGINT, startup.interrupt) if in_main else None
    try:
        helper.start()
        startup.wait()
        ok = startup.interrupted_at is None and startup.error is None
        if ok and startup.spark is not None:
            owned = _Owned(temp_dir, stop=True, proc=startup.proc, gateway=startup.gateway)
            _register(startup.spark, owned)  # before Ctrl-C can strike outside this handler
            return startup.spark
    finally:
        if in_main:
            signal.signal(signal.SIGINT, previous)
    # temp_dir is left to start_session, which removes it once the JVM here has ended.
    with _shielded():
        if startup.interrupted_at is not None and startup.spark is None and startup.proc:
            # Ctrl-C mid-start: the JVM has nothing to save, and a graceful exit would run
            # Spark's shutdown hooks under a half-built SparkContext, which logs an ERROR
            # ("Error initializing SparkContext") after replcheck's one line.
            _signal_group(startup.proc, signal.SIGKILL)
        _close(startup.spark, _Owned(None, stop=True, proc=startup.proc, gateway=startup.gateway))
    if startup.interrupted_at is not None:
        raise KeyboardInterrupt
    raise SparkUnavailable(f"Spark did not start: {startup.error_line or 'no reason given'}")


def _close(spark, owned: _Owned) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pyspark warns when the JVM is already gone
        if spark is not None and owned.stop:
            with contextlib.suppress(Exception):
                # After Ctrl-C a job may still run in the JVM: stopping under it logs errors.
                spark.sparkContext.setLogLevel("OFF")
                spark.sparkContext.cancelAllJobs()
            with contextlib.suppress(Exception):
                spark.stop()
        if owned.gateway is not None:
            with contextlib.suppress(Exception):
                owned.gateway.shutdown()
            _forget_gateway(owned.gateway)
    if owned.proc is not None:
        _end_process_group(owned.proc)
    if owned.temp_dir:
        shutil.rmtree(owned.temp_dir, ignore_errors=True)


def _forget_gateway(gateway: Any) -> None:
    """pyspark keeps the gateway in class attributes: clear them, so that a later session
    in this process launches a new JVM instead of talking to a dead one."""
    from pyspark import SparkContext
    from pyspark.sql import SparkSession, SQLContext

    with SparkContext._lock:
        if SparkContext._gateway is gateway:
            SparkContext._gateway = None
            SparkContext._jvm = None
            SparkContext._active_spark_context = None
            SparkSession._instantiatedSession = None
            SparkSession._activeSession = None
            SQLContext._instantiatedContext = None


def _signal_group(proc: subprocess.Popen, sig: int) -> None:
    """Signal the JVM's whole process group; never once the leader is reaped (its id
    could belong to someone else by then)."""
    if proc.returncode is not None:
        return
    with contextlib.suppress(ProcessLookupError, PermissionError):
        if hasattr(os, "killpg"):
            os.killpg(proc.pid, sig)
        else:  # pragma: no cover - Windows
            proc.kill()


def _exited(proc: subprocess.Popen, timeout: float) -> bool:
    """Wait until the process has exited, without reaping it (so its group stays ours)."""
    deadline = time.monotonic() + timeout
    while True:
        if proc.returncode is not None:
            return True
        if not hasattr(os, "waitid"):  # pragma: no cover - Windows
            try:
                proc.wait(timeout)
                return True
            except subprocess.TimeoutExpired:
                return False
        try:
            if os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
                return True
        except ChildProcessError:
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.05)


def _end_process_group(proc: subprocess.Popen) -> None:
    """End the JVM: EOF on its stdin (it exits by itself), then SIGTERM, then SIGKILL;
    then SIGKILL whatever it left in its process group (Python workers)."""
    with contextlib.suppress(Exception):
        if proc.stdin is not None:
            proc.stdin.close()
    if not _exited(proc, 10.0):
        _signal_group(proc, signal.SIGTERM)
        if not _exited(proc, 5.0):
            _signal_group(proc, signal.SIGKILL)
            _exited(proc, 5.0)
    _signal_group(proc, signal.SIGKILL)
    with contextlib.suppress(Exception):
        proc.wait(timeout=5)


class _Py4JNoise(logging.Filter):
    """Py4J logs a traceback when the JVM goes away mid-call (Ctrl-C, a killed JVM); the
    call itself fails too, and replcheck reports that in one line."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.name.startswith("py4j") or "py4j" in Path(record.pathname).parts)


_NOISE = _Py4JNoise()


def _quiet_py4j() -> None:
    root = logging.getLogger()
    if _NOISE not in root.filters:
        root.addFilter(_NOISE)  # py4j.java_gateway logs to the root logger itself
        logging.getLogger("py4j").setLevel(logging.CRITICAL + 1)


def _package_zip(folder: str) -> str:
    """The replcheck package as one zip for executors that do not have it installed.

    Each part of the package is taken from where it was imported (in a source checkout
    its own folder, see pyproject.toml), and written where the package layout puts it.
    """
    path = os.path.join(folder, "replcheck_packages.zip")
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for package in PACKAGES:
            source_dir = Path(importlib.import_module(package).__file__).parent
            # The top package's own modules only: its parts are zipped by name below.
            sources = (
                source_dir.glob("*.py") if package == "replcheck" else source_dir.rglob("*.py")
            )
            target = package.replace(".", "/")
            for source in sorted(sources):
                zf.write(source, f"{target}/{source.relative_to(source_dir).as_posix()}")
    return path


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


class JobFailed(ReplcheckError):
    """The Spark job failed (not cancelled): one line saying why."""


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


@contextlib.contextmanager
def cancel_on_interrupt(
    spark: Any,
    group: str | None = None,
    *,
    notice: str | None = None,
    on_interrupt: Callable[[], None] | None = None,
    grace: float = 0.0,
) -> Iterator[threading.Event]:
    """While the driver waits for a job, Ctrl-C stops it: ``on_interrupt`` runs (it may
    ask the tasks to stop by themselves), and after ``grace`` seconds, if the job is
    still running, another thread cancels it (``group``, or every job).

    PySpark's own handler cancels from inside the interrupted Py4J call, which
    re-enters the gateway connection and prints tracebacks; here the main thread
    keeps waiting until the job returns, with the event set.  Cancelling kills running
    tasks, and a killed local Python worker prints a BrokenPipeError traceback: hence
    the grace.  A second Ctrl-C raises KeyboardInterrupt.
    """
    interrupted = threading.Event()
    if threading.current_thread() is not threading.main_thread():
        yield interrupted
        return
    sc = spark.sparkContext
    finished = threading.Event()

    def cancel() -> None:
        if grace > 0 and finished.wait(grace):
            return  # the tasks stopped by themselves
        with contextlib.suppress(Exception):
            sc.setLogLevel("OFF")  # killed tasks and workers are expected now
            if group is None:
                sc.cancelAllJobs()
            else:
                sc.cancelJobGroup(group)

    def on_sigint(signum, frame) -> None:
        if interrupted.is_set():
            raise KeyboardInterrupt  # a second Ctrl-C: stop waiting
        interrupted.set()
        message = notice or "replcheck: interrupted; cancelling the Spark job"
        print(message, file=sys.stderr, flush=True)
        if on_interrupt is not None:
            on_interrupt()
        threading.Thread(target=cancel, name="replcheck-cancel", daemon=True).start()

    previous = signal.signal(signal.SIGINT, on_sigint)
    try:
        yield interrupted
    finally:
        finished.set()
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
