"""Kafka 2.7 to 4.1: AlterIsr with the maximal ISR, truncation on fetch, KRaft broker
epochs and Eligible Leader Replicas, each as the release table says."""

from __future__ import annotations

import pytest

from replcheck.checker.explicit.bfs import bfs
from replcheck.invariants import select
from replcheck.model import KafkaReplication, make_config
from replcheck.model.kafka.config import ConfigError
from replcheck.model.kafka.releases import ON_FETCH, applies, behaviour
from replcheck.model.kafka.state import DIVERGING, MUST_TRUNCATE
from replcheck.traces.load import parse_action
from replcheck.traces.replay import execute
from tests.conftest import A, reachable


def run(release: str, steps: list[str], **bounds):
    model = KafkaReplication(make_config({"mode": release, **bounds}))
    return model, [s for _a, s in execute(model, [parse_action(x) for x in steps])]


def test_backported_fixes_apply_per_branch():
    first = ("2.7.2", "2.8.1", "3.0.0")
    assert [applies(first, r) for r in ("2.7.1", "2.7.2", "2.8.0", "2.8.1", "3.0.0", "4.1.0")] == [
        False,
        True,
        False,
        True,
        True,
        True,
    ]
    assert behaviour("2.8.0").diverged_fetch_moves_leader  # KAFKA-13141
    assert not behaviour("2.7.2").diverged_fetch_moves_leader
    assert not behaviour("2.8.1").diverged_fetch_moves_leader
    assert behaviour("3.4.0").hw_before_diverging_truncation  # KAFKA-14704
    assert not behaviour("3.4.1").hw_before_diverging_truncation


def test_a_caught_up_follower_leaves_the_isr_only_before_2_1():
    """Partition.getOutOfSyncReplicas: before 2.1 any follower not caught up within
    replica.lag.time.max.ms (one that stopped fetching, even at the leader's LEO); from
    2.1 never one whose last fetch reached the leader's LEO (KAFKA-7152)."""
    caught_up = [
        "write(leader=r0)",
        "fetch_request(follower=r1, leader=r0)",
        "fetch_response(follower=r1)",
        "fetch_request(follower=r1, leader=r0)",
    ]
    for release, shrinkable in (("0.10.2", True), ("2.0.1", True), ("2.1.0", False)):
        model, states = run(release, caught_up, records=1)
        leader = states[-1].replicas[0]
        assert leader.remote_leo[1] == leader.leo == leader.hw == 1
        enabled = A("shrink_isr", 0, 1) in list(model.actions(states[-1]))
        assert enabled == shrinkable, release
    _model, states = run("2.0.1", [*caught_up, "shrink_isr(leader=r0, follower=r1)"], records=1)
    assert states[-1].ctrl_isr == states[-1].replicas[0].isr == 0b01
    # After the write and before r1's fetch reached it, every release may remove r1.
    model, states = run("2.1.0", caught_up[:1], records=1)
    assert A("shrink_isr", 0, 1) in list(model.actions(states[-1]))


def test_truncation_on_fetch_starts_in_2_8():
    assert behaviour("2.7.2").truncation != ON_FETCH  # 2.7 followers never send lastFetchedEpoch
    assert behaviour("2.8.0").truncation == ON_FETCH
    kinds = KafkaReplication(make_config({"mode": "3.5.0"})).action_kinds()
    assert "epoch_request" not in kinds and "diverging_truncate" not in kinds
    assert "diverging_truncate" in KafkaReplication(make_config({"mode": "3.4.0"})).action_kinds()


def test_a_pending_shrink_keeps_the_hw_on_the_maximal_isr():
    steps = ["shrink_isr(leader=r0, follower=r1)", "write(leader=r0)"]
    _model, states = run("2.7.0", steps, records=1)
    assert states[-1].replicas[0].hw == 0  # r1 still counts until the controller answers
    assert states[-1].replicas[0].pending_isr == 0b01
    _model, states = run("2.7.0", [*steps, "alter_isr(leader=r0)"], records=1)
    assert states[-1].replicas[0].hw == 1 and states[-1].ctrl_isr == 0b01
    _model, broken = run("2.7.0", steps, records=1, broken_rule="maximal-isr")
    assert broken[-1].replicas[0].hw == 1  # what B1 shows


