"""Shared helpers: build models and run action sequences in a line."""

from __future__ import annotations

import pytest

from model import Action, KafkaReplication, make_config


def A(name: str, *args: int) -> Action:
    return Action(name, tuple(args))


@pytest.fixture
def model_for():
    def build(**values):
        return KafkaReplication(make_config(values))

    return build
