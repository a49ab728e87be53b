"""Kafka partition replication as a transition system.

Every rule of ``docs/kafka-replication.md`` (cited below as "ref §
<section>") is one action: a precondition in :meth:`KafkaReplication.actions`
and an effect in the ``_do_<name>`` method of the same name.  Where the page is
silent or Kafka behaves more subtly, the comment names the Kafka code the rule
follows.

Time is not modelled: any enabled action may happen next.  That is what lets
the checker find the interleavings behind the HW-truncation bugs (a fetch
response that is one round late, a restart at the wrong moment, a request
from a stale leader).
"""

from __future__ import annotations

from collections.abc import Iterator

from model.config import Config
from model.interface import Action
from model.modes import MODES, Mode
from model.state import (
    MUST_TRUNCATE,
    NO_LEADER,
    NOT_TRUNCATED,
    TRUNCATED,
    UNKNOWN_LEO,
    Replica,
    State,
    make_record,
    record_epoch,
    record_id,
)
from model.symmetry import representative

# Parameter names of each action, in the order of ``Action.args``.
ACTION_PARAMS: dict[str, tuple[str, ...]] = {
    "write": ("leader",),
    "fetch": ("follower", "leader"),
    "truncate": ("follower", "leader"),
    "shrink_isr": ("leader", "follower"),
    "expand_isr": ("leader", "follower"),
    "checkpoint_hw": ("replica",),
    "crash": ("replica", "keep"),
    "restart": ("replica",),
    "deliver": ("replica",),
    "deliver_latest": ("replica",),
    "notice_crash": ("replica", "new_leader"),
    "notice_restart": ("replica",),
    "elect": ("leader",),
}

ACTION_DOCS: dict[str, str] = {
    "write": "producer appends the next record to a replica that believes it leads",
    "fetch": "one fetch round: follower sends its LEO, leader updates HW, follower appends",
    "truncate": "new follower's OffsetsForLeaderEpoch exchange and truncation (kip modes)",
    "shrink_isr": "leader removes a lagging follower from the ISR (fenced at the controller)",
    "expand_isr": "leader adds a caught-up follower back to the ISR (fenced at the controller)",
    "checkpoint_hw": "broker writes its HW to the replication-offset checkpoint file",
    "crash": "broker process dies, keeping `keep` log entries (fewer on a lossy crash)",
    "restart": "broker restarts: reloads its log and its checkpointed HW",
    "deliver": "the next LeaderAndIsr request (in epoch order) reaches a replica",
    "deliver_latest": "after a controller failover, a replica gets only the current state",
    "notice_crash": "controller sees a broker gone: new leader / smaller ISR, epoch bump",
    "notice_restart": "controller sees a broker back (and elects it if the partition is offline)",
    "elect": "controller moves leadership to another live ISR member (preferred election)",
}


def _bits(mask: int) -> int:
    return mask.bit_count()


