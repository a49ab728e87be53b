"""The k-induction lemmas of invariants/kafka/lemmas.py: each holds on every reachable
state of small explicit configurations, and on 3-replica trace and walk states (so a
lemma is never assumed where it is false); with them k-induction proves hw-le-leo and
consistent-logs for 2.1.0 on 2 and 3 replicas at the default bounds (slow)."""

from __future__ import annotations

import os
import re

import pytest
import z3

from replcheck.checker.symbolic.prove import k_induction
from replcheck.invariants.kafka.lemmas import LEMMAS
from replcheck.model.kafka.config import make_config
from replcheck.model.kafka.replication import KafkaReplication
from replcheck.model.kafka.symbolic.replication import KafkaSymbolic
from replcheck.run import properties, strengthening
from replcheck.traces.load import parse_action
from replcheck.traces.replay import execute
from tests.conftest import reachable, walk_states
from tests.z3_python import agrees_with_z3, compile_term

# Every state is judged by the lemmas compiled to Python (tests/z3_python.py); every
# SAMPLE_EVERY-th state, and every state a lemma is false on, by z3 as well, which must
# agree.
SAMPLE_EVERY = 50


def _false_lemmas_on(config, states) -> dict[str, object]:
    """Each lemma false on some state of ``states`` (of ``config``): one such state."""
    sym = KafkaSymbolic(config, sort="int")
    template = sym.template()
    variables = sym.variables(template)
    terms = {lemma.id: z3.simplify(lemma.holds(sym, template)) for lemma in LEMMAS}
    compiled = {lemma_id: compile_term(term, variables) for lemma_id, term in terms.items()}
    false: dict[str, object] = {}
    for k, state in enumerate(states):
        values = sym.layout.values(state)
        broken = [lemma_id for lemma_id, holds in compiled.items() if not holds(values)]
        if broken or k % SAMPLE_EVERY == 0:
            encoded = sym.encode(state)
            for lemma_id, term in terms.items():
                assert agrees_with_z3(term, compiled[lemma_id], values, encoded, sym), (
                    f"the compiled {lemma_id} disagrees with z3 on {state}"
                )
        for lemma_id in broken:
            false.setdefault(lemma_id, state)
    return false


def _false_lemmas(values: dict) -> dict[str, object]:
    """Each lemma false on some reachable state of the configuration: one such state."""
    config = make_config(values)
    return _false_lemmas_on(config, reachable(KafkaReplication(config)))


# 2.1.0 on 3 replicas: r1 and r2 fetch from r0, r1 is elected, and r2, told of the new
# epoch, truncates on r1's answer below what zombie leader r0 recorded for it (the state
# that made the old remote-leo-behind false).
THREE_REPLICA_TRACE = [
    "write(leader=r0)",
    "fetch_request(follower=r1, leader=r0)",
    "fetch_response(follower=r1)",
    "write(leader=r0)",
    "fetch_request(follower=r2, leader=r0)",
    "fetch_response(follower=r2)",
    "fetch_request(follower=r2, leader=r0)",
    "fetch_response(follower=r2)",
    "elect(leader=r1)",
    "deliver(replica=r1)",
    "deliver(replica=r2)",
    "epoch_request(follower=r2, leader=r1)",
    "epoch_response(follower=r2)",
]
THREE_REPLICAS = {"mode": "2.1.0", "records": 2, "epochs": 3, "replicas": 3}


def test_lemmas_hold_on_a_three_replica_trace_and_walks():
    config = make_config(THREE_REPLICAS)
    model = KafkaReplication(config)
    trace = [state for _action, state in execute(model, map(parse_action, THREE_REPLICA_TRACE))]
    assert _false_lemmas_on(config, trace) == {}
    assert _false_lemmas_on(config, walk_states(model, walks=150, depth=20, seed=1)) == {}


def test_lemmas_hold_where_a_leader_skipped_the_epoch_another_led():
    """--controller-failover: r0 applies only the latest LeaderAndIsr (epoch 3), skipping
    epoch 2 that r1 led, and keeps the offset it recorded for r1 in epoch 1 (the state an
    independent review found follower-leader-told false on)."""
    values = {"mode": "3.9.0", "kraft": True, "controller_failover": True, "epochs": 3}
    config = make_config(values)
    steps = [
        "fetch_request(follower=r1, leader=r0)",
        "fetch_response(follower=r1)",
        "elect(leader=r1)",
        "elect(leader=r0)",
        "deliver_latest(replica=r0)",
    ]
    trace = [state for _a, state in execute(KafkaReplication(config), map(parse_action, steps))]
    assert trace[-1].replicas[0].remote_leo[1] == 0  # kept across the skipped epoch
    assert _false_lemmas_on(config, trace) == {}


