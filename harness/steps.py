"""A model trace as the harness's steps: each action in Kafka's terms, and the glue.

Kafka's controller makes its choices by the partition's replica order: a crashed
leader's successor is the first valid replica in that order
(PartitionChangeBuilder.electAnyLeader), a preferred election elects the first
replica (electPreferredLeader).  The model chooses freely among the same candidates.
So before a run the order is solved for: one initial order (the model's first leader,
r0, first), and a reassignment that only reorders the replicas before each ``elect``
of a replica that is not first, each order chosen so that every crash notice and
fence up to the next reorder elects the model's choice.  Where no order does, the
step is marked and the harness reports the controller's own choice there
(``choice_mismatch``): a choice Kafka cannot make.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import permutations
from typing import Any

from replcheck.model.interface import Action
from replcheck.model.kafka.replication import KafkaReplication
from replcheck.model.kafka.state import NO_LEADER, State, members


@dataclass
class Plan:
    """The harness's input for one trace, and how its ops map to the model's steps.

    ``step_of[k]`` is the model step (1-based) op ``k`` (0-based) carries out, or
    None for glue the harness adds (a reorder)."""

    assignment: list[int]
    ops: list[dict[str, Any]]
    step_of: list[int | None]
    notes: list[str] = field(default_factory=list)


def _constraint(model: KafkaReplication, s: State, action: Action) -> tuple[int, list[int]] | None:
    """(choice, rivals): the model's choice must come before its rivals in the order."""
    if action.name not in ("notice_crash", "fence"):
        return None
    replica, new_leader = action.args
    choices = [c for c in model._failover_choices(s, replica) if c != NO_LEADER]
    if new_leader == NO_LEADER or len(choices) < 2:
        return None
    return new_leader, [c for c in choices if c != new_leader]


def _satisfies(order: tuple[int, ...], needs: list[tuple[int, list[int]]]) -> bool:
    place = {r: k for k, r in enumerate(order)}
    return all(place[choice] < place[r] for choice, rivals in needs for r in rivals)


def _is_preferred_election(s: State, action: Action) -> bool:
    """``elect`` of an ISR member (a preferred election), not the ELR's last-known-leader
    recovery of a leaderless partition with an empty ISR."""
    return action.name == "elect" and bool(s.ctrl_isr >> action.args[0] & 1)


def plan(model: KafkaReplication, steps: list[tuple[Action | None, State]]) -> Plan:
    """The ops for ``steps`` (as ``traces.replay.execute`` returns them)."""
    n = model.n
    # Segments: the steps under one replica order, each opened by a preferred election.
    heads: list[tuple[int, int]] = [(0, 0)]  # (first step of the segment, its first replica)
    needs: list[list[tuple[int, list[int]]]] = [[]]
    for k in range(1, len(steps)):
        action, before = steps[k][0], steps[k - 1][1]
        assert action is not None
        if _is_preferred_election(before, action):
            heads.append((k, action.args[0]))
            needs.append([])
        found = _constraint(model, before, action)
        if found:
            needs[-1].append(found)
    orders: list[tuple[int, ...] | None] = []
    notes: list[str] = []
    previous: tuple[int, ...] | None = None
    for (start, head), need in zip(heads, needs, strict=True):
        if previous is not None and previous[0] == head and _satisfies(previous, need):
            orders.append(previous)  # no reorder needed
            continue
        candidates = [p for p in permutations(range(n)) if p[0] == head]
        fitting = [p for p in candidates if _satisfies(p, need)]
        if not fitting:
            notes.append(
                f"step {start or 1}: no replica order makes Kafka's controller make every choice "
                "the model makes up to the next election; the harness reports Kafka's own"
            )
            fitting = candidates
        chosen = fitting[0]
        orders.append(chosen)
        previous = chosen
    ops: list[dict[str, Any]] = []
    step_of: list[int | None] = []
    segment = 0
    for k in range(1, len(steps)):
        action, before = steps[k][0], steps[k - 1][1]
        assert action is not None
        if _is_preferred_election(before, action):
            segment += 1
            if orders[segment] != orders[segment - 1]:
                ops.append({"op": "reorder", "replicas": list(orders[segment])})
                step_of.append(None)
        later = action.name == "fetch_request" and _replays_later(steps, k, action.args[1])
        ops.append(_op(action, before, steps[k][1], later))
        step_of.append(k)
    return Plan(list(orders[0] or range(n)), ops, step_of, notes)


def _let_pass(after: State) -> dict[str, list[int]]:
    """Per leader (as its broker believes), the followers it does not count for its HW
    after the step: outside its ISR and pending change.  Kafka's leader counts such a
    follower too while it caught up within replica.lag.time.max.ms; the model has no
    clock, so the harness lets that much time pass (harness/jvm Cluster.letHwPass)."""
    out: dict[str, list[int]] = {}
    for i, r in enumerate(after.replicas):
        if r.alive and r.leader == i:
            outside = [
                f for f in range(len(after.replicas)) if f != i and not r.maximal_isr >> f & 1
            ]
            if outside:
                out[str(i)] = outside
    return out


def _replays_later(steps: list[tuple[Action | None, State]], k: int, leader: int) -> bool:
    """Whether, from step ``k`` on, ``leader`` replays the record it owes now
    (``reapply_isr``) before it stops owing it."""
    for j in range(k + 1, len(steps)):
        action, before = steps[j][0], steps[j - 1][1]
        if not before.replicas[leader].record_owed:
            return False
        if action is not None and action.name == "reapply_isr" and action.args[0] == leader:
            return True
    return False


def _op(action: Action, before: State, after: State, replays_later: bool = False) -> dict[str, Any]:
    """One model action as the harness's op."""
    name, args = action.name, action.args
    op: dict[str, Any] = {"op": name}
    passing = _let_pass(after)
    if passing:
        op["let_pass"] = passing
    if name == "write":
        op.update(leader=args[0], id=before.written + 1)
    elif name in ("fetch_request", "epoch_request", "fetch", "truncate"):
        op.update(follower=args[0], leader=args[1])
        follower, leader = args
        if not before.replicas[leader].maximal_isr >> follower & 1 and (
            after.replicas[leader].maximal_isr >> follower & 1
        ):
            # The model's leader adds the follower: Kafka's leader must know its current
            # registration (harness/jvm Cluster.learnBrokers).
            # Where the trace replays the record of a change the leader adopted
            # (``reapply_isr``) later, that record must stay unapplied till then.
            op["leader_learns_brokers"] = "brokers" if replays_later else "all"
    elif name in ("fetch_response", "epoch_response", "diverging_truncate"):
        op.update(follower=args[0])
    elif name == "shrink_isr":
        op.update(leader=args[0], follower=args[1])
    elif name == "shrink_isr_set":
        op.update(leader=args[0], followers=members(args[1]))
    elif name in ("alter_isr", "apply_isr", "reapply_isr", "elect"):
        op.update(leader=args[0])
    elif name == "crash":
        op.update(replica=args[0], keep=args[1])
    elif name in ("notice_crash", "fence"):
        op.update(replica=args[0], new_leader=args[1])
    elif name == "deliver":
        replica = args[0]
        # A broker the controller saw come back is owed the current state: in KRaft its
        # metadata is rebuilt from the log, so it learns everything at once.
        if before.replicas[replica].epoch == 0:
            op["op"] = "deliver_latest"
        op.update(replica=replica)
    else:
        op.update(replica=args[0])
    return op
