"""Walks against a real Spark cluster manager (standalone, on 127.0.0.1), not only
``local[*]``: the same result as a local run, and a clean exit."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.spark.cluster import StandaloneCluster
from tests.spark.conftest import require_spark

pytestmark = pytest.mark.slow

WALK = ["walk", "--replicas", "3", "--walks", "400", "--seed", "7", "--json"]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    require_spark()
    started = StandaloneCluster(tmp_path_factory.mktemp("spark-standalone")).start()
    yield started
    started.stop()


def _walk(*args: str) -> subprocess.CompletedProcess:
    # Executors run this interpreter, as a cluster's workers would run the job's Python.
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable)
    env.pop("PYSPARK_GATEWAY_PORT", None)
    return subprocess.run(
        [sys.executable, "-m", "replcheck", *WALK, *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )


def _verdict(doc: dict) -> dict:
    return {k: doc[k] for k in ("walks", "steps", "violations", "action_counts")}


def test_a_walk_on_a_standalone_cluster_equals_the_local_one_and_exits_cleanly(cluster):
    remote = _walk("--master", cluster.url)
    local = _walk("--master", "local[2]")
    assert remote.returncode == local.returncode, remote.stderr
    assert _verdict(json.loads(remote.stdout)) == _verdict(json.loads(local.stdout))
    # A successful run prints no Java stack trace (netty's RejectedExecutionException at
    # shutdown used to follow the result).
    assert "Exception" not in remote.stderr and "\tat " not in remote.stderr, remote.stderr


def test_exhaustive_bfs_on_a_standalone_cluster_equals_the_local_engine(cluster, tmp_path):
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable)
    env.pop("PYSPARK_GATEWAY_PORT", None)
    argv = [sys.executable, "-m", "replcheck", "check", "--records", "1", "--epochs", "3"]
    remote = subprocess.run(
        [*argv, "--engine", "spark", "--master", cluster.url, "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    local = subprocess.run([*argv, "--json", "--quiet"], capture_output=True, text=True)
    assert remote.returncode == local.returncode == 1, remote.stderr
    keys = ("status", "distinct_states", "depth", "transitions", "invariants")
    there, here = json.loads(remote.stdout), json.loads(local.stdout)
    assert {k: there[k] for k in keys} == {k: here[k] for k in keys}
    lengths = {i: v["trace_length"] for i, v in there["violations"].items()}
    assert lengths == {i: v["trace_length"] for i, v in here["violations"].items()}
    assert "Exception" not in remote.stderr and "\tat " not in remote.stderr, remote.stderr
