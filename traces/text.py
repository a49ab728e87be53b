"""A counterexample as text a person can follow: one line per step, changes only."""

from __future__ import annotations

from collections.abc import Sequence

from model.interface import Action
from model.kafka import ACTION_PARAMS
from model.state import NO_LEADER, Replica, State, members, record_name


def _who(i: int) -> str:
    return "-" if i == NO_LEADER else f"r{i}"


def _set(mask: int) -> str:
    return "{" + ",".join(f"r{i}" for i in members(mask)) + "}"


def describe_action(action: Action) -> str:
    params = []
    for name, value in zip(ACTION_PARAMS[action.name], action.args, strict=True):
        shown = str(value) if name == "keep" else _who(value)
        params.append(f"{name}={shown}")
    return f"{action.name}({', '.join(params)})"


def describe_replica(i: int, r: Replica) -> str:
    if not r.alive:
        return f"r{i}: DOWN log=[{' '.join(map(record_name, r.log))}] hw_ckpt={r.hw_checkpoint}"
    if r.leader == i:
        role = f"leader e{r.epoch} isr={_set(r.isr)}"
    elif r.leader == NO_LEADER:
        role = f"no leader e{r.epoch}"
    else:
        role = f"follows r{r.leader} e{r.epoch}"
    return (
        f"r{i}: {role} log=[{' '.join(map(record_name, r.log))}] "
        f"leo={len(r.log)} hw={r.hw} hw_ckpt={r.hw_checkpoint}"
    )


def describe_controller(s: State) -> str:
    return f"controller: leader {_who(s.ctrl_leader)} epoch {s.ctrl_epoch} isr {_set(s.ctrl_isr)}"


def format_trace(steps: Sequence[tuple[Action | None, State]]) -> list[str]:
    """Lines: the initial state in full, then each action and what it changed."""
    lines: list[str] = []
    prev: State | None = None
    for index, (action, state) in enumerate(steps):
        head = f"{index:>3}  {describe_action(action) if action else 'initial state'}"
        lines.append(head)
        changes = []
        if prev is None or describe_controller(prev) != describe_controller(state):
            changes.append(describe_controller(state))
        for i, r in enumerate(state.replicas):
            if prev is None or prev.replicas[i] != r:
                changes.append(describe_replica(i, r))
        if prev is not None and state.committed != prev.committed:
            changes.append(f"committed: [{' '.join(map(record_name, state.committed))}]")
        if prev is not None and state.acked != prev.acked:
            changes.append("acknowledged: " + ", ".join(f"m{i}" for i in members(state.acked)))
        lines.extend(f"       {c}" for c in changes)
        prev = state
    return lines