def test_a_fenced_broker_rejoins_the_isr_only_by_fetching():
    steps = ["crash(replica=r1, keep=0)", "notice_crash(replica=r1, new_leader=r0)"]
    steps += ["restart(replica=r1)", "notice_restart(replica=r1)"]
    _model, states = run("3.5.0", steps, records=1, kraft=True)
    assert states[2].ctrl_isr == states[-1].ctrl_isr == 0b01  # out until it fetches
    _model, broken = run("3.5.0", steps, records=1, kraft=True, broken_rule="isr-join-by-fetch")
    assert broken[-1].ctrl_isr == 0b11 and broken[-1].replicas[1].leo == 0  # what B5 shows


def test_a_diverged_follower_truncates_on_the_fetch_response():
    steps = [
        "write(leader=r0)",
        "elect(leader=r1)",
        "deliver(replica=r0)",
        "deliver(replica=r1)",
        "write(leader=r1)",
        "fetch_request(follower=r0, leader=r1)",
    ]
    _model, states = run("3.5.0", steps)
    assert states[-1].replicas[0].inflight[0] == DIVERGING
    assert states[-1].replicas[1].remote_leo[0] == -1  # KAFKA-13141 fixed: not recorded
    _model, states = run("3.5.0", [*steps, "fetch_response(follower=r0)"])
    follower = states[-1].replicas[0]
    assert follower.log == () and follower.hw == 0  # m1@e1 gone, no HW taken (KAFKA-14704)
    _model, states = run("2.8.0", steps)
    assert states[-1].replicas[1].remote_leo[0] == 1  # 2.8.0 records the diverged offset


def test_release_defaults_for_kraft_and_elr():
    assert not make_config({"mode": "3.9.1"}).kraft and make_config({"mode": "4.0.0"}).kraft
    assert not make_config({"mode": "4.0.0"}).elr and make_config({"mode": "4.1.0"}).elr
    assert make_config({"mode": "4.0.0", "elr": True}).elr
    with pytest.raises(ConfigError, match="no Eligible Leader Replicas"):
        make_config({"mode": "3.9.1", "elr": True})
    with pytest.raises(ConfigError, match="broken_rule: expected one of"):
        make_config({"mode": "3.9.1", "broken_rule": "nope"})


@pytest.mark.parametrize(
    ("release", "extra", "violated"),
    [("4.0.0", {}, True), ("4.0.0", {"elr": True}, False), ("4.1.0", {}, False)],
)
def test_elr_ends_the_last_replica_standing_loss(release, extra, violated):
    bounds = dict(records=1, epochs=3, crashes=1, lossy_crash=True, min_insync_replicas=2)
    model = KafkaReplication(make_config({"mode": release, **bounds, **extra}))
    found = bfs(model, select(["no-committed-data-loss"]))
    assert found.exhaustive or violated
    assert bool(found.violations) is violated


def test_kip_903_refuses_a_member_that_registered_again():
    steps = [
        "shrink_isr(leader=r0, follower=r1)",
        "alter_isr(leader=r0)",
        "write(leader=r0)",
        "fetch_request(follower=r1, leader=r0)",
        "fetch_response(follower=r1)",
        "fetch_request(follower=r1, leader=r0)",
        "crash(replica=r1, keep=0)",
        "notice_crash(replica=r1, new_leader=r0)",
        "restart(replica=r1)",
        "notice_restart(replica=r1)",
        "alter_isr(leader=r0)",
    ]
    bounds = dict(records=1, lossy_crash=True)
    _m, zk = run("3.6.0", steps, **bounds)
    _m, kraft = run("3.6.0", steps, kraft=True, **bounds)
    assert zk[-1].ctrl_isr == 0b11  # ZooKeeper mode: accepted (B4z)
    assert kraft[-1].ctrl_isr == 0b01 and kraft[-1].replicas[0].pending_isr == 0


