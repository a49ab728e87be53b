"""``check --engine spark``: the local engines' counts, depths, transitions and
counterexample lengths; --max-states and --resume from its Parquet levels.

Slow: a level is a few Spark jobs (about a second each on local[2]); the checks of
its options that need no Spark run by default.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from replcheck.checker.parallel_bfs import parallel_bfs
from replcheck.checker.spark_bfs import spark_bfs
from replcheck.invariants import select
from replcheck.model.registry import build_model, config_from_dict

SEEDS = {"records": 1, "epochs": 3}  # hw: the seeds' data loss, 9,544 states
LOSSLESS = {"kafka": "2.1.0", "records": 1, "epochs": 3}
SPEC = {"model": "tla-kip320", "replicas": 2}


def summary(result) -> tuple:
    lengths = {i: v.length for i, v in result.violations.items()}
    return result.status, result.distinct_states, result.depth, result.transitions, lengths


def both(spark, values: dict, **kw) -> tuple:
    config = config_from_dict(dict(values))
    model = build_model(config)
    invariants = select(None, _registry(config))
    symmetry = model.default_symmetry
    local = parallel_bfs(model, invariants, workers=2, symmetry=symmetry, **kw)
    on_spark = spark_bfs(spark, config, [i.id for i in invariants], symmetry=symmetry, **kw)
    return local, on_spark


def _registry(config):
    from replcheck.invariants import registry

    return registry(config)


@pytest.mark.slow
@pytest.mark.parametrize("values", [SEEDS, LOSSLESS, SPEC], ids=["hw", "2.1.0", "tla-kip320"])
def test_the_same_verdicts_as_the_local_engine(spark, values):
    local, on_spark = both(spark, values)
    assert summary(on_spark) == summary(local)
    for inv, v in on_spark.violations.items():  # a real execution, ending in the violation
        assert v.error is None and v.length == local.violations[inv].length


@pytest.mark.slow
def test_max_states_then_resume_from_the_parquet_levels(spark, tmp_path):
    config = config_from_dict(dict(SEEDS))
    ids = [inv.id for inv in select(None, _registry(config))]
    full = spark_bfs(spark, config, ids, symmetry=True)
    stopped = spark_bfs(spark, config, ids, symmetry=True, max_states=2_000, folder=tmp_path)
    assert stopped.status == "max-states" and stopped.distinct_states == 2_000
    resumed = spark_bfs(spark, config, ids, symmetry=True, folder=tmp_path, resume=True)
    assert summary(resumed) == summary(full)
    assert (tmp_path / "spark-bfs.json").is_file()


def cli(*argv: str) -> tuple[int, str, str]:
    proc = subprocess.run(
        [sys.executable, "-m", "replcheck", *argv], capture_output=True, text=True, timeout=600
    )
    return proc.returncode, proc.stdout, proc.stderr


def test_resume_of_a_folder_with_no_spark_levels_exits_2_before_spark_starts(tmp_path):
    code, out, err = cli("check", "--engine", "spark", "--resume", str(tmp_path))
    assert code == 2 and out == ""
    assert err.strip() == (
        f"replcheck: error: --resume {tmp_path}: no Spark BFS checkpoint there "
        "(spark-bfs.json is missing)"
    )


@pytest.mark.slow
def test_what_a_user_types_on_local_2(tmp_path):
    code, out, err = cli(
        *["check", "--engine", "spark", "--master", "local[2]"],
        *["--records", "1", "--epochs", "3", "--json"],
    )
    doc = json.loads(out)
    assert code == 1 and doc["distinct_states"] == 9_544, err
    assert "distinct states" in err and "Traceback" not in err
