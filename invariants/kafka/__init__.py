"""The Kafka model's invariants: ``predicates`` (the named safety properties, checked
on every state), ``lemmas`` (strengthening lemmas for k-induction) and ``symbolic``
(the properties as z3 terms)."""

from replcheck.invariants.kafka.predicates import INVARIANTS

__all__ = ["INVARIANTS"]
