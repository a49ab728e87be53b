"""The leader-epoch cache and the OffsetsForLeaderEpoch exchange as z3 terms.

Mirrors model/kafka/epochs.py.  The explicit cache (``epoch_entries``) is a list
derived from the log; here every question the rules ask of it is answered
directly from the log's slots: the latest epoch is the largest record epoch (or
the unwritten entry), the first entry after an epoch starts at the first record
with a larger epoch, and the largest entry up to an epoch is the largest record
epoch before that point (entries are the log's running maxima).
"""

from __future__ import annotations

from dataclasses import dataclass

import z3

from replcheck.model.kafka.epochs import UNDEFINED
from replcheck.model.kafka.releases import EPOCH_ONCE, Behaviour
from replcheck.model.kafka.symbolic.state import Bool, Num, SymReplica, Terms


@dataclass(frozen=True)
class LogView:
    """What the epoch cache is derived from: the first ``length`` records of a log
    and the unwritten entry (a truncated replica keeps its slots but a shorter
    length, model/kafka/epochs.py ``truncate_epochs``)."""

    eps: tuple
    length: Num
    unwritten: Num
    hw: Num


def view(r: SymReplica) -> LogView:
    return LogView(r.log_ep, r.log_len, r.unwritten_epoch, r.hw)


class SymEpochs(Terms):
    """The epoch-cache lookups, mixed into KafkaSymbolic."""

    behaviour: Behaviour

    def _latest_any(self, v: LogView) -> Num:
        """max(0, every record epoch, the unwritten entry): the last entry's epoch, 0 if none."""
        zero = self.num(0)
        out = v.unwritten
        for k, ep in enumerate(v.eps):
            out = self.mx(out, z3.If(k < v.length, ep, zero))
        return self.mx(out, zero)

    def latest_epoch(self, v: LogView) -> Num:
        """Mirrors epochs.latest_epoch."""
        m = self._latest_any(v)
        return self.ite(m > 0, m, UNDEFINED)

    def _lookup(self, v: LogView, requested: Num) -> tuple[Bool, Num, Num, Num]:
        """(a later entry exists, its start offset, the largest entry epoch before it
        (0: none), the first entry's epoch) for ``requested``."""
        later_start = v.length  # the unwritten entry starts at the log end
        for k in reversed(range(len(v.eps))):
            later_start = self.ite(z3.And(k < v.length, v.eps[k] > requested), k, later_start)
        exists_later = z3.Or(later_start < v.length, v.unwritten > requested)
        previous = self.num(0)
        for k, ep in enumerate(v.eps):
            previous = self.mx(previous, self.ite(k < later_start, ep, 0))
        first = v.unwritten
        for k in reversed(range(len(v.eps))):
            first = self.ite(z3.And(k < v.length, v.eps[k] > 0), v.eps[k], first)
        return exists_later, later_start, previous, first

    def end_offset_v0(self, v: LogView, requested: Num) -> Num:
        """Mirrors epochs.end_offset_v0 (for ``epoch_entries`` of the view, its LEO)."""
        latest = self._latest_any(v)
        exists_later, later_start, _previous, first = self._lookup(v, requested)
        return self.ite(
            z3.Or(requested == UNDEFINED, latest == 0),
            UNDEFINED,
            self.ite(
                requested == latest,
                v.length,
                self.ite(
                    requested < first,
                    UNDEFINED,
                    self.ite(exists_later, later_start, UNDEFINED),
                ),
            ),
        )

    def end_offset_v1(self, v: LogView, requested: Num, undefined_for_old: bool) -> tuple[Num, Num]:
        """Mirrors epochs.end_offset_v1 (for ``epoch_entries`` of the view, its LEO)."""
        undefined = (self.num(UNDEFINED), self.num(UNDEFINED))
        latest = self._latest_any(v)
        exists_later, later_start, previous, _first = self._lookup(v, requested)
        old = undefined if undefined_for_old else (requested, later_start)
        return self.ite(
            z3.Or(requested == UNDEFINED, latest == 0),
            undefined,
            self.ite(
                requested == latest,
                (requested, v.length),
                self.ite(
                    z3.Not(exists_later),
                    undefined,
                    self.ite(previous == 0, old, (previous, later_start)),
                ),
            ),
        )

    def leader_answer(self, leader: LogView, requested: Num) -> tuple[Num, Num]:
        """Mirrors epochs.leader_answer."""
        b = self.behaviour
        if b.truncation == EPOCH_ONCE:
            return self.num(UNDEFINED), self.end_offset_v0(leader, requested)
        return self.end_offset_v1(leader, requested, b.undefined_for_old_epoch)

    def truncation_step(self, f: LogView, answer: tuple[Num, Num]) -> tuple[Num, Bool]:
        """Mirrors epochs.truncation_step: (offset, truncation complete)."""
        b = self.behaviour
        leo = f.length
        fallback = self.mn(f.hw, leo)
        leader_epoch, leader_end = answer
        if b.truncation == EPOCH_ONCE:
            rest = (self.mn(leader_end, leo), True)
        else:
            my_epoch, my_end = self.end_offset_v1(f, leader_epoch, b.undefined_for_old_epoch)
            rest = self.ite(
                my_end == UNDEFINED,
                (self.mn(leader_end, leo), True),
                self.ite(
                    my_epoch == leader_epoch,
                    (self.mn(my_end, leader_end, leo), True),
                    (self.mn(my_end, leo), False),
                ),
            )
        offset, done = self.ite(leader_end == UNDEFINED, (fallback, True), rest)
        return offset, self.a.boolean(done)

    def whole_exchange(self, f: LogView, leader: LogView) -> tuple[Bool, Num]:
        """Mirrors epochs.whole_exchange: (defined, offset); not defined where the
        explicit one returns None.  Each round that goes on shortens the log or (from
        KAFKA-10706) drops the unwritten entry, so ``R + 2`` rounds always end the loop."""
        finished: Bool = self.a.false
        defined: Bool = self.a.false
        result: Num = self.num(0)
        length, unwritten = f.length, f.unwritten
        for _round in range(len(f.eps) + 2):
            current = LogView(f.eps, length, unwritten, f.hw)
            requested = self.latest_epoch(current)
            no_epochs = requested == UNDEFINED
            offset, done = self.truncation_step(current, self.leader_answer(leader, requested))
            # truncate_epochs changes nothing: no progress (from KAFKA-10706 it still
            # drops the unwritten entry, and the next round asks for an older epoch)
            stuck = offset >= length
            if self.behaviour.truncation_clears_end_epoch:
                stuck = z3.And(stuck, unwritten == 0)
            # this round's outcome, for a loop not finished before it
            ends_here = z3.Or(no_epochs, done, stuck)
            value = self.ite(no_epochs, self.mn(f.hw, length), offset)
            ok = z3.Or(no_epochs, done)
            now = z3.And(z3.Not(finished), ends_here)
            result = self.ite(now, value, result)
            defined = z3.Or(defined, z3.And(now, ok))
            finished = z3.Or(finished, ends_here)
            length = self.ite(finished, length, self.mn(offset, length))
            unwritten = self.ite(finished, unwritten, 0)
        return z3.And(finished, defined), result
