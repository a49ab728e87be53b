"""Choosing and bounding the TLA+ reference spec (``model.tla.spec``) from the command line.

The spec's constants are its bounds: ``Replicas`` (as a count), ``LogSize``,
``MaxRecords`` and ``MaxLeaderEpoch``.  ``--model tla-kip320`` and friends select
a variant; the Kafka model's keys mean nothing to it and are refused.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from replcheck.model.kafka.config import ConfigError
from replcheck.model.tla.spec import EPOCH_MASK, TlaKafkaSpec

KAFKA_MODEL = "kafka"
# --model name -> the spec module it follows (hachikuji/kafka-specification).
SPEC_MODELS: dict[str, tuple[str, str]] = {
    "tla-hw": ("hw", "KafkaTruncateToHighWatermark"),
    "tla-kip101": ("kip101", "Kip101"),
    "tla-kip279": ("kip279", "Kip279"),
    "tla-kip320": ("kip320", "Kip320"),
}
MODEL_NAMES = (KAFKA_MODEL, *SPEC_MODELS)
SPEC_KEYS = ("replicas", "log_size", "max_records", "max_leader_epoch")
_LIMITS = {
    "replicas": (1, 5),
    "log_size": (1, 8),
    "max_records": (1, 8),
    "max_leader_epoch": (0, EPOCH_MASK),
}


@dataclass(frozen=True)
class SpecConfig:
    """One variant of the spec with its constants (defaults: the issue's TLC runs)."""

    model: str = "tla-kip320"
    replicas: int = 2
    log_size: int = 2
    max_records: int = 2
    max_leader_epoch: int = 3

    @property
    def module(self) -> str:
        return SPEC_MODELS[self.model][1]

    def describe(self) -> str:
        return (
            f"model={self.model} ({self.module}.tla) replicas={self.replicas} "
            f"LogSize={self.log_size} MaxRecords={self.max_records} "
            f"MaxLeaderEpoch={self.max_leader_epoch}"
        )

    def to_dict(self) -> dict[str, Any]:
        """The keys :func:`make_spec_config` reads back (an ITF trace's ``#meta.config``)."""
        return asdict(self)

    def build(self) -> TlaKafkaSpec:
        variant = SPEC_MODELS[self.model][0]
        return TlaKafkaSpec(
            variant, self.replicas, self.log_size, self.max_records, self.max_leader_epoch
        )


def make_spec_config(values: dict[str, Any], where: str = "") -> SpecConfig:
    """A validated SpecConfig from loose keys (``model`` plus :data:`SPEC_KEYS`)."""
    model = values.get("model", "tla-kip320")
    if model not in SPEC_MODELS:
        known = ", ".join(SPEC_MODELS)
        raise ConfigError(f"{where}model: expected one of {known} (got {model!r})")
    out: dict[str, Any] = {"model": model}
    for key, value in values.items():
        if key == "model":
            continue
        if key not in SPEC_KEYS:
            raise ConfigError(
                f"{where}{key}: not a key of the TLA+ spec models (they take "
                f"{', '.join(SPEC_KEYS)})"
            )
        low, high = _LIMITS[key]
        if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
            raise ConfigError(f"{where}{key}: expected a whole number {low}-{high} (got {value!r})")
        out[key] = value
    return SpecConfig(**out)
