"""Exhaustive breadth-first search as Spark jobs: one level at a time, each level Parquet.

Level-synchronous, as distributed explicit-state checkers are (Stern and Dill's
parallel Murphi, and every BFS over MapReduce since).  Each level is a Parquet
folder of rows ``(fp, parent, state)``: a state's 64-bit fingerprint, its
parent's, and the state pickled.  One level's step:

1. the executors read level ``d`` and compute every successor (in the symmetry's
   canonical form) with the model, in Python (``mapPartitions``);
2. Spark's shuffle groups the successors by fingerprint, keeping one per state (the
   least ``(parent, state)``: the same one whatever the partitioning), and an
   anti-join drops those already in a level ``<= d``; what is left is level
   ``d + 1``, written as Parquet;
3. the executors check the invariants still unviolated on level ``d + 1``.

The levels are the visited set (only their ``fp`` column is read for the
anti-join) and the parent links: a counterexample is rebuilt by looking its
fingerprint's parent up level by level and re-executing the model forward, as the
local engines do (``checker.explicit.bfs.trace_from_chain``).  Reading each level back from
Parquet also cuts the lineage, so a level's failure reruns only that level; and
the levels are the checkpoint: a search written to ``--checkpoint DIR`` goes on
from its last complete level with ``--resume DIR``.  On a cluster the folder must
be a shared mount (NFS...) the driver and every executor see: the driver writes
``spark-bfs.json`` and looks levels up with plain file operations, so HDFS and S3
URLs are not supported yet.

The model runs in the executors, built from its configuration
(``model.registry.build_model``): the engine knows no more of it than the local
engines do.  Counts, depths and counterexample lengths are the local engines'.
"""

from __future__ import annotations

import json
import os
import pickle
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from replcheck.checker.explicit.bfs import Progress, SearchResult, _same, fingerprint, violation
from replcheck.checker.explicit.checkpoint import model_digest
from replcheck.checker.explicit.visited import NO_PARENT
from replcheck.checker.spark.session import JobFailed, cancel_on_interrupt, failure_line
from replcheck.model.errors import InputError
from replcheck.model.registry import AnyConfig, build_model, config_from_dict

META = "spark-bfs.json"
FORMAT = "replcheck-spark-bfs/1"

_MODELS: dict[str, Any] = {}  # per Python worker: the model of a configuration, built once


def _model(config: dict) -> Any:
    key = json.dumps(config, sort_keys=True)
    if key not in _MODELS:
        _MODELS[key] = build_model(_config(config))
    return _MODELS[key]


def _config(config: dict) -> AnyConfig:
    return config_from_dict(dict(config))


def expand(config: dict, symmetry: bool, rows: Iterable[Any]) -> Iterator[tuple]:
    """Every successor of the rows' states: (fingerprint, parent's fingerprint, pickled)."""
    model = _model(config)
    canon = model.representative if symmetry else _same
    actions, next_state, dumps = model.actions, model.next_state, pickle.dumps
    for row in rows:
        state = pickle.loads(row.state)
        for action in actions(state):
            succ = canon(next_state(state, action))
            yield fingerprint(succ), row.fp, dumps(succ, pickle.HIGHEST_PROTOCOL)


def check_level(config: dict, ids: list[str], rows: Iterable[Any]) -> Iterator[tuple]:
    """(invariant, fingerprint, message) for the first state of each invariant violated
    in this partition (the least fingerprint: the same whatever the partitioning)."""
    invariants = [inv for inv in _registry(config) if inv.id in ids]
    best: dict[str, tuple[int, str]] = {}
    for row in rows:
        state = pickle.loads(row.state)
        for inv in invariants:
            message = inv.check(state)
            if message is not None and (inv.id not in best or row.fp < best[inv.id][0]):
                best[inv.id] = (row.fp, message)
    for inv_id, (fp, message) in best.items():
        yield inv_id, fp, message


def _registry(config: dict) -> list:
    from replcheck.invariants import registry

    return registry(_config(config))


def _schema():
    from pyspark.sql import types as T

    return T.StructType(
        [
            T.StructField("fp", T.LongType(), False),
            T.StructField("parent", T.LongType(), False),
            T.StructField("state", T.BinaryType(), False),
        ]
    )


@dataclass
class _Levels:
    """The search's folder: ``level-00000`` ... as Parquet, and ``spark-bfs.json``."""

    folder: Path

    def path(self, depth: int) -> str:
        return str(self.folder / f"level-{depth:05d}")

    def read(self, spark: Any, depth: int) -> Any:
        return spark.read.parquet(self.path(depth))

    def visited(self, spark: Any, depth: int) -> Any:
        return spark.read.parquet(*(self.path(d) for d in range(depth + 1))).select("fp")


