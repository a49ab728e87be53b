"""The visited set of a breadth-first search: fingerprints and parent links in flat arrays.

A Python dict of int -> int costs about 100 bytes an entry (two int objects and
its slot).  BFS needs only each state's 64-bit fingerprint and which state it
was first reached from, so each visited state gets a number in the order it was
found, and three ``array`` buffers hold the rest: its fingerprint and its
parent's (16 bytes a state), and an open-addressing index from fingerprint to
number (8 bytes a slot, between 1.5 and 3 slots a state, since the index doubles
when 2/3 full).  About 32 bytes a visited state in all: TLC's fingerprint set
with the parent link beside it.  Past a RAM budget the table goes to disk
(``checker.explicit.spill``).
"""

from __future__ import annotations

from array import array

MASK64 = (1 << 64) - 1
NO_PARENT = -1


def as_key(fp: int) -> int:
    """A fingerprint as the table keeps it: unsigned 64-bit."""
    return fp & MASK64


class VisitedTable:
    """Visited fingerprints, numbered in the order they were added, each with its parent
    (any signed 64-bit value: the engines store the parent's fingerprint)."""

    def __init__(self, capacity: int = 1 << 16, max_bytes: int | None = None) -> None:
        self.keys = array("Q")  # number -> fingerprint
        self.parents = array("q")  # number -> parent (NO_PARENT for an initial state)
        # Past max_bytes the index is not doubled: ``full`` is set instead, and the owner
        # (``checker.explicit.spill.SpillingVisited``) moves the table to disk.
        self.max_bytes = max_bytes
        self.full = False
        self._index_for(max(16, 1 << (capacity * 3 // 2).bit_length()))

    def _index_for(self, size: int) -> None:
        """(Re)build the index: slot -> number + 1 (0: free)."""
        self.mask = size - 1
        self.limit = size * 2 // 3
        index = array("q", bytes(8 * size))
        keys, mask = self.keys, self.mask
        for number, key in enumerate(keys):
            slot = key & mask
            while index[slot]:
                slot = (slot + 1) & mask
            index[slot] = number + 1
        self.index = index

    def __len__(self) -> int:
        return len(self.keys)

    def add(self, key: int, parent: int) -> int:
        """Add ``key`` (from :func:`as_key`) reached from state number ``parent``: its new
        number, or -1 if it was already visited."""
        index, keys, mask = self.index, self.keys, self.mask
        slot = key & mask
        while True:
            there = index[slot]
            if not there:
                break
            if keys[there - 1] == key:
                return -1
            slot = (slot + 1) & mask
        number = len(keys)
        keys.append(key)
        self.parents.append(parent)
        index[slot] = number + 1
        if number >= self.limit:
            size = 2 * (self.mask + 1)
            if self.max_bytes is not None and 8 * size + 16 * self.limit > self.max_bytes:
                self.full = True
            else:
                self._index_for(size)
        return number

    def find(self, key: int) -> int:
        """The number of ``key``, or -1 if it was not visited."""
        index, keys, mask = self.index, self.keys, self.mask
        slot = key & mask
        while True:
            there = index[slot]
            if not there:
                return -1
            if keys[there - 1] == key:
                return there - 1
            slot = (slot + 1) & mask

    @property
    def bytes_used(self) -> int:
        """What the three arrays hold now (their allocations may be up to 1/8 larger)."""
        return 8 * (len(self.index) + len(self.keys) + len(self.parents))
