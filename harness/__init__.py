"""Model traces run on Kafka's own classes (``replcheck conform``).

``jvm/`` is a Maven project, built against the Kafka release asked for, that drives a
real ReplicaManager, Partition, fetcher and AlterPartitionManager per broker and
Kafka's own KRaft controller managers, one model step at a time (docs/conformance.md).
This package builds it (``build.py``), turns a trace into its steps (``steps.py``),
runs it (``jvm.py``) and compares what Kafka did with what the model did
(``compare.py``, ``conform.py``).
"""
