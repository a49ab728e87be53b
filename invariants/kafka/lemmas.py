"""Strengthening lemmas for k-induction on the Kafka model (checker/symbolic/prove.py).

The invariants of invariants/kafka/symbolic.py hold on reachable states but are not
inductive on their own: the induction step starts from *any* state of the
symbolic domain, and most of those are not reachable (a crashed broker with an
in-flight response, a follower whose log holds a record id twice, ...).  Each
lemma here is a fact about reachable states that rules such states out; they
are proved together with the invariants, so a false lemma shows as a base-case
violation, and tests/test_kafka_lemmas.py checks each on every reachable state
of small explicit configurations.

Every lemma holds for every release unless its doc says otherwise; a lemma
that depends on a rule of some releases reads it from ``model.behaviour``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import z3

from replcheck.model.kafka.releases import EPOCH_ONCE, ON_FETCH, RETRUNCATE_EVERY, TRUNCATE_TO_HW
from replcheck.model.kafka.state import (
    EPOCH_RESPONSE,
    FETCH_RESPONSE,
    MUST_TRUNCATE,
    NO_LEADER,
    NOT_TRUNCATED,
    OUT_OF_RANGE,
    TRUNCATED,
)
from replcheck.model.kafka.symbolic.epochs import view
from replcheck.model.kafka.symbolic.replication import KafkaSymbolic
from replcheck.model.kafka.symbolic.state import SymReplica, SymState


@dataclass(frozen=True)
class SymbolicLemma:
    id: str  # kebab-case
    doc: str  # what it says and why it holds in Kafka's protocol
    holds: Callable[[KafkaSymbolic, SymState], z3.BoolRef]


# ---------------------------------------------------------------- helpers


def _epoch_truncation(model: KafkaSymbolic) -> bool:
    """Followers truncate by leader epoch (KIP-101 on), not to their own HW, and a
    diverging fetch does not move the leader's record of the follower: the releases
    where the lemmas about replicated prefixes hold.  Before KIP-101 a follower
    truncates to a HW that may lag the leader's and loses committed records
    (KAFKA-1211); in 2.8.0-2.8.1 a diverging fetch truncates a follower below the HW it
    checkpointed and the leader counts it caught up (KAFKA-13141, catalogue B2).  Not
    where a replayed metadata record drops a growth of the ISR (_replay_drops_growth),
    nor where a stopped broker's disk may be replaced (``--disk-loss``): its replicated
    prefix is gone while the leader and the controller still count it."""
    b = model.behaviour
    return (
        b.truncation != TRUNCATE_TO_HW
        and not b.diverged_fetch_moves_leader
        and not _replay_drops_growth(model)
        and not model.config.disk_loss
    )


def _replay_drops_growth(model: KafkaSymbolic) -> bool:
    """KRaft (3.3.0 to 4.4.0, KAFKA-13790): a leader that replays the metadata record of
    a change it adopted from the AlterPartition response drops the change it proposed
    since (ControllerRules._do_reapply_isr), which the controller may still accept.  A
    member the leader stopped counting then joins the controller's ISR without the
    records the leader's HW passed since, and committed records can be lost.  Before
    3.6 a KRaft shrink bumps the epoch, so the adopted change added a member and, on two
    replicas, the one dropped is a shrink: harmless."""
    cfg = model.config
    return cfg.kraft and (model.shrink_keeps_epoch or cfg.replicas > 2)


def _releads_same_epoch(model: KafkaSymbolic) -> bool:
    """Before KIP-380 (2.2.0) a broker may restart before the controller notices, and with
    ``--controller-failover`` a new controller then sends it the current LeaderAndIsr: a
    leader is made leader of the same epoch again, its epoch starting at its LEO then
    (Partition.makeLeader), with its in-memory HW reloaded from the checkpoint, lower
    than the HW its answers in flight carry."""
    return model.config.controller_failover and not model.behaviour.controller_sees_bounces


def _keeps_old_answers(model: KafkaSymbolic) -> bool:
    """Truncation on fetch before KAFKA-18991 (3.9.1, 4.0.1, 4.1.0): a follower told a new
    epoch of the same leader keeps the Fetch answer of the older one
    (BrokerRules._keeps_fetch_answer).  Its sender may not have that epoch yet, may have
    restarted (a HW reloaded from its checkpoint) or, where the follower missed the epochs
    between, have led again after following another leader (a log truncated since)."""
    b = model.behaviour
    return b.truncation == ON_FETCH and not b.fetch_answer_checks_epoch


def _none(mask: tuple) -> z3.BoolRef:
    return z3.And(*[z3.Not(x) for x in mask])


def _log_slots(r: SymReplica, records: int) -> list[tuple[object, object, object]]:
    """(offset, epoch, id, in use) of each log slot."""
    return [(k, r.log_ep[k], r.log_id[k], k < r.log_len) for k in range(records)]


def _all_slots(model: KafkaSymbolic, s: SymState) -> list[tuple]:
    """Every record slot of the state: (offset, epoch, id, in use), over the logs,
    the in-flight fetch responses (at absolute offsets) and the ghost ``committed``."""
    out = []
    for r in s.replicas:
        out += _log_slots(r, model.records)
        fetching = r.if_kind == FETCH_RESPONSE
        for k in range(model.records):
            used = z3.And(fetching, r.if_a <= k, k < r.if_a + r.if_len)
            out.append((k, r.if_ep[k], r.if_id[k], used))
    for k in range(model.records):
        out.append((k, s.committed_ep[k], s.committed_id[k], k < s.committed_len))
    return out


def _log(r: SymReplica) -> tuple:
    return r.log_ep, r.log_id, r.log_len


def _committed(s: SymState) -> tuple:
    return s.committed_ep, s.committed_id, s.committed_len


def _prefix(model: KafkaSymbolic, a: tuple, upto: object, b: tuple) -> z3.BoolRef:
    """``a[:upto]`` (at most its length) is in ``b`` at the same offsets; ``a`` and ``b``
    are (epochs, ids, length) of a log or of ``committed``."""
    return z3.And(
        *[
            z3.Implies(
                z3.And(k < upto, k < a[2]),
                z3.And(k < b[2], a[0][k] == b[0][k], a[1][k] == b[1][k]),
            )
            for k in range(model.records)
        ]
    )


def _kept(model: KafkaSymbolic, r: SymReplica) -> tuple:
    """``r``'s log as it stands once the OffsetsForLeaderEpoch or OUT_OF_RANGE answer on
    its way (if any) is handled: what it is sure to keep."""
    length = r.log_len
    if EPOCH_RESPONSE in model.layout.inflight_kinds:
        offset, _done = model.truncation_step(view(r), (r.if_b, r.if_c))
        answered = z3.And(r.alive, r.if_kind == EPOCH_RESPONSE)
        length = z3.If(answered, model.mn(offset, r.log_len), r.log_len)
    if OUT_OF_RANGE in model.layout.inflight_kinds:
        out_of_range = z3.And(r.alive, r.if_kind == OUT_OF_RANGE, r.if_a == r.log_len)
        length = z3.If(out_of_range, model.mn(r.if_b, r.log_len), length)
    return r.log_ep, r.log_id, length


def _prefix_of(model: KafkaSymbolic, a: SymReplica, upto: object, b: SymReplica) -> z3.BoolRef:
    """``a.log[:upto]`` (at most its length) is in what ``b`` keeps, at the same offsets."""
    return _prefix(model, _log(a), upto, _kept(model, b))


def _leads(r: SymReplica, i: int) -> z3.BoolRef:
    return z3.And(r.alive, r.leader == i)


def _epochs_between(s: SymState, low: object, high: object, ok: Callable[[int], object]) -> list:
    """``ok(slot)`` for every epoch ``slot + 1`` with ``low < slot + 1 <= high``."""
    return [
        z3.Implies(z3.And(low < slot + 1, slot + 1 <= high), ok(slot))
        for slot in range(len(s.hist_leader))
    ]


def _names(s: SymState, slot: int, *leaders: int) -> z3.BoolRef:
    """Epoch ``slot + 1`` named one of ``leaders`` or no leader (with ZooKeeper a request
    naming none changes nothing at a broker; in KRaft it makes the broker follow nobody:
    ControllerRules._takes_effect)."""
    return z3.Or(*[s.hist_leader[slot] == j for j in (*leaders, NO_LEADER)])


def _untold(s: SymState, lead: SymReplica, e: object) -> z3.BoolRef:
    """``lead``, named for epoch ``e``, has not been told of it yet: it is in an older
    epoch, or it was seen restarting (epoch 0) and ``e`` is the current one."""
    return z3.Or(
        z3.And(lead.epoch >= 1, lead.epoch < e), z3.And(lead.epoch == 0, e == s.ctrl_epoch)
    )


def _quiet(s: SymState, slot: int) -> z3.BoolRef:
    """Epoch ``slot + 1`` named no leader, or one not told of it yet: nobody acted in it
    (only a leader told of its epoch writes, grows the ISR or answers a follower)."""
    leader = s.hist_leader[slot]
    told = [z3.And(leader == k, _untold(s, r, slot + 1)) for k, r in enumerate(s.replicas)]
    return z3.Or(leader == NO_LEADER, *told)


def _within(a: tuple, b: tuple) -> z3.BoolRef:
    return z3.And(*[z3.Implies(x, y) for x, y in zip(a, b, strict=True)])


def _isr_fixed(model: KafkaSymbolic) -> bool:
    """The controller only shrinks the ISR and elects from it: no unclean election, no
    ELR (which may elect outside the ISR), no broken design rule."""
    cfg = model.config
    return not (cfg.elects_unclean or cfg.elr or cfg.broken_rule)


def _dead_may_join(model: KafkaSymbolic) -> bool:
    """A broker the controller takes for gone may still fetch and join the ISR: a
    ZooKeeper broker whose session expired (--fencing) runs on, and before KIP-841
    (Behaviour.isr_needs_live_replicas, 3.3) nothing checks an ISR member's liveness; the
    controller then sees no crash of it either, as it took it for gone already."""
    return model.config.fencing and not model.behaviour.isr_needs_live_replicas


# ---------------------------------------------------------------- lemmas


def _forgot_leader(model: KafkaSymbolic, r: SymReplica) -> z3.BoolRef:
    """``r`` knows no leader because it crashed and has not been told its role since.  In
    KRaft a follower also steps to no leader on a leaderless record, which leaves it owing
    a truncation, as a restart does not (ControllerRules._takes_effect)."""
    if model.config.kraft:
        return z3.And(r.leader == NO_LEADER, r.truncation == TRUNCATED)
    return r.leader == NO_LEADER


def crashed_replica_blank(model: KafkaSymbolic, s: SymState) -> z3.BoolRef:
    facts = []
    for r in s.replicas:
        blank = z3.And(
            r.leader == NO_LEADER,
            r.hw == 0,
            r.if_kind == 0,
            z3.Not(r.remote_on),
            _none(r.isr),
            _none(r.pending),
            _none(r.pending_isr),
            z3.Not(r.zk_current),
            z3.Not(r.record_owed),
            z3.Not(r.alter_item),
            r.epoch_start == -1,
            r.truncation == TRUNCATED,
        )
        facts.append(z3.Implies(z3.Not(r.alive), blank))
        restarted = z3.And(r.alive, _forgot_leader(model, r))
        facts.append(z3.Implies(restarted, z3.And(r.unwritten_epoch == 0, r.hw <= r.hw_checkpoint)))
    return z3.And(*facts)


def role_fields(model: KafkaSymbolic, s: SymState) -> z3.BoolRef:
    facts = []
    for i, r in enumerate(s.replicas):
        leads = z3.And(
            r.remote_on,
            r.remote[i] == -1,
            r.isr[i],
            r.truncation == TRUNCATED,
            r.if_kind == 0,
            r.epoch_start >= 0,
            r.epoch_start <= r.log_len,
            r.epoch >= 1,
            *[
                r.remote[f] <= r.log_len
                for f in model.ids
                if not model.behaviour.diverged_fetch_moves_leader
            ],
        )
        other = z3.And(
            z3.Not(r.remote_on),
            _none(r.isr),
            _none(r.pending),
            _none(r.pending_isr),
            z3.Not(r.zk_current),
            z3.Not(r.record_owed),
            r.epoch_start == -1,
        )
        facts.append(z3.Implies(z3.And(r.alive, r.leader == i), leads))
        facts.append(z3.Implies(r.leader != i, other))
        if model.behaviour.retruncate_same_leader == RETRUNCATE_EVERY:
            facts.append(r.truncation != NOT_TRUNCATED)
        # No leader: restarted and not told its role since; in KRaft also stepped down on a
        # leaderless record, which restarts the fetcher (ControllerRules._takes_effect).
        settled = r.truncation == TRUNCATED
        if model.config.kraft:
            settled = z3.Or(settled, r.truncation == MUST_TRUNCATE)
        facts.append(z3.Implies(r.leader == NO_LEADER, z3.And(r.if_kind == 0, settled)))
    return z3.And(*facts)


def epochs_bounded(model: KafkaSymbolic, s: SymState) -> z3.BoolRef:
    facts = [s.written >= 0]
    for r in s.replicas:
        facts += [r.epoch <= s.ctrl_epoch, r.unwritten_epoch <= s.ctrl_epoch]
    for _k, ep, rid, used in _all_slots(model, s):
        facts.append(z3.Implies(used, z3.And(ep >= 1, ep <= s.ctrl_epoch, rid <= s.written)))
    return z3.And(*facts)


def records_unique(model: KafkaSymbolic, s: SymState) -> z3.BoolRef:
    slots = _all_slots(model, s)
    facts = []
    for x, (k, ep, rid, used) in enumerate(slots):
        for m, ep2, rid2, used2 in slots[x + 1 :]:
            same_id = z3.And(used, used2, rid == rid2)
            if k != m:
                facts.append(z3.Not(same_id))
            else:
                facts.append(z3.Implies(same_id, ep == ep2))
                facts.append(z3.Implies(z3.And(used, used2, ep == ep2), rid == rid2))
    return z3.And(*facts)


def epoch_answer_keeps_hw(model: KafkaSymbolic, s: SymState) -> z3.BoolRef:
    if not _epoch_truncation(model):
        return model.a.true
    if model.behaviour.truncation == ON_FETCH:
        return model.a.true
    facts = []
    for i, r in enumerate(s.replicas):
        offset, _done = model.truncation_step(view(r), (r.if_b, r.if_c))
        answered = z3.And(r.alive, r.if_kind == EPOCH_RESPONSE)
        facts.append(z3.Implies(answered, offset >= model.mx(r.hw, r.hw_checkpoint)))
        facts.append(
            z3.Implies(
                answered,
                z3.And(
                    r.if_b <= model.latest_epoch(view(r)),
                    r.if_b <= r.if_a,
                    r.if_a >= 1,
                    r.if_a <= r.epoch,
                ),
            )
        )
        for j, lead in enumerate(s.replicas):
            if lead is r:
                continue
            member = z3.And(answered, r.leader == j, _leads(lead, j), lead.isr[i])
            facts.append(z3.Implies(member, offset >= lead.hw))
    return z3.And(*facts)


def out_of_range_keeps_hw(model: KafkaSymbolic, s: SymState) -> z3.BoolRef:
    if not _epoch_truncation(model):
        return model.a.true
    facts = []
    for r in s.replicas:
        at_leo = z3.And(r.alive, r.if_kind == OUT_OF_RANGE, r.if_a == r.log_len)
        facts.append(z3.Implies(at_leo, model.mx(r.hw, r.hw_checkpoint) <= r.if_b))
    return z3.And(*facts)


def history_consistent(model: KafkaSymbolic, s: SymState) -> z3.BoolRef:
    last = model.read(s.hist_leader, s.ctrl_epoch - 1, model.num(0))
    last_isr = model.read(s.hist_isr, s.ctrl_epoch - 1, model.none())
    facts = [
        z3.Implies(s.ctrl_leader >= 0, model.has(s.ctrl_isr, s.ctrl_leader)),
        s.hist_leader[0] == 0,
        last == s.ctrl_leader,
        z3.Or(s.ctrl_isr_written, model.m_eq(last_isr, s.ctrl_isr)),
    ]
    if not model.config.elr:  # KIP-966 lets the ISR become empty
        facts.append(model.some(s.ctrl_isr))
        facts += [z3.Implies(e < s.ctrl_epoch, model.some(isr)) for e, isr in enumerate(s.hist_isr)]
    if not model.shrink_keeps_epoch:
        # Only a leader's own AlterIsr writes the ISR in its epoch; from KRaft 3.6 the
        # controller removes a fenced follower without a new epoch, before the leader
        # heard of its epoch, or with no leader at all.
        facts.append(z3.Implies(s.ctrl_isr_written, s.ctrl_leader >= 0))
        for j, r in enumerate(s.replicas):
            writer = z3.And(s.ctrl_isr_written, s.ctrl_leader == j)
            facts.append(z3.Implies(writer, r.epoch == s.ctrl_epoch))
    for e in range(len(s.hist_leader)):
        leader, isr = s.hist_leader[e], s.hist_isr[e]
        facts.append(z3.Implies(z3.And(e < s.ctrl_epoch, leader >= 0), model.has(isr, leader)))
    return z3.And(*facts)


def replica_epoch_known(model: KafkaSymbolic, s: SymState) -> z3.BoolRef:
    facts = []
    for i, r in enumerate(s.replicas):
        told = model.read(s.hist_leader, r.epoch - 1, model.num(NO_LEADER))
        facts.append(z3.Implies(r.epoch == 0, r.leader == NO_LEADER))
        # A broker fenced while running (--fencing) is not live either, but still knows
        # the leader of its epoch until a record says otherwise.
        facts.append(z3.Implies(z3.Not(s.ctrl_live[i]), s.ctrl_leader != i))
        facts.append(
            z3.Implies(z3.And(z3.Not(s.ctrl_live[i]), z3.Not(r.fenced)), r.leader == NO_LEADER)
        )
        facts.append(z3.Implies(r.leader != NO_LEADER, z3.And(r.epoch >= 1, told == r.leader)))
    return z3.And(*facts)


def log_epochs_ordered(model: KafkaSymbolic, s: SymState) -> z3.BoolRef:
    facts = []
    R = model.records
    for r in s.replicas:
        for k in range(R - 1):
            facts.append(z3.Implies(k + 1 < r.log_len, r.log_ep[k] <= r.log_ep[k + 1]))
        for k in range(R):
            used = k < r.log_len
            facts.append(z3.Implies(z3.And(r.epoch >= 1, used), r.log_ep[k] <= r.epoch))
            facts.append(
                z3.Implies(z3.And(r.unwritten_epoch != 0, used), r.log_ep[k] < r.unwritten_epoch)
            )
        facts.append(z3.Implies(r.epoch >= 1, r.unwritten_epoch <= r.epoch))
        # The log a fetch response at the LEO would make, too.
        answer = z3.And(r.alive, r.if_kind == FETCH_RESPONSE, r.if_a == r.log_len)
        eps = [z3.If(k < r.if_a, r.log_ep[k], r.if_ep[k]) for k in range(R)]
        end = r.if_a + r.if_len
        for k in range(R):
            used = z3.And(answer, k < end)
            facts.append(z3.Implies(used, eps[k] <= r.epoch))
            if k + 1 < R:
                facts.append(z3.Implies(z3.And(used, k + 1 < end), eps[k] <= eps[k + 1]))
    return z3.And(*facts)


def committed_in_isr(model: KafkaSymbolic, s: SymState) -> z3.BoolRef:
    if not _epoch_truncation(model):
        return model.a.true
    facts = []
    for m, r in enumerate(s.replicas):
        held = _prefix(model, _committed(s), s.committed_len, _kept(model, r))
        facts.append(z3.Implies(s.ctrl_isr[m], held))
        current = z3.And(_leads(r, m), r.epoch == s.ctrl_epoch, s.ctrl_leader == m)
        facts.append(z3.Implies(current, s.committed_len <= model.mx(r.hw, r.epoch_start)))
    return z3.And(*facts)


def _exposed(model: KafkaSymbolic, s: SymState) -> list[tuple]:
    """What a replica exposes as below a HW: (replica, its records (epochs, ids,
    length), how many of them, when it counts).  Its log below its HW or its
    checkpointed HW, and the log a fetch response at its LEO would make, below the
    HW that response carries."""
    out = []
    for f in s.replicas:
        out.append((f, _log(f), model.mx(f.hw, f.hw_checkpoint), model.a.true))
        eps = tuple(z3.If(k < f.if_a, f.log_ep[k], f.if_ep[k]) for k in range(model.records))
        ids = tuple(z3.If(k < f.if_a, f.log_id[k], f.if_id[k]) for k in range(model.records))
        answer = z3.And(f.alive, f.if_kind == FETCH_RESPONSE, f.if_a == f.log_len)
        out.append((f, (eps, ids, f.if_a + f.if_len), f.if_b, answer))
    return out


def hw_prefix_in_isr(model: KafkaSymbolic, s: SymState) -> z3.BoolRef:
    if not _epoch_truncation(model):
        return model.a.true
    facts = []
    for f, records, upto, counts in _exposed(model, s):
        for m, r in enumerate(s.replicas):
            later = [
                z3.And(f.epoch >= 1, f.epoch < e + 1, e + 1 <= s.ctrl_epoch, s.hist_isr[e][m])
                for e in range(len(s.hist_isr))
            ]
            member = z3.And(counts, z3.Or(s.ctrl_isr[m], *later))
            facts.append(z3.Implies(member, _prefix(model, records, upto, _kept(model, r))))
    return z3.And(*facts)


def hw_prefix_in_leaders(model: KafkaSymbolic, s: SymState) -> z3.BoolRef:
    if not _epoch_truncation(model):
        return model.a.true
    facts = []
    for f, records, upto, counts in _exposed(model, s):
        for j, lead in enumerate(s.replicas):
            newer = z3.And(counts, f.epoch >= 1, _leads(lead, j), lead.epoch >= f.epoch)
            # ... and the leader named for an epoch from f's on, before it hears of it.
            for e in range(len(s.hist_leader)):  # slot e: epoch e + 1
                untold = z3.Or(
                    z3.And(lead.epoch >= 1, lead.epoch < e + 1),
                    z3.And(lead.epoch == 0, e + 1 == s.ctrl_epoch),
                )
                named = z3.And(e + 1 <= s.ctrl_epoch, s.hist_leader[e] == j, untold)
                newer = z3.Or(newer, z3.And(counts, f.epoch >= 1, f.epoch <= e + 1, named))
            facts.append(z3.Implies(newer, _prefix(model, records, upto, _kept(model, lead))))
    return z3.And(*facts)


def leader_hw_in_its_isr(model: KafkaSymbolic, s: SymState) -> z3.BoolRef:
    if not _epoch_truncation(model):
        return model.a.true
    facts = []
    for j, lead in enumerate(s.replicas):
        for m, r in enumerate(s.replicas):
            member = z3.And(_leads(lead, j), lead.isr[m])
            facts.append(z3.Implies(member, _prefix_of(model, lead, lead.hw, r)))
    return z3.And(*facts)


def current_leader_isr(model: KafkaSymbolic, s: SymState) -> z3.BoolRef:
    if _replay_drops_growth(model):
        return model.a.true
    facts = []
    for j, lead in enumerate(s.replicas):
        current = z3.And(_leads(lead, j), lead.epoch == s.ctrl_epoch)
        within = z3.And(*[z3.Implies(s.ctrl_isr[m], lead.isr[m]) for m in model.ids])
        facts.append(z3.Implies(current, within))
    return z3.And(*facts)


def leader_epoch_layout(model: KafkaSymbolic, s: SymState) -> z3.BoolRef:
    if _releads_same_epoch(model):
        return model.a.true
    facts = []
    for j, r in enumerate(s.replicas):
        shape = []
        for k in range(model.records):
            used = k < r.log_len
            shape.append(z3.Implies(z3.And(used, k < r.epoch_start), r.log_ep[k] < r.epoch))
            shape.append(z3.Implies(z3.And(used, k >= r.epoch_start), r.log_ep[k] == r.epoch))
        if model.behaviour.leader_caches_epoch:
            shape.append(
                z3.If(
                    r.log_len == r.epoch_start, r.unwritten_epoch == r.epoch, r.unwritten_epoch == 0
                )
            )
        facts.append(z3.Implies(_leads(r, j), z3.And(*shape)))
    return z3.And(*facts)


def fetch_response_from_leader(model: KafkaSymbolic, s: SymState) -> z3.BoolRef:
    facts = []
    for f in s.replicas:
        answer = z3.And(f.alive, f.if_kind == FETCH_RESPONSE)
        facts.append(z3.Implies(answer, f.if_b <= f.if_a + f.if_len))
        if model.behaviour.truncation != ON_FETCH:
            fetched = z3.Or(f.if_kind == FETCH_RESPONSE, f.if_kind == OUT_OF_RANGE)
            facts.append(z3.Implies(z3.And(f.alive, fetched), f.truncation != MUST_TRUNCATE))
        old_answers = _keeps_old_answers(model)
        if model.behaviour.fenced_by_epoch and not old_answers:  # KIP-320: its epoch's leader
            for j, lead in enumerate(s.replicas):
                told = z3.Or(lead.epoch >= f.epoch, z3.And(lead.epoch == 0, f.epoch < s.ctrl_epoch))
                facts.append(z3.Implies(z3.And(answer, f.leader == j), told))
        for j, lead in enumerate(s.replicas):
            if old_answers and (model.config.controller_failover or model.config.lossy_crash):
                break  # the sender's log may have lost the answer's records since
            same = [f.if_a + f.if_len <= lead.log_len]
            if not _releads_same_epoch(model) and not old_answers:  # else from before a restart
                same.append(f.if_b <= lead.hw)
            for k in range(model.records):
                sent = z3.And(f.if_a <= k, k < f.if_a + f.if_len)
                same.append(
                    z3.Implies(
                        sent, z3.And(f.if_ep[k] == lead.log_ep[k], f.if_id[k] == lead.log_id[k])
                    )
                )
            of_epoch = z3.And(answer, f.leader == j, _leads(lead, j), lead.epoch == f.epoch)
            facts.append(z3.Implies(of_epoch, z3.And(*same)))
    return z3.And(*facts)


def checkpoint_within_log(model: KafkaSymbolic, s: SymState) -> z3.BoolRef:
    # KAFKA-13141, KAFKA-13790, a replaced disk: see _epoch_truncation
    b = model.behaviour
    if b.diverged_fetch_moves_leader or _replay_drops_growth(model) or model.config.disk_loss:
        return model.a.true
    return z3.And(*[r.hw_checkpoint <= r.log_len for r in s.replicas])


def zk_current_leader(model: KafkaSymbolic, s: SymState) -> z3.BoolRef:
    facts = []
    for j, r in enumerate(s.replicas):
        current = z3.And(
            _leads(r, j), r.epoch == s.ctrl_epoch, s.ctrl_leader == j, model.m_eq(r.isr, s.ctrl_isr)
        )
        facts.append(z3.Implies(r.zk_current, current))
        if not model.behaviour.alter_isr:
            facts.append(_none(r.pending_isr))
    return z3.And(*facts)


def remote_leo_behind(model: KafkaSymbolic, s: SymState) -> z3.BoolRef:
    if not _epoch_truncation(model) or model.behaviour.diverged_fetch_moves_leader:
        return model.a.true
    facts = []
    for j, lead in enumerate(s.replicas):
        for i, f in enumerate(s.replicas):
            if i == j:
                continue
            agree = z3.And(lead.remote[i] <= f.log_len, _prefix_of(model, lead, lead.remote[i], f))
            # f truncated since only on LeaderAndIsr naming j, itself, or nobody acting.
            f_epoch = z3.If(f.epoch == 0, s.ctrl_epoch, f.epoch)
            since = _epochs_between(
                s,
                lead.epoch,
                f_epoch,
                lambda slot, i=i, j=j: z3.Or(_names(s, slot, i, j), _quiet(s, slot)),
            )
            facts.append(z3.Implies(z3.And(_leads(lead, j), *since), agree))
    return z3.And(*facts)


def records_after_leader(model: KafkaSymbolic, s: SymState) -> z3.BoolRef:
    facts = []

    def led(e: object) -> z3.BoolRef:
        """Epoch ``e``'s leader has been told of it (and so could write in it)."""
        out = []
        for j, lead in enumerate(s.replicas):
            told = z3.Or(lead.epoch >= e, z3.And(lead.epoch == 0, e < s.ctrl_epoch))
            out.append(
                z3.Implies(model.read(s.hist_leader, e - 1, model.num(NO_LEADER)) == j, told)
            )
        return z3.And(*out)

    for k, ep, rid, used in _all_slots(model, s):
        named = model.read(s.hist_leader, ep - 1, model.num(NO_LEADER)) != NO_LEADER
        facts.append(z3.Implies(used, z3.And(named, led(ep))))
        for j, lead in enumerate(s.replicas):
            writer = z3.And(used, _leads(lead, j), lead.epoch == ep)
            held = z3.And(k < lead.log_len, lead.log_ep[k] == ep, lead.log_id[k] == rid)
            facts.append(z3.Implies(writer, held))
    for i, r in enumerate(s.replicas):
        cached = r.unwritten_epoch
        named = model.read(s.hist_leader, cached - 1, model.num(NO_LEADER)) == i
        facts.append(z3.Implies(cached > 0, z3.And(named, led(cached))))
    return z3.And(*facts)


