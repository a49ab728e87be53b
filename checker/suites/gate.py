"""The CI invariant gate: named checks, each with the outcome it must keep having.

A gate file is TOML with one ``[[check]]`` table per check::

    [[check]]
    name = "hw loses committed data"       # required, unique
    mode = "hw"                            # model keys as in `check --config` ...
    # model = "tla-kip320"                 # ... or the TLA+ spec, with replicas, log_size,
    #                                      #     max_records, max_leader_epoch
    config = "bounds.toml"                 # ... or a file of them (relative to the gate file)
    engine = "bfs"                         # or "walk" (with walks, depth, seed, swarm)
    invariants = ["no-committed-data-loss"]  # default: all
    timeout = 60                           # seconds (optional)
    expect = "violates:no-committed-data-loss"   # or "holds"

A negative control (a mode known to break a property) guards against a model
change that makes the checker blind: if it stops failing, the gate fails.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from replcheck.checker.explicit.bfs import SearchResult, Step, Violation, bfs, default_memory_budget
from replcheck.invariants import Invariant, UnknownInvariant, registry, select
from replcheck.model.errors import InputError
from replcheck.model.kafka.config import ConfigError, load_config_file, read_toml
from replcheck.model.registry import AnyConfig, build_model, config_from_dict
from replcheck.traces.replay import execute

ENGINES = ("bfs", "walk")
GATE_KEYS = {
    "name",
    "config",
    "engine",
    "invariants",
    "timeout",
    "expect",
    "walks",
    "depth",
    "seed",
    "swarm",
    "max_states",
}
WALK_DEFAULTS = {"walks": 1000, "depth": 50, "seed": 0}


class GateError(InputError):
    """A gate file is wrong; the message names the file, the check and the key."""


@dataclass(frozen=True)
class GateCheck:
    name: str
    config: AnyConfig
    engine: str
    invariants: tuple[Invariant, ...]
    expect: str  # "holds" or "violates:<id>"
    timeout: float | None = None
    max_states: int | None = None
    walks: int = WALK_DEFAULTS["walks"]
    depth: int = WALK_DEFAULTS["depth"]
    seed: int = WALK_DEFAULTS["seed"]
    swarm: bool = False


@dataclass
class GateOutcome:
    """What one check found, and whether that is what it expected."""

    check: GateCheck
    got: str  # "holds", "violates:a,b", "timeout", "incomplete"
    passed: bool
    detail: str
    seconds: float
    violations: dict[str, Violation] = field(default_factory=dict)
    states: int = 0
    saved: dict[str, str] = field(default_factory=dict)  # invariant id -> trace file


def load_gate(path: str | Path) -> list[GateCheck]:
    path = Path(path)
    data = read_toml(path, GateError)
    unknown = set(data) - {"check"}
    if unknown:
        raise GateError(
            f"{path}: unknown top-level key {sorted(unknown)[0]!r} (expected [[check]])"
        )
    tables = data.get("check")
    if not isinstance(tables, list) or not tables:
        raise GateError(f"{path}: no [[check]] tables")
    checks, names = [], set()
    for index, table in enumerate(tables, start=1):
        if not isinstance(table, dict):
            raise GateError(f"{path}: check {index}: expected a [[check]] table, got {table!r:.40}")
        check = _parse_check(path, index, table)
        if check.name in names:
            raise GateError(f"{path}: check {index}: duplicate name {check.name!r}")
        names.add(check.name)
        checks.append(check)
    return checks


def _parse_check(path: Path, index: int, table: dict[str, Any]) -> GateCheck:
    name = table.get("name")
    where = f"{path}: check {index}"
    if not isinstance(name, str) or not name.strip():
        raise GateError(f"{where}: 'name' is required (a non-empty string)")
    where = f"{path}: check {name!r}"

    model_values: dict[str, Any] = {}
    if "config" in table:
        if not isinstance(table["config"], str):
            raise GateError(f"{where}: config: expected a file path string")
        try:
            model_values.update(load_config_file(path.parent / table["config"]))
        except ConfigError as exc:
            raise GateError(f"{where}: config: {exc}") from None
    model_values.update({k: v for k, v in table.items() if k not in GATE_KEYS})
    try:
        config = config_from_dict(model_values)
    except ConfigError as exc:
        raise GateError(f"{where}: {exc}") from None

    engine = table.get("engine", "bfs")
    if engine not in ENGINES:
        raise GateError(f"{where}: engine: expected one of {', '.join(ENGINES)} (got {engine!r})")
    ids = table.get("invariants", [])
    if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
        raise GateError(f"{where}: invariants: expected a list of invariant ids")
    try:
        invariants = select(ids, registry(config))
    except UnknownInvariant as exc:
        raise GateError(f"{where}: invariants: {exc}") from None

    expect = table.get("expect")
    if not isinstance(expect, str):
        raise GateError(f'{where}: \'expect\' is required: "holds" or "violates:<invariant id>"')
    if expect != "holds":
        target = expect.removeprefix("violates:")
        if target == expect or target not in {inv.id for inv in registry(config)}:
            raise GateError(
                f'{where}: expect: {expect!r} is not "holds" or "violates:<invariant id>"'
            )
        if target not in {inv.id for inv in invariants}:
            raise GateError(f"{where}: expect: {target!r} is not among the checked invariants")

    numbers = {}
    for key, low in (("timeout", 0), ("max_states", 1), ("walks", 1), ("depth", 1), ("seed", 0)):
        if key in table:
            value = table[key]
            if (
                isinstance(value, bool)
                or not isinstance(value, (int, float))
                or not math.isfinite(value)
                or value < low
                or (key == "timeout" and value == 0)
            ):
                bound = "> 0" if key == "timeout" else f">= {low}"
                raise GateError(f"{where}: {key}: expected a finite number {bound} (got {value!r})")
            if key != "timeout" and not isinstance(value, int):
                raise GateError(f"{where}: {key}: expected a whole number (got {value!r})")
            numbers[key] = value
    swarm = table.get("swarm", False)
    if not isinstance(swarm, bool):
        raise GateError(f"{where}: swarm: expected true or false (got {swarm!r})")
    if engine == "bfs" and ({"walks", "depth", "seed"} & set(numbers) or "swarm" in table):
        raise GateError(f'{where}: walks/depth/seed/swarm only apply to engine = "walk"')
    return GateCheck(name, config, engine, invariants, expect, swarm=swarm, **numbers)


def run_check(check: GateCheck) -> GateOutcome:
    """Run one check.  Ctrl-C raises KeyboardInterrupt: an interrupted check is not judged."""
    start = time.monotonic()
    if check.engine == "walk":
        return _run_walk(check, start)
    result = bfs(
        build_model(check.config),
        check.invariants,
        max_states=check.max_states,
        time_limit=check.timeout,
        memory_limit=default_memory_budget(),  # too big for this machine: incomplete, not killed
    )
    if result.status == "interrupted":  # bfs stops cleanly on Ctrl-C; the gate stops too
        raise KeyboardInterrupt
    return _judge(check, result.violations, _bfs_status(result), result.distinct_states, start)


def _bfs_status(result: SearchResult) -> str:
    if result.exhaustive:
        return "complete"
    return "timeout" if result.status == "timeout" else "incomplete"


def _run_walk(check: GateCheck, start: float) -> GateOutcome:
    """Random walks in this process (the same walks Spark would run for this seed)."""
    from replcheck.checker.walks.walk import Walker  # imported here: only walk checks need it

    walker = Walker(
        check.config, [inv.id for inv in check.invariants], depth=check.depth, swarm=check.swarm
    )
    deadline = start + check.timeout if check.timeout else None
    shortest: dict[str, Violation] = {}
    steps = 0
    status = "complete"
    for walk_id in range(check.walks):
        if deadline is not None and time.monotonic() >= deadline:
            status = "timeout"
            break
        result = walker.walk(check.seed, walk_id)
        steps += result.steps
        if result.invariant is None or result.path is None:
            continue
        known = shortest.get(result.invariant)
        if known is None or len(result.path) + 1 < known.length:
            trace = execute(walker.model, result.path)
            shortest[result.invariant] = Violation(
                result.invariant, result.message or "", [Step(a, s) for a, s in trace]
            )
    ordered = {inv.id: shortest[inv.id] for inv in check.invariants if inv.id in shortest}
    return _judge(check, ordered, status, steps, start)


def _judge(
    check: GateCheck, violations: dict[str, Violation], status: str, states: int, start: float
) -> GateOutcome:
    seconds = time.monotonic() - start
    if violations:
        got = "violates:" + ",".join(violations)
    elif status == "complete":
        got = "holds"
    else:
        got = status  # "timeout" or "incomplete": not enough to claim "holds"
    if check.expect == "holds":
        passed = got == "holds"
    else:
        passed = check.expect.removeprefix("violates:") in violations
    what = "walk steps" if check.engine == "walk" else "states"
    if passed:
        detail = f"{got} as expected ({states:,} {what}, {seconds:.1f} s)"
    else:
        detail = f"expected {check.expect}, got {got} ({states:,} {what}, {seconds:.1f} s)"
        for v in violations.values():
            detail += f"; {v.invariant}: {v.message}"
    return GateOutcome(check, got, passed, detail, seconds, dict(violations), states)
