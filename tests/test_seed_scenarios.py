"""The two scenarios of the seeds (reference page, last section) as explicit steps.

In ``hw`` mode each ends in the named violation; in ``kip320`` mode the same
steps either stop being enabled or never reach it.  Replica r0 plays the
seeds' B (first leader) in the data-loss story and A in the divergence story.
The seeds tell each fetch as one round, so these run in the coarse model
(``atomic``).  In the data-loss story A's quick bounce goes unnoticed by the
controller (before KIP-380), so A is told its role again only by a new
controller after a failover (``deliver_latest``): Kafka 0.10 sends nothing to a
broker whose bounce it did not see (docs/kafka-behaviour-by-release.md § 8).
"""

from __future__ import annotations

import pytest

from replcheck.invariants.kafka.predicates import consistent_logs, no_committed_data_loss
from replcheck.model import KafkaReplication, make_config
from replcheck.traces.replay import NotEnabled, execute
from tests.conftest import A

# Seed 002 / seed 004 §3.6: B (r0) leads, A (r1) follows, min.insync.replicas = 1.
DATA_LOSS = dict(
    mode="hw", replicas=2, records=1, epochs=2, crashes=2, atomic=True, controller_failover=True
)
DATA_LOSS_STEPS = [
    A("write", 0),  # B appends m at offset 0
    A("fetch", 1, 0),  # A fetches it: A has LEO 1, HW 0
    A("fetch", 1, 0),  # A fetches again: B's HW -> 1 (m committed); A still has HW 0
    A("crash", 1, 1),  # A restarts ...
    A("restart", 1),
    A("deliver_latest", 1),  # ... a new controller tells it it follows B: it truncates to
    # its HW 0, and m is gone on A
    A("crash", 0, 1),  # B crashes
    A("notice_crash", 0, 1),  # the controller elects A (still in the ISR)
    A("deliver", 1),  # A leads epoch 2 without m
]

# Seed 002 "data inconsistency" / KIP-101 scenario 2, through a lossy crash of both.
DIVERGENCE_LOSSY = dict(
    mode="hw", replicas=2, records=3, epochs=2, crashes=2, lossy_crash=True, atomic=True
)
DIVERGENCE_LOSSY_STEPS = [
    A("write", 0),  # A (r0) leads: m1
    A("write", 0),  # m2
    A("fetch", 1, 0),  # B (r1) gets [m1, m2]
    A("fetch", 1, 0),  # A's HW -> 2 (B's HW is still 0)
    A("checkpoint_hw", 0),  # A's checkpoint says 2
    A("crash", 1, 1),  # B crashes and loses the unflushed m2
    A("crash", 0, 2),  # A crashes too
    A("restart", 1),
    A("notice_crash", 0, 1),  # B, back and in the ISR, becomes leader (epoch 2)
    A("deliver", 1),
    A("write", 1),  # B writes m3 at offset 1; ISR {B}: HW 2
    A("restart", 0),  # A reloads HW 2 from its checkpoint
    A("notice_restart", 0),
    A("deliver", 0),  # A follows B and truncates only to its HW 2, keeping m2
]

# The same divergence through an unclean election after the ISR shrank to {A}.
DIVERGENCE_UNCLEAN = dict(
    mode="hw", replicas=2, records=3, epochs=2, crashes=1, unclean_election=True, atomic=True
)
DIVERGENCE_UNCLEAN_STEPS = [
    A("write", 0),
    A("fetch", 1, 0),
    A("fetch", 1, 0),  # m1 committed on A
    A("write", 0),  # m2 on A only
    A("shrink_isr", 0, 1),  # B lags: ISR {A}, HW 2
    A("checkpoint_hw", 0),
    A("crash", 0, 2),
    A("notice_crash", 0, 1),  # no live ISR member: unclean election of B
    A("deliver", 1),
    A("write", 1),  # m3 at offset 1, HW 2 on B
    A("restart", 0),
    A("notice_restart", 0),
    A("deliver", 0),  # hw mode: A keeps [m1, m2] with HW 2
]