def sole_isr_pending_leader(model: KafkaSymbolic, s: SymState) -> z3.BoolRef:
    if model.config.elects_unclean:  # an unclean election names an ISR of its own
        return model.a.true
    facts = []
    E = len(s.hist_leader)
    for e in range(E):  # slot e: epoch e + 1
        for j, lead in enumerate(s.replicas):
            alone = model.m_eq(s.hist_isr[e], model.only(j))
            # Not told yet: an older epoch, or 0 (seen restarting) with e the current one.
            untold = z3.Or(
                z3.And(lead.epoch >= 1, lead.epoch < e + 1),
                z3.And(lead.epoch == 0, e + 1 == s.ctrl_epoch),
            )
            pending = z3.And(e + 1 <= s.ctrl_epoch, s.hist_leader[e] == j, untold, alone)
            within = [z3.Not(x) for m, x in enumerate(s.ctrl_isr) if m != j]
            for later in range(e + 1, E):
                used = later + 1 <= s.ctrl_epoch
                within += [
                    z3.Implies(used, z3.Not(x)) for m, x in enumerate(s.hist_isr[later]) if m != j
                ]
            facts.append(z3.Implies(pending, z3.And(*within)))
    return z3.And(*facts)


def leader_hw_current(model: KafkaSymbolic, s: SymState) -> z3.BoolRef:
    if model.behaviour.alter_isr:
        return model.a.true
    facts = []
    for j, r in enumerate(s.replicas):
        low = r.log_len
        for f in model.ids:
            if f != j:
                counted = z3.Or(r.isr[f], r.pending_isr[f])
                low = z3.If(z3.And(counted, r.remote[f] < low), r.remote[f], low)
        current = r.hw >= low
        if model.behaviour.hw_needs_min_isr:
            current = z3.Or(current, model.count(r.isr) < model.config.min_insync_replicas)
        facts.append(z3.Implies(_leads(r, j), current))
    return z3.And(*facts)


