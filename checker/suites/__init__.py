"""Checks with expected verdicts: ``catalogue`` (each catalogued Kafka bug in exactly
the releases it affected, from ``kafka_bugs.toml``) and ``gate`` (a user's TOML list
of pinned verdicts, for CI)."""
