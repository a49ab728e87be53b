"""A broker's rules for its own replica, as z3 terms: mirrors model/kafka/broker.py.

Each method builds the successor of a symbolic state for concrete replica ids;
the explicit method it mirrors (named in its docstring) carries the reference
and Kafka citations.
"""

from __future__ import annotations

import z3

from replcheck.model.kafka.config import Config
from replcheck.model.kafka.epochs import UNDEFINED
from replcheck.model.kafka.releases import (
    ON_FETCH,
    RETRUNCATE_EVERY,
    RETRUNCATE_MISSED,
    TRUNCATE_TO_HW,
)
from replcheck.model.kafka.state import (
    DIVERGING,
    EPOCH_RESPONSE,
    FETCH_RESPONSE,
    MUST_TRUNCATE,
    NO_LEADER,
    NOT_TRUNCATED,
    TRUNCATED,
    UNKNOWN_LEO,
    members,
)
from replcheck.model.kafka.symbolic.epochs import SymEpochs, view
from replcheck.model.kafka.symbolic.state import Bool, Num, SymReplica, SymState


class SymBroker(SymEpochs):
    """Mixed into KafkaSymbolic: the replica's own rules."""

    config: Config
    records: int

    # ------------------------------------------------------------- producer

    def _do_write(self, s: SymState, i: int) -> SymState:
        """Mirrors BrokerRules._do_write."""
        r = s.replicas[i]
        rid = s.written + 1
        log_ep = tuple(self.ite(r.log_len == k, r.epoch, ep) for k, ep in enumerate(r.log_ep))
        log_id = tuple(self.ite(r.log_len == k, rid, x) for k, x in enumerate(r.log_id))
        acked, pending = s.acked, r.pending
        if self.config.acks == 1:
            acked = self._add_record(acked, rid)
        if self.config.acks == -1:
            pending = self._add_record(pending, rid)
        r = r.replace(
            log_ep=log_ep,
            log_id=log_id,
            log_len=r.log_len + 1,
            unwritten_epoch=self.num(0),
            pending=pending,
        )
        r, acked = self._advance_leader_hw(r, i, acked)
        return s.replace(written=rid, acked=acked).with_replica(i, r)

    @staticmethod
    def _add_record(mask: tuple, rid: Num) -> tuple:
        """``mask | 1 << rid`` for a mask of record ids 1..R."""
        return tuple(z3.Or(bit, rid == j + 1) for j, bit in enumerate(mask))

    # ------------------------------------------------------------------ ISR

    def _do_shrink_isr(self, s: SymState, i: int, f: int) -> SymState:
        """Mirrors BrokerRules._do_shrink_isr."""
        return self._shrink_isr(s, i, [f])

    def _do_shrink_isr_set(self, s: SymState, i: int, followers: int) -> SymState:
        """Mirrors BrokerRules._do_shrink_isr_set."""
        return self._shrink_isr(s, i, members(followers))

    def _shrink_isr(self, s: SymState, i: int, followers: list[int]) -> SymState:
        r = s.replicas[i]
        isr = r.isr
        for f in followers:
            isr = self.m_without(isr, f)
        if self.behaviour.alter_isr:
            return self._propose_isr(s, i, isr)
        r, acked = self._advance_leader_hw(r.replace(isr=isr), i, s.acked)
        return s.replace(ctrl_isr=isr, ctrl_isr_written=self.a.true, acked=acked).with_replica(i, r)

    def _no_isr_item(self, r: SymReplica) -> Bool:
        """The guard ``not r.alter_item``: only from 3.0 (KAFKA-12686); before, the
        item is always empty and the formula needs no term for it."""
        return z3.Not(r.alter_item) if self.behaviour.one_isr_request_in_flight else self.a.true

    def _propose_isr(self, s: SymState, i: int, isr: tuple) -> SymState:
        """Mirrors BrokerRules._propose_isr: append (i, epoch, zk_current, isr, 0) to the
        request slots.  Past the last slot the request is lost and ``alt_len`` leaves
        the domain (Layout.overflow): the layout's bound says no reachable state does."""
        r = s.replicas[i]
        at = s.alt_len
        none = self.none()
        s = s.replace(
            alt_len=at + 1,
            alt_sender=tuple(self.ite(at == q, i, x) for q, x in enumerate(s.alt_sender)),
            alt_epoch=tuple(self.ite(at == q, r.epoch, x) for q, x in enumerate(s.alt_epoch)),
            alt_ok=tuple(self.ite(at == q, r.zk_current, x) for q, x in enumerate(s.alt_ok)),
            alt_isr=tuple(self.ite(at == q, isr, x) for q, x in enumerate(s.alt_isr)),
            alt_restarted=tuple(self.ite(at == q, none, x) for q, x in enumerate(s.alt_restarted)),
        )
        item = self.a.boolean(self.behaviour.one_isr_request_in_flight)
        return s.with_replica(i, r.replace(pending_isr=isr, alter_item=item))

    def _advance_leader_hw(self, r: SymReplica, me: int, acked: tuple) -> tuple[SymReplica, tuple]:
        """Mirrors BrokerRules._advance_leader_hw.

        ``me`` is ``r.leader``, which every caller has made (or checked to be) the
        replica's own id; ``remote`` is always the replica's own ``remote_leo``.
        """
        cfg = self.config
        low = r.log_len
        isr = self.m_or(r.isr, r.pending_isr)
        if cfg.broken_rule == "maximal-isr":
            isr = self.ite(self.some(r.pending_isr), r.pending_isr, isr)
        blocked: Bool = False
        if self.behaviour.hw_needs_min_isr:
            blocked = self.count(r.isr) < cfg.min_insync_replicas
        for f in self.ids:
            if f != me:
                low = self.ite(z3.And(isr[f], r.remote[f] < low), r.remote[f], low)
        advance = z3.And(z3.Not(self.a.boolean(blocked)), low > r.hw)
        enough = self.count(isr) >= cfg.min_insync_replicas
        passed = []  # per record id: the HW passes it in this advance
        for j in range(1, self.records + 1):
            hit = [z3.And(r.hw <= k, k < low, r.log_id[k] == j) for k in range(len(r.log_id))]
            passed.append(z3.And(advance, z3.Or(*hit)))
        pending = tuple(z3.And(bit, z3.Not(p)) for bit, p in zip(r.pending, passed, strict=True))
        acked = tuple(
            z3.Or(ack, z3.And(bit, p, enough))
            for ack, bit, p in zip(acked, r.pending, passed, strict=True)
        )
        return r.replace(hw=self.ite(advance, low, r.hw), pending=pending), acked

    # ------------------------------------------------------ crash and restart

    def _do_checkpoint_hw(self, s: SymState, i: int) -> SymState:
        """Mirrors BrokerRules._do_checkpoint_hw."""
        r = s.replicas[i]
        return s.with_replica(i, r.replace(hw_checkpoint=r.hw))

    def _do_crash(self, s: SymState, i: int, keep: int) -> SymState:
        """Mirrors BrokerRules._do_crash."""
        dead = self.crashed(s.replicas[i], self.num(keep))
        return s.replace(crashes=s.crashes + 1).with_replica(i, dead)

    def _do_shutdown(self, s: SymState, i: int) -> SymState:
        """Mirrors BrokerRules._do_shutdown."""
        r = s.replicas[i]
        dead = self.crashed(r, r.log_len).replace(hw_checkpoint=r.hw, clean_shutdown=self.a.true)
        return s.replace(crashes=s.crashes + 1).with_replica(i, dead)

    def _do_replace_disk(self, s: SymState, i: int) -> SymState:
        """Mirrors BrokerRules._do_replace_disk."""
        zero = self.num(0)
        empty = s.replicas[i].replace(
            log_len=zero,
            log_ep=(zero,) * self.records,
            log_id=(zero,) * self.records,
            hw_checkpoint=zero,
            unwritten_epoch=zero,
            clean_shutdown=self.a.false,
        )
        if self.layout.reports_dirs:
            empty = empty.replace(dir_unreported=self.a.true)
        return s.with_replica(i, empty)

    def _do_restart(self, s: SymState, i: int) -> SymState:
        """Mirrors BrokerRules._do_restart."""
        r = s.replicas[i]
        r = r.replace(
            alive=self.a.true,
            hw=self.mn(r.hw_checkpoint, r.log_len),
            unwritten_epoch=self.num(0),
        )
        return s.with_replica(i, r)

    # --------------------------------------------- LeaderAndIsr at the broker

    def _become(
        self, s: SymState, i: int, leader: Num, epoch: Num, isr: tuple, zk: Bool
    ) -> SymState:
        """Mirrors BrokerRules._become (both outcomes, chosen by ``leader == i``)."""
        r = s.replicas[i]
        lead, acked = self._make_leader(r, i, epoch, isr, zk, s.acked)
        as_leader = s.replace(acked=acked).with_replica(i, lead)
        as_follower = s.with_replica(i, self._make_follower(r, leader, epoch))
        return self.ite(leader == i, as_leader, as_follower)

    def _make_leader(
        self, r: SymReplica, i: int, epoch: Num, isr: tuple, zk: Bool, acked: tuple
    ) -> tuple[SymReplica, tuple]:
        """Mirrors BrokerRules._make_leader."""
        was_leader = r.leader == i
        unknown = tuple(self.num(UNKNOWN_LEO) for _ in self.ids)
        remote = self.ite(was_leader, r.remote, unknown)
        unwritten = r.unwritten_epoch
        if self.behaviour.leader_caches_epoch:
            latest = self._latest_any(view(r))  # latest_record_epoch
            unwritten = self.ite(epoch > latest, epoch, unwritten)
        r = r.replace(
            epoch=epoch,
            leader=self.num(i),
            hw=self.ite(r.hw <= r.log_len, r.hw, 0),
            isr=isr,
            remote_on=self.a.true,
            remote=remote,
            truncation=self.num(TRUNCATED),
            unwritten_epoch=unwritten,
            pending=self.ite(was_leader, r.pending, (self.a.false,) * self.records),
            zk_current=self.a.boolean(zk),
            record_owed=self.a.false,
            epoch_start=r.log_len,
            pending_isr=self.none(),
            **self._no_inflight(),
        )
        return self._advance_leader_hw(r, i, acked)

    def _no_inflight(self) -> dict[str, object]:
        """NOTHING_IN_FLIGHT: every in-flight variable at its canonical 0."""
        zero = self.num(0)
        slots = (zero,) * self.records
        return dict(
            if_kind=zero,
            if_a=zero,
            if_b=zero,
            if_c=zero,
            if_d=zero,
            if_len=zero,
            if_ep=slots,
            if_id=slots,
        )

    def _inflight_of(self, r: SymReplica) -> dict[str, object]:
        return dict(
            if_kind=r.if_kind,
            if_a=r.if_a,
            if_b=r.if_b,
            if_c=r.if_c,
            if_d=r.if_d,
            if_len=r.if_len,
            if_ep=r.if_ep,
            if_id=r.if_id,
        )

    def _make_follower(self, r: SymReplica, leader: Num, epoch: Num) -> SymReplica:
        """Mirrors BrokerRules._make_follower."""
        b = self.behaviour
        if b.retruncate_same_leader == RETRUNCATE_EVERY:
            same_leader_restart: Bool = epoch != r.epoch
        elif b.retruncate_same_leader == RETRUNCATE_MISSED:
            same_leader_restart = epoch >= r.epoch + 2
        else:
            same_leader_restart = False
        restart = z3.Or(leader != r.leader, same_leader_restart)
        keeps_answer = z3.And(
            leader == r.leader,
            z3.Or(
                z3.And(r.if_kind == EPOCH_RESPONSE, not b.epoch_answer_checks_epoch),
                self._keeps_fetch_answer(r),
            ),
        )
        kept = r.replace(**self._inflight_of(r))
        dropped = r.replace(**self._no_inflight())
        on_restart = self.ite(keeps_answer, kept, dropped)
        if b.truncation == TRUNCATE_TO_HW:
            on_restart = self.truncate(on_restart, r.hw, False)
            restart_truncation = TRUNCATED
        elif b.truncation == ON_FETCH:
            restart_truncation = MUST_TRUNCATE
        else:
            restart_truncation = MUST_TRUNCATE
        stay = self.ite(r.truncation == MUST_TRUNCATE, MUST_TRUNCATE, NOT_TRUNCATED)
        r = self.ite(restart, on_restart, r)
        return r.replace(
            epoch=epoch,
            leader=leader,
            isr=self.none(),
            remote_on=self.a.false,
            remote=tuple(self.num(0) for _ in self.ids),
            truncation=self.ite(restart, restart_truncation, stay),
            pending=(self.a.false,) * self.records,
            zk_current=self.a.false,
            record_owed=self.a.false,
            epoch_start=self.num(-1),
            pending_isr=self.none(),
        )

    def _keeps_fetch_answer(self, r: SymReplica) -> Bool:
        """Mirrors BrokerRules._keeps_fetch_answer (KAFKA-18991)."""
        b = self.behaviour
        if b.truncation != ON_FETCH or b.fetch_answer_checks_epoch:
            return self.a.false
        return z3.And(
            z3.Or(r.if_kind == FETCH_RESPONSE, r.if_kind == DIVERGING),
            r.if_a == r.log_len,
            self.latest_epoch(view(r)) != UNDEFINED,
        )

    # -------------------------------------------------------------- helpers

    def truncate(self, r: SymReplica, offset: Num, lowers_hw: bool) -> SymReplica:
        """Mirrors broker.truncate (its ``clears_end_epoch`` is the release's)."""
        cut = offset < r.log_len
        clears_end_epoch = self.behaviour.truncation_clears_end_epoch
        zero = self.num(0)
        return r.replace(
            log_ep=tuple(
                self.ite(z3.And(cut, k >= offset), zero, x) for k, x in enumerate(r.log_ep)
            ),
            log_id=tuple(
                self.ite(z3.And(cut, k >= offset), zero, x) for k, x in enumerate(r.log_id)
            ),
            log_len=self.ite(cut, offset, r.log_len),
            hw=self.ite(cut, self.mn(r.hw, offset), r.hw) if lowers_hw else r.hw,
            unwritten_epoch=zero if clears_end_epoch else self.ite(cut, zero, r.unwritten_epoch),
        )

    def crashed(self, r: SymReplica, keep: Num) -> SymReplica:
        """Mirrors broker.crashed."""
        zero = self.num(0)
        return r.replace(
            alive=self.a.false,
            leader=self.num(NO_LEADER),
            log_ep=tuple(self.ite(k < keep, x, zero) for k, x in enumerate(r.log_ep)),
            log_id=tuple(self.ite(k < keep, x, zero) for k, x in enumerate(r.log_id)),
            log_len=self.mn(keep, r.log_len),
            hw=zero,
            isr=self.none(),
            remote_on=self.a.false,
            remote=tuple(zero for _ in self.ids),
            truncation=self.num(TRUNCATED),
            unwritten_epoch=self.ite(keep == r.log_len, r.unwritten_epoch, zero),
            pending=(self.a.false,) * self.records,
            zk_current=self.a.false,
            record_owed=self.a.false,
            alter_item=self.a.false,
            fenced=self.a.false,
            clean_shutdown=self.a.false,
            epoch_start=self.num(-1),
            pending_isr=self.none(),
            **self._no_inflight(),
        )
