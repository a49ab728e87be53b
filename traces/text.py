"""A counterexample as text a person can follow: one line per step, changes only."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from replcheck.model.interface import Action
from replcheck.model.kafka.replication import ACTION_PARAMS
from replcheck.model.kafka.state import (
    DIVERGING,
    FETCH_RESPONSE,
    NO_LEADER,
    OUT_OF_RANGE,
    TRUNCATE_PENDING,
    Replica,
    State,
    last_known_elr,
    last_known_names_nobody,
    members,
    record_name,
)
from replcheck.model.registry import AnyConfig, action_params


def _who(i: int) -> str:
    return "-" if i == NO_LEADER else f"r{i}"


def replica_set(mask: int) -> str:
    """``{r0,r2}`` for a bitmask of replicas."""
    return "{" + ",".join(f"r{i}" for i in members(mask)) + "}"


def describe_action(action: Action, params: dict[str, tuple[str, ...]] | None = None) -> str:
    """``fetch(follower=r1, leader=r0)``; with another model's ``params``, values as numbers."""
    shown = []
    for name, value in zip((params or ACTION_PARAMS)[action.name], action.args, strict=True):
        if params is not None or name == "keep":
            text = str(value)
        else:
            text = replica_set(value) if name == "followers" else _who(value)
        shown.append(f"{name}={text}")
    return f"{action.name}({', '.join(shown)})"


def format_plain_trace(steps: Sequence[tuple[Action | None, Any]], config: AnyConfig) -> list[str]:
    """Another model's trace (states are named tuples): the initial state's fields, then
    each action and the fields it changed."""
    params = action_params(config)
    lines: list[str] = []
    prev: Any = None
    for index, (action, state) in enumerate(steps):
        head = describe_action(action, params) if action else "initial state"
        lines.append(f"{index:>3}  {head}")
        for name, value in zip(state._fields, state, strict=True):
            if prev is None or getattr(prev, name) != value:
                lines.append(f"       {name} = {value!r}")
        prev = state
    return lines


def _disk_note(r: Replica) -> str:
    return " (new disk, directory not reported)" if r.dir_unreported else ""


def describe_replica(i: int, r: Replica) -> str:
    if not r.alive:
        clean = " (clean shutdown)" if r.clean_shutdown else ""
        log = " ".join(map(record_name, r.log))
        return f"r{i}: DOWN{clean}{_disk_note(r)} log=[{log}] hw_ckpt={r.hw_checkpoint}"
    if r.leader == i:
        role = f"leader e{r.epoch} isr={replica_set(r.isr)}"
    elif r.leader == NO_LEADER:
        role = f"no leader e{r.epoch}"
    else:
        role = f"follows r{r.leader} e{r.epoch}"
    fenced = " (fenced)" if r.fenced else ""
    return (
        f"r{i}: {role}{fenced}{_disk_note(r)} log=[{' '.join(map(record_name, r.log))}] "
        f"leo={len(r.log)} hw={r.hw} hw_ckpt={r.hw_checkpoint}"
    )


def describe_controller(s: State) -> str:
    leader, isr = _who(s.ctrl_leader), replica_set(s.ctrl_isr)
    elr = f" elr {replica_set(s.ctrl_elr)}" if s.ctrl_elr else ""  # KIP-966, where it has members
    return f"controller: leader {leader} epoch {s.ctrl_epoch} isr {isr}{elr}"


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


# ------------------------------------------------------------ the step table


def role(i: int, r: Replica) -> str:
    """``L`` leader, ``F>r0`` follower of r0, ``?`` no leader known, ``DOWN`` crashed."""
    if not r.alive:
        return "DOWN"
    if r.leader == i:
        return "L"
    if r.leader == NO_LEADER:
        return "?"
    return f"F>r{r.leader}"


def replica_cell(i: int, r: Replica, s: State) -> str:
    """One replica in one table cell: role/epoch, log, HW and LEO, ISR membership."""
    log = " ".join(map(record_name, r.log))
    if not r.alive:
        clean = " clean" if r.clean_shutdown else ""
        return f"DOWN{clean} [{log}] ckpt={r.hw_checkpoint}"
    isr = "" if s.ctrl_isr >> i & 1 else " !isr"
    fenced = " fenced" if r.fenced else ""
    return f"{role(i, r)} e{r.epoch} [{log}] hw={r.hw} leo={len(r.log)}{isr}{fenced}"


def controller_cell(s: State) -> str:
    """Leader, epoch and ISR; the ELR and lastKnownElr (KIP-966) when not empty."""
    cell = f"{_who(s.ctrl_leader)} e{s.ctrl_epoch} isr{replica_set(s.ctrl_isr)}"
    if s.ctrl_elr:
        cell += f" elr{replica_set(s.ctrl_elr)}"
    known = last_known_text(s)
    if known != "{}":
        cell += f" lastKnownElr{known}"
    return cell


