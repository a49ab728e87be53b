"""The z3 model (model/kafka/symbolic) against the explicit one, state by state.

The explicit model is the source of truth.  For states reached by seeded random
walks over many configurations, every action instance's z3 guard, evaluated on
the encoded state, must say what ``KafkaReplication.actions`` says; where it is
enabled the z3 effect must be the encoded ``next_state``, and decode back to it;
every z3 invariant must agree with the explicit one; every state must lie in the
encoding's domain and decode from a z3 model to itself.

Evaluating the terms is the cost: per configuration the guards, invariants and
domain are packed into one bit-vector term and each instance's effect into
another, built once over the template variables; a state is then one
``substitute`` + ``simplify`` for the guards, and one more per enabled action.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, field

import pytest
import z3

from replcheck.invariants import INVARIANTS
from replcheck.invariants.kafka.symbolic import Z3_INVARIANTS
from replcheck.model import Action, KafkaReplication, make_config
from replcheck.model.kafka.state import State
from replcheck.model.kafka.symbolic import KafkaSymbolic
from replcheck.model.kafka.symbolic.state import leaves


class Packed:
    """Terms over a model's template packed into bit-vectors, read back as Python values."""

    def __init__(self, model: KafkaSymbolic, terms: list[z3.ExprRef]):
        self.model = model
        a = model.a
        one, zero = z3.BitVecVal(1, 1), z3.BitVecVal(0, 1)
        parts, self.widths, self.kinds = [], [], []
        for term in terms:
            if z3.is_bool(term):
                parts.append(z3.If(term, one, zero))
                self.widths.append(1)
                self.kinds.append(bool)
            else:
                parts.append(z3.Int2BV(term, a.width) if a.sort == "int" else term)
                self.widths.append(a.width)
                self.kinds.append(int)
        self.term = z3.Concat(*parts) if len(parts) > 1 else parts[0]

    def values(self, sources: object, targets: object, count: int) -> list[int | bool]:
        """The terms' values with the template's variables ``sources`` replaced by
        ``targets`` (ctypes arrays: z3.substitute's Python checks cost 10x the work)."""
        ctx = self.term.ctx
        term = z3.Z3_substitute(ctx.ref(), self.term.as_ast(), count, sources, targets)
        value = z3.simplify(z3.BitVecRef(term, ctx))
        assert z3.is_bv_value(value), f"did not evaluate to a constant: {value.sexpr()[:200]}"
        bits = value.as_long()
        out: list[int | bool] = []
        for width, kind in zip(reversed(self.widths), reversed(self.kinds), strict=True):
            chunk = bits & ((1 << width) - 1)
            bits >>= width
            if kind is bool:
                out.append(bool(chunk))
            else:
                out.append(chunk - (1 << width) if chunk >> (width - 1) else chunk)
        out.reverse()
        return out


