"""Seeded random walks in this process (the Spark job of the same walks is
``checker.spark.walks``)."""
