"""checker.explicit.parallel_bfs against checker.explicit.bfs: the same verdicts from several
processes.

Counts, depth and counterexample lengths must equal the single-process search's; the
traces themselves may differ from bfs's (another shortest one) but must replay through
the model and be the same on every run.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import subprocess
import sys
import textwrap
import time
from functools import cache

import pytest

from replcheck.checker.explicit import parallel_bfs as pb
from replcheck.checker.explicit.bfs import SearchResult, bfs
from replcheck.checker.explicit.parallel_bfs import WorkerError, balance, owner_of, parallel_bfs
from replcheck.invariants import select
from replcheck.invariants.tla import TLA_INVARIANTS
from replcheck.model import KafkaReplication, make_config
from replcheck.model.tla.spec import TlaKafkaSpec
from tests.conftest import sigint_default

# name -> (model, invariants, symmetry)
CASES = {
    "kafka-hw": lambda: (KafkaReplication(make_config({"mode": "hw"})), select(None), True),
    "kafka-kip320": lambda: (
        KafkaReplication(make_config({"mode": "kip320"})),
        select(None),
        True,
    ),
    "tla-kip101": lambda: (TlaKafkaSpec("kip101", 2, 2, 2, 3), TLA_INVARIANTS, False),
}
WITH_VIOLATIONS = ["kafka-hw", "tla-kip101"]


@cache
def case(name: str):
    return CASES[name]()


@cache
def single(name: str) -> SearchResult:
    model, invariants, symmetry = case(name)
    return bfs(model, invariants, symmetry=symmetry)


@cache
def parallel(name: str, workers: int) -> SearchResult:
    model, invariants, symmetry = case(name)
    return parallel_bfs(model, invariants, workers=workers, symmetry=symmetry)


def verdict(result: SearchResult) -> tuple:
    lengths = {inv: v.length for inv, v in result.violations.items()}
    return result.status, result.distinct_states, result.depth, result.transitions, lengths


def assert_replays(model, invariants, result: SearchResult) -> None:
    """Each trace starts in an initial state, takes only enabled actions, and ends in a
    state that violates its invariant."""
    invariants = {inv.id: inv for inv in invariants}
    for inv_id, violation in result.violations.items():
        trace = violation.trace
        assert trace[0].action is None and trace[0].state in model.init_states()
        for before, after in zip(trace, trace[1:], strict=False):
            assert after.action in list(model.actions(before.state))
            assert model.next_state(before.state, after.action) == after.state
        assert invariants[inv_id](trace[-1].state) == violation.message


def traces(result: SearchResult) -> dict:
    return {
        inv: (v.message, [(step.action, step.state) for step in v.trace])
        for inv, v in result.violations.items()
    }


@pytest.mark.parametrize("workers", [2, 3])
@pytest.mark.parametrize("name", list(CASES))
def test_same_verdict_as_bfs(name, workers):
    assert verdict(parallel(name, workers)) == verdict(single(name))


def test_the_cases_cover_violations_and_a_holding_model():
    assert single("kafka-hw").violations and single("tla-kip101").violations
    assert not single("kafka-kip320").violations and single("kafka-kip320").status == "complete"


@pytest.mark.parametrize("workers", [2, 3])
@pytest.mark.parametrize("name", WITH_VIOLATIONS)
def test_counterexamples_replay(name, workers):
    model, invariants, _ = case(name)
    assert_replays(model, invariants, parallel(name, workers))


@pytest.mark.parametrize("workers", [2, 3])
@pytest.mark.parametrize("name", WITH_VIOLATIONS)
def test_two_runs_give_the_same_traces(name, workers):
    model, invariants, symmetry = case(name)
    again = parallel_bfs(model, invariants, workers=workers, symmetry=symmetry)
    assert traces(again) == traces(parallel(name, workers))


def test_stops_once_every_invariant_is_violated():
    model = KafkaReplication(make_config({"mode": "hw"}))
    invariants = select(["consistent-logs", "strong-isr"])
    expected = bfs(model, invariants)
    got = parallel_bfs(model, invariants, workers=2)
    assert expected.status == "all-violated"
    assert verdict(got) == verdict(expected)


def test_max_states():
    model, invariants, symmetry = case("kafka-kip320")
    for workers in (2, 3):
        result = parallel_bfs(model, invariants, workers=workers, max_states=5_000)
        assert result.status == "max-states"
        assert result.distinct_states == 5_000  # a limit is a limit: not one state past it
    alone = bfs(model, invariants, max_states=5_000)
    assert alone.status == "max-states" and alone.distinct_states == 5_000


def test_max_states_past_the_space_is_complete():
    model, invariants, symmetry = case("kafka-kip320")
    everything = single("kafka-kip320").distinct_states
    result = parallel_bfs(model, invariants, workers=2, max_states=everything + 1)
    assert result.status == "complete" and result.distinct_states == everything


@pytest.mark.parametrize("workers", [2, 3])
def test_a_limit_near_the_end_defers_states_without_losing_depths(workers):
    """Shares of the last few allowed states defer new states to later rounds of the
    same level: with room for every state the verdict is the unlimited one (the same
    depth and counterexample lengths), with one state less it stops exactly there."""
    model, invariants, symmetry = case("tla-kip101")
    everything = single("tla-kip101").distinct_states
    roomy = parallel_bfs(
        model, invariants, workers=workers, symmetry=symmetry, max_states=everything + 1
    )
    assert verdict(roomy) == verdict(single("tla-kip101"))
    tight = parallel_bfs(
        model, invariants, workers=workers, symmetry=symmetry, max_states=everything - 1
    )
    assert tight.status == "max-states" and tight.distinct_states == everything - 1


def test_share_splits_what_is_allowed():
    assert pb.share(10, 3, 0) == [4, 3, 3] and pb.share(10, 3, 1) == [3, 4, 3]
    assert pb.share(1, 2, 0) == [1, 0] and pb.share(1, 2, 1) == [0, 1]
    assert pb.share(-5, 2, 0) == [0, 0]


def test_time_limit():
    model = KafkaReplication(make_config({"mode": "3.5.0"}))  # about 10 s single-process
    result = parallel_bfs(model, select(["all"]), workers=2, time_limit=0.5)
    assert result.status == "timeout" and not result.exhaustive
    assert result.distinct_states > 0 and result.seconds < 5


def test_memory_limit_counts_every_process():
    model, invariants, symmetry = case("kafka-kip320")
    result = parallel_bfs(model, invariants, workers=2, memory_limit=1)
    assert result.status == "memory"


def test_progress_reports():
    model, invariants, symmetry = case("kafka-kip320")
    seen = []
    parallel_bfs(model, invariants, workers=2, on_progress=seen.append, progress_every=0.0)
    counts = [p.distinct_states for p in seen]
    assert len(seen) > 10 and counts == sorted(counts)
    assert counts[-1] == single("kafka-kip320").distinct_states


def test_one_worker_is_bfs():
    model, invariants, symmetry = case("tla-kip101")
    got = parallel_bfs(model, invariants, workers=1, symmetry=symmetry)
    assert verdict(got) == verdict(single("tla-kip101")) and traces(got) == traces(
        single("tla-kip101")
    )


def test_spawn_pickles_the_model(monkeypatch):
    monkeypatch.setattr(pb, "START_METHOD", "spawn")
    model = KafkaReplication(make_config({"mode": "hw", "records": 1}))
    expected = bfs(model, select(None))
    got = parallel_bfs(model, select(None), workers=2)
    assert verdict(got) == verdict(expected)
    assert_replays(model, select(None), got)


class Broken(KafkaReplication):
    """Fails in whichever worker reaches an epoch-3 state."""

    def next_state(self, state, action):
        if state.ctrl_epoch == 3:
            raise ZeroDivisionError("model bug")
        return super().next_state(state, action)


def test_a_failing_worker_raises_and_leaves_no_process():
    with pytest.raises(WorkerError, match="ZeroDivisionError: model bug"):
        parallel_bfs(Broken(make_config({"mode": "hw"})), select(None), workers=2)
    assert multiprocessing.active_children() == []


def test_keyboard_interrupt_from_progress_stops_cleanly():
    model, invariants, symmetry = case("kafka-hw")

    def interrupt(_progress):
        raise KeyboardInterrupt

    result = parallel_bfs(model, invariants, workers=2, on_progress=interrupt, progress_every=0.0)
    assert result.status == "interrupted"
    assert_replays(model, invariants, result)
    assert multiprocessing.active_children() == []


INTERRUPTED = textwrap.dedent(
    """
    import multiprocessing
    from replcheck.checker.explicit.parallel_bfs import parallel_bfs
    from replcheck.invariants import select
    from replcheck.model import KafkaReplication, make_config

    def progress(p):
        print("pids", *[c.pid for c in multiprocessing.active_children()], flush=True)

    model = KafkaReplication(make_config({"mode": "3.5.0"}))
    result = parallel_bfs(
        model, select(["all"]), workers=2, on_progress=progress, progress_every=0.2
    )
    print("status", result.status, result.distinct_states, flush=True)
    """
)


@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")
def test_ctrl_c_stops_every_process_without_a_traceback():
    """Ctrl-C reaches the whole process group: the workers ignore it, the coordinator
    stops between rounds, reports "interrupted" and shuts the workers down."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    proc = subprocess.Popen(
        [sys.executable, "-c", INTERRUPTED],
        cwd=root,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        preexec_fn=sigint_default,
    )
    try:
        first = proc.stdout.readline()
        assert first.startswith("pids"), first + proc.stderr.read()
        workers = [int(pid) for pid in first.split()[1:]]
        assert len(workers) == 2
        os.killpg(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, err
    assert "status interrupted" in out and "Traceback" not in err, err
    deadline = time.monotonic() + 5
    while any(_alive(pid) for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(_alive(pid) for pid in workers)


def _alive(pid: int) -> bool:
    """Running (a zombie, reaped by nobody once its parent is gone, counts as ended)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_balance_evens_out_frontiers():
    assert balance([100, 0]) == [(0, 1, 50)]
    assert balance([10, 500, 1000]) == [(2, 0, 494), (2, 1, 3)]
    assert balance([1000, 990]) == []  # within the slack: not worth moving
    for sizes in ([7, 0, 0], [0, 0, 3000], [5, 900, 13, 4000]):
        after = list(sizes)
        for src, dst, count in balance(sizes, slack=0):
            after[src] -= count
            after[dst] += count
        assert sum(after) == sum(sizes) and max(after) - min(after) <= 1


def test_owner_of_spreads_fingerprints():
    for workers in (2, 3, 4):
        for fps in (range(0, 120_000, workers), [hash((i, i + 1)) for i in range(120_000)]):
            counts = [0] * workers
            for fp in fps:
                counts[owner_of(fp, workers)] += 1
            assert max(counts) < 1.05 * min(counts)
