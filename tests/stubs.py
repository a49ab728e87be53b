"""Stand-ins the tests share (one definition, imported under one module name)."""


class ReachedSpark(Exception):
    """walk accepted its input and went on to start Spark: far enough for an input test."""
