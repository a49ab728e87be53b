"""Kafka's partition replication as a transition system.

- ``state``: the immutable state (replicas, controller, ghost history).
- ``replication``: ``KafkaReplication``, the model: enabled actions and their effects,
  built from ``broker`` (a replica's rules), ``controller`` (elections, ISR changes),
  ``messages`` (requests and responses in flight) and ``epochs`` (leader-epoch caches).
- ``releases``: what differs between Kafka releases, one row per behaviour with its
  KIP or JIRA; ``config``: the bounds and options a run is given.
- ``symmetry``: replicas are interchangeable; ``symbolic``: the same model as z3 terms.
"""

from replcheck.model.kafka.config import MODES, Config, ConfigError, make_config
from replcheck.model.kafka.replication import ACTION_PARAMS, KafkaReplication

__all__ = ["ACTION_PARAMS", "MODES", "Config", "ConfigError", "KafkaReplication", "make_config"]