# r0 leads epoch 3 and is demoted before it writes in it: it cached (3, LEO 1) as
# leader (KAFKA-7415), which no record backs, while the new leader r1 wrote m2 in
# epoch 2.  Asked for epoch 3, r1 answers "epoch 2 ends at 2"; r0's own epoch 2 is
# its epoch 1, which ends at 1, so it truncates to 1, its log end: no record goes.
UNWRITTEN_EPOCH = [
    "write(leader=r0)",
    "fetch_request(follower=r1, leader=r0)",
    "fetch_response(follower=r1)",
    "elect(leader=r1)",
    "deliver(replica=r1)",
    "write(leader=r1)",
    "deliver(replica=r0)",
    "elect(leader=r0)",
    "deliver(replica=r0)",
    "elect(leader=r1)",
    "deliver(replica=r1)",
    "deliver(replica=r1)",
    "deliver(replica=r0)",
]
EXCHANGE = ["epoch_request(follower=r0, leader=r1)", "epoch_response(follower=r0)"]


@pytest.mark.parametrize(
    ("release", "stuck"), [("2.6.0", True), ("2.6.1", False), ("2.7.0", False)]
)
def test_a_no_op_truncation_drops_the_epoch_never_written_from_kafka_10706(release, stuck):
    """Log.truncateTo at the log end still truncates the leader-epoch cache there
    (KAFKA-10706: 2.6.1, 2.7.0 on).  Before, the follower kept asking for epoch 3 and
    never fetched again; after, it asks for epoch 1 and is done."""
    _model, states = run(release, UNWRITTEN_EPOCH + EXCHANGE, records=2, epochs=4, crashes=0)
    assert states[len(UNWRITTEN_EPOCH)].replicas[0].unwritten_epoch == 3
    follower = states[-1].replicas[0]
    assert len(follower.log) == 1  # [m1@e1]: no record cut
    assert follower.truncation == MUST_TRUNCATE and (follower.unwritten_epoch == 3) is stuck
    _model, states = run(release, UNWRITTEN_EPOCH + EXCHANGE * 2, records=2, epochs=4, crashes=0)
    assert (states[-1].replicas[0].truncation == MUST_TRUNCATE) is stuck


def test_the_fetch_with_divergence_gets_past_an_epoch_never_written():
    """2.8+ (KAFKA-10554): the same end, through the divergingEpoch of a fetch."""
    steps = UNWRITTEN_EPOCH + [
        "fetch_request(follower=r0, leader=r1)",
        "fetch_response(follower=r0)",
    ]
    steps += ["fetch_request(follower=r0, leader=r1)", "fetch_response(follower=r0)"]
    _model, states = run("4.1.0", steps, records=2, epochs=4, crashes=0)
    assert len(states[-1].replicas[0].log) == 2  # it fetched m2@e2 from r1


FENCE_FOLLOWER = [
    "write(leader=r0)",
    "crash(replica=r1, keep=0)",
    "notice_crash(replica=r1, new_leader=r0)",
]


def test_a_fenced_follower_leaves_the_isr_without_a_new_leader_epoch_from_kraft_3_6():
    """KAFKA-15021 (metadata.version 3.6-IV0): the controller's removal keeps the leader
    epoch, so it is possible at the epoch bound; the leader adopts it later."""
    _model, states = run("4.1.0", FENCE_FOLLOWER, records=1, epochs=1)
    fenced = states[-1]
    assert (fenced.ctrl_epoch, fenced.ctrl_isr, fenced.ctrl_isr_written) == (1, 0b01, 1)
    lead = fenced.replicas[0]
    assert (lead.isr, lead.zk_current, lead.hw) == (0b11, 0, 0)  # not applied yet
    _model, states = run("4.1.0", [*FENCE_FOLLOWER, "apply_isr(leader=r0)"], records=1, epochs=1)
    lead = states[-1].replicas[0]
    assert (lead.epoch, lead.isr, lead.zk_current, lead.hw) == (1, 0b01, 1, 1)
    assert states[-1].committed == lead.log


