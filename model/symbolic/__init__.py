"""The Kafka model as z3 terms, for bounded model checking and k-induction.

:class:`KafkaSymbolic` is the symbolic twin of :class:`model.kafka.KafkaReplication`
(see model/symbolic/kafka.py); its encoding of states is in model/symbolic/state.py.
"""

from model.symbolic.kafka import KafkaSymbolic
from model.symbolic.state import EncodingError, Layout, SymReplica, SymState

__all__ = ["EncodingError", "KafkaSymbolic", "Layout", "SymReplica", "SymState"]
