"""What a broker does with its own replica: produce, ISR shrink, HW, crash and
restart, and becoming leader or follower when a LeaderAndIsr arrives.

Rules cite ``docs/kafka-replication.md`` ("ref § <section>") or the Kafka code
(``docs/kafka-behaviour-by-release.md`` has the code read for each release).
The release's differences come from ``self.behaviour`` (model/kafka/releases.py).
"""

from __future__ import annotations

from replcheck.model.kafka.epochs import UNDEFINED, latest_epoch
from replcheck.model.kafka.releases import (
    ON_FETCH,
    RETRUNCATE_EVERY,
    RETRUNCATE_MISSED,
    TRUNCATE_TO_HW,
    Behaviour,
)
from replcheck.model.kafka.state import (
    DIVERGING,
    EPOCH_RESPONSE,
    FETCH_RESPONSE,
    MUST_TRUNCATE,
    NO_LEADER,
    NOT_TRUNCATED,
    NOTHING_IN_FLIGHT,
    TRUNCATED,
    UNKNOWN_LEO,
    Replica,
    State,
    make_record,
    record_epoch,
    record_id,
)


def bits(mask: int) -> int:
    return mask.bit_count()


def put(items: tuple, index: int, value: object) -> tuple:
    return items[:index] + (value,) + items[index + 1 :]