class KafkaReplication:
    """One partition replicated on ``config.replicas`` brokers, under one truncation mode."""

    def __init__(self, config: Config):
        self.config = config
        self.mode: Mode = MODES[config.mode]
        self.n = config.replicas
        self.all_mask = (1 << self.n) - 1
        self.ids = range(self.n)
        self._dispatch = {name: getattr(self, f"_do_{name}") for name in ACTION_PARAMS}

    # ------------------------------------------------------------------ setup

    def init_states(self) -> list[State]:
        """Epoch 1, leader r0, every replica in the ISR and told so; empty logs."""
        n = self.n
        replicas = []
        for i in self.ids:
            leader = i == 0
            replicas.append(
                Replica(
                    alive=1,
                    epoch=1,
                    leader=0,
                    log=(),
                    hw=0,
                    hw_checkpoint=0,
                    isr=self.all_mask if leader else 0,
                    remote_leo=(UNKNOWN_LEO,) * n if leader else (),
                    truncation=TRUNCATED,
                    unwritten_epoch=1 if leader and self.mode.leader_caches_epoch else 0,
                    pending=0,
                )
            )
        return [
            State(
                ctrl_leader=0,
                ctrl_epoch=1,
                ctrl_isr=self.all_mask,
                ctrl_live=self.all_mask,
                written=0,
                crashes=0,
                committed=(),
                acked=0,
                ctrl_history=((0, self.all_mask),),
                replicas=tuple(replicas),
            )
        ]

    # Replicas are interchangeable: see model.symmetry.
    representative = staticmethod(representative)

    def action_params(self, action: Action) -> dict[str, int]:
        return dict(zip(ACTION_PARAMS[action.name], action.args, strict=True))

    # ---------------------------------------------------------- enabled actions

    def actions(self, s: State) -> Iterator[Action]:
        cfg = self.config
        mode = self.mode
        reps = s.replicas
        can_bump = s.ctrl_epoch < cfg.epochs
        for i in self.ids:
            r = reps[i]
            if not r.alive:
                # ref § Crash and restart: a crashed broker may come back (with
                # KIP-380, only once the controller has handled the crash).
                if not (mode.controller_sees_bounces and s.ctrl_live >> i & 1):
                    yield Action("restart", (i,))
                if s.ctrl_live >> i & 1 and self._crash_notice_possible(s, i, can_bump):
                    for new_leader in self._failover_choices(s, i):
                        yield Action("notice_crash", (i, new_leader))
                continue

            if s.crashes < cfg.crashes:
                if cfg.lossy_crash:
                    for keep in range(r.leo + 1):
                        yield Action("crash", (i, keep))
                else:
                    yield Action("crash", (i, r.leo))
            if r.hw_checkpoint != r.hw:
                yield Action("checkpoint_hw", (i,))
            if not s.ctrl_live >> i & 1:
                yield Action("notice_restart", (i,))
            elif r.epoch < s.ctrl_epoch:
                nxt = self._next_request(s, i)
                if nxt:
                    yield Action("deliver", (i,))
                    if (
                        cfg.controller_failover
                        and nxt < s.ctrl_epoch
                        and self._takes_effect(s, i, s.ctrl_epoch)
                    ):
                        yield Action("deliver_latest", (i,))

            if r.leader == i:  # believes it is the leader
                if s.written < cfg.records and (
                    cfg.acks != -1 or _bits(r.isr) >= cfg.min_insync_replicas
                ):
                    yield Action("write", (i,))
                # ISR changes are written to the controller, fenced by epoch (ref § ISR).
                if s.ctrl_leader == i and s.ctrl_epoch == r.epoch:
                    epoch_start = self._epoch_start_offset(r)
                    for f in self.ids:
                        if f == i:
                            continue
                        remote = r.remote_leo[f]
                        if r.isr >> f & 1:
                            if remote < r.leo:
                                yield Action("shrink_isr", (i, f))
                        elif remote >= r.hw and remote >= epoch_start:
                            yield Action("expand_isr", (i, f))
            elif r.leader != NO_LEADER:
                leader = reps[r.leader]
                if (
                    leader.alive
                    and leader.leader == r.leader
                    and (not mode.fenced_by_epoch or leader.epoch == r.epoch)
                ):
                    if r.truncation == MUST_TRUNCATE:
                        if mode.epoch_truncation(r, leader) is not None:
                            yield Action("truncate", (i, r.leader))
                    else:
                        yield Action("fetch", (i, r.leader))

        # ref § Actors: the controller may move leadership at any moment.
        if can_bump:
            for c in self.ids:
                if c != s.ctrl_leader and s.ctrl_live >> c & 1 and s.ctrl_isr >> c & 1:
                    yield Action("elect", (c,))

    def next_state(self, s: State, action: Action) -> State:
        s = self._dispatch[action.name](s, *action.args)
        return self._record_commits(s)

    # ------------------------------------------------------------- producer

    def _do_write(self, s: State, i: int) -> State:
        """ref § Actors (Producer): append at the leader; acks=1 acknowledges at once.

        With acks=all the write waits in purgatory (``pending``) until the HW
        passes it (Partition.checkEnoughReplicasReachOffset).
        """
        r = s.replicas[i]
        rid = s.written + 1
        log = r.log + (make_record(r.epoch, rid),)
        acked = s.acked | (1 << rid) if self.config.acks == 1 else s.acked
        pending = r.pending | (1 << rid) if self.config.acks == -1 else r.pending
        # Appending replaces a cached epoch entry that has no record yet.
        r = r.replace(log=log, unwritten_epoch=0, pending=pending)
        # Partition.appendRecordsToLeader calls maybeIncrementLeaderHW: an ISR of
        # one commits at once.
        r, acked = self._advance_leader_hw(r, r.remote_leo, acked)
        return s.replace(written=rid, acked=acked, replicas=_put(s.replicas, i, r))

    # ----------------------------------------------------------- replication

    def _do_fetch(self, s: State, f: int, leader_id: int) -> State:
        """ref § The fetch round, as one step that keeps the one-round HW lag.

        ReplicaManager.fetchMessages reads the records and the HW
        (readFromLocalLog) *before* it records the fetch offset and advances
        the HW (updateFollowerLogReadResults).  So the answer carries the HW
        from before this fetch: the follower learns that its records are
        committed one fetch later, as in the seeds' scenario.
        """
        reps = s.replicas
        fol, lead = reps[f], reps[leader_id]
        if fol.leo > lead.leo:
            # OFFSET_OUT_OF_RANGE (ReplicaFetcherThread.handleOffsetOutOfRange).
            # Before KAFKA-7414 (2.0.1) a follower with unclean election off exits
            # rather than truncate away data; since then, and with unclean
            # election on, it truncates to the leader's LEO.
            if self.mode.exits_on_out_of_range and not self.config.unclean_election:
                return s.with_replica(f, _crashed(fol, fol.leo))
            fol = _truncate(fol, lead.leo, self.mode.truncation_lowers_hw)
            return s.with_replica(f, fol)
        answered_hw = lead.hw
        log = fol.log + lead.log[fol.leo :]
        remote = _put(lead.remote_leo, f, fol.leo)
        lead, acked = self._advance_leader_hw(lead.replace(remote_leo=remote), remote, s.acked)
        fol = fol.replace(
            log=log,
            hw=min(answered_hw, len(log)),  # set unconditionally in Kafka: it can go down
            unwritten_epoch=fol.unwritten_epoch if len(log) == fol.leo else 0,
        )
        reps = _put(_put(reps, leader_id, lead), f, fol)
        return s.replace(acked=acked, replicas=reps)

    def _do_truncate(self, s: State, f: int, leader_id: int) -> State:
        """ref § the modes table: the follower's leader-epoch truncation before it fetches."""
        fol = s.replicas[f]
        offset = self.mode.epoch_truncation(fol, s.replicas[leader_id])
        fol = _truncate(fol, offset, self.mode.truncation_lowers_hw).replace(truncation=TRUNCATED)
        return s.with_replica(f, fol)

    # ------------------------------------------------------------------- ISR

    def _do_shrink_isr(self, s: State, i: int, f: int) -> State:
        """ref § ISR maintenance: drop a lagging follower; the HW may then advance."""
        r = s.replicas[i]
        isr = r.isr & ~(1 << f)
        r, acked = self._advance_leader_hw(r.replace(isr=isr), r.remote_leo, s.acked)
        return s.replace(ctrl_isr=isr, acked=acked, replicas=_put(s.replicas, i, r))

    def _do_expand_isr(self, s: State, i: int, f: int) -> State:
        """ref § ISR maintenance: a follower that reached the HW rejoins the ISR."""
        r = s.replicas[i]
        isr = r.isr | (1 << f)
        return s.replace(ctrl_isr=isr, replicas=_put(s.replicas, i, r.replace(isr=isr)))

    # ------------------------------------------------------- crash and restart

    def _do_checkpoint_hw(self, s: State, i: int) -> State:
        """ref § Actors: the HW checkpoint is written periodically, so it can lag."""
        r = s.replicas[i]
        return s.with_replica(i, r.replace(hw_checkpoint=r.hw))

    def _do_crash(self, s: State, i: int, keep: int) -> State:
        """ref § Crash and restart: in-memory state is gone; the log (maybe less its
        unflushed tail), the HW checkpoint and the epoch cache stay on disk."""
        dead = _crashed(s.replicas[i], keep)
        return s.replace(crashes=s.crashes + 1, replicas=_put(s.replicas, i, dead))

    def _do_restart(self, s: State, i: int) -> State:
        """ref § Crash and restart: reload the log and the checkpointed HW.

        The HW is clamped to the log end (Partition.getOrCreateReplica:
        ``min(checkpoint, logEndOffset)``).  Truncation to the HW happens when
        the replica is told it is a follower (0.10's makeFollowers), not here.
        Log recovery drops epoch-cache entries at or past the log end
        (truncateFromEnd), so an unwritten epoch entry does not survive.
        """
        r = s.replicas[i]
        r = r.replace(alive=1, hw=min(r.hw_checkpoint, r.leo), unwritten_epoch=0)
        return s.with_replica(i, r)

    # ------------------------------------------------------------ controller

    def _crash_notice_possible(self, s: State, i: int, can_bump: bool) -> bool:
        return can_bump or not self._notice_needs_bump(s, i)

    def _notice_needs_bump(self, s: State, i: int) -> bool:
        return s.ctrl_leader == i or bool(s.ctrl_isr >> i & 1 and s.ctrl_isr != 1 << i)

    def _failover_choices(self, s: State, i: int) -> list[int]:
        """Who the controller may make leader when it notices broker ``i`` is gone."""
        if s.ctrl_leader != i:
            return [s.ctrl_leader]
        live = s.ctrl_live & ~(1 << i)
        clean = [c for c in self.ids if (live & s.ctrl_isr) >> c & 1]
        if clean:
            return clean
        if self.config.unclean_election:
            unclean = [c for c in self.ids if live >> c & 1]
            if unclean:
                return unclean
        return [NO_LEADER]

    def _do_notice_crash(self, s: State, i: int, new_leader: int) -> State:
        """ref § Actors (Controller): a broker failure, handled as the ZooKeeper-era
        controller does (KafkaController.onBrokerFailure).

        If the dead broker led, OfflinePartitionLeaderElection picks a live ISR
        member (new ISR: the live ISR members), or with unclean election any live
        replica (ISR: just it), or nobody (leader -1, the ISR keeps its last
        member).  If it followed in the ISR, removeReplicasFromIsr drops it.  Each
        change is a new LeaderAndIsr and so a new leader epoch.
        """
        live = s.ctrl_live & ~(1 << i)
        isr = s.ctrl_isr
        if s.ctrl_leader == i:
            if new_leader == NO_LEADER:
                isr = isr & ~(1 << i) or isr
            elif isr >> new_leader & 1:
                isr = isr & live
            else:
                isr = 1 << new_leader  # unclean election
        elif isr >> i & 1:
            isr = isr & ~(1 << i) or isr
        if new_leader == s.ctrl_leader and isr == s.ctrl_isr:
            return s.replace(ctrl_live=live)
        return _new_epoch(s, new_leader, isr).replace(ctrl_live=live)

    def _do_notice_restart(self, s: State, i: int) -> State:
        """The controller sees the broker registered again (onBrokerStartup); an
        offline partition gets it as leader if it is in the ISR, or through an
        unclean election."""
        live = s.ctrl_live | (1 << i)
        offline = s.ctrl_leader == NO_LEADER and s.ctrl_epoch < self.config.epochs
        if offline and s.ctrl_isr >> i & 1:
            return _new_epoch(s, i, s.ctrl_isr & live).replace(ctrl_live=live)
        if offline and self.config.unclean_election:
            return _new_epoch(s, i, 1 << i).replace(ctrl_live=live)
        return s.replace(ctrl_live=live)

    def _do_elect(self, s: State, c: int) -> State:
        """ref § Actors: leadership moves without a crash (preferred-leader election,
        controlled shutdown, a leader's expired ZooKeeper session); ISR unchanged."""
        return _new_epoch(s, c, s.ctrl_isr)

    def _do_deliver(self, s: State, i: int) -> State:
        """ref § Actors: a LeaderAndIsr request arrives (ReplicaManager.becomeLeaderOrFollower).

        One controller sends a broker its requests in order, and a broker
        processes them in order: a running replica gets the next epoch's request
        (after ignoring any that name no leader: makeFollowers only changes
        partition state "when the leader is available").  A broker that
        (re)started gets the current state.
        """
        return self._apply_leader_and_isr(s, i, self._next_request(s, i))

    def _next_request(self, s: State, i: int) -> int:
        """The epoch of the next request that takes effect on replica ``i`` (0: none)."""
        r = s.replicas[i]
        if r.epoch == 0:
            return s.ctrl_epoch if self._takes_effect(s, i, s.ctrl_epoch) else 0
        for epoch in range(r.epoch + 1, s.ctrl_epoch + 1):
            if self._takes_effect(s, i, epoch):
                return epoch
        return 0

    def _takes_effect(self, s: State, i: int, epoch: int) -> bool:
        """A request naming no leader changes nothing.  Any other named leader was
        alive when the controller sent the request (it elects only live brokers),
        and that is the liveness the broker judges it by."""
        return s.ctrl_history[epoch - 1][0] != NO_LEADER

    def _do_deliver_latest(self, s: State, i: int) -> State:
        """A new controller (after a failover) sends each broker only its current
        state; the requests the old controller had queued are lost."""
        return self._apply_leader_and_isr(s, i, s.ctrl_epoch)

    def _apply_leader_and_isr(self, s: State, i: int, epoch: int) -> State:
        r = s.replicas[i]
        leader, isr = s.ctrl_history[epoch - 1]
        was_leader = r.leader == i
        if leader == i:
            # Partition.makeLeader: a new leader forgets its followers' LEOs.
            remote = r.remote_leo if was_leader else (UNKNOWN_LEO,) * self.n
            unwritten = r.unwritten_epoch
            if self.mode.leader_caches_epoch and epoch > _latest_epoch(r):
                unwritten = epoch
            # convertHWToLocalOffsetMetadata cannot place an HW beyond the log end
            # (left there by a truncation) and falls back to the log start (2.0).
            hw = r.hw if r.hw <= r.leo else 0
            r = r.replace(
                epoch=epoch,
                leader=i,
                hw=hw,
                isr=isr,
                remote_leo=remote,
                truncation=TRUNCATED,
                unwritten_epoch=unwritten,
                pending=r.pending if was_leader else 0,
            )
            r, acked = self._advance_leader_hw(r, remote, s.acked)  # makeLeader does this
            return s.replace(acked=acked, replicas=_put(s.replicas, i, r))

        # Becoming (or staying) a follower.  ReplicaManager.makeFollowers acts
        # (truncates, restarts the fetcher) only when Partition.makeFollower
        # reports a change -- a new leader (0.10-2.0), or a new leader or epoch
        # (2.1) -- and the leader is alive in the metadata cache.
        changed = leader != r.leader or (self.mode.fenced_by_epoch and epoch != r.epoch)
        if changed:
            if self.mode.epoch_truncation is None:
                r = _truncate(r, r.hw, False)  # 0.10 makeFollowers: truncate to the own HW
                truncation = TRUNCATED
            else:
                truncation = MUST_TRUNCATE  # the fetcher first asks the leader (KIP-101)
        elif r.truncation == MUST_TRUNCATE:
            truncation = MUST_TRUNCATE
        else:
            truncation = NOT_TRUNCATED
        r = r.replace(
            epoch=epoch, leader=leader, isr=0, remote_leo=(), truncation=truncation, pending=0
        )
        return s.with_replica(i, r)

    # --------------------------------------------------------------- helpers

    def _advance_leader_hw(
        self, r: Replica, remote: tuple[int, ...], acked: int
    ) -> tuple[Replica, int]:
        """Partition.maybeIncrementLeaderHW, then complete delayed acks=all produces.

        HW := max(HW, min LEO over the ISR the leader believes in).  A waiting
        write is acknowledged once the HW passes it, unless the ISR is then
        below min.insync.replicas (NOT_ENOUGH_REPLICAS_AFTER_APPEND).
        """
        low = r.leo
        isr = r.isr
        me = r.leader
        for f in self.ids:
            if f != me and isr >> f & 1 and remote[f] < low:
                low = remote[f]
        if low <= r.hw:
            return r, acked
        pending = r.pending
        if pending:
            enough = _bits(isr) >= self.config.min_insync_replicas
            for offset in range(r.hw, low):
                bit = 1 << record_id(r.log[offset])
                if pending & bit:
                    pending &= ~bit
                    if enough:
                        acked |= bit
        return r.replace(hw=low, pending=pending), acked

    def _epoch_start_offset(self, r: Replica) -> int:
        """kip320: where the leader's current epoch starts (0 in other modes)."""
        if not self.mode.leader_caches_epoch:
            return 0
        for offset, record in enumerate(r.log):
            if record_epoch(record) >= r.epoch:
                return offset
        return r.leo

    def _record_commits(self, s: State) -> State:
        """Ghost update: remember each offset's record once the true leader's HW passes it."""
        leader = s.ctrl_leader
        if leader < 0:
            return s
        r = s.replicas[leader]
        if not r.alive or r.epoch != s.ctrl_epoch or r.leader != leader:
            return s  # no true leader (see state.true_leader)
        known = len(s.committed)
        if r.hw > known and r.log[:known] == s.committed:
            return s.replace(committed=r.log[: r.hw])
        return s


