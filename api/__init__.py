"""replcheck: a model checker for Kafka's partition replication, as a Python library.

The command line (``replcheck check``, ``replay``, ``prove``, ``walk``) is a layer
over four calls, which take the model's options as keywords (the keys of a
``--config`` TOML file) and return result objects::

    import replcheck

    result = replcheck.check(kafka="0.10.2")            # exhaustive BFS
    result.holds                                        # False: data can be lost
    loss = result.violations["no-committed-data-loss"]  # its shortest counterexample
    [step.action for step in loss.trace[1:]]            # the actions, in order
    result.write_itf("loss.itf.json")                   # for replcheck replay

    replcheck.check(kafka="2.1.0").holds                # True at these bounds
    replcheck.replay("loss.itf.json", kafka="2.1.0")    # the same steps in 2.1.0
    replcheck.prove(kafka="2.1.0", induction=True, invariants="hw-le-leo").holds
    replcheck.walk(kafka="4.1.0", replicas=3, walks=2000, seed=7).violations

Bad input raises :class:`InputError` (a ``ReplcheckError``) with the one-line message
the command line prints.  See docs/api.md.

The package's parts: ``replcheck.model`` (the models), ``replcheck.invariants``,
``replcheck.traces`` (export, replay, views) and ``replcheck.checker`` (the engines
and the command line).
"""

# First: its import hook decides, for each hot module, compiled or Python source.
from replcheck import compiled  # noqa: F401
from replcheck.conformance import ConformReport, conform
from replcheck.model.errors import InputError, ReplcheckError
from replcheck.reproduction import ReproduceReport, reproduce
from replcheck.results import CheckResult, ProveResult, ReplayResult, Step, Violation, WalkResult
from replcheck.run import check, prove, replay, walk

__all__ = [
    "CheckResult",
    "ConformReport",
    "InputError",
    "ProveResult",
    "ReplayResult",
    "ReproduceReport",
    "ReplcheckError",
    "Step",
    "Violation",
    "WalkResult",
    "check",
    "conform",
    "prove",
    "replay",
    "reproduce",
    "walk",
]
