"""What an invariant is: a named predicate over one state of a model.

The predicate returns ``None`` when the state satisfies it, or a one-sentence
explanation of what is wrong.  Every model's invariants (the Kafka model's in
``invariants.kafka``, the TLA+ spec's in ``invariants.tla``) are of this kind.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass

Verdict = str | None


@dataclass(frozen=True)
class Invariant:
    id: str
    description: str
    check: Callable[[Hashable], Verdict]
    # Checked when no --invariant is given.  Off for a property that is not about
    # durability and that releases break by design (see hw-monotonic).
    default: bool = True

    def __call__(self, state: Hashable) -> Verdict:
        return self.check(state)
