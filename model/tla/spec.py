"""hachikuji/kafka-specification, transcribed action for action.

A second model, independent of ``model/kafka/replication.py``: it follows the TLA+ modules
``KafkaReplication`` (with ``FiniteReplicatedLog``, ``IdSequence`` and ``Util``)
and the variants ``KafkaTruncateToHighWatermark``, ``Kip101``, ``Kip279`` and
``Kip320`` (repository commit d68782b5772f93e2ef01f8a9ff68bbd9370f6b7f) so that
an exhaustive search reaches exactly the states TLC reaches.  Each disjunct of a
variant's ``Next`` is one action name; its ``\\E`` quantifiers are the action's
args (see ``ACTION_PARAMS``).

Encoding of the spec's variables (a bijection on reachable states):

* ``replicaLog[r]`` is ``replica_log[r]``, the tuple of the written records
  ``records[0 .. endOffset-1]``.  Offsets at or beyond ``endOffset`` always
  hold ``Nil`` in the spec (``Init``, ``Append`` and ``TruncateTo`` keep it so),
  so the tuple's length is ``endOffset`` and nothing is lost.
* A record ``[id |-> i, epoch |-> e]`` is the int ``(i << 8) | e``.
* ``replicaState[r]`` is ``ReplicaState(hw, leader_epoch, leader, isr)``;
  ``quorumState`` is ``QuorumState(leader_epoch, leader, isr)``; ISRs are
  bitmasks over replicas ``0 .. n-1``; ``Nil`` (no epoch) and ``None`` (no
  replica) are both -1, each only ever in its own kind of field.
* ``leaderAndIsrRequests`` is a set of quorum states.  Each is added by
  ``ControllerUpdateIsr`` with the fresh epoch ``nextLeaderEpoch``, so the set
  holds exactly one request per epoch ``0 .. nextLeaderEpoch-1``: it is stored
  as the tuple ``(leader, isr)`` indexed by epoch.
* ``constants`` holds ``(LogSize, MaxRecords, MaxLeaderEpoch)``, the same in
  every state (it does not change the count), so that invariants such as
  ``TypeOk`` can be checked from the state alone.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import NamedTuple

from replcheck.model.interface import Action

NIL = -1  # KafkaReplication: Nil == -1, the leader epoch before any
NONE = -1  # KafkaReplication: None == "NONE", no replica (leader fields only)
EPOCH_BITS = 8  # a record [id, epoch] is (id << EPOCH_BITS) | epoch
EPOCH_MASK = (1 << EPOCH_BITS) - 1

VARIANTS = ("hw", "kip101", "kip279", "kip320")


def make_record(record_id: int, epoch: int) -> int:
    """The record ``[id |-> record_id, epoch |-> epoch]`` of ``LogRecords``."""
    return (record_id << EPOCH_BITS) | epoch


def record_id(record: int) -> int:
    return record >> EPOCH_BITS


def record_epoch(record: int) -> int:
    return record & EPOCH_MASK


def record_name(record: int) -> str:
    """``[id 1, epoch 2]`` reads ``1@e2`` in messages."""
    return f"{record_id(record)}@e{record_epoch(record)}"


class ReplicaState(NamedTuple):
    """``ReplicaState == [hw, leaderEpoch, leader, isr]`` of one replica."""

    hw: int
    leader_epoch: int
    leader: int
    isr: int


class QuorumState(NamedTuple):
    """``QuorumState == [leaderEpoch, leader, isr]`` (the model's ZooKeeper)."""

    leader_epoch: int
    leader: int
    isr: int


class TlaState(NamedTuple):
    """The spec's six variables (``vars``) plus the constants; see the module docstring."""

    replica_log: tuple[tuple[int, ...], ...]
    replica_state: tuple[ReplicaState, ...]
    next_record_id: int
    next_leader_epoch: int
    leader_and_isr_requests: tuple[tuple[int, int], ...]
    quorum_state: QuorumState
    constants: tuple[int, int, int]


# Action names of every variant's Next, with their args in order.
ACTION_PARAMS: dict[str, tuple[str, ...]] = {
    "ControllerElectLeader": ("new_leader",),
    "ControllerShrinkIsr": ("replica",),
    "BecomeLeader": ("request_epoch",),
    "LeaderExpandIsr": ("leader", "replica"),
    "LeaderShrinkIsr": ("leader", "replica"),
    "LeaderWrite": ("replica", "id", "offset"),
    "LeaderIncHighWatermark": ("offset", "leader"),
    "BecomeFollowerTruncateToHighWatermark": ("leader", "replica", "request_epoch"),
    "BecomeFollowerTruncateKip101": ("leader", "replica", "request_epoch"),
    "BecomeFollowerTruncateKip279": ("leader", "replica", "request_epoch"),
    "FollowerReplicate": ("follower", "leader"),
    "FencedLeaderExpandIsr": ("leader", "follower"),
    "FencedLeaderShrinkIsr": ("leader", "follower"),
    "FencedLeaderIncHighWatermark": ("leader",),
    "FencedBecomeFollowerAndTruncate": ("leader", "replica", "request_epoch"),
    "FencedFollowerFetch": ("follower", "leader"),
}

_COMMON = ("ControllerElectLeader", "ControllerShrinkIsr", "BecomeLeader")
_BASE = ("LeaderExpandIsr", "LeaderShrinkIsr", "LeaderWrite", "LeaderIncHighWatermark")
NEXT: dict[str, tuple[str, ...]] = {
    "hw": _COMMON + _BASE + ("BecomeFollowerTruncateToHighWatermark", "FollowerReplicate"),
    "kip101": _COMMON + _BASE + ("BecomeFollowerTruncateKip101", "FollowerReplicate"),
    "kip279": _COMMON + _BASE + ("BecomeFollowerTruncateKip279", "FollowerReplicate"),
    "kip320": _COMMON
    + (
        "FencedLeaderExpandIsr",
        "FencedLeaderShrinkIsr",
        "LeaderWrite",
        "FencedLeaderIncHighWatermark",
        "FencedBecomeFollowerAndTruncate",
        "FencedFollowerFetch",
    ),
}

_TRUNCATE_ACTION = {
    "hw": "BecomeFollowerTruncateToHighWatermark",
    "kip101": "BecomeFollowerTruncateKip101",
    "kip279": "BecomeFollowerTruncateKip279",
}


def first_non_matching_offset_from_tail(leader_log: tuple, follower_log: tuple) -> int:
    """Kip279 ``FirstNonMatchingOffsetFromTail``: one past the highest offset at which
    the follower's record is also the leader's (``Max(MatchingOffsets) + 1``), else 0."""
    if not leader_log:
        return 0
    for offset in range(min(len(leader_log), len(follower_log)) - 1, -1, -1):
        if leader_log[offset] == follower_log[offset]:
            return offset + 1
    return 0


def lookup_offset_for_epoch(leader_log: tuple, follower_hw: int, epoch: int) -> int:
    """Kip101 ``LookupOffsetForEpoch``: the leader's end offset when its latest record
    has ``epoch``, else the first offset holding a larger epoch, else the follower's HW.
    (``Min`` over a set of offsets is its least element, as TLC's CHOOSE finds it.)"""
    if not leader_log:
        return follower_hw
    if record_epoch(leader_log[-1]) == epoch:
        return len(leader_log)
    for offset, record in enumerate(leader_log):
        if record_epoch(record) > epoch:
            return offset
    return follower_hw


class TlaKafkaSpec:
    """One variant of the spec with its constants (``Replicas`` is ``0 .. replicas-1``)."""

    def __init__(
        self, variant: str, replicas: int, log_size: int, max_records: int, max_leader_epoch: int
    ) -> None:
        if variant not in VARIANTS:
            raise ValueError(f"unknown variant {variant!r} (known: {', '.join(VARIANTS)})")
        if max_leader_epoch > EPOCH_MASK:
            raise ValueError(f"max_leader_epoch above {EPOCH_MASK} does not fit a record")
        self.variant = variant
        self.n = replicas
        self.log_size = log_size
        self.max_records = max_records
        self.max_leader_epoch = max_leader_epoch
        self.constants = (log_size, max_records, max_leader_epoch)
        self.ids = tuple(range(replicas))
        self.all_mask = (1 << replicas) - 1
        # members[mask]: the replicas of a set, ascending.
        self.members = tuple(
            tuple(r for r in self.ids if mask >> r & 1) for mask in range(1 << replicas)
        )
        self.kip320 = variant == "kip320"
        # Symmetry: every renaming of the replicas, with its maps of a replica id
        # (NONE, -1, stays NONE: the last entry) and of an ISR mask.
        self.renamings = tuple(itertools.permutations(self.ids))
        self._position = {}
        self._mask_map = {}
        for order in self.renamings:
            position = [NONE] * (replicas + 1)
            for new, old in enumerate(order):
                position[old] = new
            self._position[order] = tuple(position)
            self._mask_map[order] = tuple(
                sum(1 << position[r] for r in self.members[m]) for m in range(1 << replicas)
            )
        self._truncation_offset = {
            "hw": self._offset_hw,
            "kip101": self._offset_kip101,
            "kip279": self._offset_kip279,
            "kip320": None,
        }[variant]
        self._truncate_name = _TRUNCATE_ACTION.get(variant, "")
        self._dispatch = {
            "ControllerElectLeader": self._controller_elect_leader,
            "ControllerShrinkIsr": self._controller_shrink_isr,
            "BecomeLeader": self._become_leader,
            "LeaderExpandIsr": self._quorum_update_isr,
            "LeaderShrinkIsr": self._quorum_update_isr,
            "FencedLeaderExpandIsr": self._quorum_update_isr,
            "FencedLeaderShrinkIsr": self._quorum_update_isr,
            "LeaderWrite": self._leader_write,
            "LeaderIncHighWatermark": self._leader_inc_hw,
            "FencedLeaderIncHighWatermark": self._fenced_leader_inc_hw,
            "FollowerReplicate": self._replicate,
            "FencedFollowerFetch": self._replicate,
            "BecomeFollowerTruncateToHighWatermark": self._become_follower,
            "BecomeFollowerTruncateKip101": self._become_follower,
            "BecomeFollowerTruncateKip279": self._become_follower,
            "FencedBecomeFollowerAndTruncate": self._become_follower,
        }

    # ------------------------------------------------------------------ setup

    def init_states(self) -> list[TlaState]:
        """``Init``: empty logs, no epoch and no leader anywhere, every replica's cached
        ISR empty, the quorum ISR all replicas with no leader, no requests."""
        n = self.n
        return [
            TlaState(
                replica_log=((),) * n,
                replica_state=(ReplicaState(0, NIL, NONE, 0),) * n,
                next_record_id=0,
                next_leader_epoch=0,
                leader_and_isr_requests=(),
                quorum_state=QuorumState(NIL, NONE, self.all_mask),
                constants=self.constants,
            )
        ]

    # TLC's counts (the table) are without symmetry: the CLI turns it on on request.
    default_symmetry = False

    def representative(self, state: TlaState) -> TlaState:
        """The orbit's canonical member under ``Permutations(Replicas)``: the least renaming.

        This is TLC's ``SYMMETRY`` reduction made exact: every state of an orbit maps
        to the same member, so the distinct count is the number of orbits.  Replicas
        appear in the logs' and states' order, in the ``leader`` fields and in the
        ISR masks; record ids and epochs are not replica names and stay.
        """
        # Only renamings that list the replicas in order of what they hold (their own
        # log, HW and epoch, and their place in the quorum: facts no renaming changes)
        # can give the least member, so only those are built: one, unless two replicas
        # hold the same.  The choice depends on the orbit alone, so the result is exact.
        logs, states, q = state.replica_log, state.replica_state, state.quorum_state
        keys = [
            (logs[r], states[r].hw, states[r].leader_epoch, q.leader == r, q.isr >> r & 1)
            for r in self.ids
        ]
        order = tuple(sorted(self.ids, key=keys.__getitem__))
        if all(keys[a] < keys[b] for a, b in itertools.pairwise(order)):
            return state if order == self.ids else self._rename(state, order)
        ranked = [keys[r] for r in order]
        return min(
            self._rename(state, other)
            for other in self.renamings
            if [keys[r] for r in other] == ranked
        )

    def canonical(self, state: TlaState) -> TlaState:
        """Exact already: the representative."""
        return self.representative(state)

    def _rename(self, s: TlaState, order: tuple[int, ...]) -> TlaState:
        """``s`` with replica ``order[p]`` renamed ``p``."""
        position, mask = self._position[order], self._mask_map[order]
        logs, states, q = s.replica_log, s.replica_state, s.quorum_state
        return TlaState(
            tuple(logs[old] for old in order),
            tuple(
                ReplicaState(r.hw, r.leader_epoch, position[r.leader], mask[r.isr])
                for r in (states[old] for old in order)
            ),
            s.next_record_id,
            s.next_leader_epoch,
            tuple((position[leader], mask[isr]) for leader, isr in s.leader_and_isr_requests),
            QuorumState(q.leader_epoch, position[q.leader], mask[q.isr]),
            s.constants,
        )

    def action_kinds(self) -> tuple[str, ...]:
        """The disjuncts of this variant's ``Next``, in the spec's order."""
        return NEXT[self.variant]

    def action_params(self, action: Action) -> dict[str, int]:
        return dict(zip(ACTION_PARAMS[action.name], action.args, strict=True))

    # ---------------------------------------------------------- enabled actions

    def actions(self, s: TlaState) -> Iterator[Action]:
        """Every binding of each ``Next`` disjunct's quantifiers that satisfies its guards."""
        ids = self.ids
        members = self.members
        logs = s.replica_log
        rs = s.replica_state
        q = s.quorum_state
        requests = s.leader_and_isr_requests
        kip320 = self.kip320

        # ControllerElectLeader and ControllerShrinkIsr both need a fresh epoch
        # (ControllerUpdateIsr: LeaderEpochSeq!NextId).
        if s.next_leader_epoch <= self.max_leader_epoch:
            for new_leader in members[q.isr]:
                if new_leader != q.leader:
                    yield Action("ControllerElectLeader", (new_leader,))
            for replica in ids:
                # Disjuncts 1 and 2 (replica is the quorum leader) or 3 (an ISR member).
                if q.leader == replica or q.isr >> replica & 1:
                    yield Action("ControllerShrinkIsr", (replica,))

        # BecomeLeader: a request naming a leader, newer than that leader's epoch.
        for epoch, (leader, _isr) in enumerate(requests):
            if leader != NONE and epoch > rs[leader].leader_epoch:
                yield Action("BecomeLeader", (epoch,))

        for leader in ids:
            r = rs[leader]
            # Every action in this loop needs ReplicaPresumesLeadership(leader), which
            # Kip320's FencedLeaderIncHighWatermark does not always (see after the loop).
            if r.leader != leader:
                continue
            log = logs[leader]
            end = len(log)
            hw = r.hw
            # QuorumUpdateLeaderAndIsr: IsTrueLeader(leader).
            true_leader = q.leader == leader and r.leader_epoch == q.leader_epoch
            isr = r.isr
            if not kip320:
                if true_leader:
                    # LeaderShrinkIsr: ~IsFollowerCaughtUp(leader, replica, endOffset).
                    for replica in members[isr]:
                        if replica != leader and not (
                            rs[replica].leader == leader
                            and (end == 0 or end - 1 < len(logs[replica]))
                        ):
                            yield Action("LeaderShrinkIsr", (leader, replica))
                    # LeaderExpandIsr: IsFollowerCaughtUp(leader, replica, leaderHw).
                    for replica in members[self.all_mask & ~isr]:
                        if rs[replica].leader == leader and (
                            hw == 0 or (hw - 1 < end and hw - 1 < len(logs[replica]))
                        ):
                            yield Action("LeaderExpandIsr", (leader, replica))
                # LeaderIncHighWatermark: offset = hw \in Offsets, every ISR member
                # follows the leader and has that offset.
                if hw < self.log_size:
                    for f in members[isr]:
                        if rs[f].leader != leader or len(logs[f]) <= hw:
                            break
                    else:
                        yield Action("LeaderIncHighWatermark", (hw, leader))
            else:
                epoch = r.leader_epoch
                if true_leader:
                    # FencedLeaderShrinkIsr: not in the leader's epoch, or behind its end.
                    for f in members[isr]:
                        if f != leader:
                            rf = rs[f]
                            if (
                                rf.leader != leader
                                or rf.leader_epoch != epoch
                                or len(logs[f]) < end
                            ):
                                yield Action("FencedLeaderShrinkIsr", (leader, f))
                    # FencedLeaderExpandIsr: HasHighWatermarkReachedCurrentEpoch(leader)
                    # and, per follower, IsFollowingLeaderEpoch and
                    # HasFollowerReachedHighWatermark.
                    if hw == end or (hw < end and record_epoch(log[hw]) == epoch):
                        for f in members[self.all_mask & ~isr]:
                            rf = rs[f]
                            if (
                                rf.leader == leader
                                and rf.leader_epoch == epoch
                                and (hw == 0 or hw - 1 < len(logs[f]))
                            ):
                                yield Action("FencedLeaderExpandIsr", (leader, f))

            # LeaderWrite: RecordSeq!NextId(id) and Append at offset = endOffset.
            if s.next_record_id < self.max_records and end < self.log_size:
                yield Action("LeaderWrite", (leader, s.next_record_id, end))

            # FollowerReplicate / FencedFollowerFetch: ReplicateTo(leader, follower)
            # appends the leader's record at the follower's end offset.
            replicate = "FencedFollowerFetch" if kip320 else "FollowerReplicate"
            for f in ids:
                rf = rs[f]
                if (
                    f != leader
                    and rf.leader == leader
                    and len(logs[f]) < end
                    and (not kip320 or rf.leader_epoch == r.leader_epoch)
                ):
                    yield Action(replicate, (f, leader))

        if kip320:
            # FencedLeaderIncHighWatermark quantifies over any replica: leadership is
            # only checked through IsFollowingLeaderEpoch for each ISR member, so a
            # replica whose cached ISR is empty passes without presuming leadership.
            for leader in ids:
                r = rs[leader]
                hw = r.hw
                if hw >= len(logs[leader]):
                    continue
                isr = r.isr
                if isr and r.leader != leader:
                    continue
                for f in members[isr]:
                    rf = rs[f]
                    if (
                        rf.leader != leader
                        or rf.leader_epoch != r.leader_epoch
                        or len(logs[f]) <= hw
                    ):
                        break
                else:
                    yield Action("FencedLeaderIncHighWatermark", (leader,))

        # Becoming a follower: \E leader, replica \in Replicas and a request whose
        # leader is `leader`, so a request naming no leader (None) is never taken.
        for epoch, (leader, _isr) in enumerate(requests):
            if leader == NONE:
                continue
            for replica in ids:
                if replica == leader or epoch <= rs[replica].leader_epoch:
                    continue
                if kip320:
                    # FencedBecomeFollowerAndTruncate: the leader is in the request's epoch.
                    rl = rs[leader]
                    if rl.leader == leader and rl.leader_epoch == epoch:
                        yield Action("FencedBecomeFollowerAndTruncate", (leader, replica, epoch))
                elif self._truncation_offset(s, leader, replica) <= len(logs[replica]):
                    # TruncateTo: newEndOffset \leq endOffset.
                    yield Action(self._truncate_name, (leader, replica, epoch))

    # ------------------------------------------------------- truncation offsets

    def _offset_hw(self, s: TlaState, leader: int, replica: int) -> int:
        """BecomeFollowerTruncateToHighWatermark: the replica's own HW."""
        return s.replica_state[replica].hw

    def _offset_kip101(self, s: TlaState, leader: int, replica: int) -> int:
        """BecomeFollowerTruncateKip101: 0 for an empty log, else
        LookupOffsetForEpoch(leader, replica, epoch of the replica's latest record)."""
        log = s.replica_log[replica]
        if not log:
            return 0
        return lookup_offset_for_epoch(
            s.replica_log[leader], s.replica_state[replica].hw, record_epoch(log[-1])
        )

    def _offset_kip279(self, s: TlaState, leader: int, replica: int) -> int:
        """BecomeFollowerTruncateKip279: both disjuncts give 0 for an empty log;
        FirstNonMatchingOffsetFromTail(leader, replica) otherwise."""
        return first_non_matching_offset_from_tail(s.replica_log[leader], s.replica_log[replica])

    # ------------------------------------------------------------------ effects

    def next_state(self, s: TlaState, action: Action) -> TlaState:
        return self._dispatch[action.name](s, action.name, *action.args)

    def _controller_update_isr(self, s: TlaState, new_leader: int, new_isr: int) -> TlaState:
        """ControllerUpdateIsr: next epoch, new quorum state, the same added as a request."""
        epoch = s.next_leader_epoch
        return TlaState(
            s.replica_log,
            s.replica_state,
            s.next_record_id,
            epoch + 1,
            s.leader_and_isr_requests + ((new_leader, new_isr),),
            QuorumState(epoch, new_leader, new_isr),
            s.constants,
        )

    def _controller_elect_leader(self, s: TlaState, _name: str, new_leader: int) -> TlaState:
        return self._controller_update_isr(s, new_leader, s.quorum_state.isr)

    def _controller_shrink_isr(self, s: TlaState, _name: str, replica: int) -> TlaState:
        q = s.quorum_state
        bit = 1 << replica
        if q.leader == replica:
            if q.isr == bit:
                return self._controller_update_isr(s, NONE, q.isr)
            return self._controller_update_isr(s, NONE, q.isr & ~bit)
        return self._controller_update_isr(s, q.leader, q.isr & ~bit)

    def _become_leader(self, s: TlaState, _name: str, epoch: int) -> TlaState:
        leader, isr = s.leader_and_isr_requests[epoch]
        rs = list(s.replica_state)
        rs[leader] = ReplicaState(rs[leader].hw, epoch, leader, isr)
        return s._replace(replica_state=tuple(rs))

    def _quorum_update_isr(self, s: TlaState, _name: str, leader: int, replica: int) -> TlaState:
        """QuorumUpdateLeaderAndIsr: toggle `replica` in the ISR, in the quorum and in
        the leader's cached state (expand adds a non-member, shrink removes a member)."""
        rs = list(s.replica_state)
        r = rs[leader]
        new_isr = r.isr ^ (1 << replica)
        rs[leader] = ReplicaState(r.hw, r.leader_epoch, r.leader, new_isr)
        q = s.quorum_state
        return s._replace(
            replica_state=tuple(rs), quorum_state=QuorumState(q.leader_epoch, q.leader, new_isr)
        )

    def _leader_write(
        self, s: TlaState, _name: str, replica: int, rec_id: int, _offset: int
    ) -> TlaState:
        logs = list(s.replica_log)
        logs[replica] = logs[replica] + (
            make_record(rec_id, s.replica_state[replica].leader_epoch),
        )
        return s._replace(replica_log=tuple(logs), next_record_id=rec_id + 1)

    def _inc_hw(self, s: TlaState, leader: int) -> TlaState:
        rs = list(s.replica_state)
        r = rs[leader]
        rs[leader] = ReplicaState(r.hw + 1, r.leader_epoch, r.leader, r.isr)
        return s._replace(replica_state=tuple(rs))

    def _leader_inc_hw(self, s: TlaState, _name: str, _offset: int, leader: int) -> TlaState:
        return self._inc_hw(s, leader)

    def _fenced_leader_inc_hw(self, s: TlaState, _name: str, leader: int) -> TlaState:
        return self._inc_hw(s, leader)

    def _replicate(self, s: TlaState, _name: str, follower: int, leader: int) -> TlaState:
        """ReplicateTo(leader, follower), then follower HW := Min({leaderHw, newEndOffset})."""
        logs = list(s.replica_log)
        flog = logs[follower]
        offset = len(flog)
        logs[follower] = flog + (logs[leader][offset],)
        rs = list(s.replica_state)
        rf = rs[follower]
        hw = min(rs[leader].hw, offset + 1)
        rs[follower] = ReplicaState(hw, rf.leader_epoch, rf.leader, rf.isr)
        return s._replace(replica_log=tuple(logs), replica_state=tuple(rs))

    def _become_follower(
        self, s: TlaState, name: str, leader: int, replica: int, epoch: int
    ) -> TlaState:
        """BecomeFollowerAndTruncateTo / Kip320's FencedBecomeFollowerAndTruncate:
        TruncateTo(replica, offset), take the request's epoch, leader and ISR, and
        HW := Min({offset, hw})."""
        if self.kip320:
            offset = first_non_matching_offset_from_tail(
                s.replica_log[leader], s.replica_log[replica]
            )
        else:
            offset = self._truncation_offset(s, leader, replica)
        logs = list(s.replica_log)
        logs[replica] = logs[replica][:offset]
        rs = list(s.replica_state)
        _leader, isr = s.leader_and_isr_requests[epoch]
        rs[replica] = ReplicaState(min(offset, rs[replica].hw), epoch, leader, isr)
        return s._replace(replica_log=tuple(logs), replica_state=tuple(rs))
