"""Keyword options, checked: a model configuration, invariants and search limits.

The Python API and the command line take the same options; each wrong one is an
``InputError`` whose one-line message names the option (``name``) and the problem,
raised before any search starts.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from replcheck.checker.explicit.bfs import default_memory_budget
from replcheck.checker.explicit.parallel_bfs import max_workers
from replcheck.invariants import Invariant, registry, select
from replcheck.model.errors import InputError
from replcheck.model.kafka.config import Config, load_config_file
from replcheck.model.registry import AnyConfig, config_from_dict
from replcheck.model.tla.config import SpecConfig

# ``memory=DEFAULT_MEMORY``: 80% of this machine's memory, as the command line does.
DEFAULT_MEMORY = "default"
MIN_MEMORY = 64 * 2**20
_UNITS = {"": 2**20, "k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40}


def model_config(config: Any = None, options: Mapping[str, Any] | None = None) -> AnyConfig:
    """The validated configuration of a run.

    ``config`` is None (the defaults), a TOML file's path (its model keys), a mapping of
    model keys, or a configuration already built; ``options`` (the keys of the TOML
    file, such as ``kafka="2.1.0"``, ``replicas=3``) override it.
    """
    options = dict(options or {})
    where = ""  # what an error names: the file, when its values alone are wrong
    if isinstance(config, Config | SpecConfig):
        if not options:
            return config
        values = config.to_dict()
        if isinstance(config, SpecConfig) and options.get("model", config.model) != config.model:
            values = {"model": options["model"]}
    elif isinstance(config, str | Path):
        values = load_config_file(config)
        where = "" if options else f"{config}: "
    elif isinstance(config, Mapping):
        values = dict(config)
    elif config is None:
        values = {}
    else:
        raise InputError(
            f"config: expected a TOML file's path, a mapping of model keys or a "
            f"configuration (got {type(config).__name__})"
        )
    if "kafka" in options or "mode" in options:  # a release given names the release
        values.pop("kafka", None)
        values.pop("mode", None)
    values.update(options)
    return config_from_dict(values, where)


def invariants_of(config: AnyConfig, ids: str | Iterable[str] | None) -> tuple[Invariant, ...]:
    """The invariants ``ids`` names (one id, several, ``"all"``; None: the defaults)."""
    if isinstance(ids, str):
        ids = [ids]
    elif ids is not None:
        ids = list(ids)
        bad = next((i for i in ids if not isinstance(i, str)), None)
        if bad is not None:
            raise InputError(f"invariants: expected invariant ids (got {bad!r})")
    return select(ids, registry(config))


def at_least(value: Any, minimum: int, name: str) -> int:
    """A whole number >= ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise InputError(f"{name}: expected a whole number (got {value!r})")
    if value < minimum:
        raise InputError(f"{name}: must be at least {minimum} (got {value})")
    return value


def positive_int(value: Any, name: str, *, optional: bool = True) -> int | None:
    """A whole number >= 1 (None allowed where ``optional``)."""
    return None if value is None and optional else at_least(value, 1, name)


def whole_number(value: Any, name: str) -> int:
    """A whole number >= 0."""
    return at_least(value, 0, name)


def seconds(value: Any, name: str = "timeout") -> float | None:
    """A positive, finite number of seconds, or None (no limit)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InputError(f"{name}: expected a number of seconds (got {value!r})")
    if not math.isfinite(value) or value <= 0:
        raise InputError(f"{name}: expected a positive number of seconds (got {value!r})")
    return float(value)


def memory_size(text: str, name: str = "memory") -> int:
    """Bytes from '512M', '4G', '1.5g' or a plain number of MiB (at least 64M)."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kmgt]?)i?b?\s*", text.lower())
    if not match:
        sign = " (a size cannot be negative)" if text.strip().startswith("-") else ""
        raise InputError(f"{name}: expected a size such as 512M or 4G, got {text!r}{sign}")
    value = int(float(match.group(1)) * _UNITS[match.group(2)])
    if value < MIN_MEMORY:
        raise InputError(f"{name}: must be at least 64M, got {text!r}")
    return value


def memory(value: Any, name: str = "memory") -> int | None:
    """The memory budget: bytes (an int), a size such as ``"4G"``, ``"default"`` (80% of
    this machine's memory) or None (no limit)."""
    if value is None:
        return None
    if isinstance(value, str):
        return default_memory_budget() if value == DEFAULT_MEMORY else memory_size(value, name)
    if isinstance(value, bool) or not isinstance(value, int):
        raise InputError(f"{name}: expected bytes or a size such as 4G (got {value!r})")
    if value < MIN_MEMORY:
        raise InputError(f"{name}: must be at least 64M (got {value} bytes)")
    return value


def workers(value: Any, name: str = "workers") -> int:
    """Worker processes: at least 1, at most what this machine can open (see
    :func:`checker.explicit.parallel_bfs.max_workers`)."""
    count = positive_int(value, name, optional=False)
    assert count is not None
    most = max_workers()
    if count > most:
        raise InputError(
            f"{name}: at most {most} on this machine (got {count}): every pair of workers "
            "needs its own pipe, and the open-file limit allows no more"
        )
    return count