@pytest.mark.parametrize(
    ("release", "extra"), [("3.5.0", {}), ("3.6.0", {"metadata_version": "3.5-IV2"})]
)
def test_before_metadata_version_3_6_the_removal_is_a_new_leader_epoch(release, extra):
    bounds = dict(records=1, epochs=2, kraft=True, **extra)
    model, states = run(release, FENCE_FOLLOWER, **bounds)
    assert (states[-1].ctrl_epoch, states[-1].ctrl_isr) == (2, 0b01)
    assert not any(a.name == "apply_isr" for a in model.actions(states[-1]))
    model, states = run(release, FENCE_FOLLOWER[:2], **{**bounds, "epochs": 1})
    assert not any(a.name == "notice_crash" for a in model.actions(states[-1]))


def test_a_pending_alter_partition_is_refused_after_the_removal():
    steps = ["shrink_isr(leader=r0, follower=r2)", "crash(replica=r1, keep=0)"]
    steps += ["notice_crash(replica=r1, new_leader=r0)", "alter_isr(leader=r0)"]
    _model, states = run("4.1.0", steps, replicas=3, records=0)
    refused = states[-1]
    assert refused.ctrl_isr == 0b101 and refused.replicas[0].pending_isr == 0b011
    _model, states = run("4.1.0", [*steps, "apply_isr(leader=r0)"], replicas=3, records=0)
    lead = states[-1].replicas[0]
    assert (lead.isr, lead.pending_isr, lead.zk_current) == (0b101, 0, 1)


# r0 leads {r0, r1} (r2 shrunk and the change adopted); the controller then removes the
# fenced r1 without a new leader epoch (KRaft 3.6+), so r0's partition epoch is stale
# until it applies the record; r2 is caught up at r0's HW.
STALE_EPOCH = [
    "shrink_isr(leader=r0, follower=r2)",
    "alter_isr(leader=r0)",
    "fence(replica=r1, new_leader=r0)",
    "fetch_request(follower=r2, leader=r0)",
]


def test_a_leader_with_a_stale_partition_epoch_proposes_and_waits_pending():
    """From 2.7 (KIP-497) maybeExpandIsr / maybeShrinkIsr check only
    ``!partitionState.isInflight``: a leader whose cached partition epoch is stale still
    proposes, the controller refuses it (INVALID_UPDATE_VERSION) and the leader "gives
    up" in its pending state (4.1 Partition.handleAlterPartitionError returns false)
    until the next metadata record (makeLeader -> updateAssignmentAndIsr), its maximal
    ISR holding the HW back.  Found by replcheck conform (random walks on 4.1.0)."""
    bounds = dict(replicas=3, records=1, fencing=True)
    model, states = run("4.1.0", STALE_EPOCH, **bounds)
    lead = states[-1].replicas[0]
    assert (states[-1].ctrl_isr, lead.isr, lead.zk_current) == (0b001, 0b011, 0)
    assert lead.pending_isr == 0b111 and lead.alter_item == 1  # proposed: r2 caught up
    assert states[-1].alter_requests == ((0, 1, 0, 0b111, 0),)  # with the stale epoch
    steps = [*STALE_EPOCH, "alter_isr(leader=r0)"]  # refused: INVALID_UPDATE_VERSION
    model, states = run("4.1.0", steps, **bounds)
    refused = states[-1]
    lead = refused.replicas[0]
    assert (refused.ctrl_isr, refused.alter_requests) == (0b001, ())
    assert (lead.isr, lead.pending_isr, lead.alter_item) == (0b011, 0b111, 0)  # item answered
    names = {a.name for a in model.actions(refused)}
    assert "apply_isr" in names and not names & {"shrink_isr", "shrink_isr_set"}
    # r1 (fenced, still fetching: same leader epoch) catches up; the HW waits for r2,
    # a member of r0's maximal ISR, until the record's ISR {r0} replaces the pending one.
    steps += ["write(leader=r0)", "fetch_request(follower=r1, leader=r0)"]
    steps += ["fetch_response(follower=r1)", "fetch_request(follower=r1, leader=r0)"]
    _model, states = run("4.1.0", steps, **bounds)
    lead = states[-1].replicas[0]
    assert (lead.remote_leo[1:], lead.leo, lead.hw, lead.pending) == ((1, 0), 1, 0, 0b10)
    _model, states = run("4.1.0", [*steps, "apply_isr(leader=r0)"], **bounds)
    lead = states[-1].replicas[0]
    assert (lead.isr, lead.pending_isr, lead.zk_current, lead.hw) == (0b001, 0, 1, 1)


