"""Random walks of the model for differential testing, restricted to shrinks Kafka can time.

The model has no clock, so its leader may drop any non-empty set of lagging followers.
Kafka's leader drops every follower whose last catch-up is older than
``replica.lag.time.max.ms``, and a leader taking a new epoch sets every ISR follower's
last catch-up to that moment (``Replica.resetReplicaState``): until one of them catches
up again, they are out of sync together.  A walk that drops one of them alone stops at a
step no clock gives (``unrealizable_timing``) and tests nothing after it, so these walks
skip such shrinks: a shrink must take every lagging follower still tied to the leader's
epoch start.  Walk ``i`` of seed ``S`` draws from the same generator as ``replcheck
walk``'s, so it is the same walk until the first shrink this skips.
"""

from __future__ import annotations

from replcheck.checker.walks.walk import _choose, swarm_weights, walk_rng
from replcheck.model.interface import Action
from replcheck.model.kafka.config import Config
from replcheck.model.kafka.replication import KafkaReplication
from replcheck.model.kafka.state import State
from replcheck.model.registry import action_params


class _Ties:
    """Per leader, the ISR followers whose last catch-up is still the epoch's start."""

    def __init__(self, n: int):
        self.n = n
        self.ties: dict[int, int] = {}  # leader -> mask
        self.epoch: dict[int, int] = {}  # leader -> the epoch it leads

    def observe(self, before: State | None, action: Action | None, after: State) -> None:
        if before is not None and action is not None and action.name == "fetch_request":
            follower, leader = action.args
            if before.replicas[follower].leo >= before.replicas[leader].leo:
                self.ties[leader] = self.ties.get(leader, 0) & ~(1 << follower)
        for i, r in enumerate(after.replicas):
            leads = r.alive and r.leader == i
            if leads and self.epoch.get(i) != r.epoch:
                self.epoch[i] = r.epoch
                self.ties[i] = r.isr & ~(1 << i)
            elif not leads:
                self.epoch.pop(i, None)
                self.ties.pop(i, None)

    def timeable(self, s: State, action: Action) -> bool:
        if action.name not in ("shrink_isr", "shrink_isr_set"):
            return True
        leader = action.args[0]
        dropped = 1 << action.args[1] if action.name == "shrink_isr" else action.args[1]
        r = s.replicas[leader]
        lagging_ties = 0
        for f in range(self.n):
            if self.ties.get(leader, 0) >> f & 1 and r.isr >> f & 1 and r.remote_leo[f] != r.leo:
                lagging_ties |= 1 << f
        return lagging_ties & ~dropped == 0


def timeable_walks(
    config: Config, walks: int, seed: int, depth: int, swarm: bool
) -> list[list[Action]]:
    """``walks`` seeded walks of ``depth`` steps, no invariant checked, each kept whole."""
    model = KafkaReplication(config)
    names = tuple(action_params(config))
    out = []
    for k in range(walks):
        rng = walk_rng(seed, k)
        weights = dict(zip(names, swarm_weights(rng, names), strict=True)) if swarm else None
        state = model.init_states()[0]
        ties = _Ties(model.n)
        ties.observe(None, None, state)
        path: list[Action] = []
        for _ in range(depth):
            enabled = [a for a in model.actions(state) if ties.timeable(state, a)]
            if not enabled:
                break
            action = _choose(rng, enabled, weights)
            after = model.next_state(state, action)
            ties.observe(state, action, after)
            path.append(action)
            state = after
        out.append(path)
    return out
