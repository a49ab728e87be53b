"""Exit codes, the same for every command, and the error that means "bad input".

0 every checked invariant holds within the bounds, 1 a violation was found, 2 bad
input (one line on stderr, no traceback), 3 incomplete (the search stopped at
--max-states, --timeout or --memory before it could say "holds"; what it explored is
reported), 130 interrupted by Ctrl-C (what was explored is reported).  A violation
wins over 3 and 130: a counterexample found before the stop is still a counterexample.
"""

from __future__ import annotations

from replcheck.model.errors import InputError

EXIT_OK, EXIT_VIOLATION, EXIT_USAGE, EXIT_INCOMPLETE, EXIT_INTERRUPTED = 0, 1, 2, 3, 130


class UsageError(InputError):
    """Bad input from the user: printed as one line, exit code 2."""