@dataclass
class Differential:
    """One configuration's explicit and symbolic models, and the packed terms."""

    config: object
    sort: str = "bv"
    explicit: KafkaReplication = field(init=False)
    symbolic: KafkaSymbolic = field(init=False)

    def __post_init__(self) -> None:
        self.explicit = KafkaReplication(self.config)
        self.symbolic = sm = KafkaSymbolic(self.config, self.sort)
        self.instances = sm.instances()
        tpl = sm.template()
        self.template = list(leaves(tpl))
        self.sources = (z3.Ast * len(self.template))(*[x.as_ast() for x in self.template])
        checks = [sm.guard_term(a) for a in self.instances]
        checks += [z3.simplify(Z3_INVARIANTS[inv.id](sm, tpl)) for inv in INVARIANTS]
        checks.append(z3.simplify(sm.domain(tpl)))
        self.checks = Packed(sm, checks)
        self.effects = {a: Packed(sm, list(leaves(sm.effect_term(a)))) for a in self.instances}
        self.counts = {"states": 0, "instances": 0, "enabled": 0}
        self.enabled_in = Counter()  # action name: how many checked states enable it

    def check(self, state: State) -> list[Action]:
        """Assert that both models agree on ``state``; its enabled actions."""
        sm, layout = self.symbolic, self.symbolic.layout
        values = layout.values(state)
        assert layout.state(values) == state, "decode(encode(state)) != state"
        a = sm.a
        targets = (z3.Ast * len(values))(
            *[(a.boolean(v) if isinstance(v, bool) else a.val(v)).as_ast() for v in values]
        )
        pairs = (self.sources, targets, len(values))
        enabled = list(self.explicit.actions(state))
        enabled_set = set(enabled)
        assert enabled_set <= set(self.instances), f"uncovered: {enabled_set - set(self.instances)}"
        checked = self.checks.values(*pairs)
        k = len(self.instances)
        for action, guard in zip(self.instances, checked[:k], strict=True):
            assert guard == (action in enabled_set), f"guard of {action} is {guard} on {state}"
        for inv, holds in zip(INVARIANTS, checked[k:-1], strict=True):
            assert holds == (inv(state) is None), f"invariant {inv.id} is {holds} on {state}"
        assert checked[-1], f"state outside the domain: {state}"
        for action in enabled:
            after = self.explicit.next_state(state, action)
            got = self.effects[action].values(*pairs)
            expected = layout.values(after)
            if got != expected:
                names = [str(x) for x in self.template]
                diff = [(nm, g, e) for nm, g, e in zip(names, got, expected, strict=True) if g != e]
                raise AssertionError(f"effect of {action} on {state}: {diff[:8]}")
            assert layout.state(got) == after
        self.counts["states"] += 1
        self.counts["instances"] += k
        self.counts["enabled"] += len(enabled)
        self.enabled_in.update({a.name for a in enabled})
        return enabled

    def walks(self, rng: random.Random, walks: int, steps: int) -> None:
        """Random walks that pick an action name first, then one of its instances, so
        that rare actions (an epoch answer, a diverging truncation) are taken often."""
        for _ in range(walks):
            state = self.explicit.init_states()[0]
            for _step in range(steps):
                enabled = self.check(state)
                if not enabled:
                    break
                name = rng.choice(sorted({a.name for a in enabled}))
                action = rng.choice([a for a in enabled if a.name == name])
                state = self.explicit.next_state(state, action)

    def every_state(self) -> int:
        """Check every reachable state (small configurations only); how many."""
        seen = set(self.explicit.init_states())
        frontier = list(seen)
        while frontier:
            following = []
            for state in frontier:
                for action in self.check(state):
                    after = self.explicit.next_state(state, action)
                    if after not in seen:
                        seen.add(after)
                        following.append(after)
            frontier = following
        return len(seen)


