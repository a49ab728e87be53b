"""Named invariants, checked on every reachable state."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from replcheck.invariants.interface import Invariant
from replcheck.invariants.kafka.predicates import INVARIANTS
from replcheck.invariants.tla import TLA_INVARIANTS
from replcheck.model.errors import InputError
from replcheck.model.tla.config import SpecConfig

__all__ = ["INVARIANTS", "TLA_INVARIANTS", "Invariant", "UnknownInvariant", "registry", "select"]


def registry(config: object) -> tuple[Invariant, ...]:
    """The invariants of the model ``config`` describes."""
    return TLA_INVARIANTS if isinstance(config, SpecConfig) else INVARIANTS


class UnknownInvariant(InputError):
    """An invariant id that does not exist; the message lists the known ones."""


def select(
    ids: Iterable[str] | None, registry: Sequence[Invariant] = INVARIANTS
) -> tuple[Invariant, ...]:
    """The invariants of ``registry`` (the Kafka model's unless told) with these ids, in
    registry order; the default ones for None or empty (``all`` selects every one)."""
    wanted = list(ids or [])
    if not wanted:
        return tuple(inv for inv in registry if inv.default)
    known = {inv.id for inv in registry}
    for inv_id in wanted:
        if inv_id not in known and inv_id != "all":
            raise UnknownInvariant(
                f"unknown invariant {inv_id!r} (known: all, {', '.join(sorted(known))})"
            )
    if "all" in wanted:
        return tuple(registry)
    return tuple(inv for inv in registry if inv.id in wanted)