class BrokerRules:
    """Mixed into KafkaReplication: the replica's own rules."""

    behaviour: Behaviour
    n: int
    ids: range

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
        return s.replace(written=rid, acked=acked, replicas=put(s.replicas, i, r))

    # ------------------------------------------------------------------ ISR

    def _do_shrink_isr(self, s: State, i: int, f: int) -> State:
        """ref § ISR maintenance: drop a lagging follower; the HW may then advance.

        Up to 2.6 the ISR write is a ZooKeeper update conditional on the leader's
        cached zkVersion (Partition.updateIsr), so it is enabled only while that
        version is current; a refused write changes nothing (the leader keeps its
        ISR).  From 2.7 it is a request to the controller (:meth:`_propose_isr`).
        """
        return self._shrink_isr(s, i, 1 << f)

    def _do_shrink_isr_set(self, s: State, i: int, followers: int) -> State:
        """ref § ISR maintenance: drop several lagging followers in one ISR change, as
        Partition.maybeShrinkIsr does with every replica out of sync at that moment
        (``isr -- outOfSyncReplicaIds``: 0.10.2 ``maybeShrinkIsr``, 2.7 to 3.0
        ``shrinkIsr(outOfSyncReplicaIds)``, 3.1 to 4.1 ``prepareIsrShrink``).  Two single
        shrinks reach the same ISR, not always the same states: from 2.7 the smaller ISR
        is pending while the larger one is committed, and with the ELR, when the middle
        ISR would still be at or above min.insync.replicas, every removed member joins
        the ELR at once (KIP-966), where single shrinks put only the last one there."""
        return self._shrink_isr(s, i, followers)

    def _shrink_isr(self, s: State, i: int, followers: int) -> State:
        r = s.replicas[i]
        isr = r.isr & ~followers
        if self.behaviour.alter_isr:
            return self._propose_isr(s, i, isr)
        r, acked = self._advance_leader_hw(r.replace(isr=isr), r.remote_leo, s.acked)
        return s.replace(
            ctrl_isr=isr, ctrl_isr_written=1, acked=acked, replicas=put(s.replicas, i, r)
        )

    def _propose_isr(self, s: State, i: int, isr: int) -> State:
        """KIP-497 (2.7 Partition.expandIsrWithAlterIsr / shrinkIsrWithAlterIsr): the
        leader enters PendingExpandIsr or PendingShrinkIsr and sends AlterIsr; until
        the answer its maximal ISR (the larger of the two) holds the HW back.  It
        proposes only while nothing is pending (``isInflight``) and, from 3.0, only
        while no earlier request is unanswered (``alter_item``: the
        AlterPartitionManager's one item per partition, KAFKA-12686), but whether or
        not its cached partition version (zkVersion, KRaft partition epoch) is still
        the controller's: ``maybeExpandIsr`` / ``maybeShrinkIsr`` test only
        ``!partitionState.isInflight`` (2.7 to 4.1), and the request carries the
        cached version.  A stale one is refused (INVALID_UPDATE_VERSION; a stale leader
        epoch, FENCED_LEADER_EPOCH) and the leader "gives up" in its pending state
        (2.7 to 2.8 ``Partition.handleAlterIsrResponse``, 3.x to 4.1
        ``handleAlterPartitionError`` returns false with ``partitionState`` unchanged)
        until the next LeaderAndIsr or metadata record (``makeLeader`` ->
        ``updateAssignmentAndIsr``): its maximal ISR goes on holding the HW back and
        it proposes nothing else (:meth:`ControllerRules._do_alter_isr`).  Before 2.7
        the ISR write itself is conditional on the zkVersion and is taken only while
        it is current (:meth:`_do_shrink_isr`, ``MessageRules._leader_saw_fetch``)."""
        r = s.replicas[i]
        request = (i, r.epoch, r.zk_current, isr, 0)
        r = r.replace(pending_isr=isr, alter_item=int(self.behaviour.one_isr_request_in_flight))
        return s.replace(
            alter_requests=s.alter_requests + (request,), replicas=put(s.replicas, i, r)
        )

    def _advance_leader_hw(
        self, r: Replica, remote: tuple[int, ...], acked: int
    ) -> tuple[Replica, int]:
        """Partition.maybeIncrementLeaderHW, then complete delayed acks=all produces.

        HW := max(HW, min LEO over the ISR the leader believes in, its maximal
        ISR while a change is pending).  A waiting write is acknowledged once the
        HW passes it, unless that ISR is then below min.insync.replicas
        (NOT_ENOUGH_REPLICAS_AFTER_APPEND; checkEnoughReplicasReachOffset).
        """
        low = r.leo
        isr = r.isr | r.pending_isr  # maximalIsr (KIP-497); just the ISR before 2.7
        if r.pending_isr and self.config.broken_rule == "maximal-isr":
            isr = r.pending_isr
        if self.behaviour.hw_needs_min_isr and bits(r.isr) < self.config.min_insync_replicas:
            return r, acked  # KAFKA-15583 (3.7.0): no HW advance below min ISR
        me = r.leader
        for f in self.ids:
            if f != me and isr >> f & 1 and remote[f] < low:
                low = remote[f]
        if low <= r.hw:
            return r, acked
        pending = r.pending
        if pending:
            enough = bits(isr) >= self.config.min_insync_replicas
            for offset in range(r.hw, low):
                bit = 1 << record_id(r.log[offset])
                if pending & bit:
                    pending &= ~bit
                    if enough:
                        acked |= bit
        return r.replace(hw=low, pending=pending), acked

    # ------------------------------------------------------ crash and restart

    def _do_checkpoint_hw(self, s: State, i: int) -> State:
        """ref § Actors: the HW checkpoint is written periodically, so it can lag."""
        r = s.replicas[i]
        return s.with_replica(i, r.replace(hw_checkpoint=r.hw))

    def _do_crash(self, s: State, i: int, keep: int) -> State:
        """ref § Crash and restart: in-memory state is gone; the log (maybe less its
        unflushed tail), the HW checkpoint and the epoch cache stay on disk."""
        dead = crashed(s.replicas[i], keep)
        return s.replace(crashes=s.crashes + 1, replicas=put(s.replicas, i, dead))

    def _do_shutdown(self, s: State, i: int) -> State:
        """A clean (controlled) shutdown: the broker flushes its log, writes its HW
        checkpoint and the clean-shutdown file (ZooKeeper and KRaft:
        KafkaServer/BrokerServer.shutdown -> ReplicaManager.shutdown
        (checkpointHighWatermarks) -> LogManager.shutdown (log.flush, then
        cleanShutdownFileHandler.write(brokerEpoch)), 3.9/4.x).

        Before it stops, the controller moves leadership away and takes it out of the
        ISR (KafkaController.doControlledShutdown; BrokerHeartbeatManager's
        CONTROLLED_SHUTDOWN -> ReplicationControlManager.handleBrokerInControlledShutdown):
        the model lets the controller do that with ``notice_crash``, before (as
        ``elect``) or after the stop; with ELR a member it removes below min ISR
        joins the ELR, as for a fenced broker.  What differs from a crash is on disk,
        and at the next registration (``notice_restart``).
        """
        r = s.replicas[i]
        dead = crashed(r, r.leo).replace(hw_checkpoint=r.hw, clean_shutdown=1)
        return s.replace(crashes=s.crashes + 1, replicas=put(s.replicas, i, dead))

    def _do_replace_disk(self, s: State, i: int) -> State:
        """The stopped broker's disk is replaced: it will start with no log, no HW
        checkpoint, no leader-epoch cache and no clean-shutdown file.

        Nothing in Kafka's protocol detects this (KAFKA-14139's family).  The
        ZooKeeper controller re-elects such a broker if it is the ISR's last member
        (Election.offlinePartitionLeaderElection: live and in the ISR).  In KRaft
        (3.7+, KIP-858) the formatted disk has a new directory id, so the partition
        names a directory the broker no longer has and it cannot lead
        (ReplicationControlManager's LeaderAcceptor: hasOnlineDir) until the broker
        reports the new one (``report_dir``; Behaviour.dir_assignment).  With ELR its
        registration is unclean.
        """
        r = s.replicas[i]
        empty = r.replace(log=(), hw_checkpoint=0, unwritten_epoch=0, clean_shutdown=0)
        if self.reports_dirs:
            empty = empty.replace(dir_unreported=1)
        return s.with_replica(i, empty)

    def _do_restart(self, s: State, i: int) -> State:
        """ref § Crash and restart: reload the log and the checkpointed HW.

        After a crash the log was recovered (``crash`` kept what survived); after a
        clean shutdown it is loaded as it was (LogLoader skips recovery when it finds
        the clean-shutdown file).  The broker remembers the file's broker epoch for
        its registration (``clean_shutdown``).
        The HW is clamped to the log end (Partition.getOrCreateReplica:
        ``min(checkpoint, logEndOffset)``).  Truncation to the HW happens when
        the replica is told it is a follower (0.10's makeFollowers), not here.
        Log recovery drops epoch-cache entries at or past the log end
        (truncateFromEnd), so an unwritten epoch entry does not survive.
        """
        r = s.replicas[i]
        r = r.replace(alive=1, hw=min(r.hw_checkpoint, r.leo), unwritten_epoch=0)
        return s.with_replica(i, r)

    # --------------------------------------------- LeaderAndIsr at the broker

    def _become(self, s: State, i: int, leader: int, epoch: int, isr: int, zk: int) -> State:
        """ReplicaManager.becomeLeaderOrFollower for one partition."""
        r = s.replicas[i]
        if leader == i:
            r, acked = self._make_leader(r, i, epoch, isr, zk, s.acked)
            return s.replace(acked=acked, replicas=put(s.replicas, i, r))
        return s.with_replica(i, self._make_follower(r, leader, epoch))

    def _make_leader(
        self, r: Replica, i: int, epoch: int, isr: int, zk: int, acked: int
    ) -> tuple[Replica, int]:
        """Partition.makeLeader.  A broker that already believed it led keeps its
        followers' LEOs (``isNewLeader`` is false: 0.10.2 to trunk); a new leader
        forgets them.  With KAFKA-7415 it caches (epoch, LEO) at once."""
        was_leader = r.leader == i
        remote = r.remote_leo if was_leader else (UNKNOWN_LEO,) * self.n
        unwritten = r.unwritten_epoch
        if self.behaviour.leader_caches_epoch and epoch > latest_record_epoch(r):
            unwritten = epoch
        # convertHWToLocalOffsetMetadata cannot place an HW beyond the log end
        # (left there by a truncation) and falls back to the log start.
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
            zk_current=zk,
            record_owed=0,  # a newer record: the one owed is replayed before it or batched
            epoch_start=r.leo,
            inflight=NOTHING_IN_FLIGHT,  # its fetcher for the partition is removed
            pending_isr=0,  # updateAssignmentAndIsr: the request's ISR is committed
        )
        return self._advance_leader_hw(r, remote, acked)  # makeLeader does this

    def _make_follower(self, r: Replica, leader: int, epoch: int) -> Replica:
        """Partition.makeFollower and ReplicaManager.makeFollowers.

        The fetcher is restarted (and the follower truncates) only when
        makeFollower reports a change: a new leader, or with the same leader a
        new epoch where the release re-truncates (KAFKA-7164).  A restart drops
        the response in flight, except, with the same leader (the partition stays
        with that leader's fetcher thread), an OffsetsForLeaderEpoch answer before
        KAFKA-7786 and a Fetch answer before KAFKA-18991 (:meth:`_keeps_fetch_answer`).
        """
        b = self.behaviour
        if leader != r.leader:
            restart = True
        elif b.retruncate_same_leader == RETRUNCATE_EVERY:
            restart = epoch != r.epoch
        elif b.retruncate_same_leader == RETRUNCATE_MISSED:
            restart = epoch >= r.epoch + 2
        else:
            restart = False
        inflight = r.inflight
        if restart:
            if b.truncation == TRUNCATE_TO_HW:
                r = truncate(r, r.hw, False, b.truncation_clears_end_epoch)  # 0.10 makeFollowers
                truncation = TRUNCATED
            elif b.truncation == ON_FETCH:
                # 2.8+ (KAFKA-10554): the fetcher starts Fetching at the LEO with
                # lastFetchedEpoch; the leader's divergingEpoch drives any truncation,
                # which is owed until a fetch is answered without one.
                truncation = MUST_TRUNCATE
            else:
                truncation = MUST_TRUNCATE  # the fetcher first asks the leader (KIP-101)
            keeps_answer = leader == r.leader and (
                (inflight[:1] == (EPOCH_RESPONSE,) and not b.epoch_answer_checks_epoch)
                or self._keeps_fetch_answer(r)
            )
            if not keeps_answer:
                inflight = NOTHING_IN_FLIGHT
        elif r.truncation == MUST_TRUNCATE:
            truncation = MUST_TRUNCATE
        else:
            truncation = NOT_TRUNCATED
        return r.replace(
            epoch=epoch,
            leader=leader,
            isr=0,
            remote_leo=(),
            truncation=truncation,
            pending=0,
            zk_current=0,
            record_owed=0,
            epoch_start=-1,
            inflight=inflight,
            pending_isr=0,
        )

    def _keeps_fetch_answer(self, r: Replica) -> bool:
        """Whether a follower re-added to its fetcher in a new epoch of the same leader
        still processes the Fetch answer of the older epoch (``r`` as it was before).

        ReplicaManager.makeFollowers (ZooKeeper mode; Partition.makeFollower is true
        for a new leader epoch from KIP-320) and applyLocalFollowersDelta (KRaft:
        ``isNewLeaderEpoch``) call removeFetcherForPartitions, then
        addFetcherForPartitions with ``initialFetchOffset(log)``: the log end when the
        log has a latest epoch and truncation on fetch is on (IBP / metadata.version
        2.7-IV1+, ``isTruncationOnFetchSupported``), else the HW.  The same leader
        means the same fetcher thread, whose Fetch is still outstanding.
        AbstractFetcherThread.partitionFetchState makes the re-added state Fetching
        only with truncation on fetch and a latest epoch; otherwise it is Truncating,
        and processFetchRequest drops the answer (``isReadyForFetch`` false).  A
        Fetching state at the same fetch offset passes processFetchRequest's test
        (``fetchPartitionData.fetchOffset == currentFetchState.fetchOffset &&
        currentFetchState.isReadyForFetch``, 2.8.0 to 3.9.0 and 4.0.0), so the older
        epoch's answer is processed: its records are appended and its HW taken
        (processPartitionData), or its divergingEpoch truncates the log.  KAFKA-18991
        (3.9.1, 4.0.1, 4.1.0: AbstractFetcherThread.scala l. 346, 344, 351) adds
        ``fetchPartitionData.currentLeaderEpoch == currentFetchState.currentLeaderEpoch``
        (Behaviour.fetch_answer_checks_epoch).

        Only records and divergingEpoch answers: an OFFSET_OUT_OF_RANGE answer makes
        handleOutOfRangeError ask the leader's log end afresh (fetchOffsetAndTruncate),
        which dropping the answer and fetching again also does.
        """
        b = self.behaviour
        inflight = r.inflight
        return (
            b.truncation == ON_FETCH
            and not b.fetch_answer_checks_epoch
            and inflight[:1] in ((FETCH_RESPONSE,), (DIVERGING,))
            and inflight[1] == r.leo  # the fetch offset: initialFetchOffset is the log end
            and latest_epoch(r) != UNDEFINED  # else Truncating at the HW
        )