@pytest.mark.parametrize(("release", "proposes"), [("2.6.3", False), ("2.8.2", True)])
def test_a_stale_zk_version_stops_the_isr_write_only_before_2_7(release, proposes):
    """Before 2.7 the ISR write is a ZooKeeper update conditional on the leader's cached
    zkVersion (Partition.updateIsr): with a stale one it fails and the leader keeps its
    ISR, so the model does not take it.  From 2.7 the leader proposes anyway (AlterIsr)
    and the controller refuses it (2.8 handleAlterIsrResponse: "Giving up")."""
    steps = ["shrink_isr(leader=r0, follower=r2)"]
    if proposes:
        steps.append("alter_isr(leader=r0)")
    steps += ["crash(replica=r1, keep=0)", "notice_crash(replica=r1, new_leader=r0)"]
    bounds = dict(replicas=3, records=0)
    model, states = run(release, steps, **bounds)
    stale = states[-1]
    lead = stale.replicas[0]
    assert (stale.ctrl_epoch, stale.ctrl_isr, lead.epoch, lead.isr, lead.zk_current) == (
        2,
        0b001,
        1,
        0b011,
        0,
    )
    assert (A("shrink_isr", 0, 1) in list(model.actions(stale))) == proposes
    model, states = run(release, [*steps, "fetch_request(follower=r2, leader=r0)"], **bounds)
    lead = states[-1].replicas[0]
    assert (states[-1].ctrl_isr, states[-1].ctrl_isr_written, lead.isr) == (0b001, 0, 0b011)
    assert lead.pending_isr == (0b111 if proposes else 0)
    assert len(states[-1].alter_requests) == int(proposes)


LAST_LEADER_BACK_FIRST = [
    "write(leader=r0)",
    "fetch_request(follower=r1, leader=r0)",
    "fetch_response(follower=r1)",
    "fetch_request(follower=r1, leader=r0)",
    "crash(replica=r1, keep=1)",
    "notice_crash(replica=r1, new_leader=r0)",  # ISR {r0} below min ISR: ELR {r1}
    "crash(replica=r0, keep=1)",
    "notice_crash(replica=r0, new_leader=none)",  # ISR empty, ELR {r0, r1}
    "restart(replica=r0)",
    "notice_restart(replica=r0)",  # unclean: leaves the ELR; r1 still in it
    "restart(replica=r1)",
    "notice_restart(replica=r1)",  # unclean: the ELR is empty now
]


def test_the_last_known_leader_is_elected_at_another_brokers_registration():
    """KIP-966 (4.1): the leaderless partition's election runs at every registration
    (handleBrokerUnfenced), not only the last known leader's own: r0 registered while
    the ELR still held r1, and is elected once r1's unclean registration empties it
    (PartitionChangeBuilder.canElectLastKnownLeader)."""
    bounds = dict(replicas=2, records=1, epochs=3, crashes=2, min_insync_replicas=2)
    _model, states = run("4.1.0", LAST_LEADER_BACK_FIRST, **bounds)
    assert states[-3].ctrl_leader == -1 and states[-3].ctrl_elr == 0b10
    after = states[-1]
    assert (after.ctrl_leader, after.ctrl_epoch, after.ctrl_isr, after.ctrl_elr) == (0, 3, 0b01, 0)


