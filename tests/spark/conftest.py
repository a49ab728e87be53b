"""Spark test helpers: one shared local[2] session for the in-process tests, and
``replcheck walk`` run as a real process, with what it leaves behind.

Starting Spark costs seconds, so the tests that need the shared session are marked
slow; the default run keeps one end-to-end smoke test of the command.  The Spark
tests are skipped, not failed, where pyspark or Java is missing.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from replcheck.checker.spark import session as spark_session
from tests.conftest import sigint_default, sigint_ignored

HAVE_PROC = os.path.isdir("/proc")
MARKER = "REPLCHECK_TEST_RUN"  # an environment variable every process of a run inherits


def require_spark() -> None:
    pytest.importorskip("pyspark")
    if spark_session.find_java() is None:
        pytest.skip("no Java: Spark needs Java 17 or later")


@pytest.fixture(scope="session")
def spark():
    require_spark()
    session = spark_session.start_session("local[2]")
    yield session
    spark_session.close_session(session)


def marked_processes(marker: str) -> list[str]:
    """Live processes whose environment holds ``MARKER=marker``: the run's Python, its
    spark-submit, JVMs and Python workers (zombies have an empty environment)."""
    needle = f"{MARKER}={marker}".encode()
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as fh:
                if needle not in fh.read().split(b"\0"):
                    continue
            with open(f"/proc/{entry}/cmdline", "rb") as fh:
                command = fh.read().replace(b"\0", b" ").decode(errors="replace")
            found.append(f"{entry}: {command[:160]}")
        except OSError:  # gone meanwhile, or not ours to read
            continue
    return found


class WalkProcess:
    """``replcheck walk`` (or ``command``) in its own process, with a fresh TMPDIR and a
    marker in its environment; output goes to files (a pipe held open by a stray JVM
    would hang)."""

    def __init__(self, folder: Path, *args: str, command: str = "walk", background=False):
        require_spark()
        self.folder = folder
        self.tmp = folder / "tmp"
        self.tmp.mkdir(parents=True)
        self.marker = uuid.uuid4().hex
        env = dict(os.environ, TMPDIR=str(self.tmp), **{MARKER: self.marker})
        env.pop("PYSPARK_GATEWAY_PORT", None)
        self.out_path, self.err_path = folder / "stdout.txt", folder / "stderr.txt"
        with open(self.out_path, "wb") as out, open(self.err_path, "wb") as err:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "replcheck", command, *args],
                stdout=out,
                stderr=err,
                env=env,
                cwd=Path(__file__).resolve().parents[2],
                # A background job (``nohup ... &``) starts with SIGINT ignored.
                preexec_fn=sigint_ignored if background else sigint_default,
            )

    def interrupt(self) -> None:
        """Ctrl-C, as a terminal sends it to the foreground process."""
        self.proc.send_signal(signal.SIGINT)

    def terminate(self) -> None:
        """SIGTERM, as ``kill``, ``timeout`` or a batch scheduler sends it."""
        self.proc.send_signal(signal.SIGTERM)

    def wait(self, timeout: float = 180) -> int:
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill_all()
            raise

    def wait_for_stderr(self, text: str, timeout: float = 120) -> None:
        deadline = time.monotonic() + timeout
        while text not in self.stderr():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"never saw {text!r} on stderr:\n{self.stderr()}")
            time.sleep(0.2)

    def stdout(self) -> str:
        return self.out_path.read_text(encoding="utf-8", errors="replace")

    def stderr(self) -> str:
        return self.err_path.read_text(encoding="utf-8", errors="replace")

    def survivors(self, settle: float = 0.0) -> list[str]:
        """What of the run is still alive (after ``settle`` seconds); the test then ends it.

        Only this check needs /proc: without it (macOS) the test stops here as skipped,
        after every assertion before it has run."""
        if not HAVE_PROC:
            pytest.skip("needs /proc to find the processes a run leaves behind")
        time.sleep(settle)
        left = marked_processes(self.marker)
        self.kill_all()
        return left

    def tmp_left(self) -> list[str]:
        return sorted(p.name for p in self.tmp.iterdir())

    def kill_all(self) -> None:
        if not HAVE_PROC:
            return
        for line in marked_processes(self.marker):
            with contextlib.suppress(OSError):
                os.kill(int(line.split(":")[0]), signal.SIGKILL)


@pytest.fixture
def walk_process(tmp_path):
    started: list[WalkProcess] = []

    def start(*args: str, command: str = "walk", background: bool = False) -> WalkProcess:
        folder = tmp_path / f"run{len(started)}"
        run = WalkProcess(folder, *args, command=command, background=background)
        started.append(run)
        return run

    yield start
    for run in started:  # whatever a failed test left running
        if run.proc.poll() is None:
            run.proc.kill()
            run.proc.wait()
        run.kill_all()
