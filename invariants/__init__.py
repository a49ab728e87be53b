"""Named invariants, checked on every reachable state."""

from __future__ import annotations

from collections.abc import Iterable

from invariants.kafka import INVARIANTS, Invariant

__all__ = ["INVARIANTS", "Invariant", "UnknownInvariant", "select"]


class UnknownInvariant(ValueError):
    """An invariant id that does not exist; the message lists the known ones."""


def select(ids: Iterable[str] | None) -> tuple[Invariant, ...]:
    """The invariants with these ids, in registry order; the default ones for None or empty
    (``all`` selects every invariant)."""
    wanted = list(ids or [])
    if not wanted:
        return tuple(inv for inv in INVARIANTS if inv.default)
    if "all" in wanted:
        return INVARIANTS
    known = {inv.id for inv in INVARIANTS}
    for inv_id in wanted:
        if inv_id not in known:
            raise UnknownInvariant(
                f"unknown invariant {inv_id!r} (known: {', '.join(sorted(known))})"
            )
    return tuple(inv for inv in INVARIANTS if inv.id in wanted)
