"""A real Kafka cluster on loopback, driven along a model trace (``replcheck reproduce``).

One controller and one JVM per broker, from the release's jars on Maven Central; a
loopback relay between every pair of brokers and between each broker and the
controller holds the requests a trace orders (fetches, metadata fetches, AlterPartition);
a client process writes with ``acks=all`` and reads the log back.  Data flows model ->
plan (which broker lags, which step is which request) -> cluster -> report.
"""