def last_known_text(s: State) -> str:
    """lastKnownElr as Kafka holds it: ``{r0}``, ``{}``, or ``[-1]`` where 4.0.0 to 4.1.0
    recorded a leader the partition no longer had (state.last_known_names_nobody)."""
    return "[-1]" if last_known_names_nobody(s) else replica_set(last_known_elr(s))


def disk_replaced(prev: Replica, r: Replica) -> bool:
    """Whether a stopped replica lost its disk between two states (``replace_disk``):
    what it held is gone, or (KRaft 3.7+) it has a new directory to report, which an
    empty replica's new disk gives too.  Nothing else changes a stopped replica's disk."""
    if prev.alive or r.alive:
        return False
    held = bool(prev.log or prev.hw_checkpoint or prev.clean_shutdown)
    emptied = held and not (r.log or r.hw_checkpoint or r.clean_shutdown)
    return emptied or bool(r.dir_unreported and not prev.dir_unreported)


def _log_change(old: tuple[int, ...], new: tuple[int, ...]) -> str:
    keep = 0
    while keep < min(len(old), len(new)) and old[keep] == new[keep]:
        keep += 1
    parts = []
    if keep < len(old):
        parts.append("dropped " + " ".join(map(record_name, old[keep:])) + f" from offset {keep}")
    if keep < len(new):
        parts.append("appended " + " ".join(map(record_name, new[keep:])) + f" at offset {keep}")
    return ", ".join(parts)


def state_changes(prev: State, s: State) -> list[str]:
    """What ``s`` changed with respect to ``prev``, field by field, readable."""
    out: list[str] = []
    if (prev.ctrl_leader, prev.ctrl_epoch) != (s.ctrl_leader, s.ctrl_epoch):
        out.append(
            f"controller: leader {_who(prev.ctrl_leader)}->{_who(s.ctrl_leader)} "
            f"epoch {prev.ctrl_epoch}->{s.ctrl_epoch}"
        )
    if prev.ctrl_isr != s.ctrl_isr:
        out.append(f"controller ISR {replica_set(prev.ctrl_isr)}->{replica_set(s.ctrl_isr)}")
    if prev.ctrl_live != s.ctrl_live:
        before, after = replica_set(prev.ctrl_live), replica_set(s.ctrl_live)
        out.append(f"controller sees live {before}->{after}")
    if prev.ctrl_elr != s.ctrl_elr:
        out.append(f"controller ELR {replica_set(prev.ctrl_elr)}->{replica_set(s.ctrl_elr)}")
    if last_known_text(prev) != last_known_text(s):
        out.append(f"controller lastKnownElr {last_known_text(prev)}->{last_known_text(s)}")
    for request in s.alter_requests:
        if request not in prev.alter_requests:
            sender, epoch, _ok, isr, _restarted = request
            out.append(f"r{sender} asks the controller for ISR {replica_set(isr)} (epoch {epoch})")
    for i, (a, b) in enumerate(zip(prev.replicas, s.replicas, strict=True)):
        # Fenced and live: a ZooKeeper broker registered again after its session expired,
        # owed the current state (ControllerRules._do_unfence).
        owed_before = a.fenced and prev.ctrl_live >> i & 1
        if b.fenced and s.ctrl_live >> i & 1 and not owed_before:
            out.append(f"r{i} registered again: the controller owes it the current state")
        if a == b:
            continue
        if a.alive and not b.alive:
            if b.clean_shutdown:
                out.append(f"r{i} shut down cleanly ({len(b.log)} record(s) flushed)")
                continue
            lost = f", lost {len(a.log) - len(b.log)} unflushed" if len(b.log) < len(a.log) else ""
            out.append(f"r{i} crashed ({len(b.log)} record(s) on disk{lost})")
            continue
        if disk_replaced(a, b):
            gone = "log and HW checkpoint gone" if a.log or a.hw_checkpoint else "no records on it"
            out.append(f"r{i}'s disk replaced: {gone}")
            continue
        if b.alive and not a.alive:
            out.append(f"r{i} restarted with HW {b.hw} from its checkpoint")
        elif role(i, a) != role(i, b) or a.epoch != b.epoch:
            out.append(f"r{i} {role(i, a)} e{a.epoch} -> {role(i, b)} e{b.epoch}")
        if a.log != b.log:
            out.append(f"r{i} {_log_change(a.log, b.log)}")
        if a.hw != b.hw and a.alive:
            out.append(f"r{i}.hw {a.hw}->{b.hw}")
        if a.hw_checkpoint != b.hw_checkpoint:
            out.append(f"r{i}.hw_checkpoint {a.hw_checkpoint}->{b.hw_checkpoint}")
        if a.isr != b.isr and b.isr:
            out.append(f"r{i} believes ISR {replica_set(b.isr)}")
        if a.dir_unreported and not b.dir_unreported:
            out.append(f"r{i} reported its new log directory: it may lead again")
        if b.fenced != a.fenced and b.alive:
            if b.fenced:
                out.append(f"r{i} fenced by the controller, still running")
            else:
                out.append(f"r{i} {'got the current state' if owed_before else 'unfenced'}")
        if b.record_owed and not a.record_owed:
            out.append(f"r{i} took its ISR from the controller's answer; the record is to come")
        if a.pending_isr and not b.pending_isr and b.alive and b.leader == i:
            out.append(f"r{i} no longer waits for ISR {replica_set(a.pending_isr)}")
            if b.alter_item:
                out.append(f"r{i} proposes nothing more until the controller answers")
        if a.remote_leo != b.remote_leo and b.remote_leo and len(a.remote_leo) == len(b.remote_leo):
            for f, (x, y) in enumerate(zip(a.remote_leo, b.remote_leo, strict=True)):
                if x != y:
                    out.append(f"r{i} saw r{f} fetch at offset {y}")
        if a.truncation != b.truncation and b.alive:
            out.append(f"r{i} truncation: {_TRUNCATION[b.truncation]}")
        if a.inflight != b.inflight and b.alive:
            out.append(f"r{i} {inflight_phrase(b.inflight)}")
        if a.zk_current and not b.zk_current and b.alive and b.leader == i:
            out.append(f"r{i}'s zkVersion is stale (its ISR writes will fail)")
    if prev.committed != s.committed:
        out.append(f"committed [{' '.join(map(record_name, s.committed))}]")
    if prev.acked != s.acked:
        out.append("acked " + ", ".join(f"m{i}" for i in members(s.acked & ~prev.acked)))
    return out


