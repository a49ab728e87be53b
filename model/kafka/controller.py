"""The ZooKeeper-era controller: failure and startup handling, elections, and the
LeaderAndIsr requests it sends (ref § Actors, Controller).

The controller's view is ZooKeeper's partition state: leader, leader epoch, ISR
(``State.ctrl_*``).  Every controller write starts a new leader epoch (but a KRaft
3.6+ ISR removal that keeps the leader: ``_isr_change``) and a new
zkVersion; a leader's own ISR writes change the zkVersion too
(``State.ctrl_isr_written``).  A broker applies the requests one controller sent
it in order; a broker the controller saw restart, and every broker after a
controller failover, gets the current state instead.
"""

from __future__ import annotations

from replcheck.model.kafka.config import Config
from replcheck.model.kafka.state import (
    ALTER_ISR,
    ALTER_RESTARTED,
    ALTER_SENDER,
    ALTER_VERSION_OK,
    NO_LEADER,
    State,
    last_known_elr,
)


def shrink_keeps_epoch(config: Config) -> bool:
    """KRaft from metadata.version 3.6-IV0 (KAFKA-15021): a partition change that
    removes ISR members but keeps the leader bumps only the partition epoch
    (PartitionChangeBuilder.triggerLeaderEpochBumpIfNeeded in 3.6/3.7,
    triggerLeaderEpochBumpForIsrShrinkIfNeeded from 3.8, returns at once;
    PartitionRegistration.merge bumps the leader epoch only with a leader in the
    record).  ``handleBrokerFenced`` removes a fenced follower that way."""
    return config.kraft and not config.rules().kraft_shrink_bumps_epoch


def _stale_versions(s: State) -> tuple:
    """The replicas once the partition state has a new version: no cached one is current."""
    replicas = s.replicas
    if any(r.zk_current for r in replicas):
        replicas = tuple(r.replace(zk_current=0) if r.zk_current else r for r in replicas)
    return replicas


def _unreported(s: State) -> int:
    """The brokers whose disk was replaced and which have yet to report its directory."""
    mask = 0
    for i, r in enumerate(s.replicas):
        if r.dir_unreported:
            mask |= 1 << i
    return mask


def _stale_requests(s: State) -> tuple:
    """The queued ISR requests once the partition state has a new version: each one's
    version is stale (INVALID_UPDATE_VERSION when the controller gets to it)."""
    return tuple(
        req[:ALTER_VERSION_OK] + (0,) + req[ALTER_VERSION_OK + 1 :] for req in s.alter_requests
    )


