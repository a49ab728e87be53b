"""Regenerate the ITF example traces in this folder from the seed scenarios.

    python examples/make_examples.py

Each seed scenario of ``tests/test_seed_scenarios.py`` is executed against the
model and written as ITF with every state, so ``replcheck replay`` (and the
tests) can check the model still produces exactly these executions.  The BFS
counterexample of the seeds' data loss is written too.
"""

from __future__ import annotations

import sys
from pathlib import Path

from replcheck.checker.explicit.bfs import bfs
from replcheck.invariants import select
from replcheck.model import KafkaReplication, make_config
from replcheck.traces.itf import trace_to_itf, write_itf
from replcheck.traces.replay import execute

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # for the scenarios in tests/

from tests.test_seed_scenarios import (  # noqa: E402
    DATA_LOSS,
    DATA_LOSS_STEPS,
    DIVERGENCE_LOSSY,
    DIVERGENCE_LOSSY_STEPS,
    DIVERGENCE_UNCLEAN,
    DIVERGENCE_UNCLEAN_STEPS,
)

SCENARIOS = {
    "seed-data-loss": (DATA_LOSS, DATA_LOSS_STEPS, "no-committed-data-loss"),
    "seed-divergence-lossy-crash": (DIVERGENCE_LOSSY, DIVERGENCE_LOSSY_STEPS, "consistent-logs"),
    "seed-divergence-unclean": (DIVERGENCE_UNCLEAN, DIVERGENCE_UNCLEAN_STEPS, "consistent-logs"),
}


def main() -> None:
    for name, (values, steps, inv_id) in SCENARIOS.items():
        config = make_config(values)
        trace = execute(KafkaReplication(config), steps)
        (inv,) = select([inv_id])
        message = inv(trace[-1][1])
        assert message is not None, f"{name} no longer violates {inv_id}"
        write_itf(HERE / f"{name}.itf.json", trace_to_itf(config, trace, inv_id, message))

    config = make_config(DATA_LOSS)
    result = bfs(KafkaReplication(config), select(["no-committed-data-loss"]))
    violation = result.violations["no-committed-data-loss"]
    steps = [(s.action, s.state) for s in violation.trace]
    document = trace_to_itf(config, steps, violation.invariant, violation.message)
    write_itf(HERE / "bfs-data-loss.itf.json", document)


if __name__ == "__main__":
    main()