def test_a_false_lemma_is_reported_by_the_compiled_check_and_z3_alike():
    """Negative control for the compiled evaluation: a follower whose checkpointed HW is
    past its empty log breaks checkpoint-within-log (z3 confirms each lemma reported)."""
    config = make_config({"mode": "2.1.0", "records": 1, "epochs": 1})
    init = KafkaReplication(config).init_states()[0]
    bad = init.with_replica(1, init.replicas[1].replace(hw_checkpoint=1))
    false = _false_lemmas_on(config, [init, bad])
    assert "checkpoint-within-log" in false
    assert all(state is bad for state in false.values())


def test_lemma_ids_and_docs():
    ids = [lemma.id for lemma in LEMMAS]
    assert len(set(ids)) == len(ids)
    for lemma in LEMMAS:
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", lemma.id)
        assert lemma.doc.strip() and "2.1.0" not in lemma.doc


@pytest.mark.parametrize(
    "values",
    [
        {"mode": "0.10.2", "records": 1, "epochs": 2},
        {"mode": "2.1.0", "records": 1, "epochs": 2},
        {"mode": "3.5.0", "records": 1, "epochs": 1},
        # KRaft 3.6+: a fenced follower leaves the ISR without a new leader epoch.
        {"mode": "4.1.0", "records": 1, "epochs": 1},
        {"mode": "3.7.0", "kraft": True, "records": 1, "epochs": 1},
        # KRaft before 3.6: a replayed record drops a shrink (KAFKA-13790), and before
        # KIP-903 a request from before a restart adds the member.
        {"mode": "3.4.0", "kraft": True, "records": 1, "epochs": 1},
        # KRaft: a follower out of the ISR steps to no leader on a leaderless record.
        {"mode": "3.9.1", "kraft": True, "records": 1, "epochs": 2},
        # The ELR with min ISR 2 and two crashes (emptied by registrations, then the last
        # known leader elected: at epochs 3, in the slow run).
        {"mode": "4.1.0", "records": 0, "epochs": 2, "crashes": 2, "min_insync_replicas": 2},
        # A broker fenced while running: not live, not crashed, still knows its leader.
        {"mode": "4.1.0", "records": 1, "epochs": 1, "fencing": True},
        # ZooKeeper: a broker whose session expired, then owed the current state; it may
        # join the ISR before KIP-841 (3.3), not after (722 states; at records 1 in the
        # slow run: 10,273 states, 40 s).
        {"mode": "2.1.0", "records": 0, "epochs": 2, "fencing": True},
        {"mode": "3.5.0", "records": 1, "epochs": 1, "fencing": True},
        # A replaced disk (the lemmas about replicated prefixes stand aside), a clean
        # shutdown.
        {"mode": "2.1.0", "records": 1, "epochs": 2, "disk_loss": True},
        {"mode": "4.1.0", "records": 1, "epochs": 1, "clean_shutdown": True, "disk_loss": True},
        # A new controller re-makes a restarted leader leader of its epoch (before KIP-380).
        {"mode": "2.1.0", "records": 1, "epochs": 2, "controller_failover": True},
    ],
)
def test_lemmas_hold_on_reachable_states(values):
    assert _false_lemmas(values) == {}


# Since the lemmas are evaluated compiled to Python (tests/z3_python.py), every case
# here takes seconds to 34 s (4.1.0 on 3 replicas, 180,100 states: 442 s before), so
# none is heavy any more: CI runs them with the slow set as time allows.
@pytest.mark.slow
@pytest.mark.parametrize(
    "values",
    [
        {"mode": "2.8.0", "records": 1, "epochs": 2},
        {"mode": "3.5.0", "records": 1, "epochs": 2},
        {"mode": "0.10.2", "records": 2, "epochs": 2},
        {"mode": "2.1.0", "records": 2, "epochs": 2},
        {"mode": "2.1.0", "records": 1, "epochs": 3},
        {"mode": "2.8.0", "records": 2, "epochs": 2},
        {"mode": "3.5.0", "records": 2, "epochs": 2},
        # AlterIsr (2.7), KRaft with the ELR (4.1): true there too, though not inductive
        # (docs/prove.md: at the default bounds every lemma held on all 438,371 states of
        # 4.1.0 before finding F3's replay, 749 s, and k-induction still finds a CTI).
        {"mode": "2.7.2", "records": 1, "epochs": 2},
        # From the default run: the ELR recovery, and the KRaft 3.6+ fence at records 1,
        # epochs 2.
        {"mode": "4.1.0", "records": 0, "epochs": 3, "crashes": 2, "min_insync_replicas": 2},
        {"mode": "4.1.0", "records": 1, "epochs": 2},
        {"mode": "4.1.0", "records": 1, "epochs": 1, "crashes": 2, "min_insync_replicas": 2},
        # --controller-failover: epochs skipped, a leader re-made leader of its epoch.
        {"mode": "2.1.0", "records": 1, "epochs": 3, "controller_failover": True},
        {"mode": "2.4.0", "records": 2, "epochs": 2, "controller_failover": True},
        # ZooKeeper's expired session with a record to lose.
        {"mode": "2.1.0", "records": 1, "epochs": 2, "fencing": True},
        # A fence that bumps the leader epoch (KRaft before 3.6).
        {"mode": "3.5.0", "kraft": True, "records": 1, "epochs": 1, "fencing": True},
        {"mode": "4.1.0", "records": 1, "epochs": 2, "crashes": 2, "min_insync_replicas": 2},
        # The leader's ISR may lag the controller's (F3's replay), on 3 replicas.
        {"mode": "4.1.0", "records": 1, "epochs": 1, "replicas": 3},
    ],
)
def test_lemmas_hold_on_reachable_states_slow(values):
    assert _false_lemmas(values) == {}


