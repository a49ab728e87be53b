"""The explicit state (model/kafka/state.py) as a fixed set of z3 variables.

Every variable-length part of a :class:`model.kafka.state.State` becomes fixed slots
plus a length, sized by the configuration's bounds (:class:`Layout`), and every
unused slot holds a canonical value (0 or False).  A state then maps to exactly
one assignment (``encode`` / ``decode`` are inverse), so two symbolic states are
the same state exactly when all their variables are equal (:func:`same`).

Layout, per replica (:class:`SymReplica`):

* ``log``: ``log_len`` and ``R`` slots ``(log_ep[k], log_id[k])``, the record's
  epoch and id (``model.kafka.state.make_record``), zero at and past ``log_len``;
* ``remote_leo``: ``remote_on`` (the tuple is not empty) and ``n`` slots;
* ``inflight``: ``if_kind`` (0 for nothing, else the tuple's first item), up to
  four fields ``if_a..if_d`` in the tuple's order, and for a FETCH_RESPONSE its
  records at their *absolute* log offsets (slot ``k`` holds the record for offset
  ``k``, ``if_a <= k < if_a + if_len``), so appending them needs no shifting;
* bitmasks of replicas (ISR, ...) are one Bool per replica; bitmasks of record
  ids (``pending``, ``acked``) one Bool per id 1..R (bit 0 is never set).

For the controller: ``committed`` as slots plus a length, ``ctrl_history`` as one
slot per epoch (its length is ``ctrl_epoch`` by construction: entry e-1 is epoch
e), ``alter_requests`` as slots plus a length.

Numbers are z3 Ints or signed BitVecs of one width (:class:`Arith`); the rules
only use ``+``, comparisons and ``If``, which mean the same for both.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import z3

from replcheck.model.kafka.config import Config
from replcheck.model.kafka.controller import shrink_keeps_epoch
from replcheck.model.kafka.releases import ON_FETCH, Behaviour
from replcheck.model.kafka.state import (
    DIVERGING,
    EPOCH_RESPONSE,
    FETCH_RESPONSE,
    NO_LEADER,
    OUT_OF_RANGE,
    TRUNCATE_PENDING,
    Replica,
    State,
    make_record,
    record_epoch,
    record_id,
)

Num = Any  # a z3 ArithRef or BitVecRef (or a Python int before coercion)
Bool = Any  # a z3 BoolRef (or a Python bool before coercion)


class EncodingError(ValueError):
    """An explicit state does not fit the layout's bounds (a bound is too small)."""


# ---------------------------------------------------------------- numbers


class Arith:
    """Numbers of one z3 sort: unbounded Ints, or signed BitVecs of ``width`` bits.

    The rules are written once with z3's operators (signed comparisons for
    BitVecs), so the sort is a choice per run; ``replcheck prove`` may measure.
    """

    def __init__(self, sort: str, width: int):
        if sort not in ("int", "bv"):
            raise ValueError(f"sort: expected 'int' or 'bv' (got {sort!r})")
        self.sort = sort
        self.width = width
        self._vals: dict[int, z3.ExprRef] = {}
        self.true = z3.BoolVal(True)
        self.false = z3.BoolVal(False)

    def var(self, name: str) -> z3.ExprRef:
        return z3.Int(name) if self.sort == "int" else z3.BitVec(name, self.width)

    def val(self, value: int) -> z3.ExprRef:
        """The z3 numeral for ``value`` (cached: the test builds many)."""
        out = self._vals.get(value)
        if out is None:
            out = z3.IntVal(value) if self.sort == "int" else z3.BitVecVal(value, self.width)
            self._vals[value] = out
        return out

    def num(self, value: Num) -> z3.ExprRef:
        return self.val(value) if isinstance(value, int) else value

    def boolean(self, value: Bool) -> z3.BoolRef:
        if isinstance(value, bool):
            return self.true if value else self.false
        return value

    def as_int(self, value: z3.ExprRef) -> int:
        """A numeral back to a Python int (BitVecs read as signed)."""
        if self.sort == "int":
            return value.as_long()
        return value.as_signed_long()


def _same_term(a: object, b: object) -> bool:
    if a is b:
        return True
    if isinstance(a, z3.ExprRef) and isinstance(b, z3.ExprRef):
        return a.eq(b)
    return False


# ---------------------------------------------------------------- layout


