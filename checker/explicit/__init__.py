"""Explicit-state search: breadth-first, one state at a time, with a fingerprint per
visited state (TLC's design), levels compressed and spilled past RAM, checkpoints."""
