"""Shared helpers: build models and run action sequences in a line."""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from replcheck.cli.report import stale_files
from replcheck.model import Action, KafkaReplication, make_config
from tests.stubs import ReachedSpark
from tests.time_budget import (  # noqa: F401  (hooks: --time-budget, CI's slow set)
    pytest_addoption,
    pytest_collection_modifyitems,
    pytest_configure,
    pytest_configure_node,
    pytest_runtest_setup,
    pytest_terminal_summary,
)

# Test processes `-n auto` starts (pyproject's addopts): one per core, at most this many,
# since the Spark cases start a JVM in each and many cases start search workers of their own.
MAX_TEST_WORKERS = 4


@pytest.hookimpl(optionalhook=True)  # pytest-xdist's hook: -p no:xdist still runs
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return max(1, min(MAX_TEST_WORKERS, cores or 1))


def A(name: str, *args: int) -> Action:
    return Action(name, tuple(args))


@pytest.fixture
def model_for():
    def build(**values):
        return KafkaReplication(make_config(values))

    return build


@pytest.fixture
def no_spark(monkeypatch):
    """walk raises ReachedSpark where it would start a Spark session."""
    from replcheck.checker.spark import session as spark_session

    def refuse(*_a: object, **_k: object) -> None:
        raise ReachedSpark

    monkeypatch.setattr(spark_session, "start_session", refuse)


def sigint_default() -> None:
    """For a child the test will Ctrl-C: SIGINT back to its default, so Python turns it
    into KeyboardInterrupt even where pytest runs with SIGINT ignored (a background job
    of a script, whose children inherit the ignoring)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def sigint_ignored() -> None:
    """For a child run as a shell runs a background job (``cmd &``, ``nohup``): SIGINT
    ignored, so only SIGTERM can stop it."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def interrupt_replcheck(
    argv: list[str],
    after: float,
    ready: str | None = None,
    ready_err: Callable[[str], bool] | None = None,
    sig: int = signal.SIGINT,
) -> tuple[int, str, str]:
    """Run replcheck, Ctrl-C it (or send it ``sig``) after ``after`` seconds (counted
    from its ``ready`` line on stdout, or from the first stderr line ``ready_err``
    accepts), and return (exit code, stdout, stderr).  A run sent SIGTERM starts as a
    background job.  Whatever happens, the process does not outlive the test: a run
    that is never interrupted would search for hours."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "replcheck", *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=sigint_default if sig == signal.SIGINT else sigint_ignored,
    )
    try:
        first = seen = ""
        if ready is not None:  # wait for the first line that says the run is under way
            first = proc.stdout.readline()
            assert ready in first, first
        while ready_err is not None and not ready_err(line := proc.stderr.readline()):
            assert line, f"replcheck ended before the line waited for:\n{seen}"
            seen += line
        time.sleep(after)
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=60)
        return proc.returncode, first + out, seen + err
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()


DOCS = Path(__file__).resolve().parent.parent / "docs"


def regenerate(script: str):
    """Run docs/<script>'s build() and return (module, files, stale or orphaned paths):
    a generated page or trace that differs from the committed one, or a committed trace
    the generator no longer writes."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(script.removesuffix(".py"), DOCS / script)
    gen = importlib.util.module_from_spec(spec)
    # Registered under its name, so that a generator's worker processes can find its
    # functions (make_report.py runs its searches in a process pool).
    sys.modules[spec.name] = gen
    spec.loader.exec_module(gen)
    files = gen.build()
    return gen, files, stale_files(files, DOCS, gen.TRACES)


def reachable(model) -> set:
    """Every state ``model`` reaches from its initial states (no symmetry, no limit):
    for tests that need the whole set, on bounds small enough to hold it."""
    seen = set(model.init_states())
    frontier = list(seen)
    while frontier:
        next_level = []
        for state in frontier:
            for action in model.actions(state):
                after = model.next_state(state, action)
                if after not in seen:
                    seen.add(after)
                    next_level.append(after)
        frontier = next_level
    return seen


def walk_states(model, walks: int, depth: int, seed: int) -> list:
    """The states of ``walks`` seeded random walks of up to ``depth`` steps from the first
    initial state, each state once: for tests on spaces too large to hold whole."""
    rng = random.Random(seed)
    seen: dict = {}
    for _ in range(walks):
        state = model.init_states()[0]
        for _ in range(depth):
            seen.setdefault(state, None)
            enabled = list(model.actions(state))
            if not enabled:
                break
            state = model.next_state(state, rng.choice(enabled))
    return list(seen)


CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"


def chromium(width: int = 1600, downloads: Path | None = None):
    """A headless Chromium for the browser tests, or a skip that says what is missing
    (Debian: apt-get install chromium chromium-driver; pip install selenium).
    ``downloads``: the folder where the page's downloads land, without asking."""
    if not (os.path.exists(CHROMIUM) and os.path.exists(CHROMEDRIVER)):
        pytest.skip("headless Chromium is not installed (apt-get install chromium chromium-driver)")
    webdriver = pytest.importorskip(
        "selenium.webdriver", reason="selenium is not installed (pip install selenium)"
    )
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--no-proxy-server",
        f"--window-size={width},900",
    ):
        options.add_argument(flag)
    if downloads is not None:
        prefs = {
            "download.default_directory": str(downloads),
            "download.prompt_for_download": False,
        }
        options.add_experimental_option("prefs", prefs)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    if downloads is not None:
        driver.execute_cdp_cmd(
            "Page.setDownloadBehavior", {"behavior": "allow", "downloadPath": str(downloads)}
        )
    return driver
