"""The TLA+ reference spec (hachikuji/kafka-specification) as a transition system:
``spec`` holds the model, ``config`` its constants and variants (``--model tla-*``)."""

from replcheck.model.tla.config import SpecConfig, make_spec_config
from replcheck.model.tla.spec import TlaKafkaSpec

__all__ = ["SpecConfig", "TlaKafkaSpec", "make_spec_config"]
