"""The shape of a state: immutable, hashable tuples of small ints.

States are ``NamedTuple``s so code reads ``replica.hw`` while the checker sees
plain tuples (cheap to hash, compare, pickle and fingerprint).  Replica ids are
indexes into ``State.replicas``; sets of replicas are bitmasks.
"""

from __future__ import annotations

from typing import NamedTuple

NO_LEADER = -1  # Kafka's LeaderAndIsr.NoLeader
UNKNOWN_LEO = -1  # a follower's LEO the leader has not heard since it became leader
ID_BITS = 8  # a record is (epoch << ID_BITS) | id

# Replica.truncation: where a follower stands with the truncation its epoch calls for.
TRUNCATED = 0  # it truncated on becoming follower in this epoch (or had nothing to cut)
MUST_TRUNCATE = 1  # it owes the OffsetsForLeaderEpoch exchange (2.8+: a fetch without divergence)
NOT_TRUNCATED = 2  # it kept its log across an epoch change (same leader: Kafka skips it)

# Replica.inflight: the answer to its fetcher's one outstanding request (message level).
NOTHING_IN_FLIGHT: tuple = ()
FETCH_RESPONSE = 1  # (FETCH_RESPONSE, fetch offset, leader HW, records)
OUT_OF_RANGE = 2  # (OUT_OF_RANGE, fetch offset, leader LEO)
EPOCH_RESPONSE = 3  # (EPOCH_RESPONSE, epoch of the request, answered epoch, end offset)
DIVERGING = 4  # (DIVERGING, fetch offset, leader HW, diverging epoch, its end offset)
# A diverging answer whose HW the follower already took and on which it has yet to
# truncate (releases with KAFKA-14704): (TRUNCATE_PENDING, epoch, end offset).
TRUNCATE_PENDING = 5

# State.alter_requests: the AlterIsr / AlterPartition requests the controller has not
# handled yet, each (sender, its leader epoch, version_ok, proposed ISR, restarted):
# version_ok is 1 while the partition version the sender cached is the controller's;
# restarted is the mask of proposed members that registered again (a new broker
# epoch) since the sender saw the fetch behind the request.
ALTER_SENDER, ALTER_EPOCH, ALTER_VERSION_OK, ALTER_ISR, ALTER_RESTARTED = range(5)


def make_record(epoch: int, record_id: int) -> int:
    """A log entry: the leader epoch it was written in, and a unique id (1, 2, ...)."""
    return (epoch << ID_BITS) | record_id


def record_epoch(record: int) -> int:
    return record >> ID_BITS


def record_id(record: int) -> int:
    return record & ((1 << ID_BITS) - 1)


def record_name(record: int) -> str:
    """Human form used in traces and messages: ``m2@e1`` is write 2, epoch 1."""
    return f"m{record_id(record)}@e{record_epoch(record)}"


def members(mask: int) -> list[int]:
    """Replica ids (or record ids) in a bitmask, ascending."""
    out = []
    i = 0
    while mask:
        if mask & 1:
            out.append(i)
        mask >>= 1
        i += 1
    return out


