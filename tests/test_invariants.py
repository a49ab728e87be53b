"""Each invariant on hand-built states: one that satisfies it, one that breaks it."""

from __future__ import annotations

from replcheck.invariants import INVARIANTS, UnknownInvariant, select
from replcheck.invariants.kafka.predicates import (
    acked_writes_durable,
    consistent_logs,
    follower_hw_committed,
    hw_le_leo,
    hw_monotonic,
    leader_in_isr,
    no_committed_data_loss,
    strong_isr,
)
from replcheck.model.kafka.state import (
    MUST_TRUNCATE,
    NOT_TRUNCATED,
    TRUNCATED,
    Replica,
    State,
    make_record,
)

M1, M2, M3 = make_record(1, 1), make_record(1, 2), make_record(2, 3)


def replica(
    log=(), hw=0, epoch=1, leader=0, alive=1, truncation=TRUNCATED, leading=False, epoch_start=0
):
    return Replica(
        alive=alive,
        epoch=epoch,
        log=tuple(log),
        hw=hw,
        hw_checkpoint=0,
        truncation=truncation,
        unwritten_epoch=0,
        pending=0,
        zk_current=0,
        epoch_start=epoch_start if leading else -1,
        clean_shutdown=0,
        record_owed=0,
        alter_item=0,
        fenced=0,
        dir_unreported=0,
        inflight=(),
        remote_leo=(-1, -1) if leading else (),
        isr=0b11 if leading else 0,
        pending_isr=0,
        leader=leader,
    )


def state(r0, r1, leader=0, epoch=1, isr=0b11, committed=(), acked=0, hides_stale_hw=0):
    return State(
        ctrl_leader=leader,
        ctrl_epoch=epoch,
        ctrl_isr=isr,
        ctrl_live=0b11,
        ctrl_elr=0,
        ctrl_isr_written=0,
        written=3,
        crashes=0,
        committed=tuple(committed),
        acked=acked,
        ctrl_history=((0, 0b11),) * epoch,
        alter_requests=(),
        hides_stale_hw=hides_stale_hw,
        last_known_on_leaderless=0,
        replicas=(r0, r1),
    )


def test_hw_le_leo():
    assert hw_le_leo(state(replica([M1], hw=1, leading=True), replica([M1], hw=1))) is None
    msg = hw_le_leo(state(replica([M1], hw=1, leading=True), replica([], hw=1)))
    assert msg and "r1" in msg and "HW 1" in msg
    # A crashed replica has no in-memory HW to check.
    assert hw_le_leo(state(replica([M1], hw=1, leading=True), replica([], hw=1, alive=0))) is None


def test_no_committed_data_loss():
    keep = state(replica([M1, M2], hw=2, leading=True), replica([M1]), committed=[M1, M2])
    assert no_committed_data_loss(keep) is None
    lost = state(
        replica([M1]),
        replica([M1], epoch=2, leader=1, leading=True),
        leader=1,
        epoch=2,
        committed=[M1, M2],
    )
    msg = no_committed_data_loss(lost)
    assert msg and "m2@e1" in msg and "offset 1" in msg and "r1" in msg
    replaced = state(
        replica([M1]),
        replica([M1, M3], epoch=2, leader=1, leading=True),
        leader=1,
        epoch=2,
        committed=[M1, M2],
    )
    assert "replaced by m3@e2" in no_committed_data_loss(replaced)


def test_no_committed_data_loss_ignores_a_leader_not_yet_acting():
    # The controller named r1 in epoch 2 but r1 has not heard: no true leader to judge.
    waiting = state(
        replica([M1]), replica([], epoch=1, leader=0), leader=1, epoch=2, committed=[M1]
    )
    assert no_committed_data_loss(waiting) is None


def test_acked_writes_durable():
    ok = state(replica([M1, M2], hw=2, leading=True), replica([M1]), acked=0b110)
    assert acked_writes_durable(ok) is None
    gone = state(replica([M1], hw=1, leading=True), replica([M1]), acked=0b110)
    msg = acked_writes_durable(gone)
    assert msg and "m2" in msg and "r0" in msg


