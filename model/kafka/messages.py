"""Fetch and OffsetsForLeaderEpoch between a follower and its leader.

At message level (the default) each is a request the leader handles, then a
response the follower handles later: the leader can append, fail or be demoted
in between, and the follower's fetcher may have been restarted (the response is
then dropped).  One fetcher thread serves the partition, so at most one request
is outstanding per follower (AbstractFetcherThread.doWork: maybeTruncate, then
fetch, both blocking).  The leader's handling and the follower's sending are one
step: the follower cannot change its log while its request is outstanding.

The coarse model (``Config.atomic``) makes each exchange one step, as the TLA+
specs do: ``fetch`` is a request immediately followed by its response, and
``truncate`` every round of the epoch exchange at once.
"""

from __future__ import annotations

from replcheck.model.kafka.broker import crashed, put, truncate
from replcheck.model.kafka.epochs import (
    UNDEFINED,
    end_offset_v1,
    epoch_entries,
    latest_epoch,
    leader_answer,
    truncation_step,
    whole_exchange,
)
from replcheck.model.kafka.releases import ON_FETCH
from replcheck.model.kafka.state import (
    DIVERGING,
    EPOCH_RESPONSE,
    FETCH_RESPONSE,
    NOTHING_IN_FLIGHT,
    OUT_OF_RANGE,
    TRUNCATE_PENDING,
    TRUNCATED,
    State,
)