# Configurations across the release table and the options (kraft, ELR, crashes,
# lossy crash, unclean election, controller failover, acks, min ISR, atomic, broken
# rules).  Each is (values, walks, steps) for the default suite.
CONFIGS: list[dict] = [
    dict(mode="0.10.2"),
    dict(mode="0.10.2", atomic=True, unclean_election=True),
    dict(mode="0.11.0", lossy_crash=True, controller_failover=True),
    dict(mode="1.1.1", acks=1, crashes=2),
    dict(mode="1.1.1", atomic=True),
    dict(mode="2.0.0", controller_failover=True),
    dict(mode="2.0.1", atomic=True, lossy_crash=True),
    dict(mode="2.1.0", replicas=3, records=2, min_insync_replicas=2),
    dict(mode="2.1.1", unclean_election=True, acks=0),
    dict(mode="2.4.0", lossy_crash=True, epochs=4),
    dict(mode="2.7.0", replicas=3, min_insync_replicas=2),
    dict(mode="2.7.0", broken_rule="maximal-isr", atomic=True),
    dict(mode="2.8.0", lossy_crash=True),
    dict(mode="2.8.0", atomic=True, unclean_election=True),
    dict(mode="3.3.0", kraft=True, replicas=3),
    dict(mode="3.3.0", kraft=True, records=3, epochs=4),  # record replays (reapply_isr)
    dict(mode="3.4.0", kraft=True, lossy_crash=True),
    dict(mode="3.4.0", atomic=True),
    dict(mode="3.5.0", kraft=True, broken_rule="isr-join-by-fetch", records=1),
    dict(mode="3.6.0", kraft=True, controller_failover=False, acks=1),
    dict(mode="3.7.0", min_insync_replicas=2, unclean_election=True),
    dict(mode="3.8.0", kraft=True, unclean_election=True),  # ignored (KAFKA-12670)
    dict(mode="4.0.0", elr=True, replicas=3, min_insync_replicas=2),
    dict(mode="4.1.0", replicas=3, min_insync_replicas=2, lossy_crash=True),
    dict(mode="4.1.0", atomic=True, min_insync_replicas=2),
    dict(mode="4.1.0", replicas=3, min_insync_replicas=2, unclean_election=True, crashes=2),
    dict(mode="4.1.0", records=3, crashes=0),  # record replays (reapply_isr)
    dict(mode="4.1.0", fencing=True),  # fence / unfence a running broker
    dict(mode="3.5.0", kraft=True, fencing=True, replicas=3),  # a fence bumps the epoch
    # ZooKeeper: an expired session; the registration is owed the current state.
    dict(mode="2.4.0", fencing=True, replicas=3),
    dict(mode="2.8.0", fencing=True, controller_failover=True),
    dict(mode="4.1.0", clean_shutdown=True, disk_loss=True, min_insync_replicas=2, crashes=2),
    dict(mode="2.1.0", disk_loss=True, unclean_election=True),
    # A replaced disk's broker cannot lead until it reports its directory (KIP-858), and
    # in 4.0 the last known leader is elected before (KAFKA-19522).
    dict(mode="3.9.1", kraft=True, disk_loss=True, crashes=2, unclean_election=True),
    dict(mode="4.0.0", elr=True, disk_loss=True, crashes=2, clean_shutdown=True),
    # 4.1.1: the last known leader recorded when the partition loses its leader; 4.3.0:
    # the directory report keeps the ELR (issue 45).
    dict(mode="4.1.1", disk_loss=True, crashes=3, epochs=4, records=1),
    dict(mode="4.3.0", clean_shutdown=True, disk_loss=True, min_insync_replicas=2, crashes=2),
]


def _id(values: dict) -> str:
    return ",".join(f"{k}={v}" for k, v in values.items())


@pytest.mark.parametrize("values", CONFIGS, ids=_id)
def test_symbolic_model_agrees_with_the_explicit_one(values):
    diff = Differential(make_config(values))
    diff.walks(random.Random(_id(values)), walks=6, steps=25)
    assert diff.counts["states"] > 50


@pytest.mark.parametrize(
    "values",
    [dict(mode="2.0.1", lossy_crash=True), dict(mode="3.4.0", kraft=True, replicas=3)],
    ids=_id,
)
def test_int_sort_agrees_too(values):
    """The rules are written once for both number sorts: z3 Ints follow the model too."""
    diff = Differential(make_config(values), sort="int")
    diff.walks(random.Random(_id(values)), walks=4, steps=25)


@pytest.mark.slow
@pytest.mark.parametrize("values", CONFIGS, ids=_id)
def test_symbolic_model_agrees_on_longer_walks(values):
    diff = Differential(make_config(values))
    diff.walks(random.Random("slow" + _id(values)), walks=30, steps=60)


