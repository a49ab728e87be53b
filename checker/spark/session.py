"""One Spark session for replcheck's jobs: start-up, sharing, interrupts and clean-up.

Random walks (``checker.spark.walks``) run on the session this module starts.  It owns
what every Spark job of replcheck needs and none of them should repeat: finding Java,
starting the JVM in its own process group (so Ctrl-C during start-up leaves nothing
running), quiet logging, a temporary folder for Spark's scratch files, shipping the
package to a cluster's executors, sharing a session a notebook already runs, stopping
a job on Ctrl-C, and ending the JVM and removing the folder whatever happens.  pyspark
is imported lazily, so the rest of replcheck runs without pyspark or Java.
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
import warnings
import zipfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from replcheck.model.errors import ReplcheckError

APP_NAME = "replcheck"
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
    """Ctrl-C while Spark was starting (the JVM it launched is ended): no job ran."""


class SparkUnavailable(ReplcheckError):
    """pyspark or Java is missing, or Spark would not start: one line for the user."""


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
    """A SparkSession for replcheck's jobs, quiet, with executors able to import replcheck.

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
            _signal_group(proc, signal.SIGKILL)  # see interrupt

    def _check(self) -> None:
        if self.interrupted_at is not None:
            raise KeyboardInterrupt

    # -- main thread

    def interrupt(self, *_signal: object) -> None:
        """Ctrl-C: end the JVM now, with SIGKILL.  It has nothing to save yet, and SIGTERM
        ran Spark's shutdown hooks beside a SparkContext still being built, which logged
        an ERROR ("Error initializing SparkContext. Shutdown hooks cannot be modified
        during shutdown", seen in the test suite) after replcheck's one line.  Its
        scratch files are in the temporary folder start_session removes."""
        with self.lock:
            if self.interrupted_at is None:
                self.interrupted_at = time.monotonic()
            proc = self.proc
        if proc is not None:
            _signal_group(proc, signal.SIGKILL)

    def wait(self) -> None:
        while not self.done.wait(0.1):
            if self.interrupted_at is not None and time.monotonic() - self.interrupted_at > 20:
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
            _signal_group(startup.proc, signal.SIGKILL)  # see _Startup.interrupt
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


class JobFailed(ReplcheckError):
    """The Spark job failed (not cancelled): one line saying why."""


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
        if finished.wait(grace) if grace > 0 else finished.is_set():
            return  # the tasks stopped by themselves, or the caller stopped waiting
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


@contextlib.contextmanager
def sigterm_as_ctrl_c() -> Iterator[None]:
    """SIGTERM (``kill``, ``timeout``, a batch scheduler) does what Ctrl-C does at every
    moment of a Spark run (start-up, a job, between jobs): the JVM is ended, a job is
    cancelled and what was done is reported.  It calls whatever handles SIGINT now;
    where SIGINT is ignored (a background job) it raises KeyboardInterrupt, as Ctrl-C
    does where Python handles it.  Only in the main thread, and only while SIGTERM has
    its default handling."""
    if (
        threading.current_thread() is not threading.main_thread()
        or signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL
    ):
        yield
        return

    def on_sigterm(signum: int, frame: Any) -> None:
        handler = signal.getsignal(signal.SIGINT)
        if not callable(handler):
            raise KeyboardInterrupt
        handler(signal.SIGINT, frame)

    signal.signal(signal.SIGTERM, on_sigterm)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


def failure_line(exc: BaseException) -> str:
    """The most useful line of a Spark failure (the Python error behind it, if any)."""
    try:
        text = str(exc)
    except Exception:  # a Py4JJavaError asks the JVM for its text, which may be gone
        return type(exc).__name__
    found = re.findall(r"^(?:[\w.]+\.)?(\w+(?:Error|Exception): .+)$", text, re.M)
    python = [f for f in found if not f.startswith(("Py4JJavaError", "SparkException"))]
    if python:
        return python[-1].strip()
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[0] if lines else type(exc).__name__
