"""One SparkSession on local[2] for every Spark test (starting Spark costs seconds).

The Spark tests are skipped, not failed, where pyspark or Java is missing.
"""

from __future__ import annotations

import pytest

from checker import spark_walk


@pytest.fixture(scope="session")
def spark():
    pytest.importorskip("pyspark")
    if spark_walk.find_java() is None:
        pytest.skip("no Java: Spark needs Java 17 or later")
    session = spark_walk.start_session("local[2]")
    yield session
    session.stop()