def spark_bfs(
    spark: Any,
    config: AnyConfig,
    invariant_ids: Sequence[str],
    *,
    symmetry: bool,
    max_states: int | None = None,
    time_limit: float | None = None,
    folder: str | os.PathLike | None = None,
    resume: bool = False,
    on_progress: Callable[[Progress], None] | None = None,
) -> SearchResult:
    """``checker.explicit.bfs.bfs`` as Spark jobs, a level at a time (see the module's docstring).

    ``folder`` keeps the levels (default: a temporary folder, removed at the end) and
    with ``resume`` the search goes on from the last level written there.  Ctrl-C or
    the time limit stop it between levels or cancel the level under way; the levels
    done stay, so the search can be resumed.
    """
    from pyspark.sql import functions as F

    owned = folder is None
    base = Path(tempfile.mkdtemp(prefix="replcheck-spark-bfs-") if owned else folder)
    levels = _Levels(base)
    cfg = config.to_dict()
    model = build_model(config)
    canon = model.representative if symmetry else _same
    ids = list(invariant_ids)
    schema = _schema()
    sc = spark.sparkContext
    start = time.monotonic()
    deadline = start + time_limit if time_limit is not None else None
    status = "complete"
    try:
        if resume:
            meta = read_meta(base)
            depth, distinct, transitions = meta["depth"], meta["distinct"], meta["transitions"]
            found = {i: (fp, m) for i, fp, m in meta["found"]}
            before = meta["seconds"]
            size = meta["level_states"]  # of level ``depth``: 0 once the search is done
        else:
            base.mkdir(parents=True, exist_ok=True)
            for old in base.glob("level-*"):
                shutil.rmtree(old)
            rows, seen = [], set()
            for init in model.init_states():
                state = canon(init)
                fp = fingerprint(state)
                if fp not in seen:
                    seen.add(fp)
                    rows.append((fp, NO_PARENT, pickle.dumps(state, pickle.HIGHEST_PROTOCOL)))
            spark.createDataFrame(rows, schema).write.mode("overwrite").parquet(levels.path(0))
            depth, distinct, transitions, before = 0, len(rows), 0, 0.0
            size = len(rows)
            found = {}
            for inv_id, fp, message in _check(spark, levels, 0, cfg, ids):
                found[inv_id] = (fp, message)
            _write_meta(base, cfg, ids, symmetry, depth, distinct, transitions, found, before, size)
        start -= before

        def pending() -> list[str]:
            return [i for i in ids if i not in found]

        with cancel_on_interrupt(
            spark, notice="replcheck: interrupted; cancelling the level"
        ) as stop:
            timer = None
            if deadline is not None:
                timer = threading.Timer(max(0.0, deadline - time.monotonic()), sc.cancelAllJobs)
                timer.daemon = True
                timer.start()
            try:
                while pending():
                    if not size:  # resumed after the last level: nothing to expand
                        depth -= 1 if depth > 0 else 0
                        break
                    if max_states is not None and distinct >= max_states:
                        status = "max-states"
                        break
                    sc.setJobDescription(f"replcheck check --engine spark: level {depth + 1}")
                    moves = sc.accumulator(0)
                    # Everything that talks to Spark is in the try: a Ctrl-C or the
                    # --timeout timer cancels whatever job runs, reading a level included.
                    try:
                        frontier = levels.read(spark, depth)
                        succ = _spread(frontier.rdd).mapPartitions(
                            partial(_expand_counted, cfg, symmetry, moves)
                        )
                        candidates = spark.createDataFrame(succ, schema)
                        best = F.min(F.struct("parent", "state")).alias("best")
                        new = (
                            candidates.groupBy("fp")
                            .agg(best)
                            .select("fp", "best.parent", "best.state")
                            .join(levels.visited(spark, depth), "fp", "left_anti")
                        )
                        new.write.mode("overwrite").parquet(levels.path(depth + 1))
                        added = levels.read(spark, depth + 1).count()
                        if max_states is not None and distinct + added > max_states:
                            _truncate(spark, levels, depth + 1, max_states - distinct)
                            added = max_states - distinct
                            status = "max-states"
                        hits = _check(spark, levels, depth + 1, cfg, pending())
                    except Exception as exc:  # a cancelled job, or a failed one
                        if stop.is_set():
                            status = "interrupted"
                        elif deadline is not None and time.monotonic() >= deadline:
                            status = "timeout"
                        else:
                            raise JobFailed(failure_line(exc)) from None
                        shutil.rmtree(levels.path(depth + 1), ignore_errors=True)
                        break
                    depth += 1
                    distinct += added
                    size = added
                    transitions += moves.value
                    found.update((inv_id, (fp, message)) for inv_id, fp, message in hits)
                    seconds = time.monotonic() - start
                    if status == "complete":  # a level cut at --max-states is redone on resume
                        _write_meta(
                            base,
                            cfg,
                            ids,
                            symmetry,
                            depth,
                            distinct,
                            transitions,
                            found,
                            seconds,
                            size,
                        )
                    if on_progress is not None:
                        on_progress(Progress(distinct, added, depth, seconds, len(found)))
                    if status != "complete":
                        break
                    if stop.is_set():
                        status = "interrupted"
                        break
                    if deadline is not None and time.monotonic() >= deadline:
                        status = "timeout"
                        break
                    if not added:
                        depth -= 1  # the last level produced nothing new
                        break
            finally:
                if timer is not None:
                    timer.cancel()
        if status == "complete" and not pending() and ids:
            status = "all-violated"
        seconds = time.monotonic() - start
        exact = model.canonical if symmetry else _same
        violations = {}
        for inv in _registry(cfg):
            if inv.id in found:
                fp, message = found[inv.id]
                chain = _chain(spark, levels, fp)
                violations[inv.id] = violation(model, inv, message, chain, canon, exact)
        if status == "complete" and violations and len(violations) == len(ids):
            status = "all-violated"
        return SearchResult(status, distinct, depth, seconds, transitions, violations)
    finally:
        if owned:
            shutil.rmtree(base, ignore_errors=True)


