"""Kafka partition replication as a transition system.

Every rule of ``docs/kafka-replication.md`` (cited as "ref § <section>") is one
action: a precondition in :meth:`KafkaReplication.actions` and an effect in the
``_do_<name>`` method of the same name, in the module of its actor:
``model/kafka/broker.py`` (a broker's own replica), ``model/kafka/controller.py`` (the
controller and its LeaderAndIsr requests), ``model/kafka/messages.py`` (Fetch and
OffsetsForLeaderEpoch).  What differs between Kafka releases is read from
``model/kafka/releases.py``.

Time is not modelled: any enabled action may happen next.  That is what lets
the checker find the interleavings behind the replication bugs (a response that
arrives after the leader changed, a restart at the wrong moment, a request
from a stale leader).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from replcheck.model.interface import Action
from replcheck.model.kafka.broker import BrokerRules, bits
from replcheck.model.kafka.config import Config
from replcheck.model.kafka.controller import ControllerRules, shrink_keeps_epoch
from replcheck.model.kafka.epochs import whole_exchange
from replcheck.model.kafka.messages import MessageRules
from replcheck.model.kafka.releases import ON_FETCH, TRUNCATE_TO_HW, Behaviour
from replcheck.model.kafka.state import (
    ALTER_SENDER,
    EPOCH_RESPONSE,
    MUST_TRUNCATE,
    NO_LEADER,
    NOTHING_IN_FLIGHT,
    TRUNCATE_PENDING,
    TRUNCATED,
    UNKNOWN_LEO,
    Replica,
    State,
    plain_state,
    state_from_plain,
    true_leader,
)
from replcheck.model.kafka.symmetry import canonical, representative

# Parameter names of each action, in the order of ``Action.args``.
ACTION_PARAMS: dict[str, tuple[str, ...]] = {
    "write": ("leader",),
    "fetch_request": ("follower", "leader"),
    "fetch_response": ("follower",),
    "epoch_request": ("follower", "leader"),
    "epoch_response": ("follower",),
    "diverging_truncate": ("follower",),
    "fetch": ("follower", "leader"),
    "truncate": ("follower", "leader"),
    "shrink_isr": ("leader", "follower"),
    "shrink_isr_set": ("leader", "followers"),
    "alter_isr": ("leader",),
    "apply_isr": ("leader",),
    "reapply_isr": ("leader",),
    "checkpoint_hw": ("replica",),
    "crash": ("replica", "keep"),
    "shutdown": ("replica",),
    "replace_disk": ("replica",),
    "report_dir": ("replica",),
    "restart": ("replica",),
    "deliver": ("replica",),
    "deliver_latest": ("replica",),
    "notice_crash": ("replica", "new_leader"),
    "notice_restart": ("replica",),
    "fence": ("replica", "new_leader"),
    "unfence": ("replica",),
    "elect": ("leader",),
}

ACTION_DOCS: dict[str, str] = {
    "write": "producer appends the next record to a replica that believes it leads",
    "fetch_request": "leader handles a follower's fetch: records its offset, may add it to the "
    "ISR, advances its HW, answers with records and its HW of before",
    "fetch_response": "follower handles the fetch response: appends, HW := min(HW sent, LEO)",
    "epoch_request": "leader answers a new follower's OffsetsForLeaderEpoch for its latest epoch",
    "epoch_response": "follower truncates on the answer (and asks again under KIP-279 if needed)",
    "diverging_truncate": "follower truncates on a divergingEpoch whose HW it already took "
    "(before KAFKA-14704)",
    "fetch": "coarse model (--atomic): a fetch request and its response in one step",
    "truncate": "coarse model (--atomic): the whole epoch exchange and truncation in one step",
    "shrink_isr": "leader removes a lagging follower from the ISR (conditional on its zkVersion; "
    "from 2.7 it proposes the change to the controller)",
    "shrink_isr_set": "leader removes several lagging followers from the ISR in one change "
    "(`followers`, a set of two or more), as Partition.maybeShrinkIsr removes every "
    "out-of-sync replica at once",
    "alter_isr": "controller handles a leader's AlterIsr / AlterPartition request and answers",
    "apply_isr": "leader applies an ISR change of its own leader epoch from its metadata record "
    "(KRaft: a fenced follower's removal from metadata.version 3.6-IV0, or a change whose "
    "AlterPartition response it ignored)",
    "reapply_isr": "leader replays the metadata record of the change it adopted from the "
    "AlterPartition response, dropping the change it proposed since (KRaft, KAFKA-13790)",
    "checkpoint_hw": "broker writes its HW to the replication-offset checkpoint file",
    "crash": "broker process dies (an unclean shutdown), keeping `keep` log entries (fewer "
    "on a lossy crash)",
    "shutdown": "broker shuts down cleanly: log flushed, HW checkpointed, clean-shutdown file "
    "written (with --clean-shutdown)",
    "replace_disk": "a stopped broker's disk is replaced: it will restart with an empty log "
    "and no HW checkpoint (with --disk-loss)",
    "report_dir": "a broker whose disk was replaced reports the partition's new log directory "
    "(AssignReplicasToDirs): it may lead again; the change empties the ELR (KRaft 3.7+, "
    "with --disk-loss)",
    "restart": "broker restarts: reloads its log and its checkpointed HW",
    "deliver": "the next LeaderAndIsr request (in epoch order) reaches a replica",
    "deliver_latest": "a replica gets only the current state: after a controller failover "
    "(ZooKeeper), or as one metadata delta spanning several changes (KRaft)",
    "notice_crash": "controller sees a broker gone: new leader / smaller ISR, epoch bump",
    "notice_restart": "controller sees a broker back (and elects it if the partition is offline)",
    "fence": "controller takes a running broker for gone (KRaft: missed heartbeats; "
    "ZooKeeper: its session expired): new leader / smaller ISR as for a crash; the broker "
    "runs on (with --fencing)",
    "unfence": "controller takes a fenced broker back (KRaft: its next heartbeat, same broker "
    "epoch; ZooKeeper: it registers again and is sent the current state if newer than its "
    "own) (with --fencing)",
    "elect": "controller moves leadership to another live ISR member (preferred election); "
    "with ELR, the balancer also gives a leaderless partition whose ISR and ELR are empty "
    "its last known leader",
}

# Actions a run has only with an option on.  A configuration without the option does not
# name them at all (config_action_params): a swarm walk draws one weight per action name,
# so its random stream, and every seed quoted in the docs, stays what it was.
OPTION_ACTIONS: dict[str, str] = {
    "shutdown": "clean_shutdown",
    "replace_disk": "disk_loss",
    "report_dir": "disk_loss",
    "fence": "fencing",
    "unfence": "fencing",
}

# Actions only some releases have, for the same reason: what each needs (as a trace
# error names it) and the test of a configuration for it.
_KRAFT = "KRaft mode (kraft = true, --kraft)"
_THREE = "configurations of three or more replicas (replicas = 3, --replicas 3)"
_DIRS = "KRaft mode from Kafka 3.7.0 at metadata.version 3.7-IV2 or later (KIP-858)"
RELEASE_ACTIONS: dict[str, str] = {
    "apply_isr": _KRAFT,
    "reapply_isr": _KRAFT,
    "shrink_isr_set": _THREE,
    "report_dir": _DIRS,
}
_RELEASE_TESTS: dict[str, Callable[[Config], bool]] = {
    "apply_isr": lambda config: config.kraft,
    "reapply_isr": lambda config: config.kraft,
    "shrink_isr_set": lambda config: config.replicas >= 3,
    "report_dir": lambda config: config.assigns_dirs,
}


def _subsets_of_two_or_more(mask: int) -> Iterator[int]:
    """The sub-masks of ``mask`` with at least two members, in ascending order."""
    for sub in range(3, mask + 1):
        if sub & mask == sub and sub & (sub - 1):
            yield sub


def _release_has(config: Config, name: str) -> bool:
    return name not in _RELEASE_TESTS or _RELEASE_TESTS[name](config)


def config_action_params(config: Config) -> dict[str, tuple[str, ...]]:
    """The action names (with parameter names) of this configuration's model."""
    return {
        name: params
        for name, params in ACTION_PARAMS.items()
        if (name not in OPTION_ACTIONS or getattr(config, OPTION_ACTIONS[name]))
        and _release_has(config, name)
    }


