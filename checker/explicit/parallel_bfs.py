"""Breadth-first search over several processes, with the verdicts of ``checker.explicit.bfs``.

The visited set (fingerprint -> parent fingerprint) is sharded: worker ``i`` owns the
fingerprints whose mixed value is ``i`` modulo the number of workers.  The search is
level-synchronous, and a level runs in rounds of at most ``ROUND_STATES`` states per
worker so the coordinator (this process) can apply the limits, report progress and
stop on Ctrl-C between rounds.  In a round each worker expands the next states of its
frontier.  A successor it owns is deduplicated on the spot; the others are *claimed*:
their fingerprints and parent fingerprints go, batched, to their owners, which record
the new ones and answer with one byte per claim.  The state itself never crosses a
process boundary: the worker that claimed a new state checks the invariants on it and
keeps it in its next frontier.  (Unpickling these NamedTuple states costs about as
much as computing a successor, so shipping states to their owners cost all the gain.)
Frontiers are evened out at the start of each level, which moves a few states only.
A worker's side (its shard, its levels, a round) is ``checker.explicit.bfs_worker``.

Every step that depends on arrival order runs in a fixed order instead (a worker's
own successors first, then each other worker's batch in a fixed order, and among
violations of one invariant in one round the lowest (worker, arrival index)), so a
run gives the same counts and the same counterexamples whatever the timing.  A
counterexample is rebuilt by asking the owners for the parent links along its chain
and re-executing the model forward (``checker.explicit.bfs.trace_from_chain``).
"""

from __future__ import annotations

import multiprocessing
import os
import resource
import signal
import sys
import threading
import time
from collections.abc import Callable, Hashable, Sequence
from contextlib import suppress
from multiprocessing.connection import Connection, wait
from pathlib import Path

from replcheck.checker.explicit.bfs import (
    Progress,
    SearchResult,
    _same,
    bfs,
    fingerprint,
    interrupt_flag,
    peak_memory_bytes,
    violation,
)
from replcheck.checker.explicit.bfs_worker import _STOPS, owner_of, run_worker
from replcheck.checker.explicit.checkpoint import CheckpointWriter, Saved
from replcheck.checker.explicit.storage import Storage
from replcheck.invariants import Invariant
from replcheck.model.errors import InputError, ReplcheckError
from replcheck.model.interface import Model, state_codec

# States one worker expands per round: rounds are where limits, progress and Ctrl-C
# are looked at, so they should take under a second (about half a second compiled, on
# 4.1.0 with 3 replicas); each costs a few exchanges and waits for the slowest worker,
# so fewer, longer rounds search faster (2,048 was 15-20% slower on 2 workers, issue 24).
ROUND_STATES = 16384
# Frontiers that differ by at most this many states are left as they are.
BALANCE_SLACK = 64

_F_SETPIPE_SZ = 1031  # Linux fcntl: a bigger pipe buffer means fewer blocking writes


# None: "fork" on Linux (workers inherit the model), else "spawn" (the model is pickled).
START_METHOD: str | None = None


def _default_start_method() -> str:
    linux = sys.platform.startswith("linux")
    return "fork" if linux and "fork" in multiprocessing.get_all_start_methods() else "spawn"


# Descriptors kept free for everything else the process opens (files, Spark, z3...).
FD_RESERVE = 64


def _fds_needed(workers: int) -> int:
    """Descriptors the coordinator holds while it starts ``workers`` workers: a one-way
    pipe for each ordered pair of workers, a duplex command pipe each, and each
    process's sentinel."""
    return 2 * workers * (workers - 1) + 2 * workers + workers + FD_RESERVE


def _fd_limit() -> int:
    """The most descriptors this process may open: its hard limit (the soft one is
    raised to it when a search needs more)."""
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    return 1 << 20 if hard == resource.RLIM_INFINITY else hard


def max_workers() -> int:
    """The most workers a search can start here: every pair of workers needs a pipe,
    so the open-file limit bounds them (about 22 under the common limit of 1,024 open
    files, were it not raised to the hard limit)."""
    limit = _fd_limit()
    n = 1
    while _fds_needed(n + 1) <= limit:
        n += 1
    return n


