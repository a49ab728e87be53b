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

from model.state import NO_LEADER, State


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
            r.replace(
                remote_leo=tuple(remote[o] for o in order) if remote else remote,
                isr=table[r.isr],
                pending_isr=table[r.pending_isr],
                leader=position[r.leader] if r.leader != NO_LEADER else NO_LEADER,
            )
        )
    leader = s.ctrl_leader
    return s.replace(
        ctrl_leader=position[leader] if leader != NO_LEADER else NO_LEADER,
        ctrl_isr=table[s.ctrl_isr],
        ctrl_live=table[s.ctrl_live],
        ctrl_elr=table[s.ctrl_elr],
        alter_requests=tuple(
            (position[sender], epoch, ok, table[isr], table[restarted])
            for sender, epoch, ok, isr, restarted in s.alter_requests
        ),
        ctrl_history=tuple(
            (position[lead] if lead != NO_LEADER else NO_LEADER, table[isr])
            for lead, isr in s.ctrl_history
        ),
        replicas=tuple(replicas),
    )


def all_renamings(n: int) -> list[tuple[int, ...]]:
    """Every renaming of ``n`` replicas (for tests that check verdicts are unchanged)."""
    return list(permutations(range(n)))
