"""The engines as Spark jobs: exhaustive BFS with Parquet levels, and random walks;
``local[*]`` embedded by default, ``--master`` for a real cluster."""