class Replica(NamedTuple):
    """One replica's state as its broker holds it.

    Durable across a crash: ``log``, ``hw_checkpoint``, ``unwritten_epoch`` and ``clean_shutdown``
    (the leader-epoch cache lives in the log's record epochs plus this entry).
    Everything else is in memory and reset by a crash.  The fields that name
    other replicas come last, which lets symmetry reduction sort on the rest.
    """

    alive: int  # 1 while the broker process runs
    # Leader epoch of the last LeaderAndIsr it accepted.  Kept across a crash: the
    # controller's queue still holds the later ones for a bounce it did not notice.
    # 0: owed the current state (the controller saw it restart).
    epoch: int
    log: tuple[int, ...]  # records; LEO = len(log)
    hw: int  # in-memory high watermark (exclusive)
    hw_checkpoint: int  # last HW written to the replication-offset-checkpoint file
    truncation: int  # TRUNCATED, MUST_TRUNCATE or NOT_TRUNCATED
    unwritten_epoch: int  # kip320: epoch cached on becoming leader, no record in it yet; 0 none
    pending: int  # as leader, acks=all: record ids appended but not yet acknowledged
    # As leader: 1 while its cached partition-state version (zkVersion) is ZooKeeper's,
    # so its conditional ISR writes succeed (Partition.updateIsr); 0 otherwise.
    zk_current: int
    # As leader: leaderEpochStartOffset, its LEO when it last became leader
    # (Partition.makeLeader); -1 otherwise.  A broker re-made leader of the same epoch
    # after a restart starts the epoch at its LEO then, not at its first record of it.
    epoch_start: int
    # 1 from a clean (controlled) shutdown until the controller sees the broker register
    # again: the clean-shutdown file the broker wrote with its broker epoch, which its
    # registration's previousBrokerEpoch carries (LogManager.shutdown,
    # ClusterControlManager.registerBroker, 4.0+).  A crash leaves none.
    clean_shutdown: int
    # As leader, in KRaft: 1 while the partition epoch it caches came from an
    # AlterPartition response and the metadata record of that change is still to be
    # replayed.  Partition.makeLeader skips only a strictly older partition epoch
    # (3.3.0 to 4.4.0; KAFKA-13790), so the replay re-applies the record's ISR and drops
    # whatever change the leader proposed since (``reapply_isr``).
    record_owed: int
    # As leader, from 3.0 (KAFKA-12686): 1 from its AlterIsr / AlterPartition proposal
    # until the controller answers it.  The broker's AlterPartitionManager holds the item
    # that long, whatever happens to the partition meanwhile, and refuses another
    # proposal for it (Behaviour.one_isr_request_in_flight).  A crash empties it.
    alter_item: int
    # 1 while the controller holds this running broker fenced without a new registration
    # (KRaft, --fencing: missed heartbeats, ReplicationControlManager.maybeFenceOneStaleBroker);
    # its broker epoch is unchanged, so its next heartbeat unfences it (``unfence``)
    # instead of a registration (``notice_restart``).  A crash ends it.  ZooKeeper
    # (--fencing): 1 from its expired session (not live) until it gets the current state
    # it is owed once it registered again (live); see ControllerRules._do_unfence.
    fenced: int
    # 1 from a replaced disk until the broker reports the partition's new log directory
    # (KRaft, metadata.version 3.7-IV2+, KIP-858; ``report_dir``).  The partition's
    # ``directories`` entry still names the formatted disk's old id, which the broker no
    # longer registers, so the controller's LeaderAcceptor (hasOnlineDir) refuses it as
    # leader meanwhile.  The controller's fact, so a crash keeps it.
    dir_unreported: int
    inflight: tuple  # as follower: the response on its way to it (see NOTHING_IN_FLIGHT)
    remote_leo: tuple[int, ...]  # as leader: each follower's last fetch offset; () otherwise
    isr: int  # as leader: the ISR it believes in (bitmask); 0 otherwise
    # As leader, with AlterIsr (2.7+): the ISR it proposed and awaits (0: none).  Its
    # maximal ISR, counted for the HW, is ``isr | pending_isr``.
    pending_isr: int
    leader: int  # the leader its last LeaderAndIsr named (NO_LEADER if none / unknown)

    @property
    def leo(self) -> int:
        return len(self.log)

    @property
    def maximal_isr(self) -> int:
        """Partition.IsrState.maximalIsr: committed ISR plus a pending change (KIP-497)."""
        return self.isr | self.pending_isr

    def replace(self, **changes: object) -> Replica:
        """Like ``_replace``, at a third of the cost (this is the checker's hot path)."""
        return _replace(self, _REPLICA_INDEX, changes)


class State(NamedTuple):
    """The whole system: controller, ghost history, and the replicas."""

    ctrl_leader: int  # controller's (ZooKeeper's) leader, or NO_LEADER
    ctrl_epoch: int  # controller's leader epoch
    ctrl_isr: int  # controller's ISR, bitmask
    ctrl_live: int  # brokers the controller believes alive, bitmask
    ctrl_elr: int  # Eligible Leader Replicas (KIP-966), bitmask; 0 without ELR
    # 1 once the leader rewrote the ISR in ZooKeeper after the latest LeaderAndIsr: the
    # version that request carries is then stale.
    ctrl_isr_written: int
    written: int  # producer writes so far (the next record id is written + 1)
    crashes: int  # crashes so far
    committed: tuple[int, ...]  # ghost: each offset's record once the true leader's HW passed it
    acked: int  # ghost: record ids acknowledged to the producer, bitmask
    # (leader, ISR) of the LeaderAndIsr the controller sent for each epoch, oldest
    # first: entry e-1 is epoch e.  Replicas receive these in order.
    ctrl_history: tuple[tuple[int, int], ...]
    alter_requests: tuple[tuple[int, int, int, int, int], ...]  # see ALTER_SENDER
    # Constant for the run, read by the hw-monotonic invariant: 1 where ListOffsets
    # answers OFFSET_NOT_AVAILABLE while a leader's HW is below its epoch's start
    # offset instead of exposing that stale HW (KIP-207, Behaviour.hides_stale_hw).
    hides_stale_hw: int
    # Constant for the run, read by :func:`last_known_elr`: 1 where the controller records
    # the last leader in lastKnownElr when a change leaves the partition leaderless (ELR
    # on, 4.1.1 and later: Behaviour.last_known_leader_on_leaderless); 0 where it records
    # it when a change empties the ISR (4.0.0 to 4.1.0), or keeps nothing (no ELR).
    last_known_on_leaderless: int
    replicas: tuple[Replica, ...]

    def replace(self, **changes: object) -> State:
        """Like ``_replace``, at a third of the cost."""
        return _replace(self, _STATE_INDEX, changes)

    def with_replica(self, i: int, replica: Replica) -> State:
        """The same state with replica ``i`` replaced (the most common step)."""
        reps = self.replicas
        return tuple.__new__(State, self[:-1] + (reps[:i] + (replica,) + reps[i + 1 :],))