class MessageRules:
    """Mixed into KafkaReplication: the replication requests and responses."""

    # --------------------------------------------------------------- fetch

    def _do_fetch_request(self, s: State, f: int, leader_id: int) -> State:
        """The leader handles a FetchRequest at the follower's LEO (ReplicaManager.fetchMessages).

        readFromLocalLog reads the records and the HW *before*
        updateFollowerLogReadResults records the fetch offset, may add the
        follower to the ISR and advances the HW: an immediate response carries
        the HW from before this fetch, the seeds' one-round lag.  A fetch offset
        past the leader's log end is answered OFFSET_OUT_OF_RANGE.
        """
        reps = s.replicas
        fol, lead = reps[f], reps[leader_id]
        offset = fol.leo
        if self.behaviour.truncation == ON_FETCH:
            diverging = self._diverging_epoch(fol, lead)
            if diverging is not None and diverging[0] == UNDEFINED:
                # An epoch newer than the leader's whole cache: OffsetOutOfRange.
                response = (OUT_OF_RANGE, offset, lead.leo)
                return s.with_replica(f, fol.replace(inflight=response))
            if diverging is not None:
                response = (DIVERGING, offset, lead.hw, *diverging)
                if self.behaviour.diverged_fetch_moves_leader:  # KAFKA-13141
                    s = self._leader_saw_fetch(s, leader_id, f, offset)
                return s.with_replica(f, s.replicas[f].replace(inflight=response))
        if offset > lead.leo:
            response = (OUT_OF_RANGE, offset, lead.leo)
            return s.with_replica(f, fol.replace(inflight=response))
        response = (FETCH_RESPONSE, offset, lead.hw, lead.log[offset:])
        s = self._leader_saw_fetch(s, leader_id, f, offset)
        return s.with_replica(f, fol.replace(inflight=response))

    def _diverging_epoch(self, fol, lead) -> tuple[int, int] | None:
        """Partition.readRecords (2.7+): for the fetch's lastFetchedEpoch (the
        follower's latest epoch) the leader looks up (epoch, end offset) in its own
        cache; the logs diverge if that epoch is smaller or ends before the fetch
        offset.  The answer is then that pair and no records."""
        fetched = latest_epoch(fol)
        if fetched == UNDEFINED:
            return None
        epoch, end = end_offset_v1(epoch_entries(lead), lead.leo, fetched, False)
        if epoch < fetched or end < fol.leo:
            return epoch, end
        return None

    def _leader_saw_fetch(self, s: State, i: int, f: int, offset: int) -> State:
        """Partition.updateReplicaLogReadResult: record the follower's fetch offset,
        maybeExpandIsr, maybeIncrementLeaderHW.

        The follower joins the ISR when its fetch offset reaches the leader's HW
        and, from KAFKA-7128 (2.0.1), the start of the leader's epoch.  This is the
        only place the ISR grows: a fresh fetch in the current epoch.  Before 2.7
        the write is conditional on the leader's zkVersion (Partition.updateIsr: a
        stale one fails and the leader keeps its ISR, so the model takes it only
        while the version is current).  From 2.7 the leader proposes whatever its
        cached version (:meth:`BrokerRules._propose_isr`).
        """
        lead = s.replicas[i]
        remote = put(lead.remote_leo, f, offset)
        lead = lead.replace(remote_leo=remote)
        ctrl_isr, written = s.ctrl_isr, s.ctrl_isr_written
        needs_epoch_start = self.behaviour.isr_join_needs_epoch_start
        if (
            not lead.isr >> f & 1
            and (lead.zk_current or self.behaviour.alter_isr)
            and not lead.pending_isr
            and not lead.alter_item  # 3.0+: an unanswered request (KAFKA-12686)
            and offset >= lead.hw
            and (not needs_epoch_start or offset >= lead.epoch_start)
        ):
            if self.behaviour.alter_isr:
                s = self._propose_isr(s.with_replica(i, lead), i, lead.isr | (1 << f))
                lead = s.replicas[i]
            else:
                ctrl_isr, written = lead.isr | (1 << f), 1
                lead = lead.replace(isr=ctrl_isr)
        lead, acked = self._advance_leader_hw(lead, remote, s.acked)
        return s.replace(
            ctrl_isr=ctrl_isr,
            ctrl_isr_written=written,
            acked=acked,
            replicas=put(s.replicas, i, lead),
        )

    def _do_fetch_response(self, s: State, f: int) -> State:
        """The follower handles the response (AbstractFetcherThread.processFetchRequest).

        Dropped if its fetch offset moved meanwhile.  Records are appended and
        HW := min(HW in the response, LEO), set even when it goes down.  On
        OFFSET_OUT_OF_RANGE with a leader log shorter than its own, before
        KAFKA-7414 (2.0.1) the broker halts (unclean election off); otherwise it
        truncates to the leader's log end (ReplicaFetcherThread.handleOffsetOutOfRange).
        """
        fol = s.replicas[f]
        kind, offset, *rest = fol.inflight
        fol = fol.replace(inflight=NOTHING_IN_FLIGHT)
        if offset != fol.leo:
            return s.with_replica(f, fol)
        if kind == OUT_OF_RANGE:
            (leader_leo,) = rest
            if self.behaviour.exits_on_out_of_range and not self.config.unclean_election:
                return self._do_halt(s.with_replica(f, fol), f)
            fol = self._truncate(fol, leader_leo)
            return s.with_replica(f, fol)
        if kind == DIVERGING:
            return self._diverging_response(s, f, fol, *rest)
        hw, records = rest
        log = fol.log + records
        fol = fol.replace(
            log=log,
            hw=min(hw, len(log)),
            unwritten_epoch=fol.unwritten_epoch if not records else 0,
            # Truncation on fetch: an answer without divergingEpoch settles it.
            truncation=TRUNCATED if self.behaviour.truncation == ON_FETCH else fol.truncation,
        )
        return s.with_replica(f, fol)

    def _diverging_response(self, s: State, f: int, fol, hw: int, epoch: int, end: int) -> State:
        """AbstractFetcherThread.processFetchRequest on a divergingEpoch (2.8+).

        Before KAFKA-14704 (3.4.1, 3.5.0) processPartitionData first takes the
        HW, min(leader HW, LEO) over the divergent tail, and the truncation
        follows (``diverging_truncate``); from the fix the response only queues
        the truncation and the HW comes with the next fetch.
        """
        if self.behaviour.hw_before_diverging_truncation:
            fol = fol.replace(hw=min(hw, fol.leo), inflight=(TRUNCATE_PENDING, epoch, end))
            return s.with_replica(f, fol)
        return s.with_replica(f, self._truncate_on_diverging(fol, epoch, end))

    def _do_diverging_truncate(self, s: State, f: int) -> State:
        """truncateOnFetchResponse, after the HW was taken (releases before KAFKA-14704)."""
        fol = s.replicas[f]
        _kind, epoch, end = fol.inflight
        fol = fol.replace(inflight=NOTHING_IN_FLIGHT)
        return s.with_replica(f, self._truncate_on_diverging(fol, epoch, end))

    def _truncate_on_diverging(self, fol, epoch: int, end: int):
        """getOffsetTruncationState on (epoch, end offset): KIP-279's rule, one round;
        the next fetch carries the new last epoch and the leader checks again."""
        offset, _done = truncation_step(fol, (epoch, end), self.behaviour)
        return self._truncated_to(fol, offset, False)

    def _do_halt(self, s: State, f: int) -> State:
        """FatalExitError: the follower's broker exits, keeping its whole log."""
        return s.with_replica(f, crashed(s.replicas[f], s.replicas[f].leo))

    def _do_fetch(self, s: State, f: int, leader_id: int) -> State:
        """Coarse model: a fetch request immediately followed by its response (and the
        truncation on a divergingEpoch)."""
        s = self._do_fetch_response(self._do_fetch_request(s, f, leader_id), f)
        if s.replicas[f].inflight[:1] == (TRUNCATE_PENDING,):
            s = self._do_diverging_truncate(s, f)
        return s

    # -------------------------------------------------- OffsetsForLeaderEpoch

    def _do_epoch_request(self, s: State, f: int, leader_id: int) -> State:
        """The leader answers OffsetsForLeaderEpoch for the follower's latest epoch
        (Partition.lastOffsetForLeaderEpoch), from its cache at that moment.

        A follower with no cached epoch sends nothing: it truncates to its HW
        (the fetcher's initial offset) and starts fetching.
        """
        fol = s.replicas[f]
        requested = latest_epoch(fol)
        if requested == UNDEFINED:
            return s.with_replica(f, self._truncated_to(fol, min(fol.hw, fol.leo), True))
        epoch, end = leader_answer(s.replicas[leader_id], requested, self.behaviour)
        return s.with_replica(f, fol.replace(inflight=(EPOCH_RESPONSE, fol.epoch, epoch, end)))

    def _do_epoch_response(self, s: State, f: int) -> State:
        """The follower truncates on the answer (AbstractFetcherThread.maybeTruncate);
        under KIP-279 it asks again until both sides name the same epoch."""
        fol = s.replicas[f]
        _kind, _request_epoch, epoch, end = fol.inflight
        fol = fol.replace(inflight=NOTHING_IN_FLIGHT)
        offset, done = truncation_step(fol, (epoch, end), self.behaviour)
        return s.with_replica(f, self._truncated_to(fol, offset, done))

    def _do_truncate(self, s: State, f: int, leader_id: int) -> State:
        """Coarse model: the whole exchange, every round, in one step."""
        fol = s.replicas[f]
        offset = whole_exchange(fol, s.replicas[leader_id], self.behaviour)
        return s.with_replica(f, self._truncated_to(fol, offset, True))

    def _truncate(self, fol, offset: int):
        b = self.behaviour
        return truncate(fol, offset, b.truncation_lowers_hw, b.truncation_clears_end_epoch)

    def _truncated_to(self, fol, offset: int, done: bool):
        fol = self._truncate(fol, offset)
        return fol.replace(truncation=TRUNCATED) if done else fol