def _new_epoch(s: State, leader: int, isr: int) -> State:
    """The controller writes a new LeaderAndIsr: the next leader epoch (ref § Actors)."""
    return s.replace(
        ctrl_leader=leader,
        ctrl_epoch=s.ctrl_epoch + 1,
        ctrl_isr=isr,
        ctrl_history=s.ctrl_history + ((leader, isr),),
    )


def _latest_epoch(r: Replica) -> int:
    latest = r.unwritten_epoch
    if r.log:
        latest = max(latest, max(record_epoch(x) for x in r.log))
    return latest


def _truncate(r: Replica, offset: int, lowers_hw: bool) -> Replica:
    """Log.truncateTo: a no-op at or past the LEO; else cut the log and its epoch entries.

    Unless ``lowers_hw`` (the mode's Kafka does it), the HW is left alone: it
    lives in Replica, which truncateTo does not touch (0.10 to 2.1), so a
    follower truncated below its HW has HW > LEO until its next fetch response
    sets HW := min(leader HW, LEO).
    """
    if offset >= r.leo:
        return r
    hw = min(r.hw, offset) if lowers_hw else r.hw
    return r.replace(log=r.log[:offset], hw=hw, unwritten_epoch=0)


def _crashed(r: Replica, keep: int) -> Replica:
    """The broker process is gone: only what is on disk stays (ref § Crash and restart)."""
    return Replica(
        alive=0,
        epoch=0,
        leader=NO_LEADER,
        log=r.log[:keep],
        hw=0,
        hw_checkpoint=r.hw_checkpoint,
        isr=0,
        remote_leo=(),
        truncation=TRUNCATED,
        unwritten_epoch=r.unwritten_epoch if keep == r.leo else 0,
        pending=0,  # the producer's waiting requests fail with the connection
    )


def _put(items: tuple, index: int, value: object) -> tuple:
    return items[:index] + (value,) + items[index + 1 :]
