"""A worker of the multi-process BFS (``checker.explicit.parallel_bfs``): its shard of the
visited set, its levels, and a round of expansion with the claims it exchanges.

The worker that owns a fingerprint (:func:`owner_of`) records it; a successor owned
by another worker is claimed from its owner, and the state stays with the claimant
(see the coordinator's module for the protocol and why).  Workers run with the cyclic
garbage collector off, as :func:`checker.explicit.bfs.bfs` does (states form no cycles): its
young collections alone cost a quarter of a worker's CPU (4.1.0, 3 replicas, 2
workers, 1M states: 33.5 CPU seconds with it, 24.7 without), and a full collection in
one worker stalled the others at the next exchange.  They ignore SIGINT and SIGTERM:
the coordinator alone decides what a Ctrl-C means.
"""

from __future__ import annotations

import gc
import os
import pickle
import queue
import signal
import sys
import threading
import traceback
from array import array
from collections.abc import Hashable
from contextlib import suppress
from multiprocessing.connection import Connection, wait
from pathlib import Path

from replcheck.checker.explicit.bfs import STOP_SIGNALS, _same, peak_memory_bytes
from replcheck.checker.explicit.checkpoint import Saved
from replcheck.checker.explicit.spill import saved_entries
from replcheck.checker.explicit.storage import Storage
from replcheck.checker.explicit.visited import MASK64, NO_PARENT, as_key
from replcheck.invariants import Invariant
from replcheck.model.interface import Model

_STOPS = tuple(sig for sig, _default in STOP_SIGNALS)
_GOLDEN = 0x9E3779B97F4A7C15  # 2**64 / golden ratio: spreads ints that hash to themselves


def owner_of(fp: int, workers: int) -> int:
    """The worker that owns fingerprint ``fp``: bits 32..63 of a multiplicative mix, so
    even fingerprints in arithmetic progression (small ints hash to themselves) spread."""
    return (((fp * _GOLDEN) >> 32) & 0xFFFFFFFF) % workers


def run_worker(
    index: int,
    n: int,
    model: Model,
    invariants: tuple[Invariant, ...],
    symmetry: bool,
    commands: Connection,
    *,
    storage: Storage,
    inbox: dict[int, Connection],
    outbox: dict[int, Connection],
    to_close: list[Connection],
    forked: bool,
) -> None:
    """A worker process: serve the coordinator's commands until told to stop."""
    gc.disable()  # see the module's docstring; the process ends with the search
    for sig in _STOPS:
        signal.signal(sig, signal.SIG_IGN)
    for c in to_close:  # other processes' pipe ends, inherited by fork: EOF must mean gone
        c.close()
    try:
        shard = _Shard(index, n, model, invariants, symmetry, storage, inbox, outbox, forked)
        try:
            shard.serve(commands)
        finally:
            shard.close()
    except (EOFError, OSError):  # the coordinator or a peer is gone: nothing left to do
        pass
    except BaseException:
        with suppress(OSError):
            commands.send(("error", traceback.format_exc()))


