"""Output paths, checked before the work: a file or folder that cannot be written is
one line and exit 2 at the start, never a traceback after a long run."""

from __future__ import annotations

import os

from replcheck.checker.cli.exits import UsageError


def check_writable(path: str, option: str) -> None:
    """Fail before a long run, not after it, if an output file cannot be written."""
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise UsageError(f"{option} {path}: is a directory")
    if not os.path.isdir(folder):
        raise UsageError(f"{option} {path}: folder {folder} does not exist")
    if not os.access(folder, os.W_OK):
        raise UsageError(f"{option} {path}: folder {folder} is not writable")


def prepare_out_dir(path: str, option: str) -> str:
    """Create the output folder ``path`` (and its parents) if missing, or fail in one line.

    Every command that writes several files (--out, --trace-dir) uses this, so they all
    accept a new folder and word their errors the same way.
    """
    if os.path.exists(path) and not os.path.isdir(path):
        raise UsageError(f"{option} {path}: exists and is not a folder")
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"{option} {path}: cannot create the folder ({exc.strerror})") from None
    if not os.access(path, os.W_OK):
        raise UsageError(f"{option} {path}: folder is not writable")
    return path
