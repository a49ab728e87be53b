"""A model trace as a real cluster's steps: the harness's ops (harness.steps.plan), which
brokers' metadata must lag, and the ops a real cluster cannot take.

On Kafka's own classes the harness hands each broker each metadata record when the
trace says.  On a real cluster a broker applies the metadata log as it is committed
unless the relay holds its metadata fetches, and then applies everything held at once
(MetadataLoader.handleCommit publishes a commit's batches as one delta).  So the
brokers whose metadata the trace holds back (``lagging``: they replay a record late,
``reapply_isr``/``apply_isr``, or catch up at once, ``deliver_latest``) are held from
the start and released at their steps; the others apply each change as it comes, which
the trace's later ``deliver`` to them then finds done.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from replcheck.harness.steps import Plan, plan
from replcheck.model.errors import InputError
from replcheck.model.kafka.config import Config, make_config
from replcheck.model.kafka.replication import KafkaReplication
from replcheck.traces.replay import execute
from replcheck.traces.text import describe_action

# What each op becomes on the cluster (cluster/runner.py); any other op cannot be taken.
TAKEN = {
    "write": "an acks=all producer sends the record to the leader",
    "fetch_request": "the relay lets one of the follower's fetches reach the leader",
    "fetch_response": "the relay delivers the leader's answer to the follower",
    "diverging_truncate": "Kafka truncates inside the fetch response it handles",
    "shrink_isr": "the leader's ISR expiration (replica.lag.time.max.ms) proposes it",
    "shrink_isr_set": "the leader's ISR expiration proposes it",
    "alter_isr": "the relay lets the leader's AlterPartition request reach the controller",
    "apply_isr": "the relay lets the broker's metadata fetch through",
    "reapply_isr": "the relay lets the broker's metadata fetch through",
    "deliver": "the broker applies the metadata log (its held fetch let through)",
    "deliver_latest": "the broker applies the metadata log (its held fetch let through)",
    "elect": "a preferred-leader election (Admin.electLeaders)",
    "reorder": "a reassignment that only reorders the replicas",
    "crash": "SIGKILL (and for keep=0 the partition's log folder removed)",
    "notice_crash": "the controller fences the broker when its session times out",
    "restart": "the broker's JVM starts again",
    "notice_restart": "the broker registers and is unfenced",
    "shutdown": "SIGTERM: a controlled shutdown",
}

LATE_METADATA = ("reapply_isr", "apply_isr", "deliver_latest")


class Unmappable(InputError):
    """A step a real cluster cannot be made to take (exit 2)."""


@dataclass
class ClusterPlan:
    config: Config
    actions: list[str]
    plan: Plan
    lagging: set[int] = field(default_factory=set)
    final_state: Any = None
    # per op: whether the model's controller changes the partition there (a new record)
    partition_changes: list[bool] = field(default_factory=list)


def _partition(s: Any) -> tuple[int, ...]:
    return (s.ctrl_leader, s.ctrl_epoch, s.ctrl_isr, s.ctrl_elr)


# Options a cluster takes from its release's defaults (its format and the producer's
# acks=all), which a trace therefore must have as the model's defaults for that release.
AS_RELEASED = ("acks", "unclean_election", "elr", "ibp", "metadata_version", "atomic")


def cluster_plan(config: Config, actions: list[Any]) -> ClusterPlan:
    if not config.kraft:
        raise Unmappable("reproduce runs KRaft traces (a ZooKeeper cluster is not started)")
    released = make_config({"mode": config.mode, "kraft": True})
    for name in AS_RELEASED:
        if getattr(config, name) != getattr(released, name):
            raise Unmappable(
                f"the trace's {name}={getattr(config, name)!r}: reproduce starts Kafka "
                f"{config.mode} as released ({name}={getattr(released, name)!r})"
            )
    model = KafkaReplication(config)
    steps = execute(model, actions)
    p = plan(model, steps)
    restarted: set[int] = set()
    lagging: set[int] = set()
    for k, op in enumerate(p.ops):
        name = op["op"]
        step = p.step_of[k]
        what = f"step {step} ({describe_action(steps[step][0])})" if step else name
        if name not in TAKEN:
            raise Unmappable(f"{what}: no way is known to make a real cluster take it")
        if name == "crash" and 0 < op["keep"] < steps[step - 1][1].replicas[op["replica"]].leo:
            raise Unmappable(
                f"{what}: a crash that keeps part of the log is not reproduced (all or none)"
            )
        replica = op.get("replica", op.get("leader"))
        if name == "restart":
            restarted.add(replica)
        if name in LATE_METADATA and replica not in restarted:
            lagging.add(replica)
    described = [describe_action(a) for a, _ in steps[1:] if a is not None]
    changes = [
        bool(step) and _partition(steps[step - 1][1]) != _partition(steps[step][1])
        for step in p.step_of
    ]
    return ClusterPlan(config, described, p, lagging, steps[-1][1], changes)
