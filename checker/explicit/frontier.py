"""A BFS level: (parent fingerprint, state) pairs in arrival order, compressed, spilled to disk.

A Kafka state is about a kilobyte of Python objects but about 31 bytes serialized and
zlib-compressed in chunks of 512 (a few microseconds a state: ``marshal`` of the plain
tuples a model can give, model.interface.state_codec, else ``pickle``), so a long
level keeps its states as compressed chunks.  Past its RAM budget a level writes its
chunks to a file instead (the spill folder), as TLC's disk-backed state queue does,
and reads them back in order: a search is then limited by disk, not RAM.  A level is
read from the front (:meth:`Level.take`), so a level half expanded is still a level:
what :meth:`Level.save` writes to a checkpoint.
"""

from __future__ import annotations

import marshal
import os
import pickle
import struct
import tempfile
import zlib
from array import array
from collections import deque
from collections.abc import Callable, Hashable, Iterable, Iterator
from contextlib import suppress
from pathlib import Path

Item = tuple[int, Hashable]  # (parent's fingerprint, or NO_PARENT; state)

_HEADER = struct.Struct("<QQ")  # a saved chunk: its size in bytes, its items
_COUNT = struct.Struct("<I")  # a chunk a codec wrote: its items


# A model's (plain_state, state_from_plain) pair (model.interface.state_codec), or None.
Codec = tuple[Callable[[Hashable], Hashable], Callable[[Hashable], Hashable]] | None


def _pack(items: list[Item], codec: Codec = None) -> bytes:
    if codec is None:
        return zlib.compress(pickle.dumps(items, pickle.HIGHEST_PROTOCOL), 3)
    # The fingerprints as raw 64-bit ints (random bits: zlib cannot shrink them, and
    # marshal would spend 15 bytes on each), then the states compressed.
    plain = codec[0]
    fingerprints = array("q", [fp for fp, _ in items])
    states = marshal.dumps([plain(state) for _, state in items])
    return _COUNT.pack(len(items)) + fingerprints.tobytes() + zlib.compress(states, 3)


def _unpack(data: bytes, codec: Codec = None) -> list[Item]:
    if codec is None:
        return pickle.loads(zlib.decompress(data))
    back, view = codec[1], memoryview(data)
    start = _COUNT.size + 8 * _COUNT.unpack_from(view)[0]
    fingerprints = array("q")
    fingerprints.frombytes(view[_COUNT.size : start])
    states = marshal.loads(zlib.decompress(view[start:]))
    return [(fp, back(state)) for fp, state in zip(fingerprints, states, strict=True)]


class _SpillFile:
    """An append-only file of compressed chunks, deleted when the last level using it goes."""

    def __init__(self, folder: str | os.PathLike | None, *, keep: bool = False) -> None:
        fd, self.path = tempfile.mkstemp(prefix="level-", suffix=".bin", dir=folder)
        self.file = os.fdopen(fd, "w+b")
        self.keep = keep

    @classmethod
    def existing(cls, path: Path) -> _SpillFile:
        spill = cls.__new__(cls)
        spill.path, spill.file, spill.keep = str(path), open(path, "rb"), True  # noqa: SIM115
        return spill

    def write(self, data: bytes) -> tuple[int, int]:
        self.file.seek(0, os.SEEK_END)
        offset = self.file.tell()
        self.file.write(data)
        return offset, len(data)

    def read(self, offset: int, size: int) -> bytes:
        if self.file.writable():
            self.file.flush()
        return os.pread(self.file.fileno(), size, offset)

    def close(self) -> None:
        if not self.file.closed:
            self.file.close()
            if not self.keep:
                with suppress(FileNotFoundError):
                    os.unlink(self.path)