class _Shard:
    """A worker's part of the search: its shard of the visited set and its frontier."""

    def __init__(
        self,
        index: int,
        n: int,
        model: Model,
        invariants: tuple[Invariant, ...],
        symmetry: bool,
        storage: Storage,
        inbox: dict[int, Connection],
        outbox: dict[int, Connection],
        forked: bool,
    ) -> None:
        self.index = index
        self.storage = storage
        self.n = n
        self.model = model
        self.invariants = invariants
        self.canon = model.representative if symmetry else _same
        self.inbox = inbox
        self.outbox = outbox
        self.peers = [(index + k) % n for k in range(1, n)]  # the fixed processing order
        # fingerprint -> parent fingerprint, in flat arrays (about 32 bytes a state; a
        # dict took about 100), spilled past the worker's share of the RAM budget.
        # hash() never returns -1, so -1 marks "no parent".
        self.parent = storage.visited()
        self.frontier = storage.level()
        self.next = storage.level()
        # New states a quota deferred to the next round: this worker's own, and those
        # it claimed from each owner (the owner keeps nothing of a deferred claim).
        self.waiting_own: list[tuple[int, Hashable]] = []
        self.waiting_claims: list[dict[int, tuple[int, Hashable]]] = [{} for _ in range(n)]
        # What this worker added to its memory: a forked worker starts out sharing the
        # coordinator's pages (and inherits its ru_maxrss), which must not count twice.
        self.baseline = _resident_bytes() if forked else 0
        self.peak = 0
        self.outgoing: queue.SimpleQueue = queue.SimpleQueue()
        # Writes go through a thread so that two workers sending each other more than a
        # pipe holds cannot deadlock; the main thread only reads.
        threading.Thread(target=self._send_loop, daemon=True).start()

    def _send_loop(self) -> None:
        while True:
            conn, payload = self.outgoing.get()
            try:
                conn.send_bytes(payload)
            except OSError:  # the peer is gone; the coordinator will find out
                return

    def _gather(self, peers: list[int] | None = None) -> dict[int, bytes]:
        """One message from each peer, read as they come (any order)."""
        by_conn = {self.inbox[p]: p for p in (self.peers if peers is None else peers)}
        got: dict[int, bytes] = {}
        while by_conn:
            for c in wait(list(by_conn)):
                got[by_conn.pop(c)] = c.recv_bytes()
        return got

    def serve(self, commands: Connection) -> None:
        while True:
            message = commands.recv()
            kind = message[0]
            if kind == "round":
                _, new_level, give, take, pending, size, quota = message
                if new_level:
                    self.frontier.close()
                    self.frontier, self.next = self.next, self.storage.level()
                self.even_out(give, take)  # at a new level, or on resuming mid-level
                answer = self.round([(i, self.invariants[i]) for i in pending], size, quota)
                self.peak = max(self.peak, _resident_bytes() - self.baseline)
                commands.send(("ok", *answer, self.peak))
            elif kind == "init":
                for fp, state in message[1]:
                    self.parent.add(as_key(fp), NO_PARENT)
                    self.next.append((fp, state))
                commands.send(("ok",))
            elif kind == "parent":
                up = self.parent.parent_of(as_key(message[1]))
                commands.send(("ok", None if up == NO_PARENT else up))
            elif kind == "save":
                commands.send(("ok", self.save(Path(message[1]), message[2])))
            elif kind == "resume":
                commands.send(("ok", *self.resume(message[1])))
            elif kind == "disk":
                levels = self.frontier.disk_bytes + self.next.disk_bytes
                commands.send(("ok", self.parent.disk_bytes + levels))
            elif kind == "stop":
                return
            else:  # pragma: no cover - a coordinator bug
                raise ValueError(f"unknown command {kind!r}")

    def close(self) -> None:
        for held in (self.parent, self.frontier, self.next):
            held.close()

    def save(self, data: Path, mid_level: bool) -> dict:
        """Write this worker's part of a checkpoint (see ``checker.explicit.checkpoint``)."""
        name = f"w{self.index}"
        part: dict = {"visited": self.parent.save(data, f"visited-{name}")}
        levels = (
            {"frontier": self.frontier, "next": self.next} if mid_level else {"frontier": self.next}
        )
        waiting = [
            *self.waiting_own,
            *(c for claims in self.waiting_claims for c in claims.values()),
        ]
        if waiting:
            retry = self.storage.level()
            retry.extend(waiting)
            levels["retry"] = retry
        for kind, level in levels.items():
            part[kind] = f"{kind}-{name}.bin"
            level.save(data / part[kind])
        return part

    def resume(self, saved: Saved) -> tuple[int, int, int]:
        """Take this worker's share of a checkpoint: the visited states it owns, from every
        part, and the levels of the parts ``index`` modulo the workers (written by another
        number of workers, the frontiers are evened out in the first round).  Returns
        (visited states owned, states to expand or offer, next-level states held, states
        of the level being expanded)."""
        n, index = self.n, self.index
        for part in saved.parts:
            for key, parent in saved_entries(saved.folder, part["visited"]):
                if owner_of(key, n) == index:
                    self.parent.add(key, parent)
        mine = saved.parts[index::n]
        levels = {
            kind: self.storage.load_level([saved.path(p[kind]) for p in mine if p.get(kind)])
            for kind in ("frontier", "next", "retry")
        }
        if saved.in_level:
            self.frontier, self.next = levels["frontier"], levels["next"]
        else:
            self.next = levels["frontier"]
        self.waiting_own = list(levels["retry"].drain())
        work = len(self.frontier) + len(self.next) + len(self.waiting_own)
        return len(self.parent), work, len(self.next), len(self.frontier)

    def even_out(self, give: list[tuple[int, int]], take: list[int]) -> None:
        """Send the first states of the frontier to, or take states from, other workers."""
        for dst, count in give:
            batch = self.frontier.take(count)
            self.outgoing.put((self.outbox[dst], pickle.dumps(batch, pickle.HIGHEST_PROTOCOL)))
        if take:
            received = self._gather(take)
            for src in sorted(take):
                self.frontier.extend(pickle.loads(received[src]))

    def round(self, pending: list[tuple[int, Invariant]], size: int, quota: int | None) -> tuple:
        """Expand up to ``size`` frontier states, keeping at most ``quota`` new states.

        A new state past the quota is *deferred*, not lost: it is offered again, before
        anything else, in the next round, which the coordinator runs within the same
        level (see :func:`parallel_bfs`), so every state still gets its BFS depth.
        """
        index, n, keep, golden = self.index, self.n, self.next.append, _GOLDEN
        add, seen = self.parent.add, self.parent.seen
        room = sys.maxsize if quota is None else quota
        actions, next_state, canon = self.model.actions, self.model.next_state, self.canon
        hits: dict[int, tuple[int, int, int, str]] = {}
        arrival = 0

        def check(fp: int, state: Hashable) -> None:
            nonlocal arrival, pending
            hit = False
            for i, inv in pending:
                message = inv.check(state)
                if message is not None:
                    hits[i] = (i, arrival, fp, message)
                    hit = True
            if hit:  # like bfs: once violated, an invariant is not checked again
                pending = [(i, inv) for i, inv in pending if i not in hits]
            arrival += 1

        new = offered = 0
        deferred: list[tuple[int, Hashable]] = []  # (parent fingerprint, state)
        # Claims start with those an owner deferred last round, in the order they came.
        claims, self.waiting_claims = self.waiting_claims, [{} for _ in range(n)]
        retry, self.waiting_own = self.waiting_own, []
        expanded = (
            (parent_fp, canon(next_state(state, action)))
            for parent_fp, state in self.frontier.take(size)
            for action in actions(state)
        )
        for origin in (retry, expanded):
            for parent_fp, succ in origin:
                offered += 1
                fp = hash(succ)  # checker.explicit.bfs.fingerprint
                w = (((fp * golden) >> 32) & 0xFFFFFFFF) % n  # owner_of, inlined
                if w == index:
                    if not room:
                        if not seen(fp & MASK64):
                            deferred.append((parent_fp, succ))
                        continue
                    if add(fp & MASK64, parent_fp):  # as_key(fp): new here
                        new += 1
                        room -= 1
                        keep((fp, succ))
                        if pending:
                            check(fp, succ)
                else:
                    mine = claims[w]
                    if fp not in mine:
                        mine[fp] = (parent_fp, succ)
        self.waiting_own = deferred
        moves = offered - len(retry)  # the transitions taken: retried states were counted

        for p in self.peers:  # claims: the fingerprints, then their parents
            mine = claims[p]
            body = array("q", mine)
            body.extend(up for up, _ in mine.values())
            self.outgoing.put((self.outbox[p], body.tobytes()))
        received = self._gather()
        for p in self.peers:  # one byte per claim: 1 new, 0 known, 2 deferred
            body = array("q")
            body.frombytes(received[p])
            half = len(body) // 2
            verdict = bytearray(half)
            for k, fp in enumerate(body[:half]):
                if not room:
                    if not seen(fp & MASK64):
                        verdict[k] = 2
                    continue
                if add(fp & MASK64, body[half + k]):  # as_key(fp)
                    verdict[k] = 1
                    room -= 1
            new += verdict.count(1)
            self.outgoing.put((self.outbox[p], bytes(verdict)))
        verdicts = self._gather()
        for p in self.peers:  # keep and check the claimed states that were new
            for (fp, claim), answer in zip(claims[p].items(), verdicts[p], strict=True):
                if answer == 1:
                    keep((fp, claim[1]))
                    if pending:
                        check(fp, claim[1])
                elif answer == 2:
                    self.waiting_claims[p][fp] = claim
        left = len(self.frontier)
        waiting = len(self.waiting_own) + sum(len(c) for c in self.waiting_claims)
        return new, moves, left, len(self.next), list(hits.values()), waiting


def _resident_bytes() -> int:
    """This process's resident memory now (its peak where /proc is missing)."""
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[1]) * _PAGE
    except (OSError, ValueError, IndexError):
        return peak_memory_bytes()


_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
