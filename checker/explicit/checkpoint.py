"""Checkpoints of a breadth-first search: what it needs to go on after a stop.

A checkpoint folder holds ``checkpoint.json`` and one ``data-N`` folder with the
visited set (``checker.explicit.spill.SpillingVisited.save``) and the level being expanded,
the next level so far and any states waiting to be offered again
(``checker.explicit.frontier.Level.save``), in *parts*: one per worker of the search that
wrote it (any engine, with any number of workers, can resume any checkpoint).  A
new checkpoint is written to ``data-N+1`` first and ``checkpoint.json`` is replaced
atomically after, so a crash at any moment leaves the previous one whole (TLC's
``-recover`` is the model: the fingerprint set and the state queue on disk).

What the search was (model configuration, invariants, symmetry, and the
:func:`model_digest` of the code that defines them) is the caller's ``identity``:
the engines store it and give it back, and ``replcheck check --resume`` rebuilds
the model from it, refusing a checkpoint whose model code has changed since.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from replcheck.model.errors import InputError

FORMAT = "replcheck-checkpoint/1"
META = "checkpoint.json"
# At most this often (seconds) at level boundaries by default; a stop always writes one.
DEFAULT_EVERY = 300.0


@dataclass
class Saved:
    """A search's state at a checkpoint.  ``in_level``: the level ``depth`` was being
    expanded (its unexpanded states are each part's ``frontier``); otherwise ``depth``
    is complete and each part's ``next`` is the level to expand next."""

    identity: dict[str, Any]
    depth: int
    in_level: bool
    distinct: int
    transitions: int
    seconds: float
    found: list[tuple[str, int, str]]  # (invariant id, fingerprint, message)
    parts: list[dict[str, Any]]  # per worker: visited, frontier, next, retry (file names)
    folder: Path = field(default=Path("."))  # where the parts' files are
    status: str = ""  # why it was written: "level", or the search's stop

    def path(self, name: str) -> Path:
        return self.folder / name


@functools.cache
def model_digest() -> str:
    """A digest of the source of every model and invariant (the symbolic encodings
    aside): a checkpoint written before a change of the rules must not be continued
    after it, or one search would mix two state spaces.  Conservative: a changed
    comment counts too.  Read once a process (a Spark search writes it every level):
    the code that runs is the code imported then."""
    import replcheck.invariants
    import replcheck.model

    sha = hashlib.sha256()
    for package in (replcheck.model, replcheck.invariants):
        root = Path(package.__path__[0])
        for path in sorted(root.rglob("*.py")):
            relative = path.relative_to(root).as_posix()
            if "symbolic/" in relative:
                continue
            sha.update(f"{package.__name__}/{relative}\0".encode())
            sha.update(path.read_bytes())
    return sha.hexdigest()[:16]


def check_model_digest(identity: dict[str, Any], where: str) -> None:
    """InputError unless ``identity`` was written by this model's code."""
    written = identity.get("model")
    if written != model_digest():
        what = "an earlier version" if written is None else "another version"
        raise InputError(
            f"{where}: the checkpoint was written by {what} of the model's rules or "
            "invariants; continuing it would mix two state spaces: start the search again"
        )


class CheckpointWriter:
    """Writes checkpoints into ``folder``: at level boundaries at most every ``every``
    seconds (:meth:`due`), and whenever the search stops."""

    def __init__(self, folder: str | os.PathLike, identity: dict[str, Any], every: float) -> None:
        self.folder = Path(folder)
        self.identity = identity
        self.every = every
        self.last = time.monotonic()
        self.written = 0

    def due(self) -> bool:
        return time.monotonic() - self.last >= self.every

    def begin(self) -> Path:
        """A fresh data folder for the next checkpoint's files."""
        self.folder.mkdir(parents=True, exist_ok=True)
        serial = _serial(self.folder) + 1
        data = self.folder / f"data-{serial}"
        shutil.rmtree(data, ignore_errors=True)  # a half-written one from a crash
        data.mkdir()
        return data

    def commit(self, data: Path, saved: Saved) -> None:
        """Make ``data`` the checkpoint (atomically), then drop the older data folders."""
        doc = {
            "format": FORMAT,
            "data": data.name,
            "written": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "status": saved.status,
            "identity": self.identity,
            "depth": saved.depth,
            "in_level": saved.in_level,
            "distinct_states": saved.distinct,
            "transitions": saved.transitions,
            "seconds": saved.seconds,
            "found": [list(f) for f in saved.found],
            "parts": saved.parts,
        }
        tmp = self.folder / (META + ".tmp")
        with open(tmp, "w") as f:
            json.dump(doc, f, indent=1)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.folder / META)
        for old in self.folder.glob("data-*"):
            if old.name != data.name:
                shutil.rmtree(old, ignore_errors=True)
        self.last = time.monotonic()
        self.written += 1


def _serial(folder: Path) -> int:
    serials = [int(p.name[5:]) for p in folder.glob("data-*") if p.name[5:].isdigit()]
    return max(serials, default=0)


def load(folder: str | os.PathLike, what: str = "--resume") -> Saved:
    """The checkpoint in ``folder``; an :class:`InputError` naming what is wrong if there
    is none or it does not read."""
    base = Path(folder)
    meta = base / META
    if not base.is_dir():
        raise InputError(f"{what} {folder}: no such folder")
    if not meta.is_file():
        from replcheck.checker.spark.bfs import META as SPARK_META  # (imports this module)

        if (base / SPARK_META).is_file():
            raise InputError(
                f"{what} {folder}: a Spark BFS checkpoint; resume it with --engine spark"
            )
        raise InputError(f"{what} {folder}: no checkpoint there ({META} is missing)")
    try:
        doc = json.loads(meta.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise InputError(f"{what} {meta}: not a checkpoint ({e})") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise InputError(f"{what} {meta}: not a replcheck checkpoint (format {FORMAT} expected)")
    try:
        saved = Saved(
            identity=dict(doc["identity"]),
            depth=int(doc["depth"]),
            in_level=bool(doc["in_level"]),
            distinct=int(doc["distinct_states"]),
            transitions=int(doc["transitions"]),
            seconds=float(doc["seconds"]),
            found=[(str(i), int(fp), str(m)) for i, fp, m in doc["found"]],
            parts=[dict(p) for p in doc["parts"]],
            folder=base / str(doc["data"]),
            status=str(doc.get("status", "")),
        )
    except (KeyError, TypeError, ValueError) as e:
        raise InputError(f"{what} {meta}: a field is missing or malformed ({e})") from None
    if not saved.folder.is_dir():
        raise InputError(f"{what} {folder}: its data folder {saved.folder.name} is missing")
    return saved