def _induction(values: dict, ids: list[str], max_k: int, lemma_ids: list[str] | None = None):
    """k-induction with ``lemma_ids`` (None: every lemma), on every core."""
    config = make_config(values)
    sym = KafkaSymbolic(config, sort="bv")
    props = properties(sym, ids)
    lemmas = strengthening(sym, lemma_ids)
    explicit = KafkaReplication(config)
    return k_induction(explicit, sym, props, lemmas, max_k, jobs=os.cpu_count() or 1)


def test_k_induction_proves_hw_le_leo_with_the_lemmas():
    result = _induction({"mode": "2.1.0", "records": 1, "epochs": 1}, ["hw-le-leo"], 1)
    assert result.status == "proved", (result.status, result.cti_broken)


@pytest.mark.slow
@pytest.mark.parametrize(
    "replicas",
    [2, pytest.param(3, marks=pytest.mark.heavy)],  # 3: CI leaves it out (4 min)
)
def test_k_induction_proves_hw_le_leo_and_consistent_logs_at_the_defaults(replicas):
    """records 2, epochs 3, crashes 1: proved at k=1 (2 replicas: 10 s on 2 cores; 3
    replicas: 160 s).  Every lemma is proved with them, so on 3 replicas this also shows
    each lemma true on every reachable state, which walks can only sample."""
    values = {**THREE_REPLICAS, "replicas": replicas}
    result = _induction(values, ["hw-le-leo", "consistent-logs"], 1)
    assert result.status == "proved", (result.status, result.cti_broken)


# What leader-in-isr needs: the controller's history and leader (history-consistent), the
# queued ISR requests (isr-request-from-leader: an accepted one keeps the leader, and its
# sender is still in its epoch), and what traces a proposal to the LeaderAndIsr of its
# epoch.  With every lemma the step fails on sole-isr-pending-leader, which is not
# inductive on KRaft with the ELR, so the proof takes only these (PDR, offered every
# lemma, keeps the inductive ones and proves it too: docs/prove.md).
LEADER_IN_ISR_LEMMAS = [
    "isr-request-from-leader",
    "history-consistent",
    "replica-epoch-known",
    "role-fields",
    "epochs-bounded",
    "crashed-replica-blank",
]


@pytest.mark.parametrize(
    "values",
    [
        # KRaft with the ELR at the default bounds: 2 replicas 2.4 s, 3 replicas 7 s
        # (one worker), where PDR had not converged in 70 minutes.
        {"mode": "4.1.0", "records": 2, "epochs": 3, "replicas": 2},
        {"mode": "4.1.0", "records": 2, "epochs": 3, "replicas": 3},
        # KRaft 3.6+ without the ELR (7 s), AlterIsr under ZooKeeper (4 s), and KRaft
        # where a shrink bumps the leader epoch (10 s at these smaller bounds).
        {"mode": "3.9.1", "kraft": True, "records": 2, "epochs": 3, "replicas": 3},
        {"mode": "2.8.0", "records": 2, "epochs": 3, "replicas": 3},
        {"mode": "3.5.0", "kraft": True, "records": 1, "epochs": 2, "replicas": 2},
    ],
)
def test_k_induction_proves_leader_in_isr(values):
    result = _induction(values, ["leader-in-isr"], 1, LEADER_IN_ISR_LEMMAS)
    assert result.status == "proved", (result.status, result.cti_broken)