def run(config: dict, steps, mode: str):
    return execute(KafkaReplication(make_config({**config, "mode": mode})), steps)


def test_data_loss_in_hw_mode():
    trace = run(DATA_LOSS, DATA_LOSS_STEPS, "hw")
    final = trace[-1][1]
    message = no_committed_data_loss(final)
    assert message is not None
    assert "m1@e1" in message and "offset 0" in message
    # It is the last step that breaks the property, not an earlier one.
    assert all(no_committed_data_loss(s) is None for _, s in trace[:-1])


def run_while_enabled(config: dict, steps, mode: str):
    """Execute the steps until one is not enabled; return the states reached."""
    model = KafkaReplication(make_config({**config, "mode": mode}))
    try:
        return execute(model, steps), None
    except NotEnabled as refused:
        return execute(model, steps[: refused.step - 1]), refused


def test_data_loss_cannot_happen_in_kip320():
    trace, refused = run_while_enabled(DATA_LOSS, DATA_LOSS_STEPS, "kip320")
    # A owes its epoch exchange instead of cutting to its HW, so B's crash and
    # A's election find m on A.
    assert refused is None
    assert all(no_committed_data_loss(s) is None for _, s in trace)
    assert trace[-1][1].replicas[1].log == trace[-1][1].committed


def test_data_loss_bounce_is_refused_from_kip380():
    """KIP-380 (2.2.0): the controller handles A's crash before A may restart, so
    the bounce that left A in the ISR is refused."""
    trace, refused = run_while_enabled(DATA_LOSS, DATA_LOSS_STEPS, "2.2.0")
    assert refused is not None and refused.action == A("restart", 1)
    assert all(no_committed_data_loss(s) is None for _, s in trace)


def test_leader_epoch_truncation_alone_keeps_m():
    """The leader-epoch truncation alone saves m: run the seed steps in kip279
    mode (no KIP-380 there) -- A owes an epoch truncation instead of cutting to its
    HW, so it still has m when it is elected."""
    trace = run(DATA_LOSS, DATA_LOSS_STEPS, "kip279")
    assert all(no_committed_data_loss(s) is None for _, s in trace)
    assert trace[-1][1].replicas[1].log == trace[-1][1].committed


@pytest.mark.parametrize(
    "config,steps",
    [(DIVERGENCE_LOSSY, DIVERGENCE_LOSSY_STEPS), (DIVERGENCE_UNCLEAN, DIVERGENCE_UNCLEAN_STEPS)],
    ids=["lossy-crash", "unclean-election"],
)
def test_divergence_in_hw_mode(config, steps):
    trace = run(config, steps, "hw")
    message = consistent_logs(trace[-1][1])
    assert message is not None and "offset 1" in message
    a, b = trace[-1][1].replicas
    assert a.hw == b.hw == 2 and a.log[1] != b.log[1]


@pytest.mark.parametrize(
    "config,steps",
    [(DIVERGENCE_LOSSY, DIVERGENCE_LOSSY_STEPS), (DIVERGENCE_UNCLEAN, DIVERGENCE_UNCLEAN_STEPS)],
    ids=["lossy-crash", "unclean-election"],
)
def test_divergence_cannot_happen_in_kip320(config, steps):
    trace, _ = run_while_enabled(config, steps, "kip320")
    assert all(consistent_logs(s) is None for _, s in trace)
    last = trace[-1][1]
    if len(trace) == len(steps) + 1:
        # Every step ran: A now owes its epoch truncation; doing it repairs the log.
        model = KafkaReplication(make_config({**config, "mode": "kip320"}))
        rest = execute(model, [A("truncate", 0, 1), A("fetch", 0, 1)], start=last)
        a, b = rest[-1][1].replicas
        assert a.log == b.log
        assert all(consistent_logs(s) is None for _, s in rest)


def test_steps_that_are_not_enabled_are_refused():
    with pytest.raises(NotEnabled) as info:
        run(DATA_LOSS, [A("fetch", 0, 1)], "hw")  # r0 leads; it does not fetch
    assert info.value.step == 1
