"""The package's two exception types, at the bottom so every layer can raise them.

``ReplcheckError`` is what replcheck raises on purpose; ``InputError`` is its "bad
input" kind (a configuration, an invariant id, a trace, an argument, an output path):
the command line prints its message as one line and exits 2, and the Python API
raises it as it is.  Each layer's own errors (``ConfigError``, ``TraceError``, ...)
derive from one of the two.
"""

from __future__ import annotations


class ReplcheckError(Exception):
    """An error replcheck raises on purpose (not a bug's traceback)."""


class InputError(ReplcheckError, ValueError):
    """Bad input from the user; the message says what is wrong and where, in one line."""
