"""Kafka partition replication as a transition system (states, actions, modes)."""

from model.config import MODES, Config, ConfigError, make_config
from model.interface import Action, Model
from model.kafka import ACTION_PARAMS, KafkaReplication

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
