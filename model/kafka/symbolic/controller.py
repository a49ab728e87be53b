"""The controller's rules and its LeaderAndIsr requests as z3 terms: mirrors
model/kafka/controller.py (whose docstrings carry the reference and Kafka citations).

``ctrl_history`` is one slot per epoch: the request for epoch ``e`` is slot
``e - 1``, and a new epoch writes slot ``ctrl_epoch`` (the old one).
"""

from __future__ import annotations

import z3

from replcheck.model.kafka.state import NO_LEADER
from replcheck.model.kafka.symbolic.broker import SymBroker
from replcheck.model.kafka.symbolic.state import Bool, Num, SymState


class SymController(SymBroker):
    """Mixed into KafkaSymbolic: the controller's actions and its requests."""

    # ------------------------------------------------------------- failures

    def _crash_notice_possible(self, s: SymState, i: int) -> Bool:
        """Mirrors ControllerRules._crash_notice_possible."""
        return z3.Or(self._can_bump(s), z3.Not(self._notice_needs_bump(s, i)))

    def _can_bump(self, s: SymState) -> Bool:
        return s.ctrl_epoch < self.config.epochs

    def _notice_needs_bump(self, s: SymState, i: int) -> Bool:
        """Mirrors ControllerRules._notice_needs_bump."""
        if self.shrink_keeps_epoch:
            return s.ctrl_leader == i
        if self.config.elr:
            return z3.Or(s.ctrl_leader == i, s.ctrl_isr[i])
        return z3.Or(
            s.ctrl_leader == i, z3.And(s.ctrl_isr[i], z3.Not(self.m_eq(s.ctrl_isr, self.only(i))))
        )

    def _is_failover_choice(self, s: SymState, i: int, new_leader: int) -> Bool:
        """``new_leader in ControllerRules._failover_choices(s, i)``."""
        if new_leader == i:
            return self.a.false
        live = self.m_without(s.ctrl_live, i)
        if self.layout.reports_dirs:  # LeaderAcceptor: not before it reports its directory
            unreported = [r.dir_unreported for r in s.replicas]
            live = tuple(z3.And(x, z3.Not(u)) for x, u in zip(live, unreported, strict=True))
        clean = self.m_and(live, s.ctrl_isr)
        eligible = self.m_and(live, s.ctrl_elr)
        if new_leader == NO_LEADER:
            chosen: Bool = z3.And(z3.Not(self.some(clean)), z3.Not(self.some(eligible)))
            if self.config.elects_unclean:
                chosen = z3.And(chosen, z3.Not(self.some(live)))
        else:
            chosen = z3.Or(
                clean[new_leader],
                z3.And(z3.Not(self.some(clean)), eligible[new_leader]),
            )
            if self.config.elects_unclean:
                chosen = z3.Or(
                    chosen,
                    z3.And(z3.Not(self.some(clean)), z3.Not(self.some(eligible)), live[new_leader]),
                )
        return z3.If(s.ctrl_leader != i, s.ctrl_leader == new_leader, chosen)

    def _do_notice_crash(self, s: SymState, i: int, new_leader: int) -> SymState:
        """Mirrors ControllerRules._do_notice_crash."""
        live = self.m_without(s.ctrl_live, i)
        isr = s.ctrl_isr
        keep_last = not self.config.elr
        shrunk = self.m_or_else(self.m_without(isr, i), isr if keep_last else self.none())
        if new_leader == NO_LEADER:
            as_leader = shrunk
        else:
            as_leader = self.ite(isr[new_leader], self.m_and(isr, live), self.only(new_leader))
        isr = self.ite(s.ctrl_leader == i, as_leader, self.ite(isr[i], shrunk, isr))
        same_leader = s.ctrl_leader == new_leader
        unchanged = z3.And(same_leader, self.m_eq(isr, s.ctrl_isr))
        changed = self._new_epoch(s, self.num(new_leader), isr)
        if self.config.elr and new_leader != NO_LEADER:
            unclean = z3.Not(z3.Or(s.ctrl_isr[new_leader], s.ctrl_elr[new_leader]))
            changed = self.ite(unclean, changed.replace(ctrl_elr=self.none()), changed)
        if self.shrink_keeps_epoch:
            changed = self.ite(same_leader, self._isr_change(s, isr), changed)
        return self.ite(unchanged, s, changed).replace(ctrl_live=live)

    def _isr_change(self, s: SymState, isr: tuple) -> SymState:
        """Mirrors ControllerRules._isr_change."""
        return s.replace(
            ctrl_isr=isr,
            ctrl_elr=self._elr_after(s, isr),
            ctrl_isr_written=self.a.true,
            alt_ok=self._stale_requests(s),
            replicas=self._stale_versions(s),
        )

    def _stale_versions(self, s: SymState) -> tuple:
        """Mirrors controller._stale_versions."""
        return tuple(r.replace(zk_current=self.a.false) for r in s.replicas)

    def _stale_requests(self, s: SymState) -> tuple:
        """Mirrors controller._stale_requests: every queued request's version_ok."""
        return tuple(self.a.false for _ in s.alt_ok)

    def _do_apply_isr(self, s: SymState, i: int) -> SymState:
        """Mirrors ControllerRules._do_apply_isr."""
        lead = s.replicas[i].replace(
            isr=s.ctrl_isr,
            pending_isr=self.none(),
            zk_current=self.a.true,
            record_owed=self.a.false,
        )
        lead, acked = self._advance_leader_hw(lead, i, s.acked)
        return s.replace(acked=acked).with_replica(i, lead)

    def _do_reapply_isr(self, s: SymState, i: int) -> SymState:
        """Mirrors ControllerRules._do_reapply_isr."""
        lead = s.replicas[i].replace(pending_isr=self.none(), record_owed=self.a.false)
        lead, acked = self._advance_leader_hw(lead, i, s.acked)
        return s.replace(acked=acked).with_replica(i, lead)

    def _do_notice_restart(self, s: SymState, i: int) -> SymState:
        """Mirrors ControllerRules._do_notice_restart."""
        cfg = self.config
        live = self.m_with(s.ctrl_live, i)
        clean = s.replicas[i].clean_shutdown
        s = s.with_replica(i, s.replicas[i].replace(epoch=self.num(0), clean_shutdown=self.a.false))
        # Back from a crash (no clean-shutdown file) it leaves the ELR.
        leaves_elr = z3.And(s.ctrl_elr[i], z3.Not(clean))
        s = self.ite(leaves_elr, s.replace(ctrl_elr=self.m_without(s.ctrl_elr, i)), s)
        if cfg.elr:
            s = self.ite(
                z3.And(leaves_elr, s.ctrl_leader != NO_LEADER),
                self._isr_change(s, s.ctrl_isr),
                s,
            )
        s = s.replace(
            alt_restarted=tuple(
                tuple(z3.Or(bit, isr[k]) if k == i else bit for k, bit in enumerate(restarted))
                for restarted, isr in zip(s.alt_restarted, s.alt_isr, strict=True)
            )
        )
        out = self._elect_on_return(s, i, live)
        if cfg.broken_rule == "isr-join-by-fetch":
            # (not offline, and an epoch left: the leader is there)
            out = self.ite(
                z3.And(s.ctrl_leader != NO_LEADER, z3.Not(s.ctrl_isr[i]), self._can_bump(s)),
                self._new_epoch(s, s.ctrl_leader, self.m_with(s.ctrl_isr, i)).replace(
                    ctrl_live=live
                ),
                out,
            )
        return out

    def _do_fence(self, s: SymState, i: int, new_leader: int) -> SymState:
        """Mirrors ControllerRules._do_fence."""
        s = self._do_notice_crash(s, i, new_leader)
        return s.with_replica(i, s.replicas[i].replace(fenced=self.a.true))

    def _do_unfence(self, s: SymState, i: int) -> SymState:
        """Mirrors ControllerRules._do_unfence."""
        live = self.m_with(s.ctrl_live, i)
        if self.config.kraft:
            s = s.with_replica(i, s.replicas[i].replace(fenced=self.a.false))
            return self._elect_on_return(s, i, live)
        s = self._elect_on_return(s, i, live)
        r = s.replicas[i]
        return s.with_replica(i, r.replace(fenced=r.epoch != s.ctrl_epoch))

    def _owed_current_state(self, s: SymState, i: int) -> Bool:
        """Mirrors ControllerRules._owed_current_state."""
        if self.config.kraft or not self.config.fencing:
            return self.a.false
        return z3.And(s.replicas[i].fenced, s.ctrl_live[i])

    def _elect_on_return(self, s: SymState, i: int, live: tuple) -> SymState:
        """Mirrors ControllerRules._elect_on_return (its first match wins: built last)."""
        cfg = self.config
        offline = z3.And(s.ctrl_leader == NO_LEADER, self._can_bump(s))
        acceptable = self._may_lead(s, i, offline)
        out = s.replace(ctrl_live=live)
        if cfg.elects_unclean:
            unclean = self._new_epoch(s, self.num(i), self.only(i))
            out = self.ite(acceptable, unclean.replace(ctrl_live=live, ctrl_elr=self.none()), out)
        for j in self.ids:
            out = self.ite(
                self._last_known_recovery(s, live, j),
                self._new_epoch(s, self.num(j), self.only(j)).replace(
                    ctrl_live=live, ctrl_elr=self.none()
                ),
                out,
            )
        out = self.ite(
            z3.And(acceptable, z3.Not(self.some(s.ctrl_isr)), s.ctrl_elr[i]),
            self._new_epoch(s, self.num(i), self.only(i)).replace(ctrl_live=live),
            out,
        )
        return self.ite(
            z3.And(acceptable, s.ctrl_isr[i]),
            self._new_epoch(s, self.num(i), self.m_and(s.ctrl_isr, live)).replace(ctrl_live=live),
            out,
        )

    def _last_known_recovery(self, s: SymState, live: tuple, j: int) -> Bool:
        """``ControllerRules._last_known_recovery(s, live) == j``."""
        offline = z3.And(s.ctrl_leader == NO_LEADER, self._can_bump(s))
        empty = z3.And(
            self.config.elr, z3.Not(self.some(s.ctrl_isr)), z3.Not(self.some(s.ctrl_elr))
        )
        candidate = z3.And(offline, empty, self._last_known_leader(s) == j, live[j])
        if not self.behaviour.last_known_leader_on_leaderless:  # 4.0.0 - 4.1.0
            candidate = z3.And(candidate, z3.Not(self._last_known_names_nobody(s)))
        if self.behaviour.last_known_leader_acceptable:  # KAFKA-19522 (4.1.0)
            return self._may_lead(s, j, candidate)
        return candidate

    def _may_lead(self, s: SymState, i: int, cond: Bool) -> Bool:
        """``cond``, and broker ``i`` has no replaced disk's directory left to report
        (LeaderAcceptor: hasOnlineDir, 3.7+); just ``cond`` where none can be."""
        if not self.layout.reports_dirs:
            return cond
        return z3.And(cond, z3.Not(s.replicas[i].dir_unreported))

    def _do_report_dir(self, s: SymState, i: int) -> SymState:
        """Mirrors ControllerRules._do_report_dir."""
        s = s.with_replica(i, s.replicas[i].replace(dir_unreported=self.a.false))
        removed = self._new_epoch(s, self.num(NO_LEADER), s.ctrl_isr)
        written = self._isr_change(s, s.ctrl_isr)
        out = self.ite(s.ctrl_leader == i, removed, written)
        if self.behaviour.dir_report_keeps_elr:  # apache/kafka#20716 (4.3.0)
            return out
        return out.replace(ctrl_elr=self.none())

    # ----------------------------------------------- AlterIsr / AlterPartition

    def _alter_first(self, s: SymState, sender: int) -> tuple:
        """Per slot: the oldest request of ``sender`` is at this slot / at or before it."""
        at, upto = [], []
        seen: Bool = self.a.false
        for q, who in enumerate(s.alt_sender):
            here = z3.And(z3.Not(seen), q < s.alt_len, who == sender)
            at.append(here)
            seen = z3.Or(seen, here)
            upto.append(seen)
        return tuple(at), tuple(upto)

    def _has_request(self, s: SymState, sender: int) -> Bool:
        return z3.Or(*[z3.And(q < s.alt_len, who == sender) for q, who in enumerate(s.alt_sender)])

    def _do_alter_isr(self, s: SymState, sender: int) -> SymState:
        """Mirrors ControllerRules._do_alter_isr."""
        b, cfg = self.behaviour, self.config
        at, upto = self._alter_first(s, sender)
        zero, none = self.num(0), self.none()

        def pick(slots: tuple, default: object) -> object:
            out = default
            for q in range(len(slots)):
                out = self.ite(at[q], slots[q], out)
            return out

        def removed(slots: tuple, blank: object) -> tuple:
            shifted = slots[1:] + (blank,)
            return tuple(self.ite(upto[q], shifted[q], slots[q]) for q in range(len(slots)))

        epoch = pick(s.alt_epoch, zero)
        version_ok = pick(s.alt_ok, self.a.false)
        isr = pick(s.alt_isr, none)
        restarted = pick(s.alt_restarted, none)
        s = s.replace(
            alt_len=s.alt_len - 1,
            alt_sender=removed(s.alt_sender, zero),
            alt_epoch=removed(s.alt_epoch, zero),
            alt_ok=removed(s.alt_ok, self.a.false),
            alt_isr=removed(s.alt_isr, none),
            alt_restarted=removed(s.alt_restarted, none),
        )
        lead = s.replicas[sender]
        if b.one_isr_request_in_flight:
            # The answer empties the sender's item unless its new process queued another.
            lead = lead.replace(alter_item=z3.And(lead.alter_item, self._has_request(s, sender)))
            s = s.with_replica(sender, lead)
        waiting = z3.And(
            lead.alive, lead.leader == sender, lead.epoch == epoch, self.m_eq(lead.pending_isr, isr)
        )
        refused = z3.Or(epoch != s.ctrl_epoch, z3.Not(version_ok))
        ineligible: Bool = False
        if b.isr_needs_live_replicas:
            ineligible = self.some(self.m_minus(isr, s.ctrl_live))
        if cfg.kraft and b.isr_broker_epochs:
            ineligible = z3.Or(ineligible, self.some(self.m_and(isr, restarted)))
        on_ineligible = self.ite(waiting, s.with_replica(sender, lead.replace(pending_isr=none)), s)
        accepted = s.replace(
            ctrl_isr=isr,
            ctrl_elr=self._elr_after(s, isr),
            ctrl_isr_written=self.a.true,
            alt_ok=self._stale_requests(s),
            replicas=self._stale_versions(s),
        )
        owed = self.a.boolean(bool(cfg.kraft))  # the change's metadata record is to come
        adopted, acked = self._advance_leader_hw(
            lead.replace(isr=isr, pending_isr=none, zk_current=self.a.true, record_owed=owed),
            sender,
            accepted.acked,
        )
        accepted = self.ite(
            waiting, accepted.replace(acked=acked).with_replica(sender, adopted), accepted
        )
        if cfg.kraft and b.kraft_shrink_bumps_epoch:
            shrinks = self.some(self.m_minus(s.ctrl_isr, isr))
            accepted = self.ite(shrinks, self._new_epoch(s, s.ctrl_leader, isr), accepted)
        return self.ite(refused, s, self.ite(self.a.boolean(ineligible), on_ineligible, accepted))

    def _do_elect(self, s: SymState, c: int) -> SymState:
        """Mirrors ControllerRules._do_elect."""
        preferred = self._new_epoch(s, self.num(c), s.ctrl_isr)
        if not self.config.elr:  # the last known leader's recovery needs the ELR
            return preferred
        recovery = self._new_epoch(s, self.num(c), self.only(c)).replace(ctrl_elr=self.none())
        return self.ite(s.ctrl_isr[c], preferred, recovery)

    def _new_epoch(self, s: SymState, leader: Num, isr: tuple) -> SymState:
        """Mirrors ControllerRules._new_epoch.  Past the last history slot the entry is
        lost and ``ctrl_epoch`` leaves the domain (Layout.overflow)."""
        at = s.ctrl_epoch  # slot of the new epoch ctrl_epoch + 1
        return s.replace(
            ctrl_leader=leader,
            ctrl_epoch=s.ctrl_epoch + 1,
            ctrl_isr=isr,
            ctrl_elr=self._elr_after(s, isr),
            ctrl_isr_written=self.a.false,
            hist_leader=tuple(self.ite(at == e, leader, x) for e, x in enumerate(s.hist_leader)),
            hist_isr=tuple(self.ite(at == e, isr, x) for e, x in enumerate(s.hist_isr)),
            replicas=self._stale_versions(s),
        )

    def _elr_after(self, s: SymState, isr: tuple) -> tuple:
        """Mirrors ControllerRules._elr_after."""
        if not self.config.elr:
            return self.none()
        below = self.count(isr) < self.config.min_insync_replicas
        return self.ite(below, self.m_minus(self.m_or(s.ctrl_elr, s.ctrl_isr), isr), self.none())

    # ------------------------------------------------------ LeaderAndIsr

    def _do_deliver(self, s: SymState, i: int) -> SymState:
        """Mirrors ControllerRules._do_deliver."""
        r = s.replicas[i]
        epoch, leader, isr = self._next_request(s, i)
        current = z3.And(epoch == s.ctrl_epoch, z3.Not(s.ctrl_isr_written))
        queued = self._become(s, i, leader, epoch, isr, z3.And(current, leader == i))
        owed = z3.Or(r.epoch == 0, self._owed_current_state(s, i))
        return self.ite(owed, self._do_deliver_latest(s, i), queued)

    def _do_deliver_latest(self, s: SymState, i: int) -> SymState:
        """Mirrors ControllerRules._do_deliver_latest."""
        leader = s.ctrl_leader
        owed = self._owed_current_state(s, i)
        if not z3.is_false(owed):
            r = s.replicas[i]
            s = s.with_replica(i, r.replace(fenced=z3.And(r.fenced, z3.Not(owed))))
        return self._become(s, i, leader, s.ctrl_epoch, s.ctrl_isr, leader == i)

    def _next_request(self, s: SymState, i: int) -> tuple[Num, Num, tuple]:
        """Mirrors ControllerRules._next_request: (its epoch, 0 for none; its leader, ISR)."""
        r = s.replicas[i]
        epoch: Num = self.num(0)
        leader: Num = self.num(0)
        isr = self.none()
        for e in reversed(range(1, len(s.hist_leader) + 1)):
            takes = z3.And(e > r.epoch, e <= s.ctrl_epoch, self._takes_effect(s, e))
            epoch, leader, isr = self.ite(
                takes, (e, s.hist_leader[e - 1], s.hist_isr[e - 1]), (epoch, leader, isr)
            )
        latest = z3.And(s.ctrl_epoch > r.epoch, self._takes_effect(s, s.ctrl_epoch))
        return self.ite(
            z3.Or(r.epoch == 0, self._owed_current_state(s, i)),
            (self.ite(latest, s.ctrl_epoch, 0), s.ctrl_leader, s.ctrl_isr),
            (epoch, leader, isr),
        )

    def _takes_effect(self, s: SymState, epoch: Num) -> Bool:
        """Mirrors ControllerRules._takes_effect."""
        if self.config.kraft:
            return self.a.true
        if isinstance(epoch, int):
            return s.hist_leader[epoch - 1] != NO_LEADER
        return self.read(s.hist_leader, epoch - 1, self.num(NO_LEADER)) != NO_LEADER

    def _failover_delivery_differs(self, s: SymState, i: int) -> Bool:
        """Mirrors ControllerRules._failover_delivery_differs."""
        r = s.replicas[i]
        return z3.And(
            r.epoch != 0,
            z3.Not(self._owed_current_state(s, i)),
            self._takes_effect(s, s.ctrl_epoch),
            z3.Or(
                r.epoch < s.ctrl_epoch,
                z3.And(r.leader == NO_LEADER, s.ctrl_leader != NO_LEADER),
            ),
        )

    def _last_known_names_nobody(self, s: SymState) -> Bool:
        """Mirrors state.last_known_names_nobody where the ISR is empty and no leader:
        the current leader epoch began leaderless with members in the ISR."""
        return z3.Or(
            *[
                z3.And(s.ctrl_epoch == e + 1, leader == NO_LEADER, self.some(s.hist_isr[e]))
                for e, leader in enumerate(s.hist_leader)
            ]
        )

    def _last_known_leader(self, s: SymState) -> Num:
        """Mirrors controller.last_known_leader."""
        out: Num = self.num(NO_LEADER)
        for e, leader in enumerate(s.hist_leader):
            out = self.ite(z3.And(e < s.ctrl_epoch, leader != NO_LEADER), leader, out)
        return out