def epoch_answer_owed(model: KafkaSymbolic, s: SymState) -> z3.BoolRef:
    if EPOCH_RESPONSE not in model.layout.inflight_kinds:
        return model.a.true
    return z3.And(
        *[
            z3.Implies(r.if_kind == EPOCH_RESPONSE, r.truncation == MUST_TRUNCATE)
            for r in s.replicas
        ]
    )


def crashes_counted(model: KafkaSymbolic, s: SymState) -> z3.BoolRef:
    b = model.behaviour
    if b.exits_on_out_of_range and not model.config.unclean_election:
        return model.a.true  # a halt (MessageRules._do_halt) downs a broker uncounted
    down = model.count(
        tuple(
            z3.Or(
                z3.Not(r.alive),
                _forgot_leader(model, r),
                z3.And(z3.Not(s.ctrl_live[i]), z3.Not(r.fenced)),
            )
            for i, r in enumerate(s.replicas)
        )
    )
    again = model.count(tuple(z3.And(z3.Not(r.alive), r.epoch == 0) for r in s.replicas))
    return down + again <= s.crashes


def epoch_answer_asked(model: KafkaSymbolic, s: SymState) -> z3.BoolRef:
    if EPOCH_RESPONSE not in model.layout.inflight_kinds:
        return model.a.true
    b = model.behaviour
    facts = []
    for r in s.replicas:
        latest = model.latest_epoch(view(r))
        asked = model.read(s.hist_leader, r.if_a - 1, model.num(NO_LEADER))
        shape = [latest >= 1, latest <= r.if_a, r.if_a <= r.epoch, asked == r.leader]
        if b.truncation == EPOCH_ONCE:
            shape.append(r.if_b == -1)
        else:
            shape.append((r.if_b == -1) == (r.if_c == -1))
        if not model.config.controller_failover or b.epoch_answer_checks_epoch:
            for slot in range(len(s.hist_leader)):
                between = z3.And(r.if_a < slot + 1, slot + 1 <= r.epoch)
                same = z3.Or(s.hist_leader[slot] == r.leader, s.hist_leader[slot] == NO_LEADER)
                shape.append(z3.Implies(between, same))
        if b.fenced_by_epoch:
            for j, lead in enumerate(s.replicas):
                told = z3.Or(lead.epoch >= r.if_a, z3.And(lead.epoch == 0, r.if_a < s.ctrl_epoch))
                shape.append(z3.Implies(r.leader == j, told))
        facts.append(z3.Implies(z3.And(r.alive, r.if_kind == EPOCH_RESPONSE), z3.And(*shape)))
    return z3.And(*facts)