@dataclass(frozen=True)
class SymReplica:
    """One replica's variables (see the module docstring for the layout)."""

    alive: Bool
    epoch: Num
    log_len: Num
    log_ep: tuple
    log_id: tuple
    hw: Num
    hw_checkpoint: Num
    truncation: Num
    unwritten_epoch: Num
    pending: tuple  # Bools for record ids 1..R
    zk_current: Bool
    epoch_start: Num
    record_owed: Bool  # KRaft only (Layout.domain)
    alter_item: Bool  # 3.0+ only (Layout.domain)
    fenced: Bool  # --fencing only (Layout.domain)
    clean_shutdown: Bool  # --clean-shutdown only (Layout.domain)
    dir_unreported: Bool  # --disk-loss in KRaft 3.7+ only (Layout.domain)
    if_kind: Num
    if_a: Num
    if_b: Num
    if_c: Num
    if_d: Num
    if_len: Num
    if_ep: tuple
    if_id: tuple
    remote_on: Bool
    remote: tuple
    isr: tuple  # Bools for replicas 0..n-1
    pending_isr: tuple
    leader: Num

    def replace(self, **changes: object) -> SymReplica:
        return dataclasses.replace(self, **changes)


@dataclass(frozen=True)
class SymState:
    """The whole state's variables."""

    ctrl_leader: Num
    ctrl_epoch: Num
    ctrl_isr: tuple
    ctrl_live: tuple
    ctrl_elr: tuple
    ctrl_isr_written: Bool
    written: Num
    crashes: Num
    committed_len: Num
    committed_ep: tuple
    committed_id: tuple
    acked: tuple  # Bools for record ids 1..R
    hist_leader: tuple  # slot e-1: the leader of epoch e
    hist_isr: tuple  # slot e-1: the ISR of epoch e (a tuple of Bools)
    alt_len: Num
    alt_sender: tuple
    alt_epoch: tuple
    alt_ok: tuple
    alt_isr: tuple  # tuples of Bools
    alt_restarted: tuple  # tuples of Bools
    hides_stale_hw: Bool
    last_known_on_leaderless: Bool
    replicas: tuple  # SymReplica

    def replace(self, **changes: object) -> SymState:
        return dataclasses.replace(self, **changes)

    def with_replica(self, i: int, replica: SymReplica) -> SymState:
        reps = self.replicas
        return dataclasses.replace(self, replicas=reps[:i] + (replica,) + reps[i + 1 :])


def leaves(item: object) -> Iterator[object]:
    """Every variable of a symbolic state (or part of one), in a fixed order."""
    if dataclasses.is_dataclass(item):
        for field in dataclasses.fields(item):
            yield from leaves(getattr(item, field.name))
    elif isinstance(item, tuple):
        for x in item:
            yield from leaves(x)
    else:
        yield item


def rebuild(template: object, values: Iterator[object]) -> object:
    """The structure of ``template`` filled with ``values`` in :func:`leaves` order."""
    if dataclasses.is_dataclass(template):
        return type(template)(
            **{
                f.name: rebuild(getattr(template, f.name), values)
                for f in dataclasses.fields(template)
            }
        )
    if isinstance(template, tuple):
        return tuple(rebuild(x, values) for x in template)
    return next(values)


def epoch_slack(config: Config, b: Behaviour) -> int:
    """Extra leader epochs beyond ``config.epochs``: a KRaft shrink that bumps the epoch
    (model/kafka/controller.py ``_do_alter_isr``, before 3.6) is not held to that bound.

    Why this is enough: a bump keeps the leader, which shrinks a follower only
    while that follower's fetch offset is below its LEO; to be shrunk again the
    follower must rejoin, by fetching at or past the LEO the leader had when it took
    the bumped epoch.  So within one leadership (a new leader knows no offsets: one
    shrink per follower for free) each write allows one more shrink per follower,
    and leaderships number at most ``epochs + crashes``.  The differential test
    checks the bound on every state it reaches.
    """
    if not (config.kraft and b.kraft_shrink_bumps_epoch and b.alter_isr):
        return 0
    leaderships = config.epochs + config.crashes
    return (config.replicas - 1) * (config.records + leaderships)