def test_an_unclean_election_empties_the_elr():
    """PartitionChangeBuilder.maybeUpdateRecordElr (4.0/4.1): ELR members would be a clean
    choice after an unclean leader, so the unclean election clears them."""
    steps = [
        "shrink_isr(leader=r0, follower=r2)",
        "alter_isr(leader=r0)",
        "crash(replica=r1, keep=0)",
        "notice_crash(replica=r1, new_leader=r0)",  # ISR {r0} below min ISR: ELR {r1}
        "crash(replica=r0, keep=0)",
        "notice_crash(replica=r0, new_leader=r2)",  # unclean: r2 is in neither
    ]
    bounds = dict(replicas=3, records=0, crashes=2, min_insync_replicas=2, unclean_election=True)
    _model, states = run("4.1.0", steps, **bounds)
    assert states[-3].ctrl_elr == 0b010
    assert (states[-1].ctrl_leader, states[-1].ctrl_isr, states[-1].ctrl_elr) == (2, 0b100, 0)


def test_an_elr_members_unclean_registration_is_a_new_partition_epoch():
    """handleBrokerUncleanShutdown (4.0/4.1) writes a partition change record while r0
    leads: its cached partition epoch and its queued AlterPartition are stale after it."""
    steps = [
        "shrink_isr(leader=r0, follower=r2)",
        "alter_isr(leader=r0)",  # ISR {r0, r1}: at min ISR, the ELR is empty
        "crash(replica=r1, keep=0)",
        "notice_crash(replica=r1, new_leader=r0)",  # ISR {r0} below min ISR: ELR {r1}
        "apply_isr(leader=r0)",
        "fetch_request(follower=r2, leader=r0)",  # caught up: r0 proposes ISR {r0, r2}
        "restart(replica=r1)",
    ]
    bounds = dict(replicas=3, records=0, crashes=1, min_insync_replicas=2)
    _model, states = run("4.1.0", steps, **bounds)
    before = states[-1]
    assert before.ctrl_elr == 0b010 and before.replicas[0].zk_current == 1
    assert before.replicas[0].pending_isr == 0b101 and before.alter_requests
    registered = [*steps, "notice_restart(replica=r1)"]
    model, states = run("4.1.0", registered, **bounds)
    after = states[-1]
    assert (after.ctrl_leader, after.ctrl_isr, after.ctrl_elr) == (0, 0b001, 0)
    assert (after.ctrl_isr_written, after.replicas[0].zk_current) == (1, 0)
    assert any(a.name == "apply_isr" for a in model.actions(after))
    _model, states = run("4.1.0", [*registered, "alter_isr(leader=r0)"], **bounds)
    assert states[-1].ctrl_isr == 0b001  # INVALID_UPDATE_VERSION: the expansion is refused


# r0 shrinks the ISR to itself and adopts the change from the AlterPartition response;
# r1 then catches up and r0 proposes it back.
REPLAYED = [
    "shrink_isr(leader=r0, follower=r1)",
    "alter_isr(leader=r0)",
    "fetch_request(follower=r1, leader=r0)",
]