def epoch_answer_from_leader(model: KafkaSymbolic, s: SymState) -> z3.BoolRef:
    b = model.behaviour
    kinds = model.layout.inflight_kinds
    if EPOCH_RESPONSE not in kinds or not b.fenced_by_epoch or not b.leader_caches_epoch:
        return model.a.true
    facts = []
    for i, f in enumerate(s.replicas):
        requested = model.latest_epoch(view(f))
        for j, lead in enumerate(s.replicas):
            if i == j:
                continue
            epoch_now, end_now = model.leader_answer(view(lead), requested)
            asked = z3.And(
                f.alive,
                f.if_kind == EPOCH_RESPONSE,
                f.leader == j,
                _leads(lead, j),
                lead.epoch == f.if_a,
            )
            same = z3.And(
                f.if_b == epoch_now,
                f.if_c <= end_now,
                z3.Implies(requested != model.latest_epoch(view(lead)), f.if_c == end_now),
            )
            facts.append(z3.Implies(asked, same))
    return z3.And(*facts)


def no_out_of_range(model: KafkaSymbolic, s: SymState) -> z3.BoolRef:
    b, cfg = model.behaviour, model.config
    applies = b.fenced_by_epoch and b.retruncate_same_leader == RETRUNCATE_EVERY
    if not applies or b.truncation == ON_FETCH or cfg.lossy_crash or cfg.unclean_election:
        return model.a.true
    return z3.And(*[r.if_kind != OUT_OF_RANGE for r in s.replicas])


def follower_leader_told(model: KafkaSymbolic, s: SymState) -> z3.BoolRef:
    b = model.behaviour
    if not b.fenced_by_epoch or (
        model.config.controller_failover and not b.epoch_answer_checks_epoch
    ):
        return model.a.true
    facts = []
    for i, f in enumerate(s.replicas):
        engaged = z3.Or(f.truncation == TRUNCATED, f.if_kind != 0)
        for j, lead in enumerate(s.replicas):
            if i == j:
                continue
            follows = z3.And(f.alive, f.leader == j, engaged, lead.epoch >= 1)
            named = _epochs_between(s, lead.epoch, f.epoch, lambda slot, j=j: _names(s, slot, j))
            facts.append(z3.Implies(follows, z3.And(*named)))
            own = model.read(s.hist_leader, lead.epoch - 1, model.num(NO_LEADER)) == j
            facts.append(z3.Implies(z3.And(follows, lead.epoch <= f.epoch), own))
            if model.config.controller_failover:
                # A leader that jumps past an epoch another led (deliver_latest) is
                # re-elected and keeps what it recorded before the jump.
                continue
            seen = z3.And(_leads(lead, j), lead.remote[i] >= 0, f.epoch >= 1)
            recorded = _epochs_between(
                s, f.epoch - 1, lead.epoch, lambda slot, j=j: _names(s, slot, j)
            )
            facts.append(z3.Implies(seen, z3.And(*recorded)))
    return z3.And(*facts)


