"""Symmetry reduction: replicas are interchangeable, so explore one state per class.

The transition relation and the invariants do not depend on replica names, so a
violation in one member of a class (an *orbit*: the states that differ only by
a renaming of the replicas) is a violation, with renamed replicas, in every
member.  A search may therefore keep one state per orbit, and any function that
maps a state to a member of its own orbit is sound.

:func:`representative`, the one searches use, renames replicas so that they
appear sorted by what they hold (logs, HWs, roles...).  It is cheap but not
exact: the sort key includes the fields that name other replicas, which differ
between members of one orbit, so an orbit may keep more than one state.
:func:`canonical` is exact: every member of an orbit maps to the same state,
so a search reduced by it visits exactly one state per orbit.
"""

from __future__ import annotations

from functools import cache
from itertools import pairwise, permutations

from replcheck.model.kafka.state import NO_LEADER, Replica, State

# The Replica fields that name other replicas come last; renaming leaves the others
# (``replica[:NAMES_FROM]``) unchanged.
NAMES_FROM = len(Replica._fields) - 4
assert Replica._fields[NAMES_FROM:] == ("remote_leo", "isr", "pending_isr", "leader")


@cache
def _mask_table(order: tuple[int, ...]) -> tuple[int, ...]:
    """For a renaming (new position p holds old replica order[p]): old mask -> new mask."""
    n = len(order)
    table = []
    for mask in range(1 << n):
        new = 0
        for p, old in enumerate(order):
            if mask >> old & 1:
                new |= 1 << p
        table.append(new)
    return tuple(table)


@cache
def _positions(order: tuple[int, ...]) -> tuple[int, ...]:
    """For a renaming: old replica id -> new one.  One entry more than there are
    replicas, read as ``position[NO_LEADER]`` (index -1), keeps NO_LEADER as it is."""
    position = [0] * len(order) + [NO_LEADER]
    for p, old in enumerate(order):
        position[old] = p
    return tuple(position)


@cache
def _identity(n: int) -> tuple[int, ...]:
    return tuple(range(n))


def representative(s: State) -> State:
    """Rename replicas into ascending order of (controller role, replica tuple); the
    replica fields that name other replicas come last, so they matter least."""
    reps = s.replicas
    leader, isr, live = s.ctrl_leader, s.ctrl_isr, s.ctrl_live
    keys = [(i == leader, isr >> i & 1, live >> i & 1, r) for i, r in enumerate(reps)]
    n = len(reps)
    for k in range(n - 1):  # fast path: already in order, nothing to rename
        if not keys[k] <= keys[k + 1]:
            break
    else:
        return s
    order = tuple(sorted(range(n), key=keys.__getitem__))
    return rename(s, order)


def canonical(s: State) -> State:
    """The orbit's canonical member: exact symmetry reduction.

    Of the renamings of ``s``, only those that list the replicas in ascending
    order of what renaming does not change (their controller roles and the
    replica fields that name no replica) are built, and the least of them (as
    tuples compare) is the answer.  Those renamings give the same set of states
    from every member of the orbit, so every member gets the same answer.
    Usually no two replicas tie on that key and exactly one renaming is built.
    """
    reps = s.replicas
    leader, isr, live, elr = s.ctrl_leader, s.ctrl_isr, s.ctrl_live, s.ctrl_elr
    keys = [
        (i == leader, isr >> i & 1, live >> i & 1, elr >> i & 1, r[:NAMES_FROM])
        for i, r in enumerate(reps)
    ]
    n = len(reps)
    order = tuple(sorted(range(n), key=keys.__getitem__))
    if all(keys[a] < keys[b] for a, b in pairwise(order)):  # no ties: one renaming sorts
        return s if order == _identity(n) else rename(s, order)
    ranked = [keys[i] for i in order]
    return min(rename(s, other) for other in all_renamings(n) if [keys[i] for i in other] == ranked)


def rename(s: State, order: tuple[int, ...]) -> State:
    """The same state with replica ``order[p]`` renamed to ``p``."""
    table = _mask_table(order)
    position = _positions(order)
    replicas = []
    for old in order:
        r = s.replicas[old]
        remote = r.remote_leo
        # Only the last fields name replicas; the others are kept as they are.
        replicas.append(
            Replica._make(
                r[:NAMES_FROM]
                + (
                    tuple([remote[o] for o in order]) if remote else remote,
                    table[r.isr],
                    table[r.pending_isr],
                    position[r.leader],
                )
            )
        )
    return s.replace(
        ctrl_leader=position[s.ctrl_leader],
        ctrl_isr=table[s.ctrl_isr],
        ctrl_live=table[s.ctrl_live],
        ctrl_elr=table[s.ctrl_elr],
        alter_requests=tuple(
            [
                (position[sender], epoch, ok, table[isr], table[restarted])
                for sender, epoch, ok, isr, restarted in s.alter_requests
            ]
        ),
        ctrl_history=tuple([(position[lead], table[isr]) for lead, isr in s.ctrl_history]),
        replicas=tuple(replicas),
    )


@cache
def all_renamings(n: int) -> tuple[tuple[int, ...], ...]:
    """Every renaming of ``n`` replicas."""
    return tuple(permutations(range(n)))
