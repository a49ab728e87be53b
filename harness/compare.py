"""What Kafka did, against what the model did: the fields the two share, per step.

Kafka numbers leader epochs from 0 and bumps them where the model starts a new epoch;
the map between the two is learnt from the controller as the run goes (the model's
first epoch is 1, Kafka's 0) and checked at every step.  A record is the model's when
its value names the model's record id and its batch carries the mapped epoch.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from replcheck.model.kafka.state import (
    NO_LEADER,
    UNKNOWN_LEO,
    State,
    members,
    record_epoch,
    record_id,
)


@dataclass(frozen=True)
class Difference:
    """One field on which Kafka and the model disagree after a step."""

    field: str
    model: Any
    kafka: Any

    def __str__(self) -> str:
        return f"{self.field}: model {_show(self.model)}, Kafka {_show(self.kafka)}"


def _show(value: Any) -> str:
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_show(v) for v in value) + "]"
    return str(value)


class EpochMap:
    """Model leader epoch <-> Kafka leader epoch, learnt from the controller."""

    def __init__(self) -> None:
        self.to_kafka: dict[int, int] = {}
        self.to_model: dict[int, int] = {}

    def learn(self, model_epoch: int, kafka_epoch: int) -> Difference | None:
        known = self.to_kafka.get(model_epoch)
        back = self.to_model.get(kafka_epoch)
        if known is None and back is None:
            self.to_kafka[model_epoch] = kafka_epoch
            self.to_model[kafka_epoch] = model_epoch
            return None
        if known == kafka_epoch:
            return None
        return Difference("controller.epoch", f"e{model_epoch}", f"leader epoch {kafka_epoch}")

    def model_of(self, kafka_epoch: int) -> str:
        found = self.to_model.get(kafka_epoch)
        return f"e{found}" if found is not None else f"kafka-e{kafka_epoch}"


def _replica_name(i: int) -> str:
    return "none" if i == NO_LEADER else f"r{i}"


def _names(ids: list[int]) -> list[str]:
    return [f"r{i}" for i in sorted(ids)]


def compare(
    s: State,
    kafka: dict[str, Any],
    epochs: EpochMap,
    acked: set[int],
    answers_any_epoch: bool = False,
) -> list[Difference]:
    """The differences between model state ``s`` and Kafka's state after the same step.
    ``acked``: the records acknowledged so far, which this step's add to (a producer's
    acknowledgement stays given when the broker that gave it is gone).
    ``answers_any_epoch``: the release processes a Fetch answer of an earlier leader
    epoch (before KAFKA-18991), so such a request still counts as in flight; whether it
    does is then judged by what its answer does at the ``fetch_response`` step."""
    out: list[Difference] = []
    ctrl = kafka["controller"]
    learnt = epochs.learn(s.ctrl_epoch, ctrl["leader_epoch"])
    if learnt:
        out.append(learnt)
    _eq(out, "controller.leader", _replica_name(s.ctrl_leader), _replica_name(ctrl["leader"]))
    _eq(out, "controller.isr", _names(members(s.ctrl_isr)), _names(ctrl["isr"]))
    _eq(out, "controller.elr", _names(members(s.ctrl_elr)), _names(ctrl["elr"]))
    _eq(out, "controller.live", _names(members(s.ctrl_live)), _names(ctrl["unfenced"]))
    for b in kafka["brokers"]:
        acked.update(b.get("acked", []))
    _eq(out, "acked", sorted(members(s.acked)), sorted(acked))
    for i, r in enumerate(s.replicas):
        out += _replica(i, r, kafka["brokers"][i], epochs, answers_any_epoch)
    return out


def _eq(out: list[Difference], name: str, model: Any, kafka: Any) -> None:
    if model != kafka:
        out.append(Difference(name, model, kafka))


def _log(records: list[list[Any]], epochs: EpochMap) -> list[str]:
    return [f"{value}@{epochs.model_of(epoch)}" for epoch, value in records]


def _in_flight(fetch: dict[str, Any] | None, answers_any_epoch: bool) -> bool:
    """Whether Kafka's follower will process the answer to its parked request: one of
    its current epoch, or (``answers_any_epoch``) one at its current fetch offset while
    it is Fetching (AbstractFetcherThread.processFetchRequest, 2.8.0 to 3.9.0 and 4.0.0)."""
    if not fetch:
        return False
    request = fetch.get("request")
    return bool(fetch["in_flight"]) or (
        answers_any_epoch
        and request is not None
        and request["offset"] == fetch["offset"]
        and fetch["state"] == "fetching"
    )


def _replica(
    i: int, r: Any, b: dict[str, Any], epochs: EpochMap, answers_any_epoch: bool
) -> list[Difference]:
    out: list[Difference] = []
    name = f"r{i}"
    _eq(out, f"{name}.alive", bool(r.alive), b["alive"])
    model_log = [f"m{record_id(x)}@e{record_epoch(x)}" for x in r.log]
    _eq(out, f"{name}.log", model_log, _log(b["log"], epochs))
    _eq(out, f"{name}.hw_checkpoint", r.hw_checkpoint, b["hw_checkpoint"])
    if not (r.alive and b["alive"]):
        return out
    p = b.get("partition")
    if p:  # a restarted broker opens its log (and reads its HW checkpoint) at its first metadata
        _eq(out, f"{name}.hw", r.hw, b["hw"])
    kafka_leader = p["leader"] if p else NO_LEADER
    _eq(out, f"{name}.leader", _replica_name(r.leader), _replica_name(kafka_leader))
    if p and r.epoch:
        _eq(out, f"{name}.epoch", f"e{r.epoch}", epochs.model_of(p["leader_epoch"]))
    if r.leader == i and p and kafka_leader == i:
        _eq(out, f"{name}.isr", _names(members(r.isr)), _names(p["isr"]))
        _eq(out, f"{name}.maximal_isr", _names(members(r.maximal_isr)), _names(p["maximal_isr"]))
        remote = {x["id"]: x["leo"] for x in p["remote"]}
        for f, leo in enumerate(r.remote_leo):
            if f != i:
                _eq(out, f"{name}.remote_leo[r{f}]", leo, remote.get(f, UNKNOWN_LEO))
    fetch = b.get("fetch")
    if r.leader not in (i, NO_LEADER):
        _eq(out, f"{name}.in_flight", bool(r.inflight), _in_flight(fetch, answers_any_epoch))
    return out
