"""What a real cluster is asked to do for a trace, decided before any JVM starts."""

from __future__ import annotations

import pytest

from replcheck.checker.suites.catalogue import load_catalogue
from replcheck.cluster.plan import TAKEN, Unmappable, cluster_plan
from replcheck.model.kafka.config import make_config
from replcheck.traces.load import parse_action

CATALOGUE = {e.id: e for e in load_catalogue()}


def _plan(entry: str, release: str):
    e = CATALOGUE[entry]
    return cluster_plan(e.config(release), list(e.steps_for(release)))


def test_f3_holds_back_only_the_leaders_metadata() -> None:
    p = _plan("F3", "4.1.0")
    assert p.lagging == {0}  # r0 replays its own accepted change late (reapply_isr)
    assert p.plan.assignment == [0, 1, 2]
    # the controller writes: the shrink, the dropped expansion, the election of r2
    changed = [p.plan.ops[k]["op"] for k, c in enumerate(p.partition_changes) if c]
    assert changed == ["alter_isr", "alter_isr", "elect"]
    assert {op["op"] for op in p.plan.ops} <= set(TAKEN)


def test_f2_holds_back_the_brokers_that_catch_up_at_once() -> None:
    p = _plan("F2", "4.1.0")
    assert p.lagging == {0, 1}  # deliver_latest(r0), deliver_latest(r1)


def test_a_restarted_broker_reads_the_log_anew_and_is_not_held() -> None:
    p = _plan("B6", "4.0.2")  # deliver_latest(r0) after its restart
    assert p.lagging == set()


def test_a_zookeeper_trace_is_refused() -> None:
    with pytest.raises(Unmappable, match="KRaft traces"):
        _plan("A3", "2.0.0")


def test_a_step_with_no_cluster_action_is_named() -> None:
    with pytest.raises(Unmappable, match=r"step 9 \(replace_disk\(replica=r0\)\)"):
        _plan("F4", "4.1.0")


def test_a_crash_that_keeps_part_of_the_log_is_refused() -> None:
    cfg = make_config({"mode": "4.1.0", "replicas": 2, "records": 2, "crashes": 1,
                       "lossy_crash": True, "kraft": True})  # fmt: skip
    actions = [parse_action(a) for a in ("write(0)", "write(0)", "crash(0, 1)")]
    with pytest.raises(Unmappable, match="keeps part of the log"):
        cluster_plan(cfg, actions)


def test_an_option_the_released_cluster_does_not_have_is_refused() -> None:
    e = CATALOGUE["F3"]
    actions = list(e.steps_for("4.1.0"))
    for option, value in (("elr", False), ("acks", 1), ("unclean_election", True)):
        cfg = make_config({**e.bounds, "mode": "4.1.0", option: value})
        with pytest.raises(Unmappable, match=f"the trace's {option}="):
            cluster_plan(cfg, actions)
