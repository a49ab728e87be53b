"""Counterexamples are rebuilt as concrete executions on 3 replicas with symmetry.

The search keeps ``model.representative`` of each state, which need not pick the same
member for every state of a symmetry class; a concrete successor of a concrete state
can then have a fingerprint the search never stored.  These configurations are ones
where that happens (each test checks it does), with one worker and several, for
complete, limited and interrupted runs: every counterexample must still replay.
"""

from __future__ import annotations

import multiprocessing
from functools import cache

import pytest

import replcheck.checker.explicit.bfs as bfs_module
from replcheck.checker.explicit.bfs import RebuildError, SearchResult, trace_from_chain
from replcheck.checker.explicit.parallel_bfs import parallel_bfs
from replcheck.cli.main import main
from replcheck.invariants import select
from replcheck.model import KafkaReplication, make_config
from tests.conftest import interrupt_replcheck

# hw mode on 3 replicas: 378,471 states, five invariants violated (about 6 s on 2 workers)
THREE = {"mode": "hw", "replicas": 3, "records": 1, "epochs": 3, "crashes": 0}


@cache
def model() -> KafkaReplication:
    return KafkaReplication(make_config(THREE))


@cache
def search(workers: int) -> SearchResult:
    return parallel_bfs(model(), select(None), workers=workers)


def assert_replays(result: SearchResult) -> None:
    """Every violation has a trace that starts in an initial state, takes enabled actions
    only, and ends in a state that violates its invariant."""
    m = model()
    by_id = {inv.id: inv for inv in select(None)}
    assert result.violations
    for inv_id, v in result.violations.items():
        assert v.error is None
        assert v.trace[0].action is None and v.trace[0].state in m.init_states()
        for before, after in zip(v.trace, v.trace[1:], strict=False):
            assert after.action in list(m.actions(before.state))
            assert m.next_state(before.state, after.action) == after.state
        assert by_id[inv_id](v.trace[-1].state) == v.message


# The shortest counterexamples of THREE, the same for any number of workers.
LENGTHS = {
    "acked-writes-durable": 12,
    "consistent-logs": 10,
    "follower-hw-committed": 12,
    "no-committed-data-loss": 12,
    "strong-isr": 11,
}


def assert_complete_and_replays(result: SearchResult) -> None:
    assert result.status == "complete" and result.distinct_states == 378_471
    assert_replays(result)
    assert {inv: v.length for inv, v in result.violations.items()} == LENGTHS


# Two workers: the next test's search; three in the slow run.
@pytest.mark.parametrize("workers", [1, pytest.param(3, marks=pytest.mark.slow)])
def test_every_counterexample_replays(workers):
    assert_complete_and_replays(search(workers))


def test_these_runs_need_the_exact_class(monkeypatch):
    """At least one chain the search stored cannot be followed by fingerprints alone
    (what the engine did before, and what crashed on these runs); two workers rebuild
    every counterexample all the same."""
    chains = []

    def recording(m, chain, canon, exact):
        chains.append(list(chain))
        return trace_from_chain(m, chain, canon, exact)

    monkeypatch.setattr(bfs_module, "trace_from_chain", recording)
    assert_complete_and_replays(parallel_bfs(model(), select(None), workers=2))
    m = model()
    stuck = []
    for chain in chains:
        try:
            trace_from_chain(m, chain, m.representative, exact=lambda _s: object())
        except RebuildError:
            stuck.append(chain)
    assert len(chains) == 5 and stuck


@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize("limit", [{"max_states": 150_000}, {"time_limit": 1.0}])
def test_limited_runs_rebuild_what_they_found(workers, limit):
    result = parallel_bfs(model(), select(None), workers=workers, **limit)
    assert not result.exhaustive or result.status == "complete"
    if result.violations:
        assert_replays(result)


def test_interrupted_run_rebuilds_what_it_found():
    calls = []

    def interrupt(progress):
        calls.append(progress)
        if progress.violations:
            raise KeyboardInterrupt

    result = parallel_bfs(
        model(), select(None), workers=2, on_progress=interrupt, progress_every=0.0
    )
    assert result.status == "interrupted" and result.violations
    assert_replays(result)
    assert multiprocessing.active_children() == []


def test_ctrl_c_on_three_replicas_reports_the_counterexamples():
    """Ctrl-C once a violation is found: the report and its counterexample, exit 1."""
    argv = ["check", "--mode", "hw", "--replicas", "3", "--records", "2", "--epochs", "4"]
    code, out, err = interrupt_replcheck(
        argv, 0.0, ready_err=lambda line: line.endswith("violated\n") and " 0 violated" not in line
    )
    assert "Traceback" not in err, err
    assert "note: interrupted" in out and "Shortest counterexample to" in out
    assert "result: violated" in out and code == 1


def test_a_rebuild_that_fails_is_reported_not_raised(monkeypatch, capsys):
    """Should a rebuild still fail (a fingerprint collision), the violation is reported
    with one internal-error line, and the exit code is the violation's."""
    monkeypatch.setattr(bfs_module, "_concrete_step", lambda *_a: None)
    code = main(["check", "--records", "1", "--quiet", "--workers", "2"])
    out, err = capsys.readouterr()
    assert code == 1
    assert "no-committed-data-loss  VIOLATED" in out and "result: violated" in out
    lines = [line for line in err.splitlines() if "internal error" in line]
    assert lines and all("Traceback" not in line for line in err.splitlines())
    assert "the violation stands" in lines[0]


@pytest.mark.parametrize("limit", [["--max-states", "150000"], ["--timeout", "3"]])
def test_limited_3_replica_checks_with_the_default_workers_report(limit, capsys):
    """What a user types: no --workers (the machine's cores), 3 replicas, a limit."""
    code = main(["check", "--replicas", "3", "--records", "1", "--quiet", *limit])
    out, err = capsys.readouterr()
    assert "Traceback" not in err and "internal error" not in err
    assert code in (1, 3) and out.rstrip().splitlines()[-1] in (
        "result: violated",
        "result: incomplete",
    )
    if code == 1:
        assert "Shortest counterexample to" in out
