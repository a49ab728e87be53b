"""The visited set past its RAM budget: a table in RAM, sorted runs on disk.

TLC's ``DiskFPSet`` keeps recent fingerprints in memory and, when that fills,
merges them into a sorted file it searches with an in-memory index.  Here the RAM
part is a :class:`checker.explicit.visited.VisitedTable` (fingerprint -> parent's
fingerprint); when its budget is reached it is sorted and written out as a *run*
(two files, the sorted fingerprints and their parents), and emptied.  A fingerprint
is new if it is in neither the table nor any run: a run is memory-mapped and
searched by bisection (about 23 probes in 8M fingerprints, served from the page
cache).  Runs are merged pairwise as they accumulate, like a binary counter, so
there are at most about log2(states / table size) of them.

Every visited fingerprint costs 16 bytes of disk per run it is in (once, after
merges), and the RAM budget bounds the table.  The order in which states are found
does not change, so counts and counterexamples are those of a search in RAM.
"""

from __future__ import annotations

import heapq
import mmap
import os
import shutil
import tempfile
from array import array
from bisect import bisect_left
from collections.abc import Iterator
from pathlib import Path

from replcheck.checker.explicit.visited import NO_PARENT, VisitedTable

# Bytes a table entry costs at most: 16 in the arrays, 8 to 24 in the index.
_ENTRY_BYTES = 40
_MIN_TABLE_BYTES = 1 << 20
_BLOCK = 1 << 16  # entries written at a time by a merge


class _Run:
    """Sorted fingerprints and their parents, in two files, memory-mapped."""

    def __init__(self, keys_path: Path, parents_path: Path, *, owned: bool) -> None:
        self.paths = (keys_path, parents_path)
        self.owned = owned  # delete the files when the run goes (not a checkpoint's)
        self._maps: list[tuple[mmap.mmap, memoryview, memoryview]] = []
        for path, code in zip(self.paths, "Qq", strict=True):
            with open(path, "rb") as f:
                m = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
            base = memoryview(m)
            self._maps.append((m, base, base.cast(code)))
        self.keys, self.parents = (view for _, _, view in self._maps)
        if len(self.keys) != len(self.parents):
            self.close()
            raise ValueError(
                f"{keys_path}: {len(self.keys)} fingerprints, but "
                f"{len(self.parents)} parents in {parents_path.name}"
            )

    def __len__(self) -> int:
        return len(self.keys)

    def find(self, key: int) -> int:
        keys = self.keys
        i = bisect_left(keys, key)
        return i if i < len(keys) and keys[i] == key else -1

    def close(self, delete: bool = False) -> None:
        for m, base, view in self._maps:
            view.release()
            base.release()
            m.close()
        self._maps = []
        if delete and self.owned:
            for path in self.paths:
                path.unlink(missing_ok=True)


_BUCKET_BITS = 4


def _buckets(keys: array, parents: array) -> Iterator[tuple[array, array]]:
    """The entries split by the top bits of their fingerprints, in key order of buckets:
    each bucket is sorted alone, so sorting holds Python ints for a sixteenth of the
    table at a time (a sort of the whole took twice the table's RAM, measured)."""
    shift = 64 - _BUCKET_BITS
    split_keys = [array("Q") for _ in range(1 << _BUCKET_BITS)]
    split_parents = [array("q") for _ in range(1 << _BUCKET_BITS)]
    for key, parent in zip(keys, parents, strict=True):
        b = key >> shift
        split_keys[b].append(key)
        split_parents[b].append(parent)
    del keys[:], parents[:]  # the table's own arrays: the buckets hold the entries now
    for b in range(1 << _BUCKET_BITS):
        yield split_keys[b], split_parents[b]
        split_keys[b] = split_parents[b] = None  # type: ignore[call-overload]


