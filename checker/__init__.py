"""The search engines.  None of them knows which model it runs: each takes a
``model.interface.Model`` and invariants.  One folder per family:

- ``explicit/``: exhaustive breadth-first search with shortest counterexamples, in one
  process (``bfs``) or several (``parallel_bfs``, its workers in ``bfs_worker``), with
  its visited set (``visited``, ``spill`` past RAM), levels (``frontier``, ``storage``)
  and checkpoints (``checkpoint``); the whole state graph (``graph``, via networkx) and
  the explorer's "find" (``explore_find``).
- ``spark/``: the Spark session (``session``), BFS as Spark jobs (``bfs``) and random
  walks as a Spark job (``walks``).
- ``symbolic/``: z3: bounded model checking and k-induction (``prove``), IC3/PDR
  (``pdr``), and Ctrl-C during a query (``z3_interrupt``).
- ``walks/``: seeded random walks in this process (``walk``).

``suites/`` runs checks with expected verdicts (the bug catalogue, the CI gate).  The
command line is ``replcheck.cli``, above the Python API.
"""
