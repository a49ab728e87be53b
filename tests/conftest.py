"""Shared helpers: build models and run action sequences in a line."""

from __future__ import annotations

import pytest

from model import Action, KafkaReplication, make_config
from tests.stubs import ReachedSpark


def A(name: str, *args: int) -> Action:
    return Action(name, tuple(args))


@pytest.fixture
def model_for():
    def build(**values):
        return KafkaReplication(make_config(values))

    return build


@pytest.fixture
def no_spark(monkeypatch):
    """walk raises ReachedSpark where it would start a Spark session."""
    from checker import spark_walk

    def refuse(*_a: object, **_k: object) -> None:
        raise ReachedSpark

    monkeypatch.setattr(spark_walk, "start_session", refuse)
