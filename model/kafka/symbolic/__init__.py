"""The Kafka model as z3 terms, for bounded model checking and k-induction.

:class:`KafkaSymbolic` (``replication``) is the symbolic twin of the explicit
:class:`model.kafka.replication.KafkaReplication`; its encoding of states is in
``state``, and the other modules mirror the explicit model's, one for one.
"""

from replcheck.model.kafka.symbolic.replication import KafkaSymbolic
from replcheck.model.kafka.symbolic.state import EncodingError, Layout, SymReplica, SymState

__all__ = ["EncodingError", "KafkaSymbolic", "Layout", "SymReplica", "SymState"]
