"""A trace run through the model and through Kafka side by side.

The verdict is ``agrees`` (every step taken by both, every shared field equal),
``disagrees`` (the first step where a field differs, with every differing field), or
``refused`` (the first step Kafka would not take, or took otherwise: a choice its
controller does not make, a timing its clock cannot give; the harness says which).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from replcheck.harness import jvm
from replcheck.harness.build import Harness, HarnessUnavailable, build
from replcheck.harness.compare import Difference, EpochMap, compare
from replcheck.harness.steps import Plan, plan
from replcheck.harness.walks import timeable_walks
from replcheck.invariants.kafka import INVARIANTS
from replcheck.model.interface import Action
from replcheck.model.kafka.config import Config
from replcheck.model.kafka.protocol import newest_of
from replcheck.model.kafka.replication import KafkaReplication
from replcheck.model.kafka.state import TRUNCATE_PENDING, State
from replcheck.traces.replay import execute
from replcheck.traces.text import describe_action

# How long a follower may lag before its leader drops it (replica.lag.time.max.ms,
# Kafka's default); the harness's clock moves past it only where a shrink needs it.
LAG_MS = 30000


@dataclass
class Step:
    """One op of the run: the model's step it carries out (None: glue), what Kafka
    did (its state, or its refusal) and the differences."""

    index: int  # 0: the initial state; else 1-based op number
    model_step: int | None
    action: str
    kafka: dict[str, Any] | None
    differences: list[Difference] = field(default_factory=list)
    refused: tuple[str, str] | None = None  # (kind, detail)


# Invariants that also read whether a follower still owes its epoch truncation
# (Replica.truncation, through predicates._settled), a model field Kafka's state does not
# show as such: on these the model's verdict is not claimed for Kafka.  The others read
# only compared fields (logs, HWs, leaders and epochs, the ISR, the acknowledged records;
# the committed history is the HWs' history).
READS_MODEL_ONLY = frozenset({"consistent-logs", "strong-isr"})


@dataclass(frozen=True)
class Broken:
    """An invariant the model breaks at a step Kafka agreed with; ``kafka_too``: every
    field it reads was compared, so Kafka's state there breaks it too."""

    invariant: str
    step: int
    why: str
    kafka_too: bool


@dataclass
class ConformResult:
    """The outcome of one trace: ``verdict`` is agrees, disagrees or refused."""

    release: str
    kafka_version: str
    verdict: str
    steps: list[Step]
    plan: Plan
    model_states: list[State]

    @property
    def first_bad(self) -> Step | None:
        return next((s for s in self.steps if s.differences or s.refused), None)

    def violations(self) -> list[Broken]:
        """The default invariants the model breaks at a step Kafka agreed with, each at its
        first such step, the most important first (as reports order them)."""
        agreed = [s.model_step for s in self.steps if s.model_step is not None]
        if self.first_bad is not None:
            agreed = agreed[:-1]
        found: dict[str, Broken] = {}
        for k in agreed:
            for inv in INVARIANTS:
                if inv.default and inv.id not in found:
                    why = inv(self.model_states[k])
                    if why:
                        found[inv.id] = Broken(inv.id, k, why, inv.id not in READS_MODEL_ONLY)
        order = [inv.id for inv in INVARIANTS]
        return sorted(found.values(), key=lambda v: order.index(v.invariant))

    def summary(self) -> str:
        bad = self.first_bad
        taken = sum(1 for s in self.steps if s.model_step)
        if bad is None:
            text = f"agrees ({taken} steps on Kafka {self.kafka_version})"
            broken = self.violations()
            shown = [b for b in broken if b.kafka_too]
            if shown:
                first = shown[0]
                text += (
                    f"; Kafka's state breaks {first.invariant} from step {first.step}, as the "
                    f"model's: {first.why}"
                )
                if len(shown) > 1:
                    text += f" (and {', '.join(b.invariant for b in shown[1:])})"
            for b in broken[:1] if not shown else []:  # the model's verdict, said as such
                text += (
                    f"; the model breaks {b.invariant} from step {b.step}: {b.why} (judged "
                    "on fields Kafka agreed with and on whether a follower owes a "
                    "truncation, which is the model's)"
                )
            return text
        where = f"step {bad.model_step}" if bad.model_step else "before the first step"
        if bad.refused:
            kind, detail = bad.refused
            return f"Kafka refused {where} ({bad.action}): {kind}: {detail.splitlines()[0]}"
        return f"disagrees at {where} ({bad.action}): " + "; ".join(map(str, bad.differences))


def settings_of(config: Config) -> dict[str, Any]:
    """The run's settings in the harness's terms."""
    return {
        "replicas": config.replicas,
        "min_isr": config.min_insync_replicas,
        "lag_ms": LAG_MS,
        "metadata_version": config.metadata_version or newest_of(config.mode),
        "elr": bool(config.elr),
        "unclean": bool(config.unclean_election),
        "acks": config.acks,
    }


def check_expressible(config: Config) -> None:
    """Refuse, in one line, a configuration the harness cannot run."""
    if not config.kraft:
        raise HarnessUnavailable(
            "conform runs KRaft traces only: the ZooKeeper controller is not among Kafka's "
            "classes the harness drives (docs/conformance.md)"
        )
    if config.atomic:
        raise HarnessUnavailable("conform needs the message-level model (not --atomic)")