@pytest.mark.slow
@pytest.mark.parametrize(
    "values",
    [
        dict(mode="0.10.2", records=1),
        dict(mode="2.0.0", records=1, epochs=2, atomic=True),
        dict(mode="2.8.0", records=1, epochs=2),
        dict(mode="3.4.0", kraft=True, records=1, epochs=2),  # epochs past the bound
        dict(mode="4.1.0", records=1, epochs=1, crashes=2, min_insync_replicas=2),
        # 120,016 states since finding F3's replay, 6 to 7 minutes (93 s since a 3.0+
        # leader waits for each answer, KAFKA-12686): heavy.
        pytest.param(
            dict(mode="4.1.0", records=1, epochs=2, crashes=2, min_insync_replicas=2),
            marks=pytest.mark.heavy,
        ),
        # Both were in the default run until F3 grew them.  The KRaft 3.6+ fence (39,216
        # states, 2 minutes, heavy until KAFKA-12686's rule: 15,763 states, 29 s),
        dict(mode="4.1.0", records=1, epochs=2),
        # and the ELR emptied by unclean registrations, the last known leader elected at
        # another broker's registration (13,568 states, under a minute).
        dict(mode="4.1.0", records=0, epochs=3, crashes=2, min_insync_replicas=2),
        # A running broker fenced and unfenced, after and before 3.6's fence that keeps
        # the leader epoch (3,842 and 3,010 states, about 30 s each; the second is heavy,
        # and the walks check 3.5.0 KRaft with fencing on 3 replicas).
        dict(mode="4.1.0", records=1, epochs=1, fencing=True),
        pytest.param(
            dict(mode="3.5.0", kraft=True, records=1, epochs=1, fencing=True),
            marks=pytest.mark.heavy,
        ),
        # ZooKeeper's expired session, before and after AlterIsr (and with a controller
        # failover, whose delivery an owed broker does not need).
        dict(mode="2.4.0", records=1, epochs=2, fencing=True),
        dict(mode="2.8.0", records=1, epochs=1, fencing=True, controller_failover=True),
        # A clean shutdown keeps an ELR member; a replaced disk (2,714 and 5,544 states).
        dict(mode="4.1.0", records=1, epochs=1, clean_shutdown=True, disk_loss=True),
        dict(
            mode="4.1.0", records=0, epochs=2, crashes=2, min_insync_replicas=2, clean_shutdown=True
        ),
    ],
    ids=_id,
)
def test_symbolic_model_agrees_on_every_reachable_state(values):
    assert Differential(make_config(values)).every_state() > 1000


@pytest.mark.parametrize(
    ("values", "actions"),
    [
        (dict(mode="4.1.0", records=1, epochs=1), ["reapply_isr", "apply_isr"]),
        # the adopted change grew the ISR
        (dict(mode="3.4.0", kraft=True, records=1, epochs=1), ["reapply_isr"]),
    ],
    ids=["4.1.0", "3.4.0-kraft"],
)
def test_symbolic_model_agrees_on_every_state_of_a_kraft_record_replay(values, actions):
    """KRaft (KAFKA-13790): a leader replays the record of the change it adopted from
    the AlterPartition response and drops the change it proposed since (reapply_isr),
    which the controller may still accept; and (4.1.0, metadata.version 3.6+) a fenced
    follower leaves the ISR without a new leader epoch (apply_isr): every reachable state."""
    diff = Differential(make_config(values))
    assert diff.every_state() > 1500  # 4.1.0: 2,510 (1,935 before stale proposals, 2026-12-03)
    assert all(diff.enabled_in[name] > 0 for name in actions)


def test_symbolic_model_follows_a_record_replay():
    """The shortest replay in 4.1.0: the leader adopts a shrink, proposes to take the
    follower back, replays the shrink's record and drops the proposal, which stays
    queued; the controller accepts it and the leader, no longer waiting, applies it."""
    diff = Differential(make_config(dict(mode="4.1.0")))
    state = diff.explicit.init_states()[0]
    steps = [
        Action("shrink_isr", (0, 1)),
        Action("alter_isr", (0,)),
        Action("fetch_request", (1, 0)),
        Action("reapply_isr", (0,)),
        Action("alter_isr", (0,)),
        Action("apply_isr", (0,)),
    ]
    for action in steps:
        assert action in diff.check(state), action
        state = diff.explicit.next_state(state, action)
    diff.check(state)
    lead = state.replicas[0]
    assert (lead.isr, state.ctrl_isr, lead.record_owed, state.alter_requests) == (3, 3, 0, ())