def follower_log_in_leader(model: KafkaSymbolic, s: SymState) -> z3.BoolRef:
    cfg = model.config
    if not _epoch_truncation(model) or not model.behaviour.fenced_by_epoch:
        return model.a.true
    if cfg.lossy_crash or cfg.controller_failover:
        return model.a.true
    facts = []
    R = model.records
    for i, f in enumerate(s.replicas):
        eps = tuple(z3.If(k < f.if_a, f.log_ep[k], f.if_ep[k]) for k in range(R))
        ids = tuple(z3.If(k < f.if_a, f.log_id[k], f.if_id[k]) for k in range(R))
        fetched = z3.And(f.alive, f.if_kind == FETCH_RESPONSE, f.if_a == f.log_len)
        for j, lead in enumerate(s.replicas):
            if i == j:
                continue
            bound = z3.If(lead.epoch == 0, s.ctrl_epoch, lead.epoch)
            low, high = model.mn(bound, f.epoch), model.mx(bound, f.epoch)
            since = _epochs_between(s, low, high, lambda slot, j=j: _names(s, slot, j))
            behind = z3.And(f.alive, f.leader == j, *since)
            kept_lead = _kept(model, lead)
            settled = z3.And(behind, f.truncation == TRUNCATED)
            facts.append(z3.Implies(settled, _prefix(model, _log(f), f.log_len, kept_lead)))
            if EPOCH_RESPONSE in model.layout.inflight_kinds:
                kept = _kept(model, f)
                answered = z3.And(behind, f.if_kind == EPOCH_RESPONSE)
                facts.append(z3.Implies(answered, _prefix(model, kept, kept[2], kept_lead)))
            end = f.if_a + f.if_len
            response = _prefix(model, (eps, ids, end), end, kept_lead)
            facts.append(z3.Implies(z3.And(behind, fetched), response))
    return z3.And(*facts)


def later_isr_within_view(model: KafkaSymbolic, s: SymState) -> z3.BoolRef:
    if not _isr_fixed(model) or _replay_drops_growth(model):
        return model.a.true
    facts = []
    E = len(s.hist_leader)
    unwritten = z3.Not(s.ctrl_isr_written) if model.behaviour.alter_isr else model.a.true
    for j, lead in enumerate(s.replicas):
        current = z3.And(_leads(lead, j), lead.epoch == s.ctrl_epoch, unwritten)
        facts.append(z3.Implies(current, model.m_eq(lead.isr, s.ctrl_isr)))
        for e0 in range(1, E + 1):
            named = z3.And(e0 <= s.ctrl_epoch, s.hist_leader[e0 - 1] == j)
            told = z3.And(_leads(lead, j), lead.epoch == e0)
            untold = z3.And(named, _untold(s, lead, e0))
            for here, seen in ((told, lead.isr), (untold, s.hist_isr[e0 - 1])):
                quiet = model.a.true
                for slot in range(e0, E):  # epoch slot + 1, after e0
                    used = slot + 1 <= s.ctrl_epoch
                    facts.append(
                        z3.Implies(z3.And(here, used, quiet), _within(s.hist_isr[slot], seen))
                    )
                    quiet = z3.And(quiet, z3.Implies(used, _quiet(s, slot)))
                facts.append(z3.Implies(z3.And(here, quiet), _within(s.ctrl_isr, seen)))
    return z3.And(*facts)


def committed_in_named_leader(model: KafkaSymbolic, s: SymState) -> z3.BoolRef:
    if not _epoch_truncation(model) or not _isr_fixed(model) or model.config.lossy_crash:
        return model.a.true
    facts = []
    E = len(s.hist_leader)
    for slot in range(E):
        e = slot + 1
        quiet = z3.And(
            *[
                z3.Implies(later + 1 <= s.ctrl_epoch, _quiet(s, later))
                for later in range(slot + 1, E)
            ]
        )
        for j, lead in enumerate(s.replicas):
            acting = z3.Or(_untold(s, lead, e), z3.And(_leads(lead, j), lead.epoch == e))
            named = z3.And(e <= s.ctrl_epoch, s.hist_leader[slot] == j, acting, quiet)
            held = _prefix(model, _committed(s), s.committed_len, _kept(model, lead))
            facts.append(z3.Implies(named, held))
    return z3.And(*facts)


def records_kept_by_writer(model: KafkaSymbolic, s: SymState) -> z3.BoolRef:
    if model.config.lossy_crash or model.config.disk_loss:
        return model.a.true
    facts = []
    for k, ep, rid, used in _all_slots(model, s):
        writer = model.read(s.hist_leader, ep - 1, model.num(NO_LEADER))
        for j, lead in enumerate(s.replicas):
            bound = z3.If(lead.epoch == 0, s.ctrl_epoch, lead.epoch)
            since = _epochs_between(s, ep, bound, lambda slot, j=j: _names(s, slot, j))
            kept = z3.And(used, writer == j, bound >= ep, *since)
            held = z3.And(k < lead.log_len, lead.log_ep[k] == ep, lead.log_id[k] == rid)
            facts.append(z3.Implies(kept, held))
    return z3.And(*facts)


def unwritten_epoch_empty(model: KafkaSymbolic, s: SymState) -> z3.BoolRef:
    facts = []
    slots = _all_slots(model, s)
    for r in s.replicas:
        for _k, ep, _rid, used in slots:
            facts.append(z3.Implies(z3.And(r.unwritten_epoch > 0, used), ep != r.unwritten_epoch))
    return z3.And(*facts)


def exposed_below_current_hw(model: KafkaSymbolic, s: SymState) -> z3.BoolRef:
    if not _epoch_truncation(model) or _releads_same_epoch(model):
        return model.a.true
    facts = []
    for _f, (eps, _ids, length), upto, counts in _exposed(model, s):
        for j, lead in enumerate(s.replicas):
            current = z3.And(counts, _leads(lead, j), lead.epoch == s.ctrl_epoch)
            for k in range(model.records):
                mine = z3.And(current, k < upto, k < length, eps[k] == lead.epoch)
                facts.append(z3.Implies(mine, k < lead.hw))
    return z3.And(*facts)


def isr_joined_by_fetch(model: KafkaSymbolic, s: SymState) -> z3.BoolRef:
    if not _isr_fixed(model):
        return model.a.true
    if model.config.kraft and not model.behaviour.isr_broker_epochs:
        return model.a.true  # KIP-903: a request from before a restart adds the member
    if _dead_may_join(model):
        return model.a.true
    facts = []
    last_isr = model.read(s.hist_isr, s.ctrl_epoch - 1, model.none())
    for m, r in enumerate(s.replicas):
        settled = model.a.true
        if model.behaviour.truncation != ON_FETCH:  # there a fetch comes before truncation
            settled = z3.Implies(r.epoch == s.ctrl_epoch, r.truncation != MUST_TRUNCATE)
        joined = z3.And(s.ctrl_isr[m], z3.Not(last_isr[m]))
        facts.append(z3.Implies(joined, z3.And(r.epoch >= s.ctrl_epoch, settled)))
        for slot in range(1, len(s.hist_isr)):
            new = z3.And(
                slot + 1 <= s.ctrl_epoch, s.hist_isr[slot][m], z3.Not(s.hist_isr[slot - 1][m])
            )
            facts.append(z3.Implies(z3.And(new, r.epoch != 0), r.epoch >= slot))
    return z3.And(*facts)


def noticed_dead_out_of_isr(model: KafkaSymbolic, s: SymState) -> z3.BoolRef:
    b = model.behaviour
    if not _isr_fixed(model) or (b.alter_isr and not b.isr_needs_live_replicas):
        return model.a.true
    if _dead_may_join(model):
        return model.a.true
    facts = []
    for m in model.ids:
        gone = z3.And(z3.Not(s.ctrl_live[m]), s.ctrl_isr[m])
        alone = z3.And(model.m_eq(s.ctrl_isr, model.only(m)), s.ctrl_leader == NO_LEADER)
        facts.append(z3.Implies(gone, alone))
    return z3.And(*facts)


def epoch_names_leader(model: KafkaSymbolic, s: SymState) -> z3.BoolRef:
    facts = []
    for r in s.replicas:
        named = model.read(s.hist_leader, r.epoch - 1, model.num(NO_LEADER)) != NO_LEADER
        if model.config.kraft:  # or a leaderless record it stepped down on
            named = z3.Or(named, r.leader == NO_LEADER)
        facts.append(z3.Implies(r.epoch >= 1, named))
    return z3.And(*facts)