def test_the_leader_replays_its_adopted_change_and_drops_its_proposal():
    """KAFKA-13790's rule (3.3 to 4.1): Partition.makeLeader skips only a strictly older
    partition epoch, so the record of the change the leader adopted from the response
    commits its ISR again and drops the expansion it proposed since (finding F3)."""
    model, states = run("4.1.0", REPLAYED, records=1)
    lead = states[-1].replicas[0]
    assert (lead.isr, lead.pending_isr, lead.record_owed, lead.zk_current) == (0b01, 0b11, 1, 1)
    assert any(a.name == "reapply_isr" for a in model.actions(states[-1]))
    steps = [*REPLAYED, "reapply_isr(leader=r0)", "alter_isr(leader=r0)", "write(leader=r0)"]
    model, states = run("4.1.0", steps, records=1)
    accepted, wrote = states[-2], states[-1]
    assert accepted.ctrl_isr == 0b11  # the queued request's partition epoch is current
    lead = accepted.replicas[0]  # it ignores the response: no longer waiting
    assert (lead.isr, lead.pending_isr, lead.zk_current, lead.record_owed) == (0b01, 0, 0, 0)
    assert wrote.replicas[0].hw == 1 and wrote.acked == 0b10  # committed over ISR {r0}
    assert wrote.committed == wrote.replicas[0].log and not wrote.replicas[1].log
    model, states = run("4.1.0", [*steps, "apply_isr(leader=r0)"], records=1)
    lead = states[-1].replicas[0]  # the expansion's own record, a newer partition epoch
    assert (lead.isr, lead.zk_current) == (0b11, 1)


def test_a_response_adopted_first_makes_the_older_record_a_no_op():
    """makeLeader skips the older record once the leader holds the newer epoch."""
    steps = [*REPLAYED, "alter_isr(leader=r0)"]
    model, states = run("4.1.0", steps, records=1)
    lead = states[-1].replicas[0]
    assert (lead.isr, lead.pending_isr, lead.record_owed) == (0b11, 0, 1)
    assert not any(a.name == "reapply_isr" for a in model.actions(states[-1]))


@pytest.mark.parametrize(("release", "extra"), [("3.6.0", {}), ("2.7.0", {})])
def test_zookeeper_leaders_owe_no_record(release, extra):
    """A ZooKeeper controller sends no LeaderAndIsr for an AlterIsr it accepted."""
    model, states = run(release, REPLAYED, records=1, **extra)
    assert states[-1].replicas[0].record_owed == 0
    assert "reapply_isr" not in model.action_kinds()


def test_before_3_6_the_replay_needs_an_adopted_expansion():
    """A KRaft shrink bumps the leader epoch before KAFKA-15021: the leader takes it from
    the new epoch's record, owes none, and so cannot replay it."""
    model, states = run("3.5.0", REPLAYED[:2], records=1, kraft=True)
    assert states[-1].ctrl_epoch == 2 and states[-1].replicas[0].record_owed == 0
    assert "reapply_isr" in model.action_kinds()


def test_after_the_replay_the_leader_proposes_nothing_until_the_controller_answers():
    """KAFKA-12686 (3.0+): the replay dropped the leader's pending expansion, but its
    AlterPartitionManager still holds the unanswered request, so another proposal is
    OPERATION_NOT_ATTEMPTED: no shrink, and a follower's fetch grows no ISR.  The
    controller's answer empties the item."""
    steps = [*REPLAYED, "reapply_isr(leader=r0)"]
    model, states = run("4.1.0", steps, records=1)
    lead = states[-1].replicas[0]
    assert (lead.isr, lead.pending_isr, lead.alter_item) == (0b01, 0, 1)
    assert len(states[-1].alter_requests) == 1
    refetch = [*steps, "fetch_response(follower=r1)", "fetch_request(follower=r1, leader=r0)"]
    _model, states = run("4.1.0", refetch, records=1)
    assert states[-1].replicas[0].pending_isr == 0 and len(states[-1].alter_requests) == 1
    _model, states = run("4.1.0", [*steps, "alter_isr(leader=r0)"], records=1)
    assert states[-1].replicas[0].alter_item == 0 and not states[-1].alter_requests