def _expand_counted(cfg: dict, symmetry: bool, counter: Any, rows: Iterable[Any]) -> Iterator:
    """:func:`expand`, adding the transitions taken to ``counter`` (an accumulator)."""
    n = 0
    for item in expand(cfg, symmetry, rows):
        n += 1
        yield item
    counter.add(n)


def _spread(rdd: Any) -> Any:
    """At least as many partitions as Spark has cores: a small level is written as one
    file (adaptive execution coalesces the shuffle), which one task alone would read
    (measured: local[2] no faster than local[1] before)."""
    cores = rdd.context.defaultParallelism
    return rdd if rdd.getNumPartitions() >= cores else rdd.repartition(cores)


def _check(spark: Any, levels: _Levels, depth: int, cfg: dict, ids: list[str]) -> list[tuple]:
    """Each pending invariant's violation in level ``depth`` with the least fingerprint."""
    if not ids:
        return []
    rows = _spread(levels.read(spark, depth).rdd)
    hits = rows.mapPartitions(lambda part: check_level(cfg, ids, part))
    best: dict[str, tuple[int, str]] = {}
    for inv_id, fp, message in hits.collect():
        if inv_id not in best or fp < best[inv_id][0]:
            best[inv_id] = (fp, message)
    return [(i, fp, m) for i, (fp, m) in best.items()]


def _truncate(spark: Any, levels: _Levels, depth: int, keep: int) -> None:
    """Keep the ``keep`` states of a level with the least fingerprints (--max-states)."""
    path = levels.path(depth)
    kept = path + ".kept"
    levels.read(spark, depth).orderBy("fp").limit(keep).write.mode("overwrite").parquet(kept)
    shutil.rmtree(path)
    os.replace(kept, path)


def _chain(spark: Any, levels: _Levels, fp: int) -> list[int]:
    """The fingerprints from an initial state to ``fp``: its parent looked up level by
    level, from the deepest level that holds it."""
    from pyspark.sql import functions as F

    depth = 0
    while Path(levels.path(depth + 1)).exists():
        depth += 1
    chain = [fp]
    while depth >= 0:
        row = levels.read(spark, depth).where(F.col("fp") == chain[-1]).select("parent").first()
        depth -= 1
        if row is None:
            continue
        if row.parent == NO_PARENT:
            break
        chain.append(row.parent)
    chain.reverse()
    return chain


def _write_meta(
    base: Path,
    cfg: dict,
    ids: list[str],
    symmetry: bool,
    depth: int,
    distinct: int,
    transitions: int,
    found: dict[str, tuple[int, str]],
    seconds: float,
    level_states: int,
) -> None:
    doc = {
        "format": FORMAT,
        "identity": {
            "config": cfg,
            "invariants": ids,
            "symmetry": symmetry,
            "model": model_digest(),
        },
        "depth": depth,
        "distinct": distinct,
        "transitions": transitions,
        "seconds": seconds,
        "level_states": level_states,
        "found": [[i, fp, m] for i, (fp, m) in found.items()],
    }
    tmp = base / (META + ".tmp")
    tmp.write_text(json.dumps(doc, indent=1))
    os.replace(tmp, base / META)


def read_meta(base: str | os.PathLike) -> dict:
    """The state of a Spark search's folder (``identity``: its model, invariants and
    symmetry); an InputError if the folder holds none."""
    path = Path(base) / META
    if not path.is_file():
        raise InputError(f"--resume {base}: no Spark BFS checkpoint there ({META} is missing)")
    try:
        doc = json.loads(path.read_text())
        if doc.get("format") != FORMAT:
            raise ValueError(f"format {FORMAT} expected")
        doc["identity"]["config"], doc["depth"], doc["distinct"], doc["level_states"]  # noqa: B018
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as e:
        raise InputError(f"--resume {path}: not a Spark BFS checkpoint ({e})") from None
    return doc
