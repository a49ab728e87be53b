"""``--time-budget``: start tests for so long; the rest are reported as skipped.

CI runs the slow set this way (.ci/run): slow cases run "when time allows", and the
whole CI run stays well under half an hour on a slow machine.  A test is never cut
short: one started before the budget runs out finishes, so a run can overrun by its
longest test.  Tests marked ``ci_always`` (the generated pages' freshness) run whatever
the budget, and first; the others run in an order ``--rotate N`` shuffles, so that
successive CI runs (.ci/run passes the minute) give each its turn when one run cannot run
all (by chance: a shuffle of whole modules, not a rotation).  The summary names every
test the budget left out.

The hooks are imported by tests/conftest.py.  With pytest-xdist the controller sets the
deadline and hands it to each test process, so all stop at the same moment.
"""

from __future__ import annotations

import random
import time

import pytest

SKIP_REASON = "time budget spent (--time-budget)"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("time budget")
    group.addoption(
        "--time-budget",
        type=float,
        default=None,
        metavar="SECONDS",
        help="start no test after this many seconds of the run; the rest are skipped and "
        "named in the summary (CI's slow set)",
    )
    group.addoption(
        "--rotate",
        type=int,
        default=0,
        metavar="N",
        help="with --time-budget: the order the tests not marked ci_always run in "
        "(a shuffle seeded by N; CI passes the minute)",
    )


def _deadline(config: pytest.Config) -> float | None:
    return getattr(config, "_time_budget_deadline", None)


def pytest_configure(config: pytest.Config) -> None:
    budget = config.getoption("time_budget")
    if budget is not None and not budget >= 0:  # also refuses nan
        raise pytest.UsageError(f"--time-budget: {budget:g} is not 0 or more seconds")
    worker_input = getattr(config, "workerinput", None)
    if worker_input is not None:  # an xdist test process: the controller's deadline
        config._time_budget_deadline = worker_input.get("time_budget_deadline")
    elif budget is not None:
        config._time_budget_deadline = time.time() + budget


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node) -> None:  # pytest-xdist's hook, in the controller
    node.workerinput["time_budget_deadline"] = _deadline(node.config)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("time_budget") is None:
        return
    # Whole modules are shuffled, each keeping its order, so a module's fixtures (a Spark
    # search, a standalone cluster) are built once.  Every test process must collect the
    # same order: the seed is the option, not the clock.
    first: list[pytest.Item] = []
    modules: dict[str, list[pytest.Item]] = {}
    for item in items:
        if item.get_closest_marker("ci_always"):
            first.append(item)
        else:
            modules.setdefault(item.nodeid.split("::", 1)[0], []).append(item)
    order = list(modules)
    random.Random(config.getoption("rotate")).shuffle(order)
    items[:] = first + [item for name in order for item in modules[name]]


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    deadline = _deadline(item.config)
    if (
        deadline is not None
        and time.time() >= deadline
        and not item.get_closest_marker("ci_always")
    ):
        pytest.skip(SKIP_REASON)


def pytest_terminal_summary(terminalreporter, config: pytest.Config) -> None:
    budget = config.getoption("time_budget")
    if budget is None or hasattr(config, "workerinput"):
        return
    left = [
        report.nodeid
        for report in terminalreporter.stats.get("skipped", [])
        if isinstance(report.longrepr, tuple) and SKIP_REASON in str(report.longrepr[2])
    ]
    ran = len(
        {
            report.nodeid
            for key in ("passed", "failed", "error", "xfailed", "xpassed")
            for report in terminalreporter.stats.get(key, [])
        }
    )
    write = terminalreporter.write_line
    terminalreporter.section("time budget")
    write(
        f"{budget:g} s (--rotate {config.getoption('rotate')}): {ran} tests ran, "
        f"{len(left)} left out for time"
    )
    for nodeid in left:
        write(f"  not run: {nodeid}")