def request_slots(config: Config, b: Behaviour, epochs: int) -> int:
    """How many ISR requests may be queued at once (``epochs``: the history slots).

    A leader proposes only with no change pending (model/kafka/broker.py
    ``_propose_isr``), whatever its cached partition version: one refused as stale
    leaves it pending.  It has none when it becomes leader, and after each event that
    dequeues one of its requests (adopted, refused as ineligible, or accepted and
    then applied); besides those, after a change the controller makes in its epoch
    and it applies (KRaft 3.6+: a fenced follower's removal, one per crash), and in
    KRaft after it replays the record of a change it adopted from the response
    (controller.py ``_do_reapply_isr``: one per adoption).  So at most one request
    per leadership (a broker leads each epoch at most once, plus once more after each
    crash), one per fence and one per replay are queued.

    Replays: the controller takes a sender's requests oldest first, and accepting
    one makes the others stale, so when the leader adopts one, its other requests
    are those it proposed while that one was queued: at most one, after the replay of
    the adoption before.  It may then propose, replay and propose again, so a
    leadership has at most three queued.  Before 3.6 a KRaft shrink bumps the epoch
    and the adopted changes add a member to the controller's ISR, which starts full
    and loses at most ``replicas - 1`` members per new epoch.  The differential test
    checks the bound on every state it reaches.

    From 3.0 (KAFKA-12686, ``Behaviour.one_isr_request_in_flight``) a broker process
    proposes only with no request of its own queued, so each broker has at most one
    queued per process it ran: ``replicas + crashes`` in all.  That bound is the one
    used with ``--fencing``, whose fences (each a change the leader applies, as a
    crash's is) the count above does not bound.
    """
    if not b.alter_isr:
        return 0
    if config.fencing and b.one_isr_request_in_flight:
        return config.replicas + config.crashes
    leaderships = epochs + config.crashes
    slots = leaderships
    if shrink_keeps_epoch(config):
        slots += config.crashes
    if config.kraft:
        replays = 2 * leaderships
        if b.kraft_shrink_bumps_epoch:
            replays = min(replays, (config.replicas - 1) * (epochs - 1))
        slots += replays
    return slots