@pytest.mark.parametrize(
    ("release", "kraft", "second"),
    [
        ("2.8.0", False, True),  # makeLeader's clearPending drops the item
        ("3.0.0", False, False),
        ("3.9.1", True, False),
    ],
)
def test_a_second_request_queues_only_before_kafka_12686(release, kraft, second):
    """Without crashes a leader is one process: some reachable state of 2.7/2.8 has two of
    its requests queued (a new leader epoch cleared its pending state and its item), none
    of 3.0+ has, and there ``alter_item`` says whether its request is queued."""
    bounds = {"replicas": 2, "records": 1, "epochs": 3, "crashes": 0}
    model = KafkaReplication(make_config({"mode": release, "kraft": kraft, **bounds}))
    waits = model.behaviour.one_isr_request_in_flight
    doubled = False
    for s in reachable(model):
        senders = [req[0] for req in s.alter_requests]
        doubled = doubled or len(senders) != len(set(senders))
        items = [i for i, r in enumerate(s.replicas) if r.alter_item]
        assert items == (sorted(set(senders)) if waits else []), s
    assert doubled == second


# A Fetch answered in epoch 1, then a new leader epoch with the same leader reaches the
# follower while the answer is in flight: in KRaft before metadata.version 3.6-IV0 an ISR
# shrink starts one; with ZooKeeper, the controller's removal of a crashed follower.
SHRINK_NEW_EPOCH = [
    "write(leader=r0)",
    "fetch_request(follower=r1, leader=r0)",
    "fetch_response(follower=r1)",  # a record: its log has a latest epoch
    "write(leader=r0)",
    "fetch_request(follower=r1, leader=r0)",
    "shrink_isr(leader=r0, follower=r1)",
    "alter_isr(leader=r0)",
    "deliver(replica=r0)",
    "deliver(replica=r1)",
]
CRASH_NEW_EPOCH = [
    "write(leader=r0)",
    "fetch_request(follower=r1, leader=r0)",
    "fetch_response(follower=r1)",  # a record: its log has a latest epoch
    "write(leader=r0)",
    "fetch_request(follower=r1, leader=r0)",
    "crash(replica=r2, keep=0)",
    "notice_crash(replica=r2, new_leader=r0)",
    "deliver(replica=r0)",
    "deliver(replica=r1)",
]
OLD_MV = {"kraft": True, "metadata_version": "3.5-IV2"}


@pytest.mark.parametrize(
    "release, extra, kept",
    [
        ("2.8.0", {"replicas": 3}, True),
        ("3.5.0", {"kraft": True}, True),
        ("3.9.0", {"replicas": 3}, True),
        ("3.9.0", OLD_MV, True),
        ("4.0.0", OLD_MV, True),
        # KAFKA-18991: the request's leader epoch must be the fetcher's current one.
        ("3.9.1", {"replicas": 3}, False),
        ("3.9.1", OLD_MV, False),
        ("4.0.1", OLD_MV, False),
        ("4.1.0", OLD_MV, False),
        # Before truncation on fetch the re-added partition is Truncating.
        ("2.7.2", {"replicas": 3}, False),
        ("2.8.0", {"replicas": 3, "ibp": "2.7-IV0"}, False),
    ],
)
def test_a_fetch_answer_of_the_older_epoch_is_kept_until_kafka_18991(release, extra, kept):
    """ReplicaManager (makeFollowers, applyLocalFollowersDelta) re-adds the partition at
    its log end, Fetching with truncation on fetch (AbstractFetcherThread
    .partitionFetchState); until KAFKA-18991 processFetchRequest compares only the fetch
    offset, so the answer of epoch 1 is appended in epoch 2."""
    steps = CRASH_NEW_EPOCH if extra.get("replicas") == 3 else SHRINK_NEW_EPOCH
    model, states = run(release, steps, records=2, **extra)
    follower = states[-1].replicas[1]
    assert (follower.epoch, follower.leader) == (2, 0)
    assert (follower.inflight != ()) == kept
    assert behaviour(release).fetch_answer_checks_epoch == (release in ("3.9.1", "4.0.1", "4.1.0"))
    if kept:
        after = model.next_state(states[-1], A("fetch_response", 1))
        assert after.replicas[1].log == states[-1].replicas[0].log  # its epoch-1 record
