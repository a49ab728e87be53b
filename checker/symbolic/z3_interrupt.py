"""Ctrl-C during a z3 search (BMC, k-induction, PDR).

z3 catches SIGINT itself while a query runs (its ``ctrl_c`` parameter, on by default):
it installs its own handler for the query and puts Python's back after it.  A search
that asks thousands of queries a second swaps handlers thousands of times, and a
Ctrl-C that lands in the swap was seen to hang the process (1 run in 13, then 1 in 38
with Python's flag between queries); and a KeyboardInterrupt that Python raises between
queries, while it builds a z3 term, leaves a half-made term whose ``__del__`` prints a
traceback.  So every search turns z3's handling off
(``ctrl_c=False`` on its solvers) and keeps Python's handler for the whole run: Ctrl-C
sets a flag (:func:`checker.explicit.bfs.interrupt_flag`), read between queries, and wakes a
thread (through :func:`signal.set_wakeup_fd`, which Python's C-level handler writes
to even while z3 holds the main thread) that cancels the query under way with
``Context.interrupt``, z3's thread-safe way to stop a search.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import z3

from replcheck.checker.explicit.bfs import interrupt_flag


@contextmanager
def ctrl_c_cancels_z3(ctx: z3.Context | None = None) -> Iterator[Callable[[], bool]]:
    """Yield a function that says whether Ctrl-C was pressed; meanwhile Ctrl-C also
    cancels the z3 query running in ``ctx`` (default: z3's main context)."""
    context = ctx or z3.main_ctx()
    with interrupt_flag() as interrupted:
        if threading.current_thread() is not threading.main_thread():
            yield interrupted  # signals reach the main thread only: nothing to watch
            return
        stops = {signal.SIGINT, signal.SIGTERM}
        read_end, write_end = os.pipe()
        os.set_blocking(write_end, False)
        previous = signal.set_wakeup_fd(write_end, warn_on_full_buffer=False)
        done = threading.Event()

        def watch() -> None:
            while not done.is_set():
                woken = os.read(read_end, 64)
                if not done.is_set() and stops.intersection(woken):
                    context.interrupt()

        watcher = threading.Thread(target=watch, name="z3-ctrl-c", daemon=True)
        watcher.start()
        try:
            yield interrupted
        finally:
            signal.set_wakeup_fd(previous)
            done.set()
            os.write(write_end, b"\0")  # wake the watcher so it sees ``done``
            watcher.join()
            os.close(read_end)
            os.close(write_end)