def inflight_phrase(inflight: tuple) -> str:
    """What a follower has on its way to it, as the step table says it."""
    if not inflight:
        return "has no response in flight"
    kind, offset, *rest = inflight
    if kind == FETCH_RESPONSE:
        hw, records = rest
        sent = " ".join(map(record_name, records)) or "no records"
        return f"gets a fetch response in flight: {sent} from offset {offset}, HW {hw}"
    if kind == OUT_OF_RANGE:
        return f"gets OFFSET_OUT_OF_RANGE in flight (leader LEO {rest[0]})"
    if kind == DIVERGING:
        hw, epoch, end = rest
        return (
            f"gets a fetch response in flight: divergingEpoch {epoch} ends at {end} "
            f"(fetch offset {offset}, HW {hw})"
        )
    if kind == TRUNCATE_PENDING:
        return f"took the HW; still to truncate on divergingEpoch {offset} ending at {rest[0]}"
    epoch, end = rest
    answer = "UNDEFINED" if end < 0 else f"epoch {epoch} ends at {end}" if epoch >= 0 else str(end)
    return f"gets an OffsetsForLeaderEpoch answer in flight ({answer})"


_TRUNCATION = {
    0: "done",
    1: "owes the epoch exchange (2.8+: a fetch without divergence)",
    2: "kept its log (no truncation)",
}


def format_table(
    steps: Sequence[tuple[Action | None, State]], mark: int | None = None
) -> list[str]:
    """The trace as a step table: one row per step, one column per replica and the controller.

    A ``*`` marks each cell the step changed; the line under a row lists the
    changes.  ``mark`` is the step where the invariant breaks (flagged ``<=``).
    """
    if not steps:
        return []
    n = len(steps[0][1].replicas)
    header = ["step", "action", *(f"r{i}" for i in range(n)), "controller"]
    rows: list[list[str]] = []
    notes: list[list[str]] = []
    prev: State | None = None
    for index, (action, s) in enumerate(steps):
        row = [str(index), describe_action(action) if action else "initial state"]
        for i, r in enumerate(s.replicas):
            changed = prev is not None and prev.replicas[i] != r
            row.append(("*" if changed else " ") + replica_cell(i, r, s))
        changed = prev is not None and controller_cell(prev) != controller_cell(s)
        row.append(("*" if changed else " ") + controller_cell(s))
        rows.append(row)
        notes.append(state_changes(prev, s) if prev is not None else [])
        prev = s
    widths = [max(len(r[k]) for r in [header, *rows]) for k in range(len(header))]
    indent = " " * (widths[0] + widths[1] + 4)

    def line(cells: list[str]) -> str:
        return "  ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)).rstrip()

    out = [line(header), line(["-" * w for w in widths])]
    for index, (row, changes) in enumerate(zip(rows, notes, strict=True)):
        text = line(row)
        if mark is not None and index == mark:
            text += "  <= violated here"
        out.append(text)
        if changes:
            out.append(indent + "changed: " + "; ".join(changes))
    out.append(LEGEND)
    return out


LEGEND = (
    "(L leader, F>rN follower of rN, ? no leader known, DOWN crashed; eN leader epoch; "
    "!isr outside the controller's ISR; * changed at this step)"
)
