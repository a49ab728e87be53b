"""The search engines.  None of them knows which model it runs: each takes a
``model.interface.Model`` and invariants.

- ``bfs`` (one process) and ``parallel_bfs`` (several): exhaustive breadth-first
  search with shortest counterexamples; ``visited``: their fingerprint table.
- ``walk``: seeded random walks; ``spark_walk``: the same walks as a Spark job.
- ``prove``: bounded model checking and k-induction with z3.
- ``graph``: the whole state graph, via networkx.

``suites/`` runs checks with expected verdicts (the bug catalogue, the CI gate), and
``cli/`` is the command line.
"""
