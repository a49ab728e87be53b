"""The models replcheck checks, each a transition system behind ``model.interface``.

- ``kafka``: Kafka's partition replication, release by release (the product);
  its z3 encoding is ``kafka.symbolic``.
- ``tla``: the TLA+ reference spec (hachikuji/kafka-specification), as TLC sees it.

``registry`` maps a configuration to its model.  The Kafka model's main names are
re-exported here for convenience.
"""

from replcheck.model.interface import Action, Model
from replcheck.model.kafka import (
    ACTION_PARAMS,
    MODES,
    Config,
    ConfigError,
    KafkaReplication,
    make_config,
)

__all__ = [
    "ACTION_PARAMS",
    "MODES",
    "Action",
    "Config",
    "ConfigError",
    "KafkaReplication",
    "Model",
    "make_config",
]