def test_consistent_logs_below_both_hws():
    same = state(replica([M1, M2], hw=2, leading=True), replica([M1, M2], hw=2))
    assert consistent_logs(same) is None
    diverged = state(replica([M1, M2], hw=2, leading=True), replica([M1, M3], hw=2))
    msg = consistent_logs(diverged)
    assert msg and "offset 1" in msg and "m2@e1" in msg and "m3@e2" in msg
    # Different records above one of the HWs are not judged by the first clause
    # (r1 kept its log across an epoch change, so the prefix clause does not apply)...
    above = state(
        replica([M1, M2], hw=1, leading=True), replica([M1, M3], hw=2, truncation=NOT_TRUNCATED)
    )
    assert consistent_logs(above) is None
    # ...and a follower that still owes its epoch truncation is not judged yet.
    owed = state(
        replica([M1, M2], hw=2, leading=True), replica([M1, M3], hw=2, truncation=MUST_TRUNCATE)
    )
    assert consistent_logs(owed) is None


def test_consistent_logs_follower_prefix():
    prefix = state(replica([M1, M2], hw=1, leading=True), replica([M1], hw=1))
    assert consistent_logs(prefix) is None
    longer = state(replica([M1], hw=0, leading=True), replica([M1, M3], hw=0))
    msg = consistent_logs(longer)
    assert msg and "not a prefix" in msg and "offset 1" in msg


def test_leader_in_isr():
    assert leader_in_isr(state(replica(leading=True), replica(), isr=0b11)) is None
    msg = leader_in_isr(state(replica(leading=True), replica(), isr=0b10))
    assert msg and "r0" in msg


def test_strong_isr():
    ok = state(replica([M1, M2], hw=2, leading=True), replica([M1, M2], hw=1))
    assert strong_isr(ok) is None
    short = state(replica([M1, M2], hw=2, leading=True), replica([M1], hw=1))
    msg = strong_isr(short)
    assert msg and "r1" in msg and "offset 1" in msg
    # Outside the ISR, a short log is allowed.
    assert strong_isr(state(replica([M1, M2], hw=2, leading=True), replica([M1]), isr=1)) is None


def test_select_by_id_and_unknown_ids():
    assert [inv.id for inv in select(["hw-le-leo"])] == ["hw-le-leo"]
    assert select(None) == tuple(inv for inv in INVARIANTS if inv.default)
    assert "hw-monotonic" not in {inv.id for inv in select(None)}
    assert select(["all"]) == INVARIANTS
    try:
        select(["no-such-thing"])
    except UnknownInvariant as exc:
        assert "no-such-thing" in str(exc) and "hw-le-leo" in str(exc)
    else:
        raise AssertionError("unknown invariant accepted")


def test_follower_hw_committed():
    leader = replica([M1, M2], hw=1, leading=True)
    assert follower_hw_committed(state(leader, replica([M1], hw=1))) is None
    # The follower exposes m3 at offset 1 below its HW 2; the leader has m2 there.
    message = follower_hw_committed(state(leader, replica([M1, M3], hw=2)))
    assert message is not None and "r1 exposes m3@e2 at offset 1" in message
    # A follower's HW beyond its log end exposes nothing more.
    assert follower_hw_committed(state(leader, replica([M1], hw=2))) is None


def test_hw_monotonic():
    leader = replica([M1, M2], hw=1, leading=True)
    assert hw_monotonic(state(leader, replica([M1]), committed=[M1])) is None
    message = hw_monotonic(state(leader, replica([M1]), committed=[M1, M2]))
    assert message is not None and "end offset 1" in message
    # KIP-207 (2.2+): a leader of epoch 2 whose HW is below its epoch's start (its LEO
    # 2 at election, no epoch-2 record yet) answers OFFSET_NOT_AVAILABLE: it lists nothing.
    new_leader = replica([M1, M2], hw=1, leading=True, epoch=2, epoch_start=2)
    stale = dict(leader=0, epoch=2, committed=[M1, M2])
    assert hw_monotonic(state(new_leader, replica([M1]), **stale, hides_stale_hw=1)) is None
    assert hw_monotonic(state(new_leader, replica([M1]), **stale, hides_stale_hw=0))
    # Once it is past its epoch's start, a lower HW is listed again in any release.
    caught_up = dict(leader=0, epoch=1, committed=[M1, M2])
    assert hw_monotonic(state(leader, replica([M1]), **caught_up, hides_stale_hw=1))