def _raise_fd_limit(workers: int) -> None:
    """Raise the soft open-file limit towards the hard one if ``workers`` need more."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    need = min(_fds_needed(workers), _fd_limit())
    if soft != resource.RLIM_INFINITY and soft < need:
        with suppress(OSError, ValueError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (need, hard))


def parallel_bfs(
    model: Model,
    invariants: Sequence[Invariant],
    *,
    workers: int,
    symmetry: bool | None = None,
    max_states: int | None = None,
    time_limit: float | None = None,
    memory_limit: int | None = None,
    ram_budget: int | None = None,
    spill_dir: str | os.PathLike | None = None,
    checkpoint: CheckpointWriter | None = None,
    resume: Saved | None = None,
    on_progress: Callable[[Progress], None] | None = None,
    progress_every: float = 3.0,
) -> SearchResult:
    """``checker.explicit.bfs.bfs`` over ``workers`` processes: the same statuses, counts, depth and
    counterexample lengths, and the same traces from run to run.

    ``max_states`` is never passed: each round, every worker keeps at most its share of
    the states still allowed and defers the rest to another round of the same level, so
    a search that stops there has visited exactly ``max_states``.  ``memory_limit``
    is compared with this process's peak resident memory plus, for each worker, the
    most it has added to its resident memory since it started (a forked worker starts
    out sharing this process's pages, which are not counted again).  ``ram_budget`` is
    shared out evenly: each worker spills past its share.  A checkpoint has a part per
    worker; one written with any number of workers resumes with any other.
    """
    if workers < 1:
        raise ValueError(f"workers must be at least 1, not {workers}")
    most = max_workers()
    if workers > most:
        raise ValueError(f"workers: at most {most} on this machine, not {workers}")
    if workers == 1:
        return bfs(
            model,
            invariants,
            symmetry=symmetry,
            max_states=max_states,
            time_limit=time_limit,
            memory_limit=memory_limit,
            ram_budget=ram_budget,
            spill_dir=spill_dir,
            checkpoint=checkpoint,
            resume=resume,
            on_progress=on_progress,
            progress_every=progress_every,
        )
    invariants = tuple(invariants)
    if symmetry is None:  # the model's choice (Kafka: on; the TLA+ spec: off, as TLC)
        symmetry = model.default_symmetry
    canon = model.representative if symmetry else _same
    found: dict[int, tuple[int, str]] = {}  # invariant index -> (fingerprint, message)
    pending = list(range(len(invariants)))
    shards: list[list[tuple[int, Hashable]]] = [[] for _ in range(workers)]
    in_level = False  # resumed in the middle of a level
    if resume is None:
        seen: set[int] = set()
        for init in model.init_states():
            state = canon(init)
            fp = fingerprint(state)
            if fp not in seen:
                seen.add(fp)
                shards[owner_of(fp, workers)].append((fp, state))
                for i in pending:
                    message = invariants[i].check(state)
                    if message is not None:
                        found[i] = (fp, message)
                pending = [i for i in pending if i not in found]
        distinct, transitions, depth, before = len(seen), 0, 0, 0.0
    else:
        index = {inv.id: i for i, inv in enumerate(invariants)}
        found.update((index[i], (fp, m)) for i, fp, m in resume.found if i in index)
        pending = [i for i in pending if i not in found]
        distinct, transitions, depth = resume.distinct, resume.transitions, resume.depth
        before, in_level = resume.seconds, resume.in_level

    start = time.monotonic() - before
    frontier = distinct  # states in the level being expanded (not 0: the loop starts)
    queued = 0  # states found so far for the next level
    status = "complete"
    clean = True  # False if the workers may hold a torn state: no checkpoint then
    level_open = in_level  # the workers' frontiers still hold states of level ``depth``
    next_report = time.monotonic() + progress_every
    deadline = time.monotonic() + time_limit if time_limit is not None else 0.0
    rounds = 0

    def save(mid_level: bool) -> None:
        """A checkpoint: each worker writes its part, this process the rest."""
        assert checkpoint is not None
        data = checkpoint.begin()
        parts = cluster.save(data, mid_level)
        found_ids = [(invariants[i].id, fp, m) for i, (fp, m) in found.items()]
        checkpoint.commit(
            data,
            Saved(
                identity=checkpoint.identity,
                depth=depth,
                in_level=mid_level,
                distinct=distinct,
                transitions=transitions,
                seconds=time.monotonic() - start,
                found=found_ids,
                parts=parts,
                status=status if mid_level or status != "complete" else "level",
            ),
        )

    with (
        interrupt_flag() as interrupted,
        _Cluster(model, invariants, symmetry, workers, ram_budget, spill_dir) as cluster,
    ):
        try:
            if resume is None:
                cluster.init(shards)
            else:
                loaded, frontier = cluster.resume(resume)
                if loaded != distinct:
                    raise InputError(
                        f"--resume {resume.folder.parent}: {loaded:,} distinct states in its "
                        f"files, {distinct:,} in checkpoint.json"
                    )
            while frontier and pending:
                if not in_level:
                    if max_states is not None and distinct >= max_states:
                        status = "max-states"
                        break
                    if checkpoint is not None and checkpoint.due():
                        save(False)
                    depth += 1
                new_level, in_level = not in_level, False
                level_open = True
                while True:
                    quotas = None
                    if max_states is not None:
                        quotas = share(max_states - distinct, workers, rounds)
                    replies = cluster.round(new_level, pending, quotas)
                    rounds += 1
                    new_level = False
                    remaining = queued = 0
                    pick: dict[int, tuple[int, int, int, str]] = {}
                    for w, (new, moves, left, nxt, hits, waiting) in enumerate(replies):
                        distinct += new
                        transitions += moves
                        remaining += left + waiting  # deferred states belong to this level
                        queued += nxt
                        for i, arrival, fp, message in hits:
                            if i not in pick or (w, arrival) < pick[i][:2]:
                                pick[i] = (w, arrival, fp, message)
                    for i, (_, _, fp, message) in pick.items():
                        found[i] = (fp, message)
                    pending = [i for i in pending if i not in found]
                    if interrupted():
                        status = "interrupted"
                        break
                    now = time.monotonic()
                    if deadline and now >= deadline:
                        status = "timeout"
                        break
                    if memory_limit and cluster.peak_memory() >= memory_limit:
                        status = "memory"
                        break
                    if on_progress is not None and now >= next_report:
                        next_report = now + progress_every
                        on_progress(Progress(distinct, queued, depth, now - start, len(found)))
                    level_open = bool(remaining)
                    if not remaining or (max_states is not None and distinct >= max_states):
                        break
                if status != "complete":
                    break
                frontier = queued
                if not queued:
                    depth -= 1  # the last level produced nothing new
            if frontier and not pending and status != "interrupted":
                status = "all-violated"
        except KeyboardInterrupt:  # from on_progress, or a SIGINT handler of the caller's
            status = "interrupted"
            cluster.drain()
            clean = False
        seconds = time.monotonic() - start
        if checkpoint is not None and clean:
            save(level_open)
        violations = {}
        exact = model.canonical if symmetry else _same
        for i, inv in enumerate(invariants):  # registry order, as bfs reports them
            if i in found:
                fp, message = found[i]
                chain = cluster.chain(fp)
                violations[inv.id] = violation(model, inv, message, chain, canon, exact)
        disk = cluster.disk_bytes()
    if status == "complete" and violations and len(violations) == len(invariants):
        status = "all-violated"
    return SearchResult(status, distinct, depth, seconds, transitions, violations, disk)


class WorkerError(ReplcheckError):
    """A worker process failed; the message carries its traceback or exit code."""


class _Cluster:
    """The worker processes and the coordinator's end of their command pipes."""

    def __init__(
        self,
        model: Model,
        invariants: tuple[Invariant, ...],
        symmetry: bool,
        workers: int,
        ram_budget: int | None = None,
        spill_dir: str | os.PathLike | None = None,
    ) -> None:
        self.n = workers
        self.storage = Storage(
            None if ram_budget is None else ram_budget // workers, spill_dir, state_codec(model)
        )
        self.model = model
        self.invariants = invariants
        self.symmetry = symmetry
        self.processes: list[multiprocessing.process.BaseProcess] = []
        self.commands: list[Connection] = []
        self.owed: set[int] = set()  # workers whose answer to the last command is unread
        self.peaks = [0] * workers
        self.held = [0] * workers  # next-level states each worker holds
        self.moved = 0  # states moved to even out frontiers, for measurements
        self.unbalanced: list[int] | None = None  # frontier sizes to even out (resume)

    def __enter__(self) -> _Cluster:
        _raise_fd_limit(self.n)
        method = START_METHOD or _default_start_method()
        fork = method == "fork"
        context = multiprocessing.get_context(method)
        n = self.n
        # pipes[s][r]: (reader for r, writer for s), one way from worker s to worker r
        pipes = [[_pipe() if s != r else None for r in range(n)] for s in range(n)]
        ends = [context.Pipe() for _ in range(n)]  # (coordinator's end, worker's end)
        everything = [c for row in pipes for p in row if p for c in p] + [
            c for pair in ends for c in pair
        ]
        # Children start with SIGINT and SIGTERM ignored: Ctrl-C (or a kill of the
        # process group) reaches every process, and the coordinator alone decides what
        # it means.
        self.commands = [end for end, _ in ends]
        main = threading.current_thread() is threading.main_thread()
        previous = [(sig, signal.signal(sig, signal.SIG_IGN)) for sig in _STOPS] if main else []
        try:
            for w in range(n):
                inbox = {s: pipes[s][w][0] for s in range(n) if s != w}
                outbox = {r: pipes[w][r][1] for r in range(n) if r != w}
                mine = {id(c) for c in (*inbox.values(), *outbox.values(), ends[w][1])}
                to_close = [c for c in everything if id(c) not in mine] if fork else []
                process = context.Process(
                    target=run_worker,
                    args=(w, n, self.model, self.invariants, self.symmetry, ends[w][1]),
                    kwargs={
                        "storage": self.storage,
                        "inbox": inbox,
                        "outbox": outbox,
                        "to_close": to_close,
                        "forked": fork,
                    },
                    name=f"replcheck-bfs-{w}",
                    daemon=True,
                )
                process.start()
                self.processes.append(process)
        except BaseException:
            self._stop()
            raise
        finally:
            for sig, handler in previous:
                signal.signal(sig, handler)
            for c in everything:
                if all(c is not end for end in self.commands):
                    c.close()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._stop()

    def _stop(self) -> None:
        """Ask every worker to stop, then make sure: none outlives the search."""
        for c in self.commands:
            with suppress(OSError):
                c.send(("stop",))
        deadline = time.monotonic() + 5.0
        for p in self.processes:
            p.join(max(0.0, deadline - time.monotonic()))
        for p in self.processes:
            if p.is_alive():
                p.kill()
                p.join()
        for c in self.commands:
            c.close()

    def _collect(self) -> list:
        """Every worker's answer, in worker order; raises WorkerError if one failed."""
        answers: list = [None] * self.n
        lost = []
        waiting = {c: w for w, c in enumerate(self.commands) if w in self.owed}
        while waiting:
            for c in wait(list(waiting)):
                w = waiting.pop(c)
                self.owed.discard(w)
                try:
                    answer = c.recv()
                except EOFError:
                    lost.append(w)
                    continue
                if answer[0] == "error":
                    raise WorkerError(f"worker {w} failed:\n{answer[1]}")
                answers[w] = answer[1:]
        if lost:
            codes = ", ".join(f"{w}: {self.processes[w].exitcode}" for w in lost)
            raise WorkerError(f"worker(s) exited unexpectedly (exit codes {codes})")
        return answers

    def drain(self) -> None:
        """Read the answers an interrupted coordinator left unread."""
        self._collect()

    def init(self, shards: list[list[tuple[int, Hashable]]]) -> None:
        for w, c in enumerate(self.commands):
            c.send(("init", shards[w]))
            self.owed.add(w)
        self._collect()
        self.held = [len(shard) for shard in shards]

    def round(self, new_level: bool, pending: list[int], quotas: list[int] | None) -> list:
        """One round; per worker (new owned states, transitions, frontier states left,
        next-level states held, [(invariant, arrival index, fingerprint, message)],
        new states deferred to the next round).  ``quotas``: the most new states each
        worker may keep (None: no limit).  A new level starts by evening out the frontiers
        (see :func:`balance`)."""
        plan = balance(self.held) if new_level else []
        if self.unbalanced is not None:
            plan, self.unbalanced = balance(self.unbalanced), None
        for w, c in enumerate(self.commands):
            give = [(dst, count) for src, dst, count in plan if src == w]
            take = [src for src, dst, _ in plan if dst == w]
            quota = None if quotas is None else quotas[w]
            c.send(("round", new_level, give, take, tuple(pending), ROUND_STATES, quota))
            self.owed.add(w)
        answers = self._collect()
        self.peaks = [a[-1] for a in answers]
        self.held = [a[3] for a in answers]
        self.moved += sum(count for _, _, count in plan)
        return [a[:-1] for a in answers]

    def _ask(self, *command: object) -> list:
        for c in self.commands:
            c.send(command)
        self.owed.update(range(self.n))
        return self._collect()

    def save(self, data: Path, mid_level: bool) -> list[dict]:
        """Each worker writes its part of a checkpoint into ``data``."""
        return [answer[0] for answer in self._ask("save", str(data), mid_level)]

    def resume(self, saved: Saved) -> tuple[int, int]:
        """Each worker takes its share of a checkpoint: (visited states, states to expand)."""
        answers = self._ask("resume", saved)
        self.held = [a[2] for a in answers]
        # Resumed mid-level, the frontier is where the parts put it (from a checkpoint of
        # one worker, all in one): even it out in the first round, not at the next level.
        self.unbalanced = [a[3] for a in answers] if saved.in_level else None
        return sum(a[0] for a in answers), sum(a[1] for a in answers)

    def disk_bytes(self) -> int:
        return sum(answer[0] for answer in self._ask("disk"))

    def peak_memory(self) -> int:
        return sum(self.peaks) + peak_memory_bytes()

    def chain(self, target: int) -> list[int]:
        """The fingerprints from an initial state to ``target``, the parent links asked
        of their owners."""
        chain: list[int] = []
        fp: int | None = target
        while fp is not None:
            chain.append(fp)
            w = owner_of(fp, self.n)
            self.commands[w].send(("parent", fp))
            self.owed.add(w)
            (fp,) = self._collect()[w]
        chain.reverse()
        return chain


def balance(sizes: list[int], slack: int = BALANCE_SLACK) -> list[tuple[int, int, int]]:
    """Moves (from, to, count) that bring every frontier within one state of the mean.

    A worker keeps the new states it claims, so frontiers drift apart (from one initial
    state, one worker would get them all); moving the surplus at the start of a level
    keeps the workers equally busy.  Nothing moves while they differ by ``slack`` or less.
    """
    if max(sizes) - min(sizes) <= slack:
        return []
    n, total = len(sizes), sum(sizes)
    target = [total // n + (w < total % n) for w in range(n)]
    give = [[w, s - t] for w, (s, t) in enumerate(zip(sizes, target, strict=True)) if s > t]
    need = [[w, t - s] for w, (s, t) in enumerate(zip(sizes, target, strict=True)) if t > s]
    moves = []
    while give and need:
        count = min(give[0][1], need[0][1])
        moves.append((give[0][0], need[0][0], count))
        for side in (give, need):
            side[0][1] -= count
            if not side[0][1]:
                side.pop(0)
    return moves


def share(allowed: int, workers: int, turn: int) -> list[int]:
    """``allowed`` new states split among the workers as evenly as whole states go; the
    odd ones go to different workers from turn to turn."""
    base, extra = divmod(max(allowed, 0), workers)
    return [base + ((w - turn) % workers < extra) for w in range(workers)]


def _pipe() -> tuple[Connection, Connection]:
    reader, writer = multiprocessing.Pipe(duplex=False)
    try:
        import fcntl

        fcntl.fcntl(writer.fileno(), _F_SETPIPE_SZ, 1 << 20)
    except (ImportError, OSError):
        pass
    return reader, writer


__all__ = [
    "BALANCE_SLACK",
    "ROUND_STATES",
    "WorkerError",
    "balance",
    "max_workers",
    "owner_of",
    "parallel_bfs",
    "share",
]
