"""Kafka partition replication as z3 terms: the symbolic twin of model/kafka/replication.py.

:class:`KafkaSymbolic` implements :class:`model.interface.SymbolicModel` for one
configuration.  Its action instances are the explicit model's actions with
concrete arguments; :meth:`KafkaSymbolic.guard` mirrors the preconditions of
``KafkaReplication.actions`` and :meth:`KafkaSymbolic.effect` the ``_do_<name>``
methods followed by the ghost update ``_record_commits``, as
``KafkaReplication.next_state`` applies them.  The rules live in the mixins of
this package, one module per explicit module; tests/test_symbolic_kafka.py
checks them against the explicit model state by state.
"""

from __future__ import annotations

from collections.abc import Hashable

import z3
from z3.z3 import _to_expr_ref

from replcheck.model.interface import Action
from replcheck.model.kafka.config import Config
from replcheck.model.kafka.releases import ON_FETCH, Behaviour
from replcheck.model.kafka.replication import ACTION_PARAMS, KafkaReplication
from replcheck.model.kafka.state import (
    EPOCH_RESPONSE,
    MUST_TRUNCATE,
    NO_LEADER,
    TRUNCATE_PENDING,
    State,
    members,
)
from replcheck.model.kafka.symbolic.epochs import view
from replcheck.model.kafka.symbolic.messages import SymMessages
from replcheck.model.kafka.symbolic.state import (
    Bool,
    Layout,
    SymReplica,
    SymState,
    leaves,
    rebuild,
    same,
)