def plain_state(s: State) -> tuple:
    """The state as plain tuples, which ``marshal`` writes (it refuses NamedTuples):
    a search's levels hold millions of states serialized this way, several times
    cheaper than pickling, which calls Python code for every NamedTuple.  Every field
    but ``replicas`` is an int or a tuple of ints and tuples already."""
    return s[:-1] + (tuple([tuple(r) for r in s[-1]]),)


def state_from_plain(t: tuple) -> State:
    """The inverse of :func:`plain_state`."""
    new = tuple.__new__
    return new(State, t[:-1] + (tuple([new(Replica, r) for r in t[-1]]),))


def _replace(item: tuple, index: dict[str, int], changes: dict[str, object]):
    values = list(item)
    for name, value in changes.items():
        values[index[name]] = value
    return tuple.__new__(type(item), values)


_REPLICA_INDEX = {name: i for i, name in enumerate(Replica._fields)}
_STATE_INDEX = {name: i for i, name in enumerate(State._fields)}


def last_known_leader(s: State) -> int:
    """The leader of the latest LeaderAndIsr that named one."""
    for leader, _isr in reversed(s.ctrl_history):
        if leader != NO_LEADER:
            return leader
    return NO_LEADER


def last_known_elr(s: State) -> int:
    """PartitionRegistration.lastKnownElr (KIP-966), as a bitmask of the brokers it names.

    In production Kafka keeps only the last leader there
    (PartitionChangeBuilder.useLastKnownLeaderInBalancedRecovery, true outside tests), and
    only with ELR; maybeUpdateLastKnownLeader clears it when a leader is elected and sets
    it to ``partition.leader``, the leader before the change:

    - 4.1.1 and later (apache/kafka#20655): when the change leaves the partition
      leaderless, so from then until an election it names the last leader, whatever
      the ISR holds;
    - 4.0.0 to 4.1.0: when the change empties the ISR.  Where the partition had already
      lost its leader with members left in its ISR (say none of them could lead: a
      directory not online), ``partition.leader`` is -1 by the time they leave, and the
      field is ``[-1]``, which names no broker: this function gives 0 then
      (:func:`last_known_names_nobody`), and the controller recovers nobody.

    The ISR becomes empty only with ELR and non-empty only through an election, and a
    leaderless epoch always follows a led one (``ctrl_history``), so the field is a
    function of the state.
    """
    if s.last_known_on_leaderless:
        if s.ctrl_leader != NO_LEADER:
            return 0
    elif s.ctrl_isr or last_known_names_nobody(s):
        return 0
    leader = last_known_leader(s)
    return 0 if leader == NO_LEADER else 1 << leader


def last_known_names_nobody(s: State) -> bool:
    """4.0.0 to 4.1.0 with ELR: lastKnownElr is ``[-1]``, because the ISR emptied after
    the partition had lost its leader (the current leader epoch began leaderless with
    members in the ISR, and no election has happened since).  See :func:`last_known_elr`."""
    if s.last_known_on_leaderless or s.ctrl_isr or s.ctrl_leader != NO_LEADER:
        return False
    leader, isr = s.ctrl_history[-1]
    return leader == NO_LEADER and isr != 0


def true_leader(state: State) -> int:
    """The controller's leader if it is alive and acting in the controller's epoch, else -1.

    This is "the true leader" of the reference page's invariants: a zombie that
    still thinks it leads an older epoch does not count.
    """
    leader = state.ctrl_leader
    if leader < 0:
        return NO_LEADER
    rep = state.replicas[leader]
    if rep.alive and rep.epoch == state.ctrl_epoch and rep.leader == leader:
        return leader
    return NO_LEADER
