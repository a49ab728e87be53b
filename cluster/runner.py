"""One reproduction: start the cluster, take the plan's steps on it, read the log back.

Whatever happens, the processes, relay ports and data folders are gone when
``reproduce`` returns (steps.py takes each step and waits for Kafka's evidence).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from replcheck.cluster import evidence
from replcheck.cluster.client import Client
from replcheck.cluster.jars import classpath
from replcheck.cluster.nodes import Cluster, StepRefused, StepTimeout
from replcheck.cluster.plan import ClusterPlan
from replcheck.cluster.relay import ALTER_PARTITION, FETCH
from replcheck.cluster.steps import FOLLOWER_KEYS, LAG_S, ClusterSteps


@dataclass
class StepRun:
    """What one op did on the cluster."""

    step: int | None  # the model step (1-based), None for glue (a reorder)
    action: str
    seconds: float
    evidence: list[str] = field(default_factory=list)


@dataclass
class Reproduction:
    release: str
    folder: Path
    lagging: list[int]
    steps: list[StepRun] = field(default_factory=list)
    writes: dict[str, str] = field(default_factory=dict)  # record -> "acked:<offset>" / ...
    final: dict[str, Any] = field(default_factory=dict)  # leader, isr, records read
    kafka_lines: list[str] = field(default_factory=list)
    unplanned: list[str] = field(default_factory=list)  # Kafka's own moves, not steps
    failure: str | None = None  # a step timed out (exit 3)
    refused: str | None = None  # Kafka refused a step (what a fixed release does)
    interrupted: bool = False
    seconds: float = 0.0

    @property
    def acked(self) -> list[str]:
        return [r for r, status in self.writes.items() if status.startswith("acked")]

    @property
    def lost(self) -> list[str]:
        present = {rec["value"] for rec in self.final.get("records", [])}
        if "records" not in self.final:
            return []
        return [r for r in self.acked if r not in present]

    @property
    def verdict(self) -> str:
        if self.lost:
            return "lost"
        if self.interrupted:
            return "interrupted"
        if self.failure:
            return "timed out"
        return "refused" if self.refused else "kept"


def reproduce(
    cp: ClusterPlan,
    folder: Path,
    on_step: Callable[[StepRun], None] | None = None,
    release: str | None = None,
) -> Reproduction:
    """Runs ``cp`` on a fresh cluster of ``release`` (default: the plan's own); the
    report, whatever happens."""
    start = time.monotonic()
    cfg = cp.config
    release = release or cfg.mode
    jars = classpath(release)
    folder.mkdir(parents=True, exist_ok=True)
    result = Reproduction(release, folder, sorted(cp.lagging))
    cluster = Cluster(jars, cfg.replicas, folder, release)
    client: Client | None = None
    steps: ClusterSteps | None = None
    try:
        cluster.start_relays()
        for leader, follower in cluster.repl_port:
            for key in FOLLOWER_KEYS:
                cluster.relay.gate(cluster.fetch_link(follower, leader), key, hold_responses=True)
        for b in cluster.brokers:
            cluster.relay.gate(cluster.meta_link(b), ALTER_PARTITION)
        cluster.format()
        cluster.start("controller")
        for b in cluster.brokers:
            cluster.start(f"broker-{b}")
        for b in cluster.brokers:
            cluster.wait_log(
                f"broker-{b}",
                "Transition from STARTING to STARTED",
                180,
                0,
                f"broker {b} did not start",
            )
        client = Client(
            jars,
            cluster.bootstrap(),
            str(folder / "conf" / "controller-log4j2.properties"),
            str(folder / "logs" / "client.stderr"),
        )
        created = client.ask(
            "create", replicas=cp.plan.assignment, min_isr=cfg.min_insync_replicas, timeout=60
        )
        if not created.get("ok"):
            raise StepTimeout(f"creating the topic: {created.get('error')}")
        cluster.check_alive("starting the cluster")
        steps = ClusterSteps(cluster, client, cp.lagging)
        steps._sync_up_to_date("creating the topic")
        for b in cp.lagging:
            cluster.relay.gate(cluster.meta_link(b), FETCH)
        for b in cp.lagging:
            steps._until(
                lambda b=b: cluster.relay.waiting(cluster.meta_link(b), FETCH),
                30,
                f"broker {b}'s metadata fetches are not held",
            )
        try:
            for k, op in enumerate(cp.plan.ops):
                step = cp.plan.step_of[k]
                t0 = time.monotonic()
                lines = steps.run(op, cp.partition_changes[k])
                what = cp.actions[step - 1] if step else f"reorder {op['replicas']}"
                run = StepRun(step, what, time.monotonic() - t0, lines)
                result.steps.append(run)
                if on_step is not None:
                    on_step(run)
        except StepRefused as exc:
            result.refused = str(exc)
        except StepTimeout as exc:
            result.failure = str(exc)
        _settle(cluster, steps, client, result)
    except StepTimeout as exc:
        result.failure = result.failure or str(exc)
    except KeyboardInterrupt:
        result.interrupted = True
    finally:
        if client is not None:
            try:
                if not result.writes:
                    result.writes = _writes(client)
            except Exception:  # noqa: BLE001 - the report must still come
                pass
            client.close()
        if steps is not None:
            for b in cluster.brokers:
                extra = evidence.shrink_lines(cluster, b)[steps.shrinks_used.get(b, 0) :]
                result.unplanned += [f"broker-{b}: {line}" for line in extra]
        for node in ["controller"] + [f"broker-{b}" for b in cluster.brokers]:
            result.kafka_lines += [
                f"{node}: {line}" for line in evidence.decisive_lines(cluster, node)
            ]
        result.kafka_lines.sort(key=lambda line: line.split(": ", 1)[1][:14])  # by time
        cluster.close()
        result.seconds = time.monotonic() - start
    return result


def _writes(client: Client) -> dict[str, str]:
    answer = client.ask("writes", timeout=20)
    return dict(answer.get("writes", {}))


def _settle(cluster: Cluster, steps: ClusterSteps, client: Client, result: Reproduction) -> None:
    """After the last step: every gate open, the metadata applied everywhere, the
    producer's answers in, then the partition read from its leader."""
    for link in cluster.relay.links:
        for key in (*FOLLOWER_KEYS, ALTER_PARTITION):
            cluster.relay.open(link, key)
    steps.lagging.clear()
    steps._sync_up_to_date("after the last step")
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        result.writes = _writes(client)
        if all(result.writes.values()):
            break
        time.sleep(0.2)
    time.sleep(2 * LAG_S / 5)  # followers fetch (and truncate) from the final leader
    described = client.ask("describe", timeout=30)
    read = client.ask("read", timeout=60)
    result.final = {
        "leader": described.get("leader"),
        "isr": described.get("isr"),
        "records": read.get("records", []) if read.get("ok") else [],
        "end": read.get("end"),
    }
    if not read.get("ok"):
        result.final.pop("records")
        result.failure = f"reading the log back: {read.get('error')}"