COARSE_ONLY = frozenset({"fetch", "truncate"})
MESSAGE_ONLY = frozenset(
    {"fetch_request", "fetch_response", "epoch_request", "epoch_response", "diverging_truncate"}
)
EPOCH_EXCHANGE = frozenset({"epoch_request", "epoch_response", "truncate"})


class KafkaReplication(BrokerRules, ControllerRules, MessageRules):
    """One partition replicated on ``config.replicas`` brokers, as one Kafka release runs it."""

    def __init__(self, config: Config):
        self.config = config
        self.behaviour: Behaviour = config.rules()
        self.atomic = config.atomic
        self.n = config.replicas
        self.all_mask = (1 << self.n) - 1
        self.ids = range(self.n)
        self.shrink_keeps_epoch = shrink_keeps_epoch(config)
        self.elects_unclean = config.elects_unclean
        self.reports_dirs = config.reports_dirs
        self._dispatch = {name: getattr(self, f"_do_{name}") for name in ACTION_PARAMS}

    # ------------------------------------------------------------------ setup

    def init_states(self) -> list[State]:
        """Epoch 1, leader r0, every replica in the ISR and told so; empty logs."""
        n = self.n
        cfg_elr = self.config.elr
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
                    unwritten_epoch=1 if leader and self.behaviour.leader_caches_epoch else 0,
                    pending=0,
                    zk_current=1 if leader else 0,
                    epoch_start=0 if leader else -1,
                    clean_shutdown=0,
                    record_owed=0,
                    alter_item=0,
                    fenced=0,
                    dir_unreported=0,
                    inflight=NOTHING_IN_FLIGHT,
                    pending_isr=0,
                )
            )
        return [
            State(
                ctrl_leader=0,
                ctrl_epoch=1,
                ctrl_isr=self.all_mask,
                ctrl_live=self.all_mask,
                ctrl_elr=0,
                ctrl_isr_written=0,
                written=0,
                crashes=0,
                committed=(),
                acked=0,
                ctrl_history=((0, self.all_mask),),
                alter_requests=(),
                hides_stale_hw=int(self.behaviour.hides_stale_hw),
                last_known_on_leaderless=int(
                    cfg_elr and self.behaviour.last_known_leader_on_leaderless
                ),
                replicas=tuple(replicas),
            )
        ]

    # Replicas are interchangeable: see model.kafka.symmetry.  The reduction is on unless
    # the user turns it off (--no-symmetry).
    representative = staticmethod(representative)
    canonical = staticmethod(canonical)
    default_symmetry = True
    # How a search's levels serialize states (see model.interface.Model).
    plain_state = staticmethod(plain_state)
    state_from_plain = staticmethod(state_from_plain)

    def action_kinds(self) -> tuple[str, ...]:
        """The action names this configuration can ever take (coverage reports name only these)."""
        b = self.behaviour
        skip = MESSAGE_ONLY if self.atomic else COARSE_ONLY
        if not self.config.controller_failover:
            skip = skip | {"deliver_latest"}
        skip = skip | {
            a for a, option in OPTION_ACTIONS.items() if not getattr(self.config, option)
        }
        if b.truncation in (ON_FETCH, TRUNCATE_TO_HW):
            # Only a follower that must truncate by leader epoch asks OffsetsForLeaderEpoch;
            # before KIP-101 a new follower truncates to its HW at once (_make_follower).
            skip = skip | EPOCH_EXCHANGE
        if b.truncation != ON_FETCH or not b.hw_before_diverging_truncation:
            skip = skip | {"diverging_truncate"}
        if not b.alter_isr:
            skip = skip | {"alter_isr"}
        skip = skip | {a for a in RELEASE_ACTIONS if not _release_has(self.config, a)}
        return tuple(name for name in ACTION_PARAMS if name not in skip)

    def action_params(self, action: Action) -> dict[str, int]:
        return dict(zip(ACTION_PARAMS[action.name], action.args, strict=True))

    # ---------------------------------------------------------- enabled actions

    def actions(self, s: State) -> Iterator[Action]:
        cfg = self.config
        b = self.behaviour
        reps = s.replicas
        can_bump = s.ctrl_epoch < cfg.epochs
        shrinks_caught_up = not b.caught_up_stays_in_isr
        for i in self.ids:
            r = reps[i]
            if not r.alive:
                # ref § Crash and restart: a crashed broker may come back (with
                # KIP-380, only once the controller has handled the crash).
                if not (b.controller_sees_bounces and s.ctrl_live >> i & 1):
                    yield Action("restart", (i,))
                if cfg.disk_loss and (
                    r.log
                    or r.hw_checkpoint
                    or r.clean_shutdown
                    # KRaft 3.7+: even an empty log's new disk is a new directory id
                    or (self.reports_dirs and not r.dir_unreported)
                ):
                    yield Action("replace_disk", (i,))
                if s.ctrl_live >> i & 1 and self._crash_notice_possible(s, i, can_bump):
                    for new_leader in self._failover_choices(s, i):
                        yield Action("notice_crash", (i, new_leader))
                continue

            if r.dir_unreported and (s.ctrl_leader != i or can_bump):
                # KRaft 3.7+: once it has created the log on its new disk (from the
                # metadata it replays), the broker reports the directory.  (A 4.0 leader
                # elected before its report loses leadership by it: a new leader epoch.)
                yield Action("report_dir", (i,))
            if s.crashes < cfg.crashes:
                if cfg.lossy_crash:
                    for keep in range(r.leo + 1):
                        yield Action("crash", (i, keep))
                else:
                    yield Action("crash", (i, r.leo))
                if cfg.clean_shutdown:
                    yield Action("shutdown", (i,))
            if r.hw_checkpoint != r.hw:
                yield Action("checkpoint_hw", (i,))
            live = s.ctrl_live >> i & 1
            if r.fenced and (cfg.kraft or not live):
                # KRaft: a fenced broker's next heartbeat unfences it (same broker epoch,
                # BrokerHeartbeatManager.calculateNextBrokerState); meanwhile it still
                # fetches the metadata log, whose records it applies.  ZooKeeper: a
                # broker whose session expired registers again; until then the
                # controller sends it nothing (ControllerRules._do_fence).
                yield Action("unfence", (i,))
            elif not live:
                yield Action("notice_restart", (i,))
            if live or (r.fenced and cfg.kraft):
                if self._next_request(s, i):
                    yield Action("deliver", (i,))
                if cfg.controller_failover and self._failover_delivery_differs(s, i):
                    yield Action("deliver_latest", (i,))
            if cfg.fencing and live and self._crash_notice_possible(s, i, can_bump):
                for new_leader in self._failover_choices(s, i):
                    yield Action("fence", (i, new_leader))

            if r.leader == i:  # believes it is the leader
                if cfg.kraft and self._isr_change_owed(s, i):
                    yield Action("apply_isr", (i,))
                if r.record_owed and r.pending_isr:
                    yield Action("reapply_isr", (i,))
                if s.written < cfg.records and (
                    cfg.acks != -1 or bits(r.isr) >= cfg.min_insync_replicas
                ):
                    yield Action("write", (i,))
                # ISR shrinks are conditional ZooKeeper writes (ref § ISR), taken only
                # while the leader's zkVersion is current (a stale one fails and changes
                # nothing: Partition.updateIsr, to 2.6); from 2.7 one change at a time is
                # pending with the controller, whatever the leader's cached partition
                # version (maybeShrinkIsr checks only isInflight: BrokerRules._propose_isr),
                # and from 3.0 none while the last request is unanswered (KAFKA-12686).
                # Partition.maybeShrinkIsr removes every follower out of sync at that
                # moment (getOutOfSyncReplicas: not caught up for replica.lag.time.max.ms;
                # from 2.1, KAFKA-7152, never one whose LEO as the leader recorded it
                # equals the leader's LEO) in one change.  Time is not modelled, so any
                # non-empty set of such ISR followers may be the one removed: one
                # (shrink_isr) or several (shrink_isr_set).  Before 2.1 a caught-up
                # follower may be: it stopped fetching for as long
                # (Behaviour.caught_up_stays_in_isr).
                if (r.zk_current or b.alter_isr) and not r.pending_isr and not r.alter_item:
                    lagging = 0
                    for f in self.ids:
                        if (
                            f != i
                            and r.isr >> f & 1
                            and (r.remote_leo[f] != r.leo or shrinks_caught_up)
                        ):
                            lagging |= 1 << f
                            yield Action("shrink_isr", (i, f))
                    if lagging & (lagging - 1):  # two or more: every set of two or more
                        for followers in _subsets_of_two_or_more(lagging):
                            yield Action("shrink_isr_set", (i, followers))
            elif r.leader != NO_LEADER:
                yield from self._follower_actions(s, i, r)

        # The controller handles the ISR changes leaders asked for, in any order.
        senders = {req[ALTER_SENDER] for req in s.alter_requests}
        for sender in sorted(senders):
            yield Action("alter_isr", (sender,))

        # ref § Actors: the controller may move leadership at any moment.
        if can_bump:
            for c in self.ids:
                if (
                    c != s.ctrl_leader
                    and s.ctrl_live >> c & 1
                    and s.ctrl_isr >> c & 1
                    and not reps[c].dir_unreported  # LeaderAcceptor: hasOnlineDir (3.7+)
                ):
                    yield Action("elect", (c,))
            if cfg.elr and not s.ctrl_isr and s.ctrl_leader == NO_LEADER:
                # The balancer's last-known-leader recovery (ControllerRules._do_elect).
                known = self._last_known_recovery(s, s.ctrl_live)
                if known != NO_LEADER:
                    yield Action("elect", (known,))

    def _follower_actions(self, s: State, i: int, r: Replica) -> Iterator[Action]:
        """The fetcher: handle the response in flight, else send the next request
        to a broker that believes it leads (in the follower's epoch, with KIP-320)."""
        if r.inflight:
            if r.inflight[0] == EPOCH_RESPONSE:
                yield Action("epoch_response", (i,))
            elif r.inflight[0] == TRUNCATE_PENDING:
                yield Action("diverging_truncate", (i,))
            else:
                yield Action("fetch_response", (i,))
            return
        leader = s.replicas[r.leader]
        if not (
            leader.alive
            and leader.leader == r.leader
            and (not self.behaviour.fenced_by_epoch or leader.epoch == r.epoch)
        ):
            return
        if r.truncation == MUST_TRUNCATE and self.behaviour.truncation != ON_FETCH:
            if not self.atomic:
                yield Action("epoch_request", (i, r.leader))
            elif whole_exchange(r, leader, self.behaviour) is not None:
                yield Action("truncate", (i, r.leader))
        else:
            yield Action("fetch" if self.atomic else "fetch_request", (i, r.leader))

    def next_state(self, s: State, action: Action) -> State:
        s = self._dispatch[action.name](s, *action.args)
        return self._record_commits(s)

    def _record_commits(self, s: State) -> State:
        """Ghost update: remember each offset's record once the true leader's HW passes it."""
        leader = true_leader(s)
        if leader < 0:
            return s
        r = s.replicas[leader]
        known = len(s.committed)
        if r.hw > known and r.log[:known] == s.committed:
            return s.replace(committed=r.log[: r.hw])
        return s