def test_encode_decode_through_a_z3_model():
    """decode(solution, s) reads a state back from a z3 model, and init() is the initial state."""
    config = make_config(dict(mode="2.8.0", replicas=3))
    model = KafkaSymbolic(config)
    explicit = KafkaReplication(config)
    rng = random.Random(7)
    state = explicit.init_states()[0]
    for _ in range(30):
        state = explicit.next_state(state, rng.choice(list(explicit.actions(state))))
    s = model.fresh("s")
    solver = z3.Solver()
    solver.add(model.same(s, model.encode(state)), model.domain(s))
    assert solver.check() == z3.sat
    assert model.decode(solver.model(), s) == state
    solver = z3.Solver()
    solver.add(model.init(s))
    assert solver.check() == z3.sat
    assert model.decode(solver.model(), s) == explicit.init_states()[0]


def test_a_changed_rule_fails_the_differential_test(monkeypatch):
    """The test follows the explicit model: a rule the encoding does not mirror fails it."""
    from replcheck.model.kafka.broker import BrokerRules

    original = BrokerRules._do_checkpoint_hw

    def lagging(self, s, i):  # a checkpoint that keeps one offset less
        s = original(self, s, i)
        r = s.replicas[i]
        return s.with_replica(i, r.replace(hw_checkpoint=max(0, r.hw_checkpoint - 1)))

    monkeypatch.setattr(BrokerRules, "_do_checkpoint_hw", lagging)
    diff = Differential(make_config(dict(mode="0.10.2")))
    with pytest.raises(AssertionError, match="checkpoint_hw"):
        diff.walks(random.Random(1), walks=10, steps=25)


def _directory_runs() -> list:
    from tests.test_kafka_4x import LEADERLESS_BOUNDS, LEADERLESS_FIRST
    from tests.test_kafka_faults import (
        DIR_BOUNDS,
        DIR_PREFIX,
        LAST_LEADER_BACK,
        LAST_LEADER_BOUNDS,
    )

    returns = [Action("report_dir", (0,)), Action("restart", (1,)), Action("notice_restart", (1,))]
    f4 = [*DIR_PREFIX, *returns]
    shutdowns = dict(clean_shutdown=True, disk_loss=True, **DIR_BOUNDS)
    back = [*LAST_LEADER_BACK, Action("report_dir", (0,))]
    balanced = [*DIR_PREFIX, Action("report_dir", (0,)), Action("elect", (0,))]
    again = dict(LAST_LEADER_BOUNDS, epochs=5)
    return [
        pytest.param(dict(kafka="4.1.0", **shutdowns), balanced, id="F4-balancer"),
        pytest.param(
            dict(kafka="4.0.0", **again), [*back, Action("elect", (0,))], id="4.0.0-again"
        ),
        pytest.param(dict(kafka="4.1.0", **shutdowns), f4, id="F4-4.1.0"),
        pytest.param(dict(kafka="4.0.0", elr=True, **shutdowns), f4, id="F4-4.0.0"),
        pytest.param(dict(kafka="3.9.1", kraft=True, **shutdowns), f4, id="3.9.1-kraft"),
        pytest.param(dict(kafka="4.0.0", **LAST_LEADER_BOUNDS), back, id="KAFKA-19522-4.0.0"),
        pytest.param(dict(kafka="4.1.0", **LAST_LEADER_BOUNDS), back, id="KAFKA-19522-4.1.0"),
        pytest.param(dict(kafka="4.3.0", **shutdowns), f4, id="F4-fixed-4.3.0"),
        pytest.param(dict(kafka="4.1.0", **LEADERLESS_BOUNDS), LEADERLESS_FIRST, id="lke-4.1.0"),
        pytest.param(dict(kafka="4.1.1", **LEADERLESS_BOUNDS), LEADERLESS_FIRST, id="lke-4.1.1"),
    ]


@pytest.mark.parametrize(("values", "actions"), _directory_runs())
def test_symbolic_model_agrees_around_a_directory_report(values, actions):
    """Every state of the directory-report runs of tests/test_kafka_faults.py, with every
    action enabled there (the walks seldom reach a report next to an election)."""
    diff = Differential(make_config(values))
    state = diff.explicit.init_states()[0]
    for action in actions:
        assert action in diff.check(state)
        state = diff.explicit.next_state(state, action)
    diff.check(state)
