"""Output paths, checked before the work: a file or folder that cannot be written is
one line and exit 2 at the start, never a traceback after a long run.

Permissions alone do not say whether a file can be written (``/proc`` looks writable
to root; a read-only mount, a full quota...), so each output is *probed*: the file is
opened for appending (created if missing, then removed again), a folder gets a
scratch file written and removed.
"""

from __future__ import annotations

import os
import stat
import tempfile

from replcheck.cli.exits import UsageError


def check_writable(path: str, option: str) -> None:
    """Fail now, not after a long run, if the output file ``path`` cannot be written.

    It must be a regular file or a new one in an existing folder: a directory or a
    device (where a write may fail or vanish) is refused.
    """
    folder = os.path.dirname(os.path.abspath(path)) or "."
    if os.path.isdir(path):
        raise UsageError(f"{option} {path}: is a directory")
    if not os.path.isdir(folder):
        raise UsageError(f"{option} {path}: folder {folder} does not exist")
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        mode = None
    except OSError as exc:
        raise UsageError(f"{option} {path}: cannot write ({exc.strerror})") from None
    if mode is not None and not stat.S_ISREG(mode):
        raise UsageError(f"{option} {path}: not a regular file (give a file name to write)")
    try:
        with open(path, "a", encoding="utf-8"):
            pass
    except OSError as exc:
        raise UsageError(f"{option} {path}: cannot write ({exc.strerror})") from None
    if mode is None:  # the probe created it: leave no empty file behind
        os.remove(path)


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
    try:
        with tempfile.NamedTemporaryFile(dir=path, prefix=".replcheck-probe-"):
            pass
    except OSError as exc:
        raise UsageError(f"{option} {path}: cannot write in the folder ({exc.strerror})") from None
    return path