def conform_many(
    config: Config,
    traces: Sequence[Sequence[Action]],
    harness: Harness | None = None,
    timeout: float | None = None,
) -> list[ConformResult]:
    """Runs several traces of one configuration in one JVM."""
    check_expressible(config)
    model = KafkaReplication(config)
    runs = []
    for actions in traces:
        steps = execute(model, actions)  # NotEnabled: not a trace of this model
        runs.append((steps, plan(model, steps)))
    harness = harness or build(config.mode)  # after: a trace the model refuses needs no build
    header, outputs = jvm.run(
        harness, settings_of(config),
        [{"assignment": p.assignment, "ops": p.ops} for _steps, p in runs], timeout=timeout,
    )  # fmt: skip
    return [
        _judge(config, model, steps, p, lines, header)
        for (steps, p), lines in zip(runs, outputs, strict=True)
    ]


def conform(
    config: Config, actions: Sequence[Action], timeout: float | None = None
) -> ConformResult:
    """One trace through the model and through Kafka ``config.mode``."""
    return conform_many(config, [actions], timeout=timeout)[0]


def _inside_one_call(p: Plan, k: int) -> bool:
    """Op ``k`` (1-based) is a ``fetch_response`` whose ``diverging_truncate`` comes next:
    before KAFKA-14704 Kafka takes the HW and truncates in one ``processFetchRequest``
    call, so the state between the two is never Kafka's to show (it is compared after
    the truncation)."""
    if k < 1 or k >= len(p.ops):
        return False
    this, following = p.ops[k - 1], p.ops[k]
    return (
        this["op"] == "fetch_response"
        and following["op"] == "diverging_truncate"
        and following["follower"] == this["follower"]
    )


def _between_one_call(p: Plan, k: int, after: State) -> bool:
    """Op ``k`` is a ``fetch_response`` after which the model's follower owes the
    truncation, and the trace does not truncate next."""
    op = p.ops[k - 1] if k >= 1 else {}
    if op.get("op") != "fetch_response" or _inside_one_call(p, k):
        return False
    pending = after.replicas[op["follower"]].inflight
    return bool(pending) and pending[0] == TRUNCATE_PENDING


def _past_epoch_bound(config: Config, s: State, kafka: dict[str, Any], epochs: EpochMap) -> bool:
    """The model's controller is at its epoch bound and Kafka's started a newer epoch: a
    step the bound, not Kafka, left out (it says nothing about the rules)."""
    kafka_epoch = kafka["controller"]["leader_epoch"]
    return s.ctrl_epoch >= config.epochs and kafka_epoch not in epochs.to_model


def _judge(
    config: Config,
    model: KafkaReplication,
    steps: list[tuple[Action | None, State]],
    p: Plan,
    lines: list[dict[str, Any]],
    header: dict[str, Any],
) -> ConformResult:
    epochs = EpochMap()
    acked: set[int] = set()
    out: list[Step] = []
    states = [s for _a, s in steps]
    for line in lines:
        k = line["step"]
        model_step = 0 if k == 0 else p.step_of[k - 1]
        if k == 0:
            text = "initial state"
        elif model_step is None:
            text = f"glue: {p.ops[k - 1]}"
        else:
            action = steps[model_step][0]
            assert action is not None
            text = describe_action(action)
        step = Step(k, model_step, text, line.get("state"))
        if not line["ok"]:
            step.refused = (line["kind"], line["detail"])
        elif model_step is not None and _between_one_call(p, k, states[model_step]):
            step.refused = (
                "inside_one_call",
                "the model's follower took the HW of a diverging fetch response and has yet "
                "to truncate (KAFKA-14704's window); Kafka does both in one "
                "processFetchRequest call, so no step can come between them on its classes",
            )
        elif model_step is not None and not _inside_one_call(p, k):
            step.differences = compare(
                states[model_step], line["state"], epochs, acked,
                answers_any_epoch=not model.behaviour.fetch_answer_checks_epoch,
            )  # fmt: skip
            if step.differences and _past_epoch_bound(
                config, states[model_step], line["state"], epochs
            ):
                step.differences = []
                step.refused = (
                    "model_bound",
                    f"Kafka's controller started a leader epoch past the model's bound "
                    f"(epochs = {config.epochs}), where the model's controller could not",
                )
        out.append(step)
        if step.refused or step.differences:
            break
    bad = next((s for s in out if s.refused or s.differences), None)
    if bad is None and len(out) < len(p.ops) + 1:
        raise HarnessUnavailable(f"the harness stopped after {len(out) - 1} of {len(p.ops)} steps")
    verdict = "agrees" if bad is None else ("refused" if bad.refused else "disagrees")
    return ConformResult(config.mode, header.get("kafka", config.mode), verdict, out, p, states)


def walk_paths(
    config: Config, walks: int, seed: int, depth: int, swarm: bool
) -> list[list[Action]]:
    """Seeded random walks of the model, each kept whole and walked to its depth without
    stopping at a violation (Kafka is asked to take every step), with only the shrinks
    Kafka's clock can time (harness/walks.py)."""
    return timeable_walks(config, walks, seed, depth, swarm)


def conform_walks(
    config: Config,
    walks: int,
    seed: int = 0,
    depth: int = 30,
    swarm: bool = True,
    batch: int = 50,
    on_batch: Callable[[int, int], None] | None = None,
    harness: Harness | None = None,
) -> list[ConformResult]:
    """Differential testing: ``walks`` random walks through the model and through Kafka,
    ``batch`` walks per JVM."""
    check_expressible(config)
    harness = harness or build(config.mode)
    paths = walk_paths(config, walks, seed, depth, swarm)
    results: list[ConformResult] = []
    for start in range(0, len(paths), batch):
        results += conform_many(config, paths[start : start + batch], harness=harness)
        if on_batch:
            on_batch(len(results), len(paths))
    return results