class ControllerRules:
    """Mixed into KafkaReplication: the controller's actions and its requests."""

    # ------------------------------------------------------------- failures

    def _crash_notice_possible(self, s: State, i: int, can_bump: bool) -> bool:
        return can_bump or not self._notice_needs_bump(s, i)

    def _notice_needs_bump(self, s: State, i: int) -> bool:
        if self.shrink_keeps_epoch:  # only a new leader is a new leader epoch
            return s.ctrl_leader == i
        if self.config.elr:  # the ISR may become empty (KIP-966)
            return s.ctrl_leader == i or bool(s.ctrl_isr >> i & 1)
        return s.ctrl_leader == i or bool(s.ctrl_isr >> i & 1 and s.ctrl_isr != 1 << i)

    def _failover_choices(self, s: State, i: int) -> list[int]:
        """Who the controller may make leader when it notices broker ``i`` is gone."""
        if s.ctrl_leader != i:
            return [s.ctrl_leader]
        # LeaderAcceptor (3.7+): a replaced disk's broker cannot lead before it reports
        # its new directory (hasOnlineDir).
        live = s.ctrl_live & ~(1 << i)
        if self.reports_dirs:
            live &= ~_unreported(s)
        clean = [c for c in self.ids if (live & s.ctrl_isr) >> c & 1]
        if clean:
            return clean
        # KIP-966: with no live ISR member, a live Eligible Leader Replica is a clean choice.
        eligible = [c for c in self.ids if (live & s.ctrl_elr) >> c & 1]
        if eligible:
            return eligible
        if self.elects_unclean:
            unclean = [c for c in self.ids if live >> c & 1]
            if unclean:
                return unclean
        return [NO_LEADER]

    def _do_notice_crash(self, s: State, i: int, new_leader: int) -> State:
        """A broker failure, as KafkaController.onBrokerFailure handles it.

        If the dead broker led, OfflinePartitionLeaderElection picks a live ISR
        member (new ISR: the live ISR members), or with unclean election any live
        replica (ISR: just it), or nobody (leader -1, the ISR keeps its last
        member).  If it followed in the ISR, removeReplicasFromIsr drops it.  Each
        change is a new LeaderAndIsr and so a new leader epoch.  The requests
        queued for the dead broker are dropped with its connection.
        """
        live = s.ctrl_live & ~(1 << i)
        isr = s.ctrl_isr
        keep_last = not self.config.elr  # with ELR the last member leaves too (KIP-966)
        if s.ctrl_leader == i:
            if new_leader == NO_LEADER:
                isr = isr & ~(1 << i) or (isr if keep_last else 0)
            elif isr >> new_leader & 1:
                isr = isr & live
            else:
                isr = 1 << new_leader  # elected from the ELR, or an unclean election
        elif isr >> i & 1:
            isr = isr & ~(1 << i) or (isr if keep_last else 0)
        if new_leader == s.ctrl_leader and isr == s.ctrl_isr:
            return s.replace(ctrl_live=live)
        if new_leader == s.ctrl_leader and self.shrink_keeps_epoch:
            return self._isr_change(s, isr).replace(ctrl_live=live)
        # An unclean election (from outside the ISR and the ELR) empties the ELR
        # (PartitionChangeBuilder.maybeUpdateRecordElr, 4.0 to 4.4).
        eligible = s.ctrl_isr | s.ctrl_elr
        unclean = new_leader != NO_LEADER and not eligible >> new_leader & 1
        s = self._new_epoch(s, new_leader, isr).replace(ctrl_live=live)
        return s.replace(ctrl_elr=0) if unclean else s

    def _isr_change(self, s: State, isr: int) -> State:
        """The controller writes a new ISR in the same leader epoch: a new partition
        epoch (zkVersion), so every cached one and every queued AlterPartition is
        stale (INVALID_UPDATE_VERSION), as after an accepted AlterPartition.  The
        leader adopts it with ``apply_isr``; with ELR, a member leaving below
        min.insync.replicas joins the ELR (maybePopulateTargetElr)."""
        return s.replace(
            ctrl_isr=isr,
            ctrl_elr=self._elr_after(s, isr),
            ctrl_isr_written=1,
            alter_requests=_stale_requests(s),
            replicas=_stale_versions(s),
        )

    def _do_apply_isr(self, s: State, i: int) -> State:
        """The leader applies a partition change of its own leader epoch that it did not
        take from an AlterPartition response: a fenced follower's removal (3.6+), or a
        change it proposed and stopped waiting for (``reapply_isr``, 3.3+)
        (``ReplicaManager.applyLocalLeadersDelta`` -> ``Partition.makeLeader`` with
        ``isNewLeaderEpoch`` false, 3.3-4.4).  ``updateAssignmentAndIsr`` replaces the
        ISR state, so a pending AlterPartition is forgotten (the controller will refuse
        it: a stale partition epoch); no epoch-cache entry, the followers' offsets are
        kept, then ``maybeIncrementLeaderHW``.  Followers keep fetching: the leader and
        its epoch did not change (applyLocalFollowersDelta).

        The leader applies the newest ISR only: if two such changes come before it
        applies the first, the one in between is skipped (the states it allows are
        reached by ordering the second change after it)."""
        return self._leader_isr_state(
            s, i, isr=s.ctrl_isr, pending_isr=0, zk_current=1, record_owed=0
        )

    def _leader_isr_state(self, s: State, i: int, **changes: int) -> State:
        """Leader ``i`` with a new ISR state (``Partition.partitionState``): the HW may
        move, and writes waiting for it are acknowledged (maybeIncrementLeaderHW)."""
        lead = s.replicas[i].replace(**changes)
        lead, acked = self._advance_leader_hw(lead, lead.remote_leo, s.acked)
        return s.replace(acked=acked).with_replica(i, lead)

    def _isr_change_owed(self, s: State, i: int) -> bool:
        """Replica ``i`` leads the current epoch but not yet with its current ISR."""
        r = s.replicas[i]
        return bool(
            s.ctrl_isr_written
            and not r.zk_current
            and r.leader == i
            and s.ctrl_leader == i
            and r.epoch == s.ctrl_epoch
        )

    def _do_notice_restart(self, s: State, i: int) -> State:
        """The controller sees the broker registered again (onBrokerStartup): it
        will send it the current state (``epoch`` 0 marks that it is owed it); an
        offline partition gets it as leader if it is in the ISR, or through an
        unclean election."""
        live = s.ctrl_live | (1 << i)
        clean = s.replicas[i].clean_shutdown
        s = s.with_replica(i, s.replicas[i].replace(epoch=0, clean_shutdown=0))
        if s.ctrl_elr >> i & 1 and not clean:
            # A broker back from a crash registers without the clean-shutdown file's
            # broker epoch and leaves the ELR (ClusterControlManager.registerBroker ->
            # ReplicationControlManager.handleBrokerUncleanShutdown, 4.0-4.4 with ELR);
            # lastKnownElr stays as it is.  After a clean shutdown it stays in the ELR.
            s = s.replace(ctrl_elr=s.ctrl_elr & ~(1 << i))
            if s.ctrl_leader != NO_LEADER:
                # With a leader (min.insync.replicas 2 or more), that is a partition
                # change record: a new partition epoch (PartitionRegistration.merge), so
                # the leader's cached one and its queued AlterPartition are stale; it
                # applies the change in its leader epoch (ELR implies KRaft 4.0+).
                s = self._isr_change(s, s.ctrl_isr)
        if s.alter_requests:  # a new registration, a new broker epoch (KIP-903)
            s = s.replace(
                alter_requests=tuple(
                    req[:ALTER_RESTARTED] + (req[ALTER_RESTARTED] | (req[ALTER_ISR] & 1 << i),)
                    for req in s.alter_requests
                )
            )
        offline = s.ctrl_leader == NO_LEADER and s.ctrl_epoch < self.config.epochs
        if (
            self.config.broken_rule == "isr-join-by-fetch"
            and not offline
            and not s.ctrl_isr >> i & 1
            and s.ctrl_epoch < self.config.epochs
        ):
            # The broken rule (catalogue B5): the fence that removed the broker from the
            # ISR and its re-registration land in one metadata batch, and the batch's
            # net effect keeps it a member.  Kafka's controller never adds an ISR member
            # itself (ReplicationControlManager: only a leader's AlterPartition does).
            return self._new_epoch(s, s.ctrl_leader, s.ctrl_isr | 1 << i).replace(ctrl_live=live)
        return self._elect_on_return(s, i, live)

    def _do_fence(self, s: State, i: int, new_leader: int) -> State:
        """The controller takes broker ``i`` for gone while its process runs (``--fencing``).

        KRaft: missed heartbeats (``ReplicationControlManager.maybeFenceOneStaleBroker``
        -> ``handleBrokerFenced``, 3.3-4.4) run the same partition changes as a crash
        (``generateLeaderAndIsrUpdates`` with the broker to remove): :meth:`_do_notice_crash`.
        The broker epoch is kept (``BrokerRegistrationChangeRecord`` FENCE), and the broker
        itself ignores the fence (``BrokerLifecycleManager``: a running broker does not act
        on ``isFenced``): it goes on leading or following with what it knows, applies the
        metadata records (a leaderless one makes a fenced leader step down:
        :meth:`_takes_effect`), and its next heartbeat unfences it (``unfence``).

        ZooKeeper: the broker's session expired.  The controller handles it exactly as a
        crash (``KafkaController.onBrokerFailure``, 0.10.2 to 3.9: election among the live
        ISR members, ``removeReplicasFromIsr`` at the next epoch) and drops the requests
        queued for it with its connection (``ControllerChannelManager.removeBroker``); it
        sends it nothing until it registers again (``unfence``).  The broker only
        registers again (``KafkaHealthcheck.SessionExpireListener`` to 1.0,
        ``RegisterBrokerAndReelect`` from 1.1): it keeps leading or following as it was,
        its ISR writes failing on the zkVersion the controller's change made stale (and,
        2.7+, its AlterIsr items held on STALE_BROKER_EPOCH, then refused for the leader
        epoch).  As a follower it fetches on; from KIP-320 (2.1) only while its epoch is
        still current, so only one outside the ISR when its session expired (no new epoch)
        may be added to the ISR again, and from KIP-841 (3.3) not before it registers.  An
        expired controller also resigns, dropping every queue: ``--controller-failover``."""
        s = self._do_notice_crash(s, i, new_leader)
        return s.with_replica(i, s.replicas[i].replace(fenced=1))

    def _do_unfence(self, s: State, i: int) -> State:
        """The controller takes a fenced broker back (``--fencing``).

        KRaft: its next heartbeat unfences it with the same broker epoch
        (``BrokerHeartbeatManager.calculateNextBrokerState``), no registration, so it keeps
        its ELR membership and its AlterPartition proposals stay valid (KIP-903 sees no new
        epoch).  ``handleBrokerUnfenced`` elects leaders for the leaderless partitions it
        can lead; it joins no ISR (only a leader's AlterPartition adds one).

        ZooKeeper: it registered again after its expired session (from 2.2 with a new
        broker epoch, KIP-380, so the controller reads a bounce: failure then startup).
        ``onBrokerStartup`` sends it the current leader, ISR and epoch (``OnlineReplica``)
        and elects it for an offline partition whose ISR holds it.  Where that epoch is
        not newer than its own, ``becomeLeaderOrFollower`` skips the request and nothing
        is owed; otherwise ``fenced`` stays 1 with the broker live again: owed the current
        state, which ``deliver`` gives it (:meth:`_next_request`), in place of what the
        dropped queue held.  (Before 2.2 an expiry and a registration the controller reads
        in one BrokerChange change nothing: the model's stutter.  The startup requests
        KAFKA-9839 could lose, 2.2.0 to 2.5.0 (fixed in 2.5.1), are not modelled apart: a
        lost one is a ``deliver`` not yet taken.)  The ``ALTER_RESTARTED``
        marks of a registration are KRaft's (KIP-903), so none here."""
        r = s.replicas[i]
        live = s.ctrl_live | (1 << i)
        if self.config.kraft:
            return self._elect_on_return(s.with_replica(i, r.replace(fenced=0)), i, live)
        s = self._elect_on_return(s, i, live)
        if s.replicas[i].epoch == s.ctrl_epoch:  # not newer: skipped
            s = s.with_replica(i, s.replicas[i].replace(fenced=0))
        return s

    def _elect_on_return(self, s: State, i: int, live: int) -> State:
        """Broker ``i`` is live again (registered, or unfenced): an offline partition gets
        a leader if it can have one (handleBrokerUnfenced over the leaderless partitions).
        A replaced disk's broker is no candidate until it reports its new directory
        (``report_dir``; LeaderAcceptor.test: hasOnlineDir, 3.7+)."""
        offline = s.ctrl_leader == NO_LEADER and s.ctrl_epoch < self.config.epochs
        acceptable = not s.replicas[i].dir_unreported
        if offline and acceptable and s.ctrl_isr >> i & 1:
            return self._new_epoch(s, i, s.ctrl_isr & live).replace(ctrl_live=live)
        if offline and acceptable and not s.ctrl_isr and s.ctrl_elr >> i & 1:
            # KIP-966: with the ISR empty, an unfenced ELR member is a clean choice; it is
            # the ISR then, and leaves the ELR (PartitionChangeBuilder.isValidNewLeader,
            # electAnyLeader).  Only a cleanly shut-down broker is still in the ELR here.
            return self._new_epoch(s, i, 1 << i).replace(ctrl_live=live)
        # KIP-966: with ISR and ELR both empty (fenced ELR members count), the last known
        # leader is elected as an unclean recovery once it is registered, even without
        # unclean.leader.election.enable, and before any unclean election
        # (PartitionChangeBuilder.electAnyLeader -> canElectLastKnownLeader, 4.1; 4.0 also
        # elects a fenced one, KAFKA-19522, not modelled, and one whose directory is not
        # online: Behaviour.last_known_leader_acceptable).  Where 4.0.0 - 4.1.0 recorded
        # lastKnownElr [-1] (state.last_known_names_nobody) nobody is recovered; 4.0 then
        # also skips the unclean election below (electAnyLeader returns "-1, unclean"
        # before trying it), which is not modelled either.
        # Any broker's registration runs the election (handleBrokerUnfenced over the
        # leaderless partitions; an ELR member's unclean one empties the ELR first), so
        # a last known leader that registered while the ELR was not empty is elected now.
        known = self._last_known_recovery(s, live)
        if known != NO_LEADER:
            return self._new_epoch(s, known, 1 << known).replace(ctrl_live=live, ctrl_elr=0)
        if offline and acceptable and self.elects_unclean:  # empties the ELR, as above
            return self._new_epoch(s, i, 1 << i).replace(ctrl_live=live, ctrl_elr=0)
        return s.replace(ctrl_live=live)

    def _last_known_recovery(self, s: State, live: int) -> int:
        """The last known leader, where the controller would elect it now as an unclean
        recovery (KIP-966: ISR and ELR both empty, PartitionChangeBuilder
        .canElectLastKnownLeader), else NO_LEADER."""
        if not (
            self.config.elr
            and s.ctrl_leader == NO_LEADER
            and not s.ctrl_isr
            and not s.ctrl_elr
            and s.ctrl_epoch < self.config.epochs
        ):
            return NO_LEADER
        # lastKnownElr: the last leader, or nobody where 4.0.0 - 4.1.0 recorded [-1]
        # (PartitionChangeBuilder.maybeUpdateLastKnownLeader; state.last_known_elr).
        known = last_known_elr(s).bit_length() - 1
        if known == NO_LEADER or not live >> known & 1:
            return NO_LEADER
        if self.behaviour.last_known_leader_acceptable and s.replicas[known].dir_unreported:
            return NO_LEADER
        return known

    def _do_report_dir(self, s: State, i: int) -> State:
        """Broker ``i``, whose disk was replaced, reports the partition's new log directory
        (KRaft 3.7+, KIP-858: ReplicaManager.maybeUpdateTopicAssignment ->
        AssignmentsManager -> ReplicationControlManager.handleAssignReplicasToDirs).

        The broker sends it once it has created the log on the new disk, which it does
        from the metadata it replays, registered or not (Partition
        .createLogInAssignedDirectoryId), so before or after the controller unfences it.
        The controller writes the new directory: a new partition epoch (the directories
        change; PartitionRegistration.merge), so the leader's cached one and its queued
        AlterPartition are stale, and it applies the record in its leader epoch.  The
        change's PartitionChangeBuilder is built without setEligibleLeaderReplicasEnabled,
        so maybeUpdateRecordElr writes the ELR as empty (3.7 to 4.2.2: it matters from
        4.0, where ELR exists; finding F4).  From 4.3.0 (apache/kafka#20716, commit
        04a77120c9; Behaviour.dir_report_keeps_elr) the builder takes the ELR flag in its
        constructor and the record keeps the ELR: maybePopulateTargetElr recomputes it
        from an unchanged ISR, which gives the same set.  Its election (``build`` ->
        ``tryElection``) tests
        candidates with a LeaderAcceptor on the registration of before, which names the old
        directory: it never elects the reporting broker, and a 4.0 leader elected as the
        last known leader before its report (KAFKA-19522) fails it and is removed, a new
        leader epoch with no leader (the ISR keeps it; with the ELR off in this builder it
        cannot empty).  From then on the broker may lead, at the next election (``elect``,
        which stands for the periodic preferred-leader balancer too, another broker's
        return, a crash notice).

        The model lets the broker report once its process runs, registered or not: in
        Kafka it registers first (the request carries its broker epoch,
        ClusterControlManager.checkBrokerEpoch), but ``notice_restart`` registers and
        unfences in one step, so a report before it stands for Kafka's register, report,
        unfence order, which reaches the same states."""
        s = s.with_replica(i, s.replicas[i].replace(dir_unreported=0))
        if s.ctrl_leader == i:  # 4.0 only: the report's own election removes it
            s = self._new_epoch(s, NO_LEADER, s.ctrl_isr)
        else:
            s = self._isr_change(s, s.ctrl_isr)
        return s if self.behaviour.dir_report_keeps_elr else s.replace(ctrl_elr=0)

    # ----------------------------------------------- AlterIsr / AlterPartition

    def _do_alter_isr(self, s: State, sender: int) -> State:
        """The controller handles the oldest ISR change ``sender`` asked for (2.7+).

        Refused (the request is dropped; the leader stays pending until a new
        LeaderAndIsr or metadata record: 2.7 to 2.8 Partition.handleAlterIsrResponse,
        "Giving up", 3.x to 4.1 handleAlterPartitionError returns false and leaves
        partitionState as it was) on a stale leader epoch (FENCED_LEADER_EPOCH) or
        partition version (INVALID_UPDATE_VERSION), which a leader proposing from a
        stale cached version sends (BrokerRules._propose_isr).  The sender's
        AlterPartitionManager item (3.0+) leaves with any answer, a refusal too.
        From 3.3 (KIP-841) a fenced member is INELIGIBLE_REPLICA and from 3.5 in
        KRaft (KIP-903) so is a member whose broker registered again since the
        fetch behind the request; the leader then returns to its committed ISR.
        Accepted: the ISR is written (a new version, no new leader epoch in ZK,
        KafkaController.processAlterIsr) and the leader adopts it from the
        response.  A KRaft shrink before 3.6 also bumps the leader epoch
        (PartitionChangeBuilder.triggerLeaderEpochBumpIfNeeded): the leader
        ignores the response and leaves its pending state on the new epoch.
        """
        at = next(k for k, req in enumerate(s.alter_requests) if req[ALTER_SENDER] == sender)
        _sender, epoch, version_ok, isr, restarted = s.alter_requests[at]
        s = s.replace(alter_requests=s.alter_requests[:at] + s.alter_requests[at + 1 :])
        b = self.behaviour
        lead = s.replicas[sender]
        if lead.alter_item and all(req[ALTER_SENDER] != sender for req in s.alter_requests):
            # The answer empties the sender's AlterPartitionManager item (3.0+), unless a
            # request its new process sent after a restart is still queued behind this one.
            lead = lead.replace(alter_item=0)
            s = s.with_replica(sender, lead)
        waiting = lead.alive and lead.leader == sender and lead.epoch == epoch
        waiting = waiting and lead.pending_isr == isr
        if epoch != s.ctrl_epoch or not version_ok:
            return s
        ineligible = b.isr_needs_live_replicas and isr & ~s.ctrl_live
        if self.config.kraft and b.isr_broker_epochs:
            ineligible = ineligible or isr & restarted
        if ineligible:
            if waiting:
                s = s.with_replica(sender, lead.replace(pending_isr=0))
            return s
        if self.config.kraft and b.kraft_shrink_bumps_epoch and s.ctrl_isr & ~isr:
            return self._new_epoch(s, s.ctrl_leader, isr)
        # A new partition epoch: every cached one is stale, the sender's too unless it
        # adopts this one from the response.  One that no longer waits (a metadata record
        # at its partition epoch dropped its proposal: ``reapply_isr``) ignores the
        # response (Partition.submitAlterPartition: ``partitionState !=
        # proposedIsrState``) and applies the change from its record (``apply_isr``).
        s = s.replace(
            ctrl_isr=isr,
            ctrl_elr=self._elr_after(s, isr),
            ctrl_isr_written=1,
            alter_requests=_stale_requests(s),
            replicas=_stale_versions(s),
        )
        if not waiting:
            return s
        # In KRaft the change's metadata record is still to come, at the partition
        # epoch the leader now caches (ReplicaManager.applyLocalLeadersDelta).
        owed = int(self.config.kraft)
        return self._leader_isr_state(
            s, sender, isr=isr, pending_isr=0, zk_current=1, record_owed=owed
        )

    def _do_reapply_isr(self, s: State, i: int) -> State:
        """The leader replays the metadata record of the change it already adopted from
        the AlterPartition response (KRaft; KAFKA-13790).

        ``TopicDelta.localChanges`` hands the leader every partition whose partition
        epoch changed, and ``Partition.makeLeader`` skips only a strictly older one
        (3.3.0 to 4.4.0), so at an equal epoch ``updateAssignmentAndIsr`` commits the
        record's ISR (the one the leader adopted) and drops the change it proposed
        since; then ``maybeIncrementLeaderHW``.  Its AlterPartition stays queued, and if
        the controller accepts it, the leader ignores the response.  The model replays
        only while a change is pending: at any other moment the replay changes nothing.
        """
        return self._leader_isr_state(s, i, pending_isr=0, record_owed=0)

    def _do_elect(self, s: State, c: int) -> State:
        """ref § Actors: leadership moves without a crash (preferred-leader election,
        controlled shutdown, a leader's expired ZooKeeper session); ISR unchanged.

        With ELR, the periodic preferred-leader balancer also runs the last known leader's
        recovery for a leaderless partition whose ISR and ELR are empty
        (ReplicationControlManager.maybeBalancePartitionLeaders -> electPreferredLeader ->
        canElectLastKnownLeader, 4.0-4.4): ``c`` is then outside the ISR, which becomes it
        (as at a registration, :meth:`_elect_on_return`)."""
        if not s.ctrl_isr >> c & 1:
            return self._new_epoch(s, c, 1 << c).replace(ctrl_elr=0)
        return self._new_epoch(s, c, s.ctrl_isr)

    def _new_epoch(self, s: State, leader: int, isr: int) -> State:
        """The controller writes a new LeaderAndIsr: the next leader epoch and a new
        zkVersion, which makes every broker's cached version stale."""
        return s.replace(
            ctrl_leader=leader,
            ctrl_epoch=s.ctrl_epoch + 1,
            ctrl_isr=isr,
            ctrl_elr=self._elr_after(s, isr),
            ctrl_isr_written=0,
            ctrl_history=s.ctrl_history + ((leader, isr),),
            replicas=_stale_versions(s),
        )

    def _elr_after(self, s: State, isr: int) -> int:
        """PartitionChangeBuilder.maybePopulateTargetElr (KIP-966): below
        min.insync.replicas, the members leaving the ISR join the ELR (which keeps
        no ISR member); at or above it the ELR is empty."""
        if not self.config.elr or isr.bit_count() >= self.config.min_insync_replicas:
            return 0
        return (s.ctrl_elr | s.ctrl_isr) & ~isr

    # ------------------------------------------------------ LeaderAndIsr

    def _do_deliver(self, s: State, i: int) -> State:
        """A LeaderAndIsr request arrives (ReplicaManager.becomeLeaderOrFollower).

        A running broker gets the next epoch's request as it was sent (its ISR
        and zkVersion as of then); with ZooKeeper it skips those that name no leader
        (:meth:`_takes_effect`).  A broker the controller saw restart gets the current
        state.
        """
        r = s.replicas[i]
        if r.epoch == 0 or self._owed_current_state(s, i):
            return self._do_deliver_latest(s, i)
        epoch = self._next_request(s, i)
        leader, isr = s.ctrl_history[epoch - 1]
        current = epoch == s.ctrl_epoch and not s.ctrl_isr_written
        return self._become(s, i, leader, epoch, isr, int(current and leader == i))

    def _do_deliver_latest(self, s: State, i: int) -> State:
        """The current state from ZooKeeper, with its current zkVersion: what a new
        controller (after a failover) sends every broker, and what a restarted
        broker gets (ControllerContext's leadership info)."""
        leader = s.ctrl_leader
        if self._owed_current_state(s, i):  # ZooKeeper: what a renewed session was owed
            s = s.with_replica(i, s.replicas[i].replace(fenced=0))
        return self._become(s, i, leader, s.ctrl_epoch, s.ctrl_isr, int(leader == i))

    def _owed_current_state(self, s: State, i: int) -> bool:
        """ZooKeeper, ``--fencing``: broker ``i`` registered again after its session
        expired and awaits the current state (:meth:`_do_unfence`).  Never in KRaft, where
        a fenced broker is not live."""
        return bool(s.replicas[i].fenced and s.ctrl_live >> i & 1)

    def _next_request(self, s: State, i: int) -> int:
        """The epoch of the next request that takes effect on replica ``i`` (0: none)."""
        r = s.replicas[i]
        if r.epoch == 0 or (r.fenced and s.ctrl_live >> i & 1):  # _owed_current_state
            if s.ctrl_epoch > r.epoch and self._takes_effect(s, s.ctrl_epoch):
                return s.ctrl_epoch
            return 0
        for epoch in range(r.epoch + 1, s.ctrl_epoch + 1):
            if self._takes_effect(s, epoch):
                return epoch
        return 0

    def _takes_effect(self, s: State, epoch: int) -> bool:
        """ZooKeeper: a LeaderAndIsr naming no leader changes nothing (makeFollowers acts
        only "when the leader is available", 0.10.2 to 3.9).  KRaft: every record does;
        a broker applies a leaderless partition by becoming a follower of nobody
        (ReplicaManager.applyLocalFollowersDelta calls makeFollower "so that a replica
        with no leader can step down", 3.3.0 to 4.4.0): its fetcher stops, and a leader
        steps down.  Any named leader was alive when the controller sent the request (it
        elects only live brokers), and that is the liveness the broker judges it by."""
        return self.config.kraft or s.ctrl_history[epoch - 1][0] != NO_LEADER

    def _failover_delivery_differs(self, s: State, i: int) -> bool:
        """After a controller failover, does the current state tell broker ``i``
        anything its queue would not?  It does for a broker behind the current
        epoch, and for one that restarted unnoticed and holds no state."""
        r = s.replicas[i]
        if r.epoch == 0 or self._owed_current_state(s, i):
            return False  # ``deliver`` gives it the current state already
        if not self._takes_effect(s, s.ctrl_epoch):
            return False
        return r.epoch < s.ctrl_epoch or (r.leader == NO_LEADER != s.ctrl_leader)