class KafkaSymbolic(SymMessages):
    """One partition on ``config.replicas`` brokers, as z3 terms (see the module doc).

    ``sort``: "bv" (signed BitVecs, the default: with bit-blasting the 0.10.2 BMC
    smoke run takes 39 s, against 468 s with Ints) or "int"; the rules are the same.
    """

    def __init__(self, config: Config, sort: str = "bv"):
        self.config = config
        self.behaviour: Behaviour = config.rules()
        self.atomic = config.atomic
        self.n = config.replicas
        self.ids = range(self.n)
        self.records = config.records
        self.layout = Layout(config, self.behaviour, sort)
        self.a = self.layout.arith
        self.explicit = KafkaReplication(config)
        self.shrink_keeps_epoch = self.explicit.shrink_keeps_epoch
        self._instances: list[Action] | None = None
        self._template: SymState | None = None
        self._cache: dict[tuple[str, Action], object] = {}
        self._asts: dict[int, tuple] = {}

    # ------------------------------------------------------------ protocol

    def fresh(self, tag: str) -> SymState:
        """A symbolic state of fresh constants named ``tag.<variable>``."""
        return self.layout.fresh(tag)

    def domain(self, s: SymState) -> z3.BoolRef:
        """Every variable in its range, unused slots canonical (see Layout.domain)."""
        return self.layout.domain(s)

    def init(self, s: SymState) -> z3.BoolRef:
        """``s`` is one of KafkaReplication.init_states() (there is one)."""
        return z3.Or(*[self.layout.init(s, x) for x in self.explicit.init_states()])

    def variables(self, s: SymState) -> list:
        """Every z3 term of ``s`` (or of an effect), in the layout's fixed order."""
        a = self.a
        return [a.boolean(x) if isinstance(x, bool) else a.num(x) for x in leaves(s)]

    def same(self, s: SymState, t: SymState) -> z3.BoolRef:
        """All variables equal: the encoding is canonical, so this is state equality."""
        return same(s, t)

    def encode(self, state: Hashable) -> SymState:
        """The explicit state as z3 numerals (EncodingError if it exceeds the layout)."""
        return self.layout.encode(state)

    def decode(self, solution: z3.ModelRef, s: SymState) -> State:
        """The explicit state ``s`` stands for in the z3 model ``solution``."""
        return self.layout.decode(solution, s)

    def overflow(self, s: SymState) -> z3.BoolRef:
        """See Layout.overflow: a successor past the layout's bounds."""
        return self.layout.overflow(s)

    def instances(self) -> list[Action]:
        """Every action with concrete args that this configuration can enable."""
        if self._instances is None:
            self._instances = self._all_instances()
        return list(self._instances)

    def _all_instances(self) -> list[Action]:
        kinds = set(self.explicit.action_kinds())
        cfg = self.config
        out: list[Action] = []

        def add(name: str, *args: int) -> None:
            if name in kinds:
                out.append(Action(name, args))

        for i in self.ids:
            others = [j for j in self.ids if j != i]
            add("restart", i)
            add("shutdown", i)
            add("replace_disk", i)
            add("report_dir", i)
            for new_leader in [NO_LEADER, *others]:
                add("notice_crash", i, new_leader)
            if cfg.crashes:
                for keep in range(cfg.records + 1):
                    add("crash", i, keep)
            add("checkpoint_hw", i)
            add("notice_restart", i)
            if cfg.fencing:
                for new_leader in [NO_LEADER, *others]:
                    add("fence", i, new_leader)
                add("unfence", i)
            add("deliver", i)
            add("deliver_latest", i)
            if cfg.records:
                add("write", i)
            for f in others:
                add("shrink_isr", i, f)
            for followers in range(1 << len(self.ids)):
                if not followers >> i & 1 and followers.bit_count() >= 2:
                    add("shrink_isr_set", i, followers)
            for leader in others:
                add("fetch_request", i, leader)
                add("fetch", i, leader)
                add("epoch_request", i, leader)
                add("truncate", i, leader)
            add("fetch_response", i)
            add("epoch_response", i)
            add("diverging_truncate", i)
            add("alter_isr", i)
            add("apply_isr", i)
            add("reapply_isr", i)
            add("elect", i)
        return out

    def guard(self, s: SymState, action: Action) -> z3.BoolRef:
        """``action`` is among ``KafkaReplication.actions(s)``."""
        return self._substituted("guard", s, action)

    def effect(self, s: SymState, action: Action) -> SymState:
        """``KafkaReplication.next_state(s, action)``, where the guard holds."""
        return self._substituted("effect", s, action)

    # The terms are built once over a template state and substituted: building
    # them is Python work, substituting is z3's.

    def template(self) -> SymState:
        """The state the cached guard and effect terms are built over."""
        if self._template is None:
            self._template = self.fresh("_t")
        return self._template

    def guard_term(self, action: Action) -> z3.BoolRef:
        """The guard over :meth:`template` (built once)."""
        key = ("guard", action)
        if key not in self._cache:
            self._cache[key] = z3.simplify(self.build_guard(self.template(), action))
        return self._cache[key]

    def effect_term(self, action: Action) -> SymState:
        """The effect over :meth:`template` (built once)."""
        key = ("effect", action)
        if key not in self._cache:
            effect = self.build_effect(self.template(), action)
            self._cache[key] = rebuild(effect, iter(z3.simplify(x) for x in leaves(effect)))
        return self._cache[key]

    def _substituted(self, kind: str, s: SymState, action: Action) -> object:
        if kind == "guard":
            return self.substitute(self.guard_term(action), s)
        term = self.effect_term(action)
        return rebuild(term, iter(self.substitute(x, s) for x in leaves(term)))

    def substitute(self, term: z3.ExprRef, s: SymState) -> z3.ExprRef:
        """``term`` over the template with ``s``'s variables in its place.

        Calls Z3_substitute directly: z3.substitute's Python checks of every pair
        cost a hundred times the substitution itself (measured on the transition).
        """
        sources = self._arrays(self.template())
        targets = self._arrays(s)
        ctx = term.ctx
        out = z3.Z3_substitute(ctx.ref(), term.as_ast(), len(sources), sources, targets)
        return _to_expr_ref(out, ctx)

    def _arrays(self, s: SymState) -> object:
        """``s``'s variables as a ctypes array of ASTs (kept with ``s`` itself, so the
        id the cache is keyed on cannot be reused while the entry lives)."""
        hit = self._asts.get(id(s))
        if hit is None or hit[0] is not s:
            terms = [self.a.boolean(x) if isinstance(x, bool) else self.a.num(x) for x in leaves(s)]
            hit = (s, terms, (z3.Ast * len(terms))(*[x.as_ast() for x in terms]))
            if len(self._asts) > 64:
                self._asts.clear()
            self._asts[id(s)] = hit
        return hit[2]

    # ------------------------------------------------------------- guards

    def build_guard(self, s: SymState, action: Action) -> z3.BoolRef:
        """Mirrors the preconditions in KafkaReplication.actions / _follower_actions."""
        cfg, b = self.config, self.behaviour
        name, args = action
        i = args[0]
        r = s.replicas[i]
        live = s.ctrl_live[i]
        if name == "restart":
            return z3.And(z3.Not(r.alive), z3.Not(z3.And(b.controller_sees_bounces, live)))
        if name == "replace_disk":
            on_disk = [r.log_len != 0, r.hw_checkpoint != 0, r.clean_shutdown]
            if self.layout.reports_dirs:
                on_disk.append(z3.Not(r.dir_unreported))
            on_disk = z3.Or(on_disk)
            return z3.And(z3.Not(r.alive), cfg.disk_loss, on_disk)
        if name in ("notice_crash", "fence"):  # a crash seen, or a running broker fenced
            seen = z3.Not(r.alive) if name == "notice_crash" else z3.And(r.alive, cfg.fencing)
            return z3.And(
                seen,
                live,
                self._crash_notice_possible(s, i),
                self._is_failover_choice(s, i, args[1]),
            )
        if name == "alter_isr":
            return self._has_request(s, i)
        if name == "elect":
            preferred = z3.And(self._can_bump(s), s.ctrl_leader != i, live, s.ctrl_isr[i])
            preferred = self._may_lead(s, i, preferred)
            if not cfg.elr:  # the balancer's last-known-leader recovery needs the ELR
                return preferred
            return z3.Or(preferred, self._last_known_recovery(s, s.ctrl_live, i))
        alive = r.alive
        if name == "crash":
            keep = args[1]
            fits = keep <= r.log_len if cfg.lossy_crash else r.log_len == keep
            return z3.And(alive, s.crashes < cfg.crashes, fits)
        if name == "shutdown":
            return z3.And(alive, s.crashes < cfg.crashes, cfg.clean_shutdown)
        if name == "checkpoint_hw":
            return z3.And(alive, r.hw_checkpoint != r.hw)
        if name == "notice_restart":
            return z3.And(alive, z3.Not(live), z3.Not(r.fenced))
        if name == "unfence":  # ZooKeeper: registers again after its session expired
            return z3.And(alive, r.fenced, cfg.kraft or z3.Not(live))
        if name == "report_dir":
            return z3.And(alive, r.dir_unreported, z3.Or(s.ctrl_leader != i, self._can_bump(s)))
        # A fenced KRaft broker still applies the metadata log (KafkaReplication.actions);
        # to a ZooKeeper broker whose session expired the controller sends nothing.
        applies_records = z3.Or(live, r.fenced) if cfg.kraft else live
        if name == "deliver":
            epoch, _leader, _isr = self._next_request(s, i)
            return z3.And(alive, applies_records, epoch != 0)
        if name == "deliver_latest":
            return z3.And(
                alive,
                applies_records,
                cfg.controller_failover,
                self._failover_delivery_differs(s, i),
            )
        leads = r.leader == i
        if name == "write":
            room = s.written < cfg.records
            if cfg.acks == -1:
                room = z3.And(room, self.count(r.isr) >= cfg.min_insync_replicas)
            return z3.And(alive, leads, room)
        if name == "apply_isr":
            return z3.And(
                alive,
                leads,
                s.ctrl_leader == i,
                r.epoch == s.ctrl_epoch,
                z3.Not(r.zk_current),
                s.ctrl_isr_written,
            )
        if name == "reapply_isr":
            return z3.And(alive, leads, r.record_owed, self.some(r.pending_isr))
        if name in ("shrink_isr", "shrink_isr_set"):
            # The zkVersion guard only before 2.7 (KafkaReplication.actions).
            followers = [args[1]] if name == "shrink_isr" else members(args[1])
            return z3.And(
                alive,
                leads,
                self.a.true if b.alter_isr else r.zk_current,
                z3.Not(self.some(r.pending_isr)),
                self._no_isr_item(r),
                *[z3.And(r.isr[f], self._out_of_sync(r, f)) for f in followers],
            )
        follows = z3.And(alive, z3.Not(leads), r.leader != NO_LEADER)
        if name == "fetch_response":
            kind_ok = z3.And(
                r.if_kind != 0, r.if_kind != EPOCH_RESPONSE, r.if_kind != TRUNCATE_PENDING
            )
            return z3.And(follows, kind_ok)
        if name == "epoch_response":
            return z3.And(follows, r.if_kind == EPOCH_RESPONSE)
        if name == "diverging_truncate":
            return z3.And(follows, r.if_kind == TRUNCATE_PENDING)
        # A request to the leader the follower knows (_follower_actions).
        leader_id = args[1]
        lead = s.replicas[leader_id]
        reachable = z3.And(lead.alive, lead.leader == leader_id)
        if b.fenced_by_epoch:
            reachable = z3.And(reachable, lead.epoch == r.epoch)
        ready = z3.And(follows, r.leader == leader_id, r.if_kind == 0, reachable)
        must: Bool = False
        if b.truncation != ON_FETCH:
            must = r.truncation == MUST_TRUNCATE
        if name in ("fetch_request", "fetch"):
            return z3.And(ready, z3.Not(must))
        if name == "epoch_request":
            return z3.And(ready, must)
        if name == "truncate":
            defined, _offset = self.whole_exchange(view(r), view(lead))
            return z3.And(ready, must, defined)
        raise ValueError(f"unknown action {action}")

    # ------------------------------------------------------------- effects

    def build_effect(self, s: SymState, action: Action) -> SymState:
        """Mirrors KafkaReplication.next_state: the action's rule, then _record_commits."""
        if action.name not in ACTION_PARAMS:
            raise ValueError(f"unknown action {action}")
        rule = getattr(self, f"_do_{action.name}")
        return self._record_commits(rule(s, *action.args))

    def true_leaders(self, s: SymState) -> list[Bool]:
        """Per replica: it is ``model.kafka.state.true_leader(s)`` (at most one is)."""
        return [
            z3.And(
                s.ctrl_leader == j,
                r.alive,
                r.epoch == s.ctrl_epoch,
                r.leader == j,
            )
            for j, r in enumerate(s.replicas)
        ]

    def _out_of_sync(self, r: SymReplica, f: int) -> Bool:
        """Mirrors the shrink guard of KafkaReplication.actions (KAFKA-7152)."""
        if not self.behaviour.caught_up_stays_in_isr:
            return self.a.true
        return r.remote[f] != r.log_len

    def _record_commits(self, s: SymState) -> SymState:
        """Mirrors KafkaReplication._record_commits."""
        known = s.committed_len
        out = s
        zero = self.num(0)
        for j, is_leader in enumerate(self.true_leaders(s)):
            r = s.replicas[j]
            prefix = [known <= r.log_len]
            for k in range(self.records):
                same_record = z3.And(
                    r.log_ep[k] == s.committed_ep[k], r.log_id[k] == s.committed_id[k]
                )
                prefix.append(z3.Implies(k < known, same_record))
            grows = z3.And(is_leader, r.hw > known, *prefix)
            length = self.mn(r.hw, r.log_len)
            grown = s.replace(
                committed_len=length,
                committed_ep=tuple(self.ite(k < length, x, zero) for k, x in enumerate(r.log_ep)),
                committed_id=tuple(self.ite(k < length, x, zero) for k, x in enumerate(r.log_id)),
            )
            out = self.ite(grows, grown, out)
        return out
