"""Spike: a Replica as a Cython cclass with C int fields (pure Python mode)."""

import cython


@cython.cclass
class TReplica:
    alive = cython.declare(cython.int, visibility="readonly")
    epoch = cython.declare(cython.int, visibility="readonly")
    hw = cython.declare(cython.int, visibility="readonly")
    hw_checkpoint = cython.declare(cython.int, visibility="readonly")
    truncation = cython.declare(cython.int, visibility="readonly")
    unwritten_epoch = cython.declare(cython.int, visibility="readonly")
    pending = cython.declare(cython.int, visibility="readonly")
    zk_current = cython.declare(cython.int, visibility="readonly")
    epoch_start = cython.declare(cython.int, visibility="readonly")
    clean_shutdown = cython.declare(cython.int, visibility="readonly")
    record_owed = cython.declare(cython.int, visibility="readonly")
    alter_item = cython.declare(cython.int, visibility="readonly")
    fenced = cython.declare(cython.int, visibility="readonly")
    dir_unreported = cython.declare(cython.int, visibility="readonly")
    isr = cython.declare(cython.int, visibility="readonly")
    pending_isr = cython.declare(cython.int, visibility="readonly")
    leader = cython.declare(cython.int, visibility="readonly")
    log = cython.declare(tuple, visibility="readonly")
    inflight = cython.declare(tuple, visibility="readonly")
    remote_leo = cython.declare(tuple, visibility="readonly")
    _hash = cython.declare(cython.Py_hash_t)

    def __init__(
        self,
        alive,
        epoch,
        log,
        hw,
        hw_checkpoint,
        truncation,
        unwritten_epoch,
        pending,
        zk_current,
        epoch_start,
        clean_shutdown,
        record_owed,
        alter_item,
        fenced,
        dir_unreported,
        inflight,
        remote_leo,
        isr,
        pending_isr,
        leader,
    ):
        self.alive = alive
        self.epoch = epoch
        self.log = log
        self.hw = hw
        self.hw_checkpoint = hw_checkpoint
        self.truncation = truncation
        self.unwritten_epoch = unwritten_epoch
        self.pending = pending
        self.zk_current = zk_current
        self.epoch_start = epoch_start
        self.clean_shutdown = clean_shutdown
        self.record_owed = record_owed
        self.alter_item = alter_item
        self.fenced = fenced
        self.dir_unreported = dir_unreported
        self.inflight = inflight
        self.remote_leo = remote_leo
        self.isr = isr
        self.pending_isr = pending_isr
        self.leader = leader
        self._hash = -1

    @cython.cfunc
    def copy(self) -> "TReplica":
        r: TReplica = TReplica.__new__(TReplica)
        r.alive = self.alive
        r.epoch = self.epoch
        r.log = self.log
        r.hw = self.hw
        r.hw_checkpoint = self.hw_checkpoint
        r.truncation = self.truncation
        r.unwritten_epoch = self.unwritten_epoch
        r.pending = self.pending
        r.zk_current = self.zk_current
        r.epoch_start = self.epoch_start
        r.clean_shutdown = self.clean_shutdown
        r.record_owed = self.record_owed
        r.alter_item = self.alter_item
        r.fenced = self.fenced
        r.dir_unreported = self.dir_unreported
        r.inflight = self.inflight
        r.remote_leo = self.remote_leo
        r.isr = self.isr
        r.pending_isr = self.pending_isr
        r.leader = self.leader
        r._hash = -1
        return r

    def with_hw_log(self, hw: cython.int, log: tuple) -> "TReplica":
        r: TReplica = self.copy()
        r.hw = hw
        r.log = log
        return r

    def __hash__(self):
        if self._hash == -1:
            h: cython.Py_hash_t = (
                hash(self.log) ^ (hash(self.inflight) * 31) ^ (hash(self.remote_leo) * 1000003)
            )
            h = h * 1000003 + self.alive
            h = h * 1000003 + self.epoch
            h = h * 1000003 + self.hw
            h = h * 1000003 + self.hw_checkpoint
            h = h * 1000003 + self.truncation
            h = h * 1000003 + self.unwritten_epoch
            h = h * 1000003 + self.pending
            h = h * 1000003 + self.zk_current
            h = h * 1000003 + self.epoch_start
            h = h * 1000003 + self.clean_shutdown
            h = h * 1000003 + self.record_owed
            h = h * 1000003 + self.alter_item
            h = h * 1000003 + self.fenced
            h = h * 1000003 + self.dir_unreported
            h = h * 1000003 + self.isr
            h = h * 1000003 + self.pending_isr
            h = h * 1000003 + self.leader
            if h == -1:
                h = -2
            self._hash = h
        return self._hash


def hw_sum(reps: tuple) -> cython.long:
    """A typed read of a field over replicas: what a rule's loop does."""
    total: cython.long = 0
    r: TReplica
    for r in reps:
        total += r.hw + r.isr + r.leader
    return total


def hw_sum_untyped(reps: tuple) -> cython.long:
    """The same read, compiled, on NamedTuples (what the rules do today)."""
    total: cython.long = 0
    for r in reps:
        total += r.hw + r.isr + r.leader
    return total
