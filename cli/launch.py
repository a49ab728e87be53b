"""The ``replcheck`` command's entry points: the console script and ``python -m replcheck``.

They import the CLI inside a ``try``, so that Ctrl-C while Python is still importing
the checker is one line and exit 130 too, never a traceback.
"""

from __future__ import annotations

import sys
from typing import NoReturn

EXIT_INTERRUPTED = 130  # cli.exits.EXIT_INTERRUPTED, which is not imported yet here


def main() -> int:
    try:
        from replcheck.cli.main import main as run
    except KeyboardInterrupt:
        print("replcheck: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    return run()


def run_as_module() -> NoReturn:
    """``python -m replcheck``: :func:`main`, and its exit code kept (see below)."""
    code = main()
    _forget_caught_interrupts()
    sys.exit(code)


def _forget_caught_interrupts() -> None:
    """Under ``python -m``, CPython ends the process with SIGINT instead of our exit code
    if a KeyboardInterrupt ever left an ``exec``/``eval`` of a string, even one we caught
    (Ctrl-C while an import builds a dataclass or namedtuple).  The flag it keeps is
    reset by the next such call, so make one: the exit code stays the one main chose."""
    exec("None")