def _records_before(model: KafkaSymbolic, r: SymReplica, epoch: object) -> object:
    """How many records of ``r``'s log are of epochs before ``epoch``: where ``epoch``
    starts in it (log-epochs-ordered), kept on disk when ``r`` crashes."""
    count = model.num(0)
    for k in range(model.records):
        older = z3.And(k < r.log_len, r.log_ep[k] < epoch)
        count = count + z3.If(older, model.num(1), model.num(0))
    return count


def joined_past_epoch_start(model: KafkaSymbolic, s: SymState) -> z3.BoolRef:
    b, cfg = model.behaviour, model.config
    if not (_epoch_truncation(model) and _isr_fixed(model) and b.isr_join_needs_epoch_start):
        return model.a.true
    if cfg.lossy_crash:
        return model.a.true
    facts = []
    last_isr = model.read(s.hist_isr, s.ctrl_epoch - 1, model.none())
    last_leader = model.read(s.hist_leader, s.ctrl_epoch - 1, model.num(NO_LEADER))
    for j, lead in enumerate(s.replicas):
        current = z3.And(_leads(lead, j), lead.epoch == s.ctrl_epoch)
        start = _records_before(model, lead, s.ctrl_epoch)
        for m, r in enumerate(s.replicas):
            if m == j:
                continue
            joined = z3.And(s.ctrl_isr[m], z3.Not(last_isr[m]))
            held = _prefix_of(model, lead, lead.epoch_start, r)
            facts.append(z3.Implies(z3.And(current, joined), held))
            kept = _prefix(model, _log(lead), start, _kept(model, r))
            facts.append(z3.Implies(z3.And(last_leader == j, joined), kept))
    return z3.And(*facts)


def joined_member_recorded(model: KafkaSymbolic, s: SymState) -> z3.BoolRef:
    if not _isr_fixed(model):
        return model.a.true
    facts = []
    for j, lead in enumerate(s.replicas):
        named = model.read(s.hist_isr, lead.epoch - 1, model.none())
        for m in model.ids:
            if m == j:
                continue
            added = z3.And(_leads(lead, j), lead.isr[m], z3.Not(named[m]))
            facts.append(z3.Implies(added, lead.remote[m] >= 0))
    return z3.And(*facts)


def isr_request_from_leader(model: KafkaSymbolic, s: SymState) -> z3.BoolRef:
    if not model.behaviour.alter_isr:
        return model.a.true
    facts = []
    for q, sender in enumerate(s.alt_sender):
        epoch = s.alt_epoch[q]
        named = model.read(s.hist_leader, epoch - 1, model.num(NO_LEADER)) == sender
        shape = z3.And(epoch >= 1, epoch <= s.ctrl_epoch, named, model.has(s.alt_isr[q], sender))
        facts.append(z3.Implies(q < s.alt_len, shape))
        # One that can still be accepted comes from a sender still in that epoch.
        acceptable = z3.And(q < s.alt_len, s.alt_ok[q], epoch == s.ctrl_epoch)
        in_epoch = z3.Or(*[z3.And(sender == j, r.epoch == epoch) for j, r in enumerate(s.replicas)])
        facts.append(z3.Implies(acceptable, in_epoch))
    return z3.And(*facts)


def hw_prefix_in_lagging_leaders(model: KafkaSymbolic, s: SymState) -> z3.BoolRef:
    b, cfg = model.behaviour, model.config
    if not (_epoch_truncation(model) and _isr_fixed(model) and b.fenced_by_epoch):
        return model.a.true
    if cfg.lossy_crash:
        return model.a.true

    def lagging(e: object) -> z3.BoolRef:
        """A member of the controller's ISR is in epoch ``e`` or an older one (not 0)."""
        members = [
            z3.And(s.ctrl_isr[m], r.epoch >= 1, r.epoch <= e) for m, r in enumerate(s.replicas)
        ]
        return z3.Or(*members)

    exposed = [(records, upto, counts) for _f, records, upto, counts in _exposed(model, s)]
    exposed.append((_committed(s), s.committed_len, model.a.true))
    facts = []
    for records, upto, counts in exposed:
        for j, lead in enumerate(s.replicas):
            held = _prefix(model, records, upto, _kept(model, lead))
            running = z3.And(counts, _leads(lead, j), lagging(lead.epoch))
            facts.append(z3.Implies(running, held))
            for slot in range(len(s.hist_leader)):  # epoch slot + 1
                e = slot + 1
                named = z3.And(e <= s.ctrl_epoch, s.hist_leader[slot] == j, _untold(s, lead, e))
                facts.append(z3.Implies(z3.And(counts, named, lagging(e)), held))
    return z3.And(*facts)


