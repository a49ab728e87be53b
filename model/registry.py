"""Which model a configuration belongs to: the Kafka model, or the TLA+ reference spec.

The checker and the trace tools hold a configuration and need the model it
describes; this is the one place that knows both kinds.  A configuration
dictionary (a TOML file, an ITF trace's ``#meta.config``) names the spec with a
``model`` key; without one it is the Kafka model's.
"""

from __future__ import annotations

from typing import Any

from replcheck.model.interface import Model
from replcheck.model.kafka.config import Config, make_config
from replcheck.model.kafka.replication import (
    ACTION_DOCS,
    KafkaReplication,
    config_action_params,
)
from replcheck.model.tla.config import KAFKA_MODEL, SpecConfig, make_spec_config
from replcheck.model.tla.spec import ACTION_PARAMS as SPEC_ACTION_PARAMS

AnyConfig = Config | SpecConfig


def config_from_dict(values: dict[str, Any], where: str = "") -> AnyConfig:
    """The validated configuration these keys describe (ConfigError otherwise)."""
    model = values.get("model", KAFKA_MODEL)
    if model == KAFKA_MODEL:
        return make_config({k: v for k, v in values.items() if k != "model"}, where)
    return make_spec_config(values, where)


def build_model(config: AnyConfig) -> Model:
    return config.build() if isinstance(config, SpecConfig) else KafkaReplication(config)


def action_params(config: AnyConfig) -> dict[str, tuple[str, ...]]:
    """Each action name of the configuration's model with its parameter names."""
    if isinstance(config, SpecConfig):
        return SPEC_ACTION_PARAMS
    return config_action_params(config)


def action_docs(config: AnyConfig) -> dict[str, str]:
    """A one-line description of each action of the configuration's model, where it has
    them (the TLA+ spec's actions are named after the spec's and have none here)."""
    if isinstance(config, SpecConfig):
        return {}
    return {name: ACTION_DOCS[name] for name in config_action_params(config)}
