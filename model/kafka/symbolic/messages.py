"""Fetch and OffsetsForLeaderEpoch as z3 terms: mirrors model/kafka/messages.py (whose
docstrings carry the reference and Kafka citations).

A FETCH_RESPONSE keeps its records at their log offsets (``if_ep[k]``,
``if_id[k]`` for offset ``k``), so the follower appends them slot by slot.
"""

from __future__ import annotations

import z3

from replcheck.model.kafka.epochs import UNDEFINED
from replcheck.model.kafka.releases import ON_FETCH
from replcheck.model.kafka.state import (
    DIVERGING,
    EPOCH_RESPONSE,
    FETCH_RESPONSE,
    OUT_OF_RANGE,
    TRUNCATE_PENDING,
    TRUNCATED,
)
from replcheck.model.kafka.symbolic.controller import SymController
from replcheck.model.kafka.symbolic.epochs import view
from replcheck.model.kafka.symbolic.state import Bool, Num, SymReplica, SymState


class SymMessages(SymController):
    """Mixed into KafkaSymbolic: the replication requests and responses."""

    def _set_inflight(
        self, r: SymReplica, kind: int, *fields: Num, **records: object
    ) -> SymReplica:
        """``r`` with the response ``(kind, *fields)`` in flight (records only for a fetch)."""
        values = dict(self._no_inflight())
        values["if_kind"] = self.num(kind)
        for name, x in zip(("if_a", "if_b", "if_c", "if_d"), fields, strict=False):
            values[name] = self.num(x)
        values.update(records)
        return r.replace(**values)

    # --------------------------------------------------------------- fetch

    def _do_fetch_request(self, s: SymState, f: int, leader_id: int) -> SymState:
        """Mirrors MessageRules._do_fetch_request."""
        fol, lead = s.replicas[f], s.replicas[leader_id]
        offset = fol.log_len
        out_of_range = s.with_replica(
            f, self._set_inflight(fol, OUT_OF_RANGE, offset, lead.log_len)
        )
        zero = self.num(0)
        records = dict(
            if_len=lead.log_len - offset,
            if_ep=tuple(self.ite(k >= offset, x, zero) for k, x in enumerate(lead.log_ep)),
            if_id=tuple(self.ite(k >= offset, x, zero) for k, x in enumerate(lead.log_id)),
        )
        fetched = self._leader_saw_fetch(s, leader_id, f, offset)
        response = self._set_inflight(fol, FETCH_RESPONSE, offset, lead.hw, **records)
        out = self.ite(offset > lead.log_len, out_of_range, fetched.with_replica(f, response))
        if self.behaviour.truncation == ON_FETCH:
            diverges, epoch, end = self._diverging_epoch(fol, lead)
            answered = s
            if self.behaviour.diverged_fetch_moves_leader:
                answered = fetched
            diverging = answered.with_replica(
                f, self._set_inflight(fol, DIVERGING, offset, lead.hw, epoch, end)
            )
            out = self.ite(diverges, self.ite(epoch == UNDEFINED, out_of_range, diverging), out)
        return out

    def _diverging_epoch(self, fol: SymReplica, lead: SymReplica) -> tuple[Bool, Num, Num]:
        """Mirrors MessageRules._diverging_epoch: (diverges, epoch, end offset)."""
        fetched = self.latest_epoch(view(fol))
        epoch, end = self.end_offset_v1(view(lead), fetched, False)
        diverges = z3.And(fetched != UNDEFINED, z3.Or(epoch < fetched, end < fol.log_len))
        return diverges, epoch, end

    def _leader_saw_fetch(self, s: SymState, i: int, f: int, offset: Num) -> SymState:
        """Mirrors MessageRules._leader_saw_fetch: the zkVersion guard only before 2.7
        (from AlterIsr the leader proposes whatever its cached partition version)."""
        b = self.behaviour
        lead = s.replicas[i]
        remote = tuple(offset if k == f else x for k, x in enumerate(lead.remote))
        lead = lead.replace(remote=remote)
        joins = z3.And(
            z3.Not(lead.isr[f]),
            self.a.true if b.alter_isr else lead.zk_current,
            z3.Not(self.some(lead.pending_isr)),
            self._no_isr_item(lead),
            offset >= lead.hw,
        )
        if b.isr_join_needs_epoch_start:
            joins = z3.And(joins, offset >= lead.epoch_start)
        grown = self.m_with(lead.isr, f)
        if b.alter_isr:
            s = s.with_replica(i, lead)
            s = self.ite(joins, self._propose_isr(s, i, grown), s)
            lead = s.replicas[i]
        else:
            s = s.replace(
                ctrl_isr=self.ite(joins, grown, s.ctrl_isr),
                ctrl_isr_written=z3.Or(joins, s.ctrl_isr_written),
            )
            lead = lead.replace(isr=self.ite(joins, grown, lead.isr))
        lead, acked = self._advance_leader_hw(lead, i, s.acked)
        return s.replace(acked=acked).with_replica(i, lead)

    def _do_fetch_response(self, s: SymState, f: int) -> SymState:
        """Mirrors MessageRules._do_fetch_response."""
        b = self.behaviour
        r = s.replicas[f]
        kind, offset = r.if_kind, r.if_a
        fol = r.replace(**self._no_inflight())
        dropped = s.with_replica(f, fol)
        if b.exits_on_out_of_range and not self.config.unclean_election:
            out_of_range = self._do_halt(dropped, f)
        else:
            out_of_range = s.with_replica(f, self.truncate(fol, r.if_b, b.truncation_lowers_hw))
        diverging = self._diverging_response(s, f, fol, r.if_b, r.if_c, r.if_d)
        length = fol.log_len + r.if_len
        appended = fol.replace(
            log_ep=tuple(
                self.ite(k < fol.log_len, x, y)
                for k, (x, y) in enumerate(zip(fol.log_ep, r.if_ep, strict=True))
            ),
            log_id=tuple(
                self.ite(k < fol.log_len, x, y)
                for k, (x, y) in enumerate(zip(fol.log_id, r.if_id, strict=True))
            ),
            log_len=length,
            hw=self.mn(r.if_b, length),
            unwritten_epoch=self.ite(r.if_len == 0, fol.unwritten_epoch, 0),
            truncation=self.num(TRUNCATED) if b.truncation == ON_FETCH else fol.truncation,
        )
        out = s.with_replica(f, appended)
        if b.truncation == ON_FETCH:
            out = self.ite(kind == DIVERGING, diverging, out)
        out = self.ite(kind == OUT_OF_RANGE, out_of_range, out)
        return self.ite(offset != fol.log_len, dropped, out)

    def _diverging_response(
        self, s: SymState, f: int, fol: SymReplica, hw: Num, epoch: Num, end: Num
    ) -> SymState:
        """Mirrors MessageRules._diverging_response."""
        if self.behaviour.hw_before_diverging_truncation:
            fol = self._set_inflight(fol, TRUNCATE_PENDING, epoch, end)
            return s.with_replica(f, fol.replace(hw=self.mn(hw, fol.log_len)))
        return s.with_replica(f, self._truncate_on_diverging(fol, epoch, end))

    def _do_diverging_truncate(self, s: SymState, f: int) -> SymState:
        """Mirrors MessageRules._do_diverging_truncate."""
        r = s.replicas[f]
        fol = r.replace(**self._no_inflight())
        return s.with_replica(f, self._truncate_on_diverging(fol, r.if_a, r.if_b))

    def _truncate_on_diverging(self, fol: SymReplica, epoch: Num, end: Num) -> SymReplica:
        """Mirrors MessageRules._truncate_on_diverging."""
        offset, _done = self.truncation_step(view(fol), (epoch, end))
        return self._truncated_to(fol, offset, False)

    def _do_halt(self, s: SymState, f: int) -> SymState:
        """Mirrors MessageRules._do_halt."""
        r = s.replicas[f]
        return s.with_replica(f, self.crashed(r, r.log_len))

    def _do_fetch(self, s: SymState, f: int, leader_id: int) -> SymState:
        """Mirrors MessageRules._do_fetch (coarse model)."""
        s = self._do_fetch_response(self._do_fetch_request(s, f, leader_id), f)
        if TRUNCATE_PENDING in self.reachable_kinds():
            pending = s.replicas[f].if_kind == TRUNCATE_PENDING
            s = self.ite(pending, self._do_diverging_truncate(s, f), s)
        return s

    def reachable_kinds(self) -> frozenset[int]:
        """The in-flight kinds a fetch request of this release can produce."""
        b = self.behaviour
        kinds = {FETCH_RESPONSE, OUT_OF_RANGE}
        if b.truncation == ON_FETCH:
            kinds.add(DIVERGING)
            if b.hw_before_diverging_truncation:
                kinds.add(TRUNCATE_PENDING)
        return frozenset(kinds)

    # -------------------------------------------------- OffsetsForLeaderEpoch

    def _do_epoch_request(self, s: SymState, f: int, leader_id: int) -> SymState:
        """Mirrors MessageRules._do_epoch_request."""
        fol = s.replicas[f]
        requested = self.latest_epoch(view(fol))
        nothing = self._truncated_to(fol, self.mn(fol.hw, fol.log_len), True)
        epoch, end = self.leader_answer(view(s.replicas[leader_id]), requested)
        asked = self._set_inflight(fol, EPOCH_RESPONSE, fol.epoch, epoch, end)
        return s.with_replica(f, self.ite(requested == UNDEFINED, nothing, asked))

    def _do_epoch_response(self, s: SymState, f: int) -> SymState:
        """Mirrors MessageRules._do_epoch_response."""
        r = s.replicas[f]
        fol = r.replace(**self._no_inflight())
        offset, done = self.truncation_step(view(fol), (r.if_b, r.if_c))
        return s.with_replica(f, self._truncated_to(fol, offset, done))

    def _do_truncate(self, s: SymState, f: int, leader_id: int) -> SymState:
        """Mirrors MessageRules._do_truncate (coarse model)."""
        fol = s.replicas[f]
        _defined, offset = self.whole_exchange(view(fol), view(s.replicas[leader_id]))
        return s.with_replica(f, self._truncated_to(fol, offset, True))

    def _truncated_to(self, fol: SymReplica, offset: Num, done: Bool) -> SymReplica:
        """Mirrors MessageRules._truncated_to."""
        fol = self.truncate(fol, offset, self.behaviour.truncation_lowers_hw)
        if isinstance(done, bool):
            return fol.replace(truncation=self.num(TRUNCATED)) if done else fol
        return fol.replace(truncation=self.ite(done, TRUNCATED, fol.truncation))