class SpillingVisited:
    """fingerprint -> parent fingerprint, within ``ram_limit`` bytes of RAM (None: no
    limit, never on disk).  Past it, runs go to a new folder in ``spill_dir`` (the
    system's temporary folder by default), removed by :meth:`close`."""

    def __init__(self, ram_limit: int | None = None, spill_dir: str | os.PathLike | None = None):
        self.ram_limit = None if ram_limit is None else max(ram_limit, _MIN_TABLE_BYTES)
        self.spill_dir = spill_dir
        self.folder: Path | None = None
        self.runs: list[_Run] = []  # oldest first
        self.on_disk = 0
        self.serial = 0
        self.table = self._table()

    def _table(self) -> VisitedTable:
        if self.ram_limit is None:
            return VisitedTable()
        return VisitedTable(min(1 << 16, self.ram_limit // _ENTRY_BYTES), self.ram_limit)

    def __len__(self) -> int:
        return len(self.table) + self.on_disk

    @property
    def spilled(self) -> bool:
        return bool(self.runs)

    @property
    def ram_bytes(self) -> int:
        return self.table.bytes_used

    @property
    def disk_bytes(self) -> int:
        return 16 * self.on_disk

    def add(self, key: int, parent: int) -> bool:
        """Record ``key`` (unsigned 64-bit) reached from ``parent``; False if it was seen."""
        if self.runs and any(run.find(key) >= 0 for run in self.runs):
            return False
        if self.table.add(key, parent) < 0:
            return False
        if self.table.full:
            self._flush()
        return True

    def seen(self, key: int) -> bool:
        return self.table.find(key) >= 0 or any(run.find(key) >= 0 for run in self.runs)

    def parent_of(self, key: int) -> int | None:
        """The parent's fingerprint (NO_PARENT for an initial state); None if unseen."""
        number = self.table.find(key)
        if number >= 0:
            return self.table.parents[number]
        for run in self.runs:
            i = run.find(key)
            if i >= 0:
                return run.parents[i]
        return None

    def chain(self, key: int) -> list[int]:
        """The fingerprints from an initial state to ``key``, following parents."""
        out = []
        while key != NO_PARENT:
            out.append(key)
            up = self.parent_of(key & ((1 << 64) - 1))
            if up is None:
                raise KeyError(f"fingerprint {key:#x} is not in the visited set")
            key = up
        out.reverse()
        return out

    # ---------------------------------------------------------------- spilling

    def _folder(self) -> Path:
        if self.folder is None:
            if self.spill_dir is not None:
                Path(self.spill_dir).mkdir(parents=True, exist_ok=True)
            self.folder = Path(tempfile.mkdtemp(prefix="replcheck-spill-", dir=self.spill_dir))
        return self.folder

    def _name(self) -> str:
        self.serial += 1
        return f"run-{self.serial:05d}"

    def _flush(self) -> None:
        """Sort the table into a run on disk, empty it, and merge runs of similar size."""
        keys, parents = self.table.keys, self.table.parents
        self.table = None  # type: ignore[assignment]  # its index is not needed to sort
        folder, name = self._folder(), self._name()
        paths = folder / f"{name}.keys", folder / f"{name}.parents"
        with open(paths[0], "wb") as fk, open(paths[1], "wb") as fp:
            for bucket_keys, bucket_parents in _buckets(keys, parents):
                order = sorted(range(len(bucket_keys)), key=bucket_keys.__getitem__)
                array("Q", map(bucket_keys.__getitem__, order)).tofile(fk)
                array("q", map(bucket_parents.__getitem__, order)).tofile(fp)
        run = _Run(*paths, owned=True)
        self.on_disk += len(run)
        self.table = self._table()
        self.runs.append(run)
        while len(self.runs) >= 2 and len(self.runs[-2]) <= 2 * len(self.runs[-1]):
            newer, older = self.runs.pop(), self.runs.pop()
            self.runs.append(self._merge(older, newer))

    def _merge(self, a: _Run, b: _Run) -> _Run:
        folder, name = self._folder(), self._name()
        paths = folder / f"{name}.keys", folder / f"{name}.parents"
        with open(paths[0], "wb") as fk, open(paths[1], "wb") as fp:
            ks, ps = array("Q"), array("q")
            for key, parent in heapq.merge(*(zip(r.keys, r.parents, strict=True) for r in (a, b))):
                ks.append(key)
                ps.append(parent)
                if len(ks) >= _BLOCK:
                    ks.tofile(fk)
                    ps.tofile(fp)
                    ks, ps = array("Q"), array("q")
            ks.tofile(fk)
            ps.tofile(fp)
        a.close(delete=True)
        b.close(delete=True)
        return _Run(*paths, owned=True)

    def close(self) -> None:
        """Delete what this set wrote to disk (a checkpoint's files are left)."""
        for run in self.runs:
            run.close(delete=True)
        self.runs = []
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)
            self.folder = None

    # ---------------------------------------------------------------- checkpoints

    def save(self, folder: Path, prefix: str) -> dict:
        """Write the set into ``folder`` (runs hard-linked where the file system allows):
        what :meth:`load` needs, as file names relative to ``folder``."""
        table = {"keys": f"{prefix}-table.keys", "parents": f"{prefix}-table.parents"}
        for name, values in (("keys", self.table.keys), ("parents", self.table.parents)):
            with open(folder / table[name], "wb") as f:
                values.tofile(f)
        runs = []
        for k, run in enumerate(self.runs):
            names = []
            for path in run.paths:
                name = f"{prefix}-run{k}{path.suffix}"
                try:
                    os.link(path, folder / name)
                except OSError:
                    shutil.copyfile(path, folder / name)
                names.append(name)
            runs.append(names)
            if not run.owned:  # read from an older checkpoint, which is about to go
                run.paths = (folder / names[0], folder / names[1])
        return {"table": table, "runs": runs, "count": len(self)}

    @classmethod
    def load(
        cls,
        folder: Path,
        saved: dict,
        ram_limit: int | None = None,
        spill_dir: str | os.PathLike | None = None,
    ) -> SpillingVisited:
        """The set :meth:`save` wrote; its runs are read in place (left on disk after)."""
        visited = cls(ram_limit, spill_dir)
        for keys_name, parents_name in saved["runs"]:
            run = _Run(folder / keys_name, folder / parents_name, owned=False)
            visited.runs.append(run)
            visited.on_disk += len(run)
        keys, parents = array("Q"), array("q")
        for values, name in ((keys, saved["table"]["keys"]), (parents, saved["table"]["parents"])):
            data = (folder / name).read_bytes()
            if len(data) % 8:
                raise ValueError(f"{folder / name}: {len(data)} bytes is not whole entries")
            values.frombytes(data)
        if len(keys) != len(parents):
            raise ValueError(
                f"{folder / saved['table']['keys']}: fingerprints and parents differ in number"
            )
        for key, parent in zip(keys, parents, strict=True):
            visited.table.add(key, parent)
            if visited.table.full:
                visited._flush()
        if len(visited) != saved["count"]:
            raise ValueError(
                f"{folder}: {len(visited)} fingerprints, the checkpoint says {saved['count']}"
            )
        return visited


def saved_entries(folder: Path, saved: dict) -> Iterator[tuple[int, int]]:
    """(fingerprint, parent) of every entry of a set :meth:`SpillingVisited.save` wrote:
    to re-partition a checkpoint among another number of workers."""
    for keys_name, parents_name in [
        *saved["runs"],
        [saved["table"]["keys"], saved["table"]["parents"]],
    ]:
        keys, parents = array("Q"), array("q")
        keys.frombytes((folder / keys_name).read_bytes())
        parents.frombytes((folder / parents_name).read_bytes())
        if len(keys) != len(parents):
            raise ValueError(f"{folder / keys_name}: fingerprints and parents differ in number")
        yield from zip(keys, parents, strict=True)