class Layout:
    """The sizes of every slot array for one configuration, and the numbers' sort."""

    def __init__(self, config: Config, b: Behaviour, sort: str = "bv"):
        self.config = config
        self.behaviour = b
        self.n = config.replicas
        self.records = config.records  # R: log, committed and in-flight slots
        self.epochs = config.epochs + epoch_slack(config, b)  # history slots
        self.requests = request_slots(config, b, self.epochs)  # alter_requests slots
        top = max(2 * self.records, self.epochs + 2, config.crashes + 1, self.requests + 1, self.n)
        self.arith = Arith(sort, top.bit_length() + 2)
        kinds = {0}
        if not config.atomic:  # the coarse model consumes every response in its step
            kinds |= {FETCH_RESPONSE, OUT_OF_RANGE}
            if b.truncation == ON_FETCH:
                kinds.add(DIVERGING)
                if b.hw_before_diverging_truncation:
                    kinds.add(TRUNCATE_PENDING)
            else:
                kinds.add(EPOCH_RESPONSE)
        self.inflight_kinds = frozenset(kinds)
        self.reports_dirs = config.reports_dirs  # Replica.dir_unreported can be set

    # ------------------------------------------------------------ variables

    def fresh(self, tag: str) -> SymState:
        """A symbolic state of fresh constants named ``tag.<field>``."""
        a = self.arith
        n, R, E, Q = self.n, self.records, self.epochs, self.requests

        def num(name: str) -> z3.ExprRef:
            return a.var(f"{tag}.{name}")

        def boolean(name: str) -> z3.BoolRef:
            return z3.Bool(f"{tag}.{name}")

        def nums(name: str, size: int) -> tuple:
            return tuple(num(f"{name}.{k}") for k in range(size))

        def bools(name: str, size: int, first: int = 0) -> tuple:
            return tuple(boolean(f"{name}.{k}") for k in range(first, first + size))

        replicas = []
        for i in range(n):
            p = f"r{i}."
            replicas.append(
                SymReplica(
                    alive=boolean(p + "alive"),
                    epoch=num(p + "epoch"),
                    log_len=num(p + "log_len"),
                    log_ep=nums(p + "log_ep", R),
                    log_id=nums(p + "log_id", R),
                    hw=num(p + "hw"),
                    hw_checkpoint=num(p + "hw_checkpoint"),
                    truncation=num(p + "truncation"),
                    unwritten_epoch=num(p + "unwritten_epoch"),
                    pending=bools(p + "pending", R, 1),
                    zk_current=boolean(p + "zk_current"),
                    epoch_start=num(p + "epoch_start"),
                    record_owed=boolean(p + "record_owed"),
                    alter_item=boolean(p + "alter_item"),
                    fenced=boolean(p + "fenced"),
                    clean_shutdown=boolean(p + "clean_shutdown"),
                    dir_unreported=boolean(p + "dir_unreported"),
                    if_kind=num(p + "if_kind"),
                    if_a=num(p + "if_a"),
                    if_b=num(p + "if_b"),
                    if_c=num(p + "if_c"),
                    if_d=num(p + "if_d"),
                    if_len=num(p + "if_len"),
                    if_ep=nums(p + "if_ep", R),
                    if_id=nums(p + "if_id", R),
                    remote_on=boolean(p + "remote_on"),
                    remote=nums(p + "remote", n),
                    isr=bools(p + "isr", n),
                    pending_isr=bools(p + "pending_isr", n),
                    leader=num(p + "leader"),
                )
            )
        return SymState(
            ctrl_leader=num("ctrl_leader"),
            ctrl_epoch=num("ctrl_epoch"),
            ctrl_isr=bools("ctrl_isr", n),
            ctrl_live=bools("ctrl_live", n),
            ctrl_elr=bools("ctrl_elr", n),
            ctrl_isr_written=boolean("ctrl_isr_written"),
            written=num("written"),
            crashes=num("crashes"),
            committed_len=num("committed_len"),
            committed_ep=nums("committed_ep", R),
            committed_id=nums("committed_id", R),
            acked=bools("acked", R, 1),
            hist_leader=nums("hist_leader", E),
            hist_isr=tuple(bools(f"hist_isr.{e}", n) for e in range(E)),
            alt_len=num("alt_len"),
            alt_sender=nums("alt_sender", Q),
            alt_epoch=nums("alt_epoch", Q),
            alt_ok=bools("alt_ok", Q),
            alt_isr=tuple(bools(f"alt_isr.{q}", n) for q in range(Q)),
            alt_restarted=tuple(bools(f"alt_restarted.{q}", n) for q in range(Q)),
            hides_stale_hw=boolean("hides_stale_hw"),
            last_known_on_leaderless=boolean("last_known_on_leaderless"),
            replicas=tuple(replicas),
        )

    # ------------------------------------------------------- encode / decode

    def values(self, s: State) -> list[int | bool]:
        """The explicit state's variable values, in :func:`leaves` order."""
        n, R, E, Q = self.n, self.records, self.epochs, self.requests
        out: list[int | bool] = []
        put = out.append

        def records(items: tuple, start: int, length: int, what: str) -> None:
            if start + len(items) > length:
                raise EncodingError(f"{what}: {len(items)} records from {start} exceed {length}")
            eps = [0] * length
            ids = [0] * length
            for k, rec in enumerate(items):
                eps[start + k] = record_epoch(rec)
                ids[start + k] = record_id(rec)
            out.extend(eps)
            out.extend(ids)

        def replica_mask(mask: int, what: str) -> None:
            if mask >> n:
                raise EncodingError(f"{what}: mask {mask:#b} names a replica >= {n}")
            out.extend(bool(mask >> k & 1) for k in range(n))

        def record_mask(mask: int, what: str) -> None:
            if mask & 1 or mask >> (R + 1):
                raise EncodingError(f"{what}: mask {mask:#b} names a record outside 1..{R}")
            out.extend(bool(mask >> k & 1) for k in range(1, R + 1))

        def number(value: int) -> None:
            put(int(value))

        number(s.ctrl_leader)
        number(s.ctrl_epoch)
        replica_mask(s.ctrl_isr, "ctrl_isr")
        replica_mask(s.ctrl_live, "ctrl_live")
        replica_mask(s.ctrl_elr, "ctrl_elr")
        put(bool(s.ctrl_isr_written))
        number(s.written)
        number(s.crashes)
        number(len(s.committed))
        records(s.committed, 0, R, "committed")
        record_mask(s.acked, "acked")
        if len(s.ctrl_history) != s.ctrl_epoch or s.ctrl_epoch > E:
            raise EncodingError(f"ctrl_history: {len(s.ctrl_history)} entries, {E} slots")
        history = list(s.ctrl_history) + [(0, 0)] * (E - len(s.ctrl_history))
        out.extend(leader for leader, _isr in history)
        for _leader, isr in history:
            replica_mask(isr, "ctrl_history")
        reqs = s.alter_requests
        if len(reqs) > Q:
            raise EncodingError(f"alter_requests: {len(reqs)} requests, {Q} slots")
        number(len(reqs))
        padded = list(reqs) + [(0, 0, 0, 0, 0)] * (Q - len(reqs))
        out.extend(req[0] for req in padded)
        out.extend(req[1] for req in padded)
        out.extend(bool(req[2]) for req in padded)
        for req in padded:
            replica_mask(req[3], "alter_requests")
        for req in padded:
            replica_mask(req[4], "alter_requests")
        put(bool(s.hides_stale_hw))
        put(bool(s.last_known_on_leaderless))
        cfg = self.config
        optional_flags = (
            ("record_owed", cfg.kraft, "KRaft only"),
            ("alter_item", self.behaviour.one_isr_request_in_flight, "Kafka 3.0 and later only"),
            ("fenced", cfg.fencing, "with --fencing only"),
            ("clean_shutdown", cfg.clean_shutdown, "with --clean-shutdown only"),
            ("dir_unreported", self.reports_dirs, "with --disk-loss in KRaft 3.7+ only"),
        )
        for i, r in enumerate(s.replicas):
            put(bool(r.alive))
            number(r.epoch)
            number(len(r.log))
            records(r.log, 0, R, f"r{i}.log")
            number(r.hw)
            number(r.hw_checkpoint)
            number(r.truncation)
            number(r.unwritten_epoch)
            record_mask(r.pending, f"r{i}.pending")
            put(bool(r.zk_current))
            number(r.epoch_start)
            for flag, allowed, where in optional_flags:  # Layout.domain keeps them False
                if getattr(r, flag) and not allowed:
                    raise EncodingError(f"r{i}.{flag}: {where}")
                put(bool(getattr(r, flag)))
            fl = r.inflight
            if not fl:
                out.extend((0, 0, 0, 0, 0, 0))
                out.extend([0] * (2 * R))
            elif fl[0] == FETCH_RESPONSE:
                _kind, offset, hw, recs = fl
                out.extend((FETCH_RESPONSE, offset, hw, 0, 0, len(recs)))
                records(recs, offset, R, f"r{i}.inflight")
            else:
                fields = list(fl) + [0] * (5 - len(fl))
                out.extend(fields)
                put(0)
                out.extend([0] * (2 * R))
            if r.remote_leo and len(r.remote_leo) != n:
                raise EncodingError(f"r{i}.remote_leo: {len(r.remote_leo)} entries")
            put(bool(r.remote_leo))
            out.extend(r.remote_leo or (0,) * n)
            replica_mask(r.isr, f"r{i}.isr")
            replica_mask(r.pending_isr, f"r{i}.pending_isr")
            number(r.leader)
        return out

    def state(self, values: list[int | bool]) -> State:
        """The explicit state of a list of variable values (inverse of :meth:`values`)."""
        n, R, E, Q = self.n, self.records, self.epochs, self.requests
        it = iter(values)

        def take(k: int) -> list:
            return [next(it) for _ in range(k)]

        def records(start: int, length: int) -> tuple[int, ...]:
            eps, ids = take(R), take(R)
            return tuple(make_record(eps[k], ids[k]) for k in range(start, start + length))

        def replica_mask() -> int:
            return sum(1 << k for k, bit in enumerate(take(n)) if bit)

        def record_mask() -> int:
            return sum(1 << (k + 1) for k, bit in enumerate(take(R)) if bit)

        ctrl_leader, ctrl_epoch = take(2)
        ctrl_isr, ctrl_live, ctrl_elr = replica_mask(), replica_mask(), replica_mask()
        written_flag, written, crashes, committed_len = take(4)
        committed = records(0, committed_len)
        acked = record_mask()
        leaders = take(E)
        isrs = [replica_mask() for _ in range(E)]
        history = tuple(zip(leaders, isrs, strict=True))[:ctrl_epoch]
        (alt_len,) = take(1)
        senders, epochs, oks = take(Q), take(Q), take(Q)
        alt_isrs = [replica_mask() for _ in range(Q)]
        restarted = [replica_mask() for _ in range(Q)]
        requests = tuple(
            (senders[q], epochs[q], int(oks[q]), alt_isrs[q], restarted[q]) for q in range(alt_len)
        )
        (hides, on_leaderless) = take(2)
        replicas = []
        for _i in range(n):
            alive, epoch, log_len = take(3)
            log = records(0, log_len)
            hw, hw_checkpoint, truncation, unwritten = take(4)
            pending = record_mask()
            zk_current, epoch_start, record_owed, alter_item, fenced, clean, unreported = take(7)
            kind, fa, fb, fc, fd, flen = take(6)
            recs = records(fa, flen)  # empty unless a FETCH_RESPONSE (if_len 0)
            inflight: tuple = ()
            if kind == FETCH_RESPONSE:
                inflight = (kind, fa, fb, recs)
            elif kind in (OUT_OF_RANGE, TRUNCATE_PENDING):
                inflight = (kind, fa, fb)
            elif kind == EPOCH_RESPONSE:
                inflight = (kind, fa, fb, fc)
            elif kind == DIVERGING:
                inflight = (kind, fa, fb, fc, fd)
            (remote_on,) = take(1)
            remote = tuple(take(n))
            if not remote_on:
                remote = ()
            isr, pending_isr = replica_mask(), replica_mask()
            (leader,) = take(1)
            replicas.append(
                Replica(
                    alive=int(alive),
                    epoch=epoch,
                    log=log,
                    hw=hw,
                    hw_checkpoint=hw_checkpoint,
                    truncation=truncation,
                    unwritten_epoch=unwritten,
                    pending=pending,
                    zk_current=int(zk_current),
                    epoch_start=epoch_start,
                    clean_shutdown=int(clean),
                    record_owed=int(record_owed),
                    alter_item=int(alter_item),
                    fenced=int(fenced),
                    dir_unreported=int(unreported),
                    inflight=inflight,
                    remote_leo=remote,
                    isr=isr,
                    pending_isr=pending_isr,
                    leader=leader,
                )
            )
        return State(
            ctrl_leader=ctrl_leader,
            ctrl_epoch=ctrl_epoch,
            ctrl_isr=ctrl_isr,
            ctrl_live=ctrl_live,
            ctrl_elr=ctrl_elr,
            ctrl_isr_written=int(written_flag),
            written=written,
            crashes=crashes,
            committed=committed,
            acked=acked,
            ctrl_history=history,
            alter_requests=requests,
            hides_stale_hw=int(hides),
            last_known_on_leaderless=int(on_leaderless),
            replicas=tuple(replicas),
        )

    def encode(self, s: State, template: SymState | None = None) -> SymState:
        """The explicit state as a symbolic state of z3 numerals."""
        a = self.arith
        vals = iter(a.boolean(v) if isinstance(v, bool) else a.val(v) for v in self.values(s))
        return rebuild(template or self.fresh("encode"), vals)

    def decode(self, solution: z3.ModelRef, s: SymState) -> State:
        """The explicit state ``s`` stands for in a z3 model."""
        out: list[int | bool] = []
        for term in leaves(s):
            value = solution.eval(term, model_completion=True)
            out.append(z3.is_true(value) if z3.is_bool(value) else self.arith.as_int(value))
        return self.state(out)

    # -------------------------------------------------------------- domain

    def domain(self, s: SymState) -> z3.BoolRef:
        """Each variable in the range explicit states use, and unused slots canonical.

        Only facts that hold by construction of the state (lengths within the
        bounds, slots past a length zero, the in-flight kinds this configuration
        can produce), never protocol invariants.
        """
        a = self.arith
        n, R, E, Q = self.n, self.records, self.epochs, self.requests
        cfg = self.config
        facts: list = []

        def within(x: Num, low: int, high: int) -> None:
            facts.append(x >= low)
            facts.append(x <= high)

        def records_beyond(eps: tuple, ids: tuple, start: Num, length: Num) -> None:
            for k in range(R):
                used = z3.And(start <= k, k < start + length)
                facts.append(z3.Implies(z3.Not(used), z3.And(eps[k] == 0, ids[k] == 0)))
                facts.append(
                    z3.Implies(used, z3.And(eps[k] >= 0, eps[k] <= E, ids[k] >= 1, ids[k] <= R))
                )

        within(s.ctrl_leader, NO_LEADER, n - 1)
        within(s.ctrl_epoch, 1, E)
        if not cfg.elr:
            facts.extend(z3.Not(x) for x in s.ctrl_elr)
        within(s.written, 0, R)
        within(s.crashes, 0, cfg.crashes)
        within(s.committed_len, 0, R)
        records_beyond(s.committed_ep, s.committed_id, a.val(0), s.committed_len)
        for e in range(E):
            used = e < s.ctrl_epoch
            facts.append(
                z3.If(
                    used,
                    z3.And(s.hist_leader[e] >= NO_LEADER, s.hist_leader[e] <= n - 1),
                    z3.And(s.hist_leader[e] == 0, *[z3.Not(x) for x in s.hist_isr[e]]),
                )
            )
        within(s.alt_len, 0, Q)
        for q in range(Q):
            used = q < s.alt_len
            unused = [s.alt_sender[q] == 0, s.alt_epoch[q] == 0, z3.Not(s.alt_ok[q])]
            unused += [z3.Not(x) for x in s.alt_isr[q] + s.alt_restarted[q]]
            ranges = z3.And(
                s.alt_sender[q] >= 0, s.alt_sender[q] < n, s.alt_epoch[q] >= 0, s.alt_epoch[q] <= E
            )
            facts.append(z3.If(used, ranges, z3.And(*unused)))
        facts.append(s.hides_stale_hw == a.boolean(self.behaviour.hides_stale_hw))
        on_leaderless = cfg.elr and self.behaviour.last_known_leader_on_leaderless
        facts.append(s.last_known_on_leaderless == a.boolean(on_leaderless))
        for r in s.replicas:
            if not cfg.kraft:  # only a KRaft leader owes a metadata record's replay
                facts.append(z3.Not(r.record_owed))
            if not self.behaviour.one_isr_request_in_flight:  # KAFKA-12686, 3.0+
                facts.append(z3.Not(r.alter_item))
            if not cfg.fencing:
                facts.append(z3.Not(r.fenced))
            if not cfg.clean_shutdown:
                facts.append(z3.Not(r.clean_shutdown))
            if not self.reports_dirs:
                facts.append(z3.Not(r.dir_unreported))
            within(r.epoch, 0, E)
            within(r.log_len, 0, R)
            records_beyond(r.log_ep, r.log_id, a.val(0), r.log_len)
            within(r.hw, 0, R)
            within(r.hw_checkpoint, 0, R)
            within(r.truncation, 0, 2)
            within(r.unwritten_epoch, 0, E)
            within(r.epoch_start, -1, R)
            within(r.leader, NO_LEADER, n - 1)
            for x in r.remote:
                facts.append(z3.If(r.remote_on, z3.And(x >= -1, x <= R), x == 0))
            facts.append(z3.Or(*[r.if_kind == k for k in sorted(self.inflight_kinds)]))
            kind_ranges = {
                0: [],
                FETCH_RESPONSE: [(r.if_a, 0, R), (r.if_b, 0, R), (r.if_len, 0, R)],
                OUT_OF_RANGE: [(r.if_a, 0, R), (r.if_b, 0, R)],
                EPOCH_RESPONSE: [(r.if_a, 0, E), (r.if_b, -1, E), (r.if_c, -1, R)],
                DIVERGING: [(r.if_a, 0, R), (r.if_b, 0, R), (r.if_c, -1, E), (r.if_d, -1, R)],
                TRUNCATE_PENDING: [(r.if_a, -1, E), (r.if_b, -1, R)],
            }
            fields = (r.if_a, r.if_b, r.if_c, r.if_d, r.if_len)
            for kind in sorted(self.inflight_kinds):
                ranged = kind_ranges[kind]
                named = [x for x, _lo, _hi in ranged]
                conds = [z3.And(x >= lo, x <= hi) for x, lo, hi in ranged]
                conds += [x == 0 for x in fields if not any(x.eq(y) for y in named)]
                facts.append(z3.Implies(r.if_kind == kind, z3.And(*conds) if conds else a.true))
            if FETCH_RESPONSE in self.inflight_kinds:
                facts.append(z3.Implies(r.if_kind == FETCH_RESPONSE, r.if_a + r.if_len <= R))
            records_beyond(r.if_ep, r.if_id, r.if_a, r.if_len)
        return z3.And(*facts)

    def init(self, s: SymState, state: State) -> z3.BoolRef:
        """``s`` is the explicit initial state ``state``."""
        return same(s, self.encode(state, s))

    def overflow(self, s: SymState) -> z3.BoolRef:
        """A bound of the layout was exceeded (out of :meth:`domain`): a step that
        appended past the last history or request slot.  An engine can ask whether
        this is reachable to check the bounds it relies on."""
        return z3.Or(s.ctrl_epoch > self.epochs, s.alt_len > self.requests)


