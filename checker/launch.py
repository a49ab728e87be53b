"""The ``replcheck`` command's entry point.

It imports the CLI inside a ``try``, so that Ctrl-C while Python is still
importing the checker is one line and exit 130 too, never a traceback.
"""

from __future__ import annotations

import sys

EXIT_INTERRUPTED = 130  # checker.cli.EXIT_INTERRUPTED, which is not imported yet here


def main() -> int:
    try:
        from checker.cli import main as run
    except KeyboardInterrupt:
        print("replcheck: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    return run()