LEMMAS: tuple[SymbolicLemma, ...] = (
    SymbolicLemma(
        "crashed-replica-blank",
        "A crashed broker holds nothing in memory: no leader, HW 0, nothing in flight, no "
        "ISR, followers' offsets, metadata record owed or AlterPartition item "
        "(broker.crashed; restart sets only alive and the HW); a restarted one not yet told "
        "its role has its checkpointed HW (or less) and no cached epoch without records (log "
        "recovery drops it).",
        crashed_replica_blank,
    ),
    SymbolicLemma(
        "role-fields",
        "A running leader has its followers' offsets (at most its LEO: a fetch past it is "
        "answered OUT_OF_RANGE; not so where a diverging fetch moves it, KAFKA-13141, "
        "Behaviour.diverged_fetch_moves_leader), an epoch start within its log, itself in its "
        "ISR and no fetch in flight; a non-leader has no leader-only state (pending writes "
        "or ISR change, a current partition version, a metadata record owed: _make_leader, "
        "_make_follower); one with no leader has nothing in flight and owes no truncation "
        "(in KRaft it may owe one: it stepped down on a leaderless record). "
        "Where every new epoch restarts the fetcher (RETRUNCATE_EVERY) nobody keeps its log "
        "untruncated across an epoch change.",
        role_fields,
    ),
    SymbolicLemma(
        "epochs-bounded",
        "No replica, cached epoch or record is from an epoch the controller has not reached, "
        "and no record id is beyond the writes so far (ids and epochs come from the "
        "controller's epoch and State.written).",
        epochs_bounded,
    ),
    SymbolicLemma(
        "records-unique",
        "Every copy of a record (in a log, a fetch response or committed) is at the offset "
        "it was written at and carries its epoch, and no two records of one epoch share an "
        "offset: records are only appended at a leader's LEO and copied to the same offset "
        "(_do_write, _do_fetch_response), and an epoch's leader never truncates while it "
        "leads.",
        records_unique,
    ),
    SymbolicLemma(
        "epoch-answer-keeps-hw",
        "An in-flight OffsetsForLeaderEpoch answer names an epoch at most the follower's "
        "latest and at most the epoch it asked in (the leader answers for the follower's "
        "latest epoch or an older one), and never truncates it below its HW or checkpointed "
        "HW (the leader answered "
        "from a log that holds the follower's records below them), nor, for a member of its "
        "leader's ISR, below that leader's HW. "
        "Trivial on releases that truncate on fetch."
        " Only where followers truncate by leader epoch (not Behaviour.truncation "
        "'hw', as in 0.10.2, where they lose committed records).",
        epoch_answer_keeps_hw,
    ),
    SymbolicLemma(
        "out-of-range-keeps-hw",
        "An OUT_OF_RANGE answer at the follower's LEO names a leader LEO at or above the "
        "follower's HW and checkpointed HW."
        " Only where followers truncate by leader epoch (not Behaviour.truncation "
        "'hw', as in 0.10.2, where they lose committed records).",
        out_of_range_keeps_hw,
    ),
    SymbolicLemma(
        "history-consistent",
        "The controller's leader and ISR are the latest LeaderAndIsr it sent (the ISR unless a "
        "leader rewrote it since), and every leader it named was in that request's ISR, "
        "as its current leader is in its ISR (ControllerRules._new_epoch; elections pick ISR "
        "members).  A rewritten ISR was written by the leader of the current epoch, which "
        "therefore has that epoch (before KRaft 3.6, where the controller also rewrites it "
        "when it removes a fenced follower).",
        history_consistent,
    ),
    SymbolicLemma(
        "replica-epoch-known",
        "A replica that knows a leader got it from the LeaderAndIsr of its epoch; one the "
        "controller saw restart (epoch 0), or saw crash and not yet restart, knows none yet "
        "(_do_deliver, _do_notice_restart; a broker the controller thinks dead gets no "
        "request, and is not its leader: noticing a leader's crash elects another).  A "
        "broker fenced while running (--fencing) is not its leader either, but keeps what "
        "it knew.",
        replica_epoch_known,
    ),
    SymbolicLemma(
        "log-epochs-ordered",
        "Record epochs never decrease along a log, a cached epoch with no record is newer "
        "than every record (LeaderEpochFileCache.assign), and a replica holds no record or "
        "cached epoch newer than its own epoch (leaders append in their epoch, followers "
        "copy a leader of their epoch after truncating to agreement); so does the log a fetch "
        "response at the LEO would make.",
        log_epochs_ordered,
    ),
    SymbolicLemma(
        "committed-in-isr",
        "Every member of the controller's ISR holds every committed record (the HW passes a "
        "record only once each ISR member fetched it, and an ISR member never truncates "
        "below it); the current leader's HW or its epoch's start offset is past every "
        "committed record (it held them all when elected), so a follower joining the ISR "
        "(at or past both, KAFKA-7128) holds them too."
        " Only where followers truncate by leader epoch (not Behaviour.truncation "
        "'hw', as in 0.10.2, where they lose committed records).",
        committed_in_isr,
    ),
    SymbolicLemma(
        "hw-prefix-in-isr",
        "Each replica's records below its HW (or its checkpointed HW, or the HW of a fetch "
        "response on its way) are in the log of every member of the controller's ISR and of "
        "the ISR of every LeaderAndIsr after the replica's epoch (the HW passed them once "
        "each member of the ISR of the time had them, later ISRs are drawn from it, and a "
        "member truncates only where it and its leader disagree)."
        " Only where followers truncate by leader epoch (not Behaviour.truncation "
        "'hw', as in 0.10.2, where they lose committed records).",
        hw_prefix_in_isr,
    ),
    SymbolicLemma(
        "hw-prefix-in-leaders",
        "A replica's records below its HW (as hw-prefix-in-isr counts them) are in the log of "
        "every running leader of its epoch or a later one, and of the leader named for such an "
        "epoch before it hears of it (it was elected from an ISR that held them)."
        " Only where followers truncate by leader epoch (not Behaviour.truncation "
        "'hw', as in 0.10.2, where they lose committed records).",
        hw_prefix_in_leaders,
    ),
    SymbolicLemma(
        "leader-hw-in-its-isr",
        "A leader's records below its HW are in the log of every member of the ISR it "
        "believes in (maybeIncrementLeaderHW takes the least LEO over that ISR)."
        " Only where followers truncate by leader epoch (not Behaviour.truncation "
        "'hw', as in 0.10.2, where they lose committed records).",
        leader_hw_in_its_isr,
    ),
    SymbolicLemma(
        "current-leader-isr",
        "The controller's ISR is within the ISR that the leader of its current epoch "
        "believes in (the leader's own ISR writes set both).  Not where a replayed metadata "
        "record drops an ISR growth the controller still accepts (KRaft, KAFKA-13790).",
        current_leader_isr,
    ),
    SymbolicLemma(
        "leader-epoch-layout",
        "A running leader's records before its epoch's start offset are from older epochs "
        "and those after it from its own; with KAFKA-7415 (Behaviour.leader_caches_epoch) "
        "its cache names its epoch until the first append (Partition.makeLeader).  Not where "
        "a restarted leader is made leader of its epoch again (_releads_same_epoch).",
        leader_epoch_layout,
    ),
    SymbolicLemma(
        "fetch-response-from-leader",
        "A fetch response carries a HW no larger than the log it describes, goes to a "
        "follower that owes no epoch truncation (no fetch is sent before it, unless truncation "
        "is on fetch), and while its "
        "sender still leads the follower's epoch, records the sender holds at those offsets "
        "and a HW at most the sender's (MessageRules._do_fetch_request; a leader's log and "
        "HW only grow while it leads).  With KIP-320 (Behaviour.fenced_by_epoch) the sender "
        "had the follower's epoch.  Where a restarted leader is made leader of its epoch "
        "again (_releads_same_epoch), its HW may be below the one it sent before.  Where a "
        "follower keeps an older epoch's answer (_keeps_old_answers, before KAFKA-18991) the "
        "sender need not have the follower's epoch, nor a HW as large, and with a lossy crash "
        "or a missed epoch (--controller-failover) not the answer's records either.",
        fetch_response_from_leader,
    ),
    SymbolicLemma(
        "checkpoint-within-log",
        "The checkpointed HW is within the log: it was a HW at most the LEO when written, "
        "and a log is never truncated below its HW's checkpoint (not so in 2.8.0-2.8.1: "
        "KAFKA-13141, nor where a replayed metadata record drops an ISR growth the "
        "controller still accepts: KRaft, KAFKA-13790; nor with --disk-loss, where a leader's "
        "log may come from a replaced disk, shorter than a HW its follower already holds).",
        checkpoint_within_log,
    ),
    SymbolicLemma(
        "zk-current-leader",
        "A leader whose cached partition version is current leads the controller's epoch "
        "with the controller's ISR (every controller write makes it stale, _new_epoch; its "
        "own ISR writes set both).  Before AlterIsr (Behaviour.alter_isr) nothing is pending.",
        zk_current_leader,
    ),
    SymbolicLemma(
        "remote-leo-behind",
        "A leader's log up to the fetch offset it recorded for a follower is in that "
        "follower's log (the offset was the follower's LEO, a prefix of the leader's log, and "
        "a follower truncates only where it and its leader disagree), as long as every "
        "LeaderAndIsr the follower has had since the leader's epoch names that leader, the "
        "follower itself, or a leader that has not acted (a follower of a newer leader may "
        "truncate below the offset a zombie leader recorded: on 3 replicas)."
        " Only where followers truncate by leader epoch, and not where a diverging fetch "
        "moves the recorded offset (KAFKA-13141, Behaviour.diverged_fetch_moves_leader).",
        remote_leo_behind,
    ),
    SymbolicLemma(
        "records-after-leader",
        "A record of epoch e, or a cached epoch e, exists only if e named a leader and once "
        "that leader was told it "
        "leads (only it writes or caches e); that leader's epoch is then e or later, or 0 if "
        "the controller saw it restart, which needed a newer epoch (noticing a leader's "
        "crash starts one).  While it leads e, it holds every record of e at its offset.",
        records_after_leader,
    ),
    SymbolicLemma(
        "sole-isr-pending-leader",
        "Once the controller named a leader with an ISR of just itself, and until that "
        "leader hears of it, every later ISR is within that one: only a leader acting in "
        "the epoch can add members (by their fetches), and the controller's own changes "
        "only remove them (but for an unclean election: not claimed with one).",
        sole_isr_pending_leader,
    ),
    SymbolicLemma(
        "leader-hw-current",
        "A running leader's HW is at least the least LEO over its maximal ISR: every event "
        "that raises that minimum (append, fetch, ISR change, becoming leader) runs "
        "maybeIncrementLeaderHW (BrokerRules._advance_leader_hw); from KAFKA-15583 "
        "(Behaviour.hw_needs_min_isr) not while the ISR is below min.insync.replicas."
        " Not with AlterIsr (Behaviour.alter_isr): a refused proposal shrinks the maximal ISR "
        "without a HW update.",
        leader_hw_current,
    ),
    SymbolicLemma(
        "epoch-answer-owed",
        "An OffsetsForLeaderEpoch answer in flight goes to a follower that still owes its "
        "truncation: it is sent only then (_follower_actions), handling it is the only way to "
        "settle, and a fetcher restart that keeps it sets MUST_TRUNCATE again "
        "(BrokerRules._make_follower).",
        epoch_answer_owed,
    ),
    SymbolicLemma(
        "crashes-counted",
        "Every broker that is down, restarted and not yet told its role, or seen down by the "
        "controller (not merely fenced while running, --fencing) took a crash of its own, and "
        "one down again after the controller saw it "
        "restart (epoch 0) took two: only a crash takes a broker down or makes it forget its "
        "leader (broker.crashed; State.crashes; in KRaft a follower that stepped to no leader "
        "on a leaderless record owes a truncation, which a restarted one does not).  Not "
        "where a follower halts on OFFSET_OUT_OF_RANGE (Behaviour.exits_on_out_of_range, "
        "unclean election off), which downs a broker uncounted.",
        crashes_counted,
    ),
    SymbolicLemma(
        "epoch-answer-asked",
        "An OffsetsForLeaderEpoch answer in flight answers the follower's latest epoch as it "
        "still is (a follower owing truncation does not change its log), asked in an epoch at "
        "most its own whose leader is still its leader, with only LeaderAndIsr requests naming "
        "that leader or none since (a fetcher restart for another leader drops the answer, "
        "_make_follower; not so after a controller failover before KAFKA-7786, "
        "Behaviour.epoch_answer_checks_epoch).  Under KIP-320 (Behaviour.fenced_by_epoch) the "
        "leader had the epoch of the request.  The answer names the UNDEFINED epoch exactly "
        "when its end offset is UNDEFINED (LeaderEpochFileCache.endOffsetFor, KIP-279; "
        "KIP-101's answers name no epoch).",
        epoch_answer_asked,
    ),
    SymbolicLemma(
        "epoch-answer-from-leader",
        "While the leader that answered an OffsetsForLeaderEpoch request still leads the epoch "
        "it was asked in, its answer is what it would answer now, up to a larger end offset "
        "for its latest epoch (a leader's cache only grows at its log end; "
        "Partition.lastOffsetForLeaderEpoch).  Where the leader caches its epoch at once "
        "(KAFKA-7415, Behaviour.leader_caches_epoch) and answers only in the follower's epoch "
        "(KIP-320, Behaviour.fenced_by_epoch).",
        epoch_answer_from_leader,
    ),
    SymbolicLemma(
        "no-out-of-range",
        "No fetch is answered OFFSET_OUT_OF_RANGE: a follower fetches only once it truncated "
        "in its leader's epoch (KIP-320 fencing, and every new epoch re-truncates, "
        "KAFKA-7395), so its log is a prefix of that leader's.  Only with "
        "Behaviour.fenced_by_epoch and retruncate_same_leader 'every', before truncation on "
        "fetch (which answers an unknown epoch OFFSET_OUT_OF_RANGE), without lossy crashes or "
        "unclean election.",
        no_out_of_range,
    ),
    SymbolicLemma(
        "follower-leader-told",
        "Under KIP-320 (Behaviour.fenced_by_epoch) a follower that truncated, or has an answer "
        "in flight, did so in an epoch its leader had reached: the leader leads its own epoch "
        "and every LeaderAndIsr between the two names it or nobody (an answer kept across a "
        "fetcher restart for the same leader, before KAFKA-7786, is the only lag).  A "
        "leader's recorded offset for a follower comes from a fetch in an epoch of that "
        "leader, the follower's own or an older one, and every LeaderAndIsr from the "
        "follower's epoch to the leader's names that leader or nobody (the fetch is fenced to "
        "the leader's epoch, and Partition.makeLeader keeps the offsets only of a broker "
        "re-elected; not with --controller-failover, where a leader that applies only the "
        "latest LeaderAndIsr skips an epoch another broker led and keeps them).",
        follower_leader_told,
    ),
    SymbolicLemma(
        "follower-log-in-leader",
        "A follower that truncated, what it keeps once the answer in flight is handled, and "
        "the log a fetch response would give it, are in the log (as it keeps it) of its "
        "leader, also before the leader hears of the follower's epoch and while the leader "
        "is in a later epoch it leads again: the follower truncated to agree with that leader "
        "and copied from it, and that leader has been no one's follower since "
        "(_do_epoch_response, _do_fetch_response).  Only with KIP-320 fencing, without lossy "
        "crashes or controller failover, where followers truncate by leader epoch.",
        follower_log_in_leader,
    ),
    SymbolicLemma(
        "later-isr-within-view",
        "The ISR a leader believes in covers every later ISR of the controller until a leader "
        "of a later epoch acts: the controller only shrinks the ISR (_do_notice_crash, "
        "_do_elect keep or cut it), and only a leader told of its epoch adds members, writing "
        "its own view and ZooKeeper's together.  The same holds for the ISR the controller "
        "named with a leader not yet told.  A leader of the current epoch whose ISR was not "
        "rewritten (or any, before AlterIsr) sees the controller's ISR.  Not with unclean "
        "election, ELR or a broken design rule, nor where a replayed metadata record drops "
        "an ISR growth the controller still accepts (KRaft, KAFKA-13790).",
        later_isr_within_view,
    ),
    SymbolicLemma(
        "committed-in-named-leader",
        "The leader named for an epoch holds every committed record while nobody acted in a "
        "later epoch: it was elected from an ISR that held them (committed-in-isr), and "
        "committed grows only under a leader told of the current epoch "
        "(KafkaReplication._record_commits).  Where followers truncate by leader epoch, "
        "without unclean election, ELR, a broken design rule or lossy crashes.",
        committed_in_named_leader,
    ),
    SymbolicLemma(
        "records-kept-by-writer",
        "The leader of an epoch keeps every record of that epoch at its offset as long as "
        "every LeaderAndIsr it has had since names it or nobody: only a follower truncates "
        "(_make_follower, _truncated_to), and a crash keeps the log.  Not with lossy crashes "
        "or replaced disks.",
        records_kept_by_writer,
    ),
    SymbolicLemma(
        "unwritten-epoch-empty",
        "A cached epoch without a record has no record anywhere: only its leader writes in it, "
        "and its first write replaces the cached entry (_do_write; "
        "LeaderEpochFileCache.assign).",
        unwritten_epoch_empty,
    ),
    SymbolicLemma(
        "exposed-below-current-hw",
        "Records of the current epoch that any replica exposes below a HW (as "
        "hw-prefix-in-isr counts them) are below the HW of that epoch's running leader: "
        "followers take their HW from its fetch responses and it never lowers it while it "
        "leads.  Where followers truncate by leader epoch, and a leader is never made leader "
        "of its epoch again after a restart (_releads_same_epoch).",
        exposed_below_current_hw,
    ),
    SymbolicLemma(
        "isr-joined-by-fetch",
        "A member that was not in an epoch's ISR when the controller sent it, and is in a "
        "later one, joined by fetching in that epoch (MessageRules._leader_saw_fetch: the "
        "only way the ISR grows), so its epoch is at least that one; a member added in the "
        "current epoch has settled its truncation in it (not so with truncation on fetch, "
        "where the fetch comes first).  Not with unclean election, ELR or a broken design "
        "rule, nor in KRaft before KIP-903 (Behaviour.isr_broker_epochs), where the "
        "controller accepts a request for a member that restarted since its fetch, nor "
        "where a broker taken for gone may join (_dead_may_join).",
        isr_joined_by_fetch,
    ),
    SymbolicLemma(
        "noticed-dead-out-of-isr",
        "A broker the controller saw down is in its ISR only as the last member, with no "
        "leader (_do_notice_crash removes it otherwise; nobody can add it before it is seen "
        "back).  Not with unclean election, ELR, a broken design rule, or AlterIsr before "
        "KIP-841 (Behaviour.isr_needs_live_replicas), which may accept a request naming it, "
        "nor where a broker taken for gone runs on and may join (_dead_may_join).",
        noticed_dead_out_of_isr,
    ),
    SymbolicLemma(
        "epoch-names-leader",
        "A replica's epoch is one whose LeaderAndIsr named a leader: with ZooKeeper a request "
        "naming none does not take effect at a broker (ControllerRules._takes_effect, "
        "_next_request); in KRaft a replica at a leaderless epoch follows nobody.",
        epoch_names_leader,
    ),
    SymbolicLemma(
        "joined-past-epoch-start",
        "A member the current epoch's leader added to the ISR holds the leader's log up to "
        "the start of its epoch: it joined on a fetch at or past that offset, from a log "
        "that was a prefix of the leader's (KAFKA-7128, Behaviour.isr_join_needs_epoch_start; "
        "MessageRules._leader_saw_fetch), and does not truncate again in the epoch.  It "
        "stays so after the leader crashes: the leader's log, whose records of earlier "
        "epochs end where its epoch starts, stays on disk.  Where followers truncate by "
        "leader epoch, without unclean election, ELR, a broken design rule or lossy "
        "crashes.",
        joined_past_epoch_start,
    ),
    SymbolicLemma(
        "joined-member-recorded",
        "A running leader holds a recorded offset for every member of its ISR that the ISR "
        "its epoch was named with lacked: it adds a member only on that member's fetch, "
        "which records the fetch offset first (MessageRules._leader_saw_fetch, "
        "Partition.updateReplicaLogReadResult), and forgets the offsets only when it "
        "becomes leader anew, with the named ISR (Partition.makeLeader).  Not with unclean "
        "election, ELR or a broken design rule.",
        joined_member_recorded,
    ),
    SymbolicLemma(
        "hw-prefix-in-lagging-leaders",
        "What any replica exposes below a HW (as hw-prefix-in-isr counts it), and every "
        "committed record, is in the log of every running leader, and of every leader named "
        "for an epoch before it hears of it, whose epoch is at least that of some member of "
        "the controller's ISR (hw-prefix-in-leaders bounds it by the exposing replica's "
        "epoch instead, which may be later than the epoch the HW passed the records in).  "
        "The HW passed them in some epoch E under its leader L, counting every member of "
        "L's ISR, which held the ISR member then (only a fetch adds a member, "
        "MessageRules._leader_saw_fetch, and the controller only shrinks the ISR): that "
        "member's LEO reached them by a fetch from L, which KIP-320 fences to L's epoch, so a "
        "member still in an epoch before E fetched from L across re-elections of L alone "
        "(Partition.makeLeader keeps a re-elected leader's offsets).  Every epoch from the "
        "member's on is then L's or one at or after E, whose leaders were elected from ISRs "
        "that held the records and only truncate to agree with such a leader.  With KIP-320 "
        "(Behaviour.fenced_by_epoch), where followers truncate by leader epoch, without "
        "unclean election, ELR, a broken design rule or lossy crashes.",
        hw_prefix_in_lagging_leaders,
    ),
    SymbolicLemma(
        "isr-request-from-leader",
        "A queued AlterIsr / AlterPartition request was sent by the leader the controller "
        "named for the request's epoch, an epoch the controller has reached, and proposes "
        "an ISR that keeps its sender: only a broker that believes it leads proposes, with "
        "its own epoch, which it got from that epoch's LeaderAndIsr, and it only adds or "
        "drops a follower of its own ISR, which holds itself (BrokerRules._propose_isr, "
        "Partition.expandIsr / shrinkIsr; the controller's history is only appended to).  "
        "One of the current epoch with a current partition version comes from a sender "
        "still in that epoch: a broker's epoch changes only by a later LeaderAndIsr, or to 0 "
        "once the controller saw it restart, after noticing its crash, which for the leader "
        "starts a new epoch (_notice_needs_bump), and a crash keeps it.  So an accepted "
        "request keeps the controller's leader in the ISR, and its writer in the current "
        "epoch (ControllerRules._do_alter_isr).",
        isr_request_from_leader,
    ),
)