def latest_record_epoch(r: Replica) -> int:
    latest = r.unwritten_epoch
    if r.log:
        latest = max(latest, max(record_epoch(x) for x in r.log))
    return latest


def truncate(r: Replica, offset: int, lowers_hw: bool, clears_end_epoch: bool) -> Replica:
    """Log.truncateTo: cut the log and its epoch entries; at or past the LEO no record
    goes, and with ``clears_end_epoch`` (KAFKA-10706, 2.6.1/2.7.0+) an epoch entry at
    the log end with no record in it does.

    Unless ``lowers_hw`` (2.4+), the HW is left alone: a follower truncated below
    its HW has HW > LEO until its next fetch response sets HW := min(leader HW, LEO).
    """
    if offset >= r.leo:
        return r.replace(unwritten_epoch=0) if clears_end_epoch and r.unwritten_epoch else r
    hw = min(r.hw, offset) if lowers_hw else r.hw
    return r.replace(log=r.log[:offset], hw=hw, unwritten_epoch=0)


def crashed(r: Replica, keep: int) -> Replica:
    """The broker process is gone: only what is on disk stays (ref § Crash and restart).

    ``epoch`` stays as the last request it handled: what the controller still
    has queued for it is what comes after (see State and controller.py).
    """
    return Replica(
        alive=0,
        epoch=r.epoch,
        leader=NO_LEADER,
        log=r.log[:keep],
        hw=0,
        hw_checkpoint=r.hw_checkpoint,
        isr=0,
        remote_leo=(),
        truncation=TRUNCATED,
        unwritten_epoch=r.unwritten_epoch if keep == r.leo else 0,
        pending=0,  # the producer's waiting requests fail with the connection
        zk_current=0,
        epoch_start=-1,
        clean_shutdown=0,  # a crash writes no clean-shutdown file
        record_owed=0,  # the metadata image is rebuilt from the log on restart
        fenced=0,  # a restarted process registers anew
        dir_unreported=r.dir_unreported,  # the partition's directories[] entry: the controller's
        alter_item=0,  # a new AlterPartitionManager; the controller may still answer the old
        inflight=NOTHING_IN_FLIGHT,  # requests and responses die with the connections
        pending_isr=0,
    )