def same(s: SymState, t: SymState) -> z3.BoolRef:
    """Equal states: every variable equal (slots are canonical, so this is exact)."""
    return z3.And(*[x == y for x, y in zip(leaves(s), leaves(t), strict=True)])


def ite(c: Bool, a: object, b: object) -> object:
    """``If(c, a, b)`` over whole symbolic states, replicas, tuples or single terms.

    A Python bool ``c`` picks at build time; equal parts are shared, not wrapped.
    """
    if isinstance(c, bool):
        return a if c else b
    if _same_term(a, b):
        return a
    if dataclasses.is_dataclass(a):
        return type(a)(
            **{
                f.name: ite(c, getattr(a, f.name), getattr(b, f.name))
                for f in dataclasses.fields(a)
            }
        )
    if isinstance(a, tuple):
        return tuple(ite(c, x, y) for x, y in zip(a, b, strict=True))
    return z3.If(c, a, b)


class Terms:
    """Small term builders the rule mixins share (``self.a`` is the layout's Arith)."""

    a: Arith
    n: int

    def num(self, value: Num) -> z3.ExprRef:
        return self.a.num(value)

    def mn(self, *xs: Num) -> Num:
        out = xs[0]
        for x in xs[1:]:
            out = x if _same_term(out, x) else z3.If(x < out, self.num(x), self.num(out))
        return out

    def mx(self, *xs: Num) -> Num:
        out = xs[0]
        for x in xs[1:]:
            out = x if _same_term(out, x) else z3.If(x > out, self.num(x), self.num(out))
        return out

    def ite(self, c: Bool, x: object, y: object) -> object:
        """ite() with Python ints coerced to the numbers' sort."""
        return ite(c, self._coerce(x), self._coerce(y))

    def _coerce(self, x: object) -> object:
        if isinstance(x, int) and not isinstance(x, bool):
            return self.a.val(x)
        if isinstance(x, tuple):
            return tuple(self._coerce(y) for y in x)
        return x

    # replica bitmasks: tuples of n Bools

    def none(self) -> tuple:
        return (self.a.false,) * self.n

    def only(self, j: int) -> tuple:
        return tuple(self.a.true if k == j else self.a.false for k in range(self.n))

    def count(self, mask: tuple) -> Num:
        one, zero = self.a.val(1), self.a.val(0)
        out = zero
        for bit in mask:
            term = z3.If(bit, one, zero)
            out = term if _same_term(out, zero) else out + term
        return out

    @staticmethod
    def some(mask: tuple) -> z3.BoolRef:
        return z3.Or(*mask)

    def has(self, mask: tuple, j: Num) -> z3.BoolRef:
        """Bit ``j`` of ``mask``; ``j`` may be symbolic (NO_LEADER has none)."""
        if isinstance(j, int):
            return mask[j] if 0 <= j < len(mask) else self.a.false
        return z3.Or(*[z3.And(j == k, bit) for k, bit in enumerate(mask)])

    @staticmethod
    def m_or(x: tuple, y: tuple) -> tuple:
        return tuple(z3.Or(p, q) for p, q in zip(x, y, strict=True))

    @staticmethod
    def m_and(x: tuple, y: tuple) -> tuple:
        return tuple(z3.And(p, q) for p, q in zip(x, y, strict=True))

    @staticmethod
    def m_minus(x: tuple, y: tuple) -> tuple:
        return tuple(z3.And(p, z3.Not(q)) for p, q in zip(x, y, strict=True))

    def m_without(self, x: tuple, j: int) -> tuple:
        return tuple(self.a.false if k == j else bit for k, bit in enumerate(x))

    def m_with(self, x: tuple, j: int) -> tuple:
        return tuple(self.a.true if k == j else bit for k, bit in enumerate(x))

    @staticmethod
    def m_eq(x: tuple, y: tuple) -> z3.BoolRef:
        return z3.And(*[p == q for p, q in zip(x, y, strict=True)])

    def m_or_else(self, x: tuple, y: tuple) -> tuple:
        """Python's ``x or y`` on masks: ``x`` unless it is empty."""
        return self.ite(self.some(x), x, y)

    def read(self, slots: tuple, index: Num, default: object) -> object:
        """``slots[index]`` for a symbolic index (``default`` outside the slots)."""
        if isinstance(index, int):
            return slots[index] if 0 <= index < len(slots) else default
        out = default
        for k in reversed(range(len(slots))):
            out = self.ite(index == k, slots[k], out)
        return out