class Level:
    """One BFS level, read from the front.  ``ram_limit``: bytes of compressed chunks kept in
    RAM before the rest go to a file in ``spill_dir`` (None: never spill)."""

    # Small chunks compress as well as large ones (pickled, 28.6 bytes a 4.1.0 state at 512, 28.1
    # at 4,096) and spread the cost: a parallel search's workers wait for the slowest in
    # each round, and sealing 4,096 states at once stalled one for ~30 ms (issue 24).
    CHUNK = 512
    PICKLE_FROM = 65_536  # states in the level before chunks are compressed at all

    def __init__(
        self,
        ram_limit: int | None = None,
        spill_dir: str | os.PathLike | None = None,
        codec: Codec = None,
    ) -> None:
        self.ram_limit = ram_limit
        self.spill_dir = spill_dir
        self.codec = codec  # how chunks serialize states (pickle where None)
        # each chunk: (items, compressed bytes in RAM) or (items, (file, offset, size))
        self.chunks: deque[tuple[int, bytes | tuple[_SpillFile, int, int]]] = deque()
        self.spill: _SpillFile | None = None  # where this level writes past its budget
        self.sources: list[_SpillFile] = []  # saved levels it reads (see :meth:`load`)
        self.ram_bytes = 0  # compressed bytes held in self.chunks
        self.head: list[Item] = []  # the chunk being read
        self.pos = 0  # next item of self.head
        self.buffer: list[Item] = []  # the newest items, not yet in a chunk
        self.size = 0
        self.appended = 0  # every item ever appended: when to start compressing

    def __len__(self) -> int:
        return self.size

    @property
    def spilled(self) -> bool:
        return self.spill is not None

    def append(self, item: Item) -> None:
        self.buffer.append(item)
        self.size += 1
        self.appended += 1
        if len(self.buffer) >= self.CHUNK and self.appended >= self.PICKLE_FROM:
            self._seal()

    def extend(self, items: Iterable[Item]) -> None:
        for item in items:
            self.append(item)

    def _seal(self) -> None:
        """Compress the buffer into a chunk, in RAM or, past the budget, in the spill file."""
        data, count = _pack(self.buffer, self.codec), len(self.buffer)
        self.buffer = []
        if self.ram_limit is not None and self.ram_bytes + len(data) > self.ram_limit:
            if self.spill is None:
                self.spill = _SpillFile(self.spill_dir)
            self.chunks.append((count, (self.spill, *self.spill.write(data))))
        else:
            self.chunks.append((count, data))
            self.ram_bytes += len(data)

    @staticmethod
    def _bytes(chunk: bytes | tuple[_SpillFile, int, int]) -> bytes:
        if isinstance(chunk, bytes):
            return chunk
        source, offset, size = chunk
        return source.read(offset, size)

    def _load(self, chunk: bytes | tuple[_SpillFile, int, int]) -> list[Item]:
        if isinstance(chunk, bytes):
            self.ram_bytes -= len(chunk)
        return _unpack(self._bytes(chunk), self.codec)

    def take(self, count: int) -> list[Item]:
        """The first ``count`` items (fewer if the level holds fewer), removed from it."""
        out: list[Item] = []
        while len(out) < count:
            if self.pos >= len(self.head):
                if self.chunks:
                    self.head, self.pos = self._load(self.chunks.popleft()[1]), 0
                elif self.buffer:
                    self.head, self.pos, self.buffer = self.buffer, 0, []
                else:
                    break
            end = min(len(self.head), self.pos + count - len(out))
            out.extend(self.head[self.pos : end])
            self.pos = end
        self.size -= len(out)
        if self.pos >= len(self.head):
            self.head, self.pos = [], 0
        return out

    def push_front(self, items: list[Item]) -> None:
        """Put items taken but not used back at the front, in order."""
        if items:
            self.head, self.pos = items + self.head[self.pos :], 0
            self.size += len(items)

    @property
    def disk_bytes(self) -> int:
        return (
            self.spill.file.tell() if self.spill is not None and not self.spill.file.closed else 0
        )

    def drain(self) -> Iterator[Item]:
        """Every item in order, each chunk freed once it is read."""
        while batch := self.take(self.CHUNK):
            yield from batch

    def close(self) -> None:
        """Free the spill file (a level read to the end needs no more)."""
        if self.spill is not None:
            self.spill.close()
            self.spill = None
        for source in self.sources:
            source.close()
        self.sources = []

    def __del__(self) -> None:
        self.close()

    # ---------------------------------------------------------------- checkpoints

    def save(self, path: str | os.PathLike) -> None:
        """Write what the level still holds, in order, to ``path``: length-prefixed
        compressed chunks.  The level is unchanged."""
        with open(path, "wb") as f:
            if self.pos < len(self.head):
                _write_chunk(f, len(self.head) - self.pos, _pack(self.head[self.pos :], self.codec))
            for count, chunk in self.chunks:
                _write_chunk(f, count, self._bytes(chunk))
            if self.buffer:
                _write_chunk(f, len(self.buffer), _pack(self.buffer, self.codec))
            f.flush()
            os.fsync(f.fileno())

    @classmethod
    def load(
        cls,
        paths: Iterable[str | os.PathLike],
        ram_limit: int | None = None,
        spill_dir: str | os.PathLike | None = None,
        codec: Codec = None,
    ) -> Level:
        """One level of the items in files :meth:`save` wrote, in order (the files are
        read in place and left there; ``codec`` as they were written)."""
        level = cls(ram_limit, spill_dir, codec)
        for path in paths:
            source = _SpillFile.existing(Path(path))
            level.sources.append(source)
            size = os.path.getsize(path)
            offset = 0
            while offset < size:
                header = source.read(offset, _HEADER.size)
                if len(header) < _HEADER.size:
                    raise ValueError(f"{path}: truncated at byte {offset}")
                length, count = _HEADER.unpack(header)
                offset += _HEADER.size
                if offset + length > size:
                    raise ValueError(f"{path}: truncated at byte {offset}")
                level.chunks.append((count, (source, offset, length)))
                level.size += count
                offset += length
        level.appended = level.size
        return level


def _write_chunk(f, count: int, data: bytes) -> None:  # noqa: ANN001 - a binary file
    f.write(_HEADER.pack(len(data), count))
    f.write(data)
