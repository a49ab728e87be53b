"""Symmetry reduction: replicas are interchangeable, so explore one state per class.

:func:`representative` renames replicas so that they appear sorted by what
they hold (logs, HWs, roles...).  Any state maps to a member of its own class,
which is all soundness needs: the transition relation and the invariants do
not depend on replica names, so a violation in one member of a class is a
violation (with renamed replicas) in every member.  Ties between replicas that
differ only in whom they point at keep their original order; the reduction is
then merely less than maximal, never wrong.
"""

from __future__ import annotations

from functools import cache
from itertools import permutations

from model.state import NO_LEADER, Replica, State


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
def _identity(n: int) -> list[int]:
    return list(range(n))


def _key(s: State, i: int, r: Replica) -> tuple:
    """Everything about replica ``i`` that does not name another replica."""
    return (
        s.ctrl_leader == i,
        s.ctrl_isr >> i & 1,
        s.ctrl_live >> i & 1,
        r.alive,
        r.leader == i,
        r.epoch,
        r.log,
        r.hw,
        r.hw_checkpoint,
        r.truncation,
        r.unwritten_epoch,
        r.pending,
        len(r.remote_leo),
    )


def representative(s: State) -> State:
    reps = s.replicas
    n = len(reps)
    order = sorted(range(n), key=[_key(s, i, r) for i, r in enumerate(reps)].__getitem__)
    if order == _identity(n):
        return s
    return rename(s, tuple(order))


def rename(s: State, order: tuple[int, ...]) -> State:
    """The same state with replica ``order[p]`` renamed to ``p``."""
    table = _mask_table(order)
    position = [0] * len(order)
    for p, old in enumerate(order):
        position[old] = p
    replicas = []
    for old in order:
        r = s.replicas[old]
        remote = r.remote_leo
        replicas.append(
            Replica(
                r.alive,
                r.epoch,
                position[r.leader] if r.leader != NO_LEADER else NO_LEADER,
                r.log,
                r.hw,
                r.hw_checkpoint,
                table[r.isr],
                tuple(remote[o] for o in order) if remote else remote,
                r.truncation,
                r.unwritten_epoch,
                r.pending,
            )
        )
    leader = s.ctrl_leader
    return State(
        position[leader] if leader != NO_LEADER else NO_LEADER,
        s.ctrl_epoch,
        table[s.ctrl_isr],
        table[s.ctrl_live],
        s.written,
        s.crashes,
        s.committed,
        s.acked,
        tuple(replicas),
    )


def all_renamings(n: int) -> list[tuple[int, ...]]:
    """Every renaming of ``n`` replicas (for tests that check verdicts are unchanged)."""
    return list(permutations(range(n)))
