"""What a typed state layer would buy (issue 47): a Replica as a Cython ``cclass`` with C
int fields against today's NamedTuple, both compiled, on the operations a search repeats.

    pip install cython                  # a build requirement, not installed with the package
    python benchmarks/typed_state.py    # compiles typed_spike/replica_cclass.py; ~1 min

The spike (``typed_spike/replica_cclass.py``) is not the model's state: it has the
Replica's fields and only what the three measurements need.  Each figure is the best of
five ``timeit`` runs, in nanoseconds per operation.
"""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
import tempfile
import timeit
from pathlib import Path

from replcheck.model.kafka.state import Replica

SPIKE = Path(__file__).resolve().parent / "typed_spike" / "replica_cclass.py"
FIELDS = dict(
    alive=1, epoch=2, log=(257, 258), hw=1, hw_checkpoint=1, truncation=0, unwritten_epoch=0,
    pending=0, zk_current=1, epoch_start=0, clean_shutdown=0, record_owed=0, alter_item=0,
    fenced=0, dir_unreported=0, inflight=(), remote_leo=(2, 2, -1), isr=7, pending_isr=0,
    leader=0,
)  # fmt: skip


def compiled_spike(folder: Path):
    """The spike module, compiled with Cython in ``folder``."""
    if importlib.util.find_spec("Cython") is None:
        raise SystemExit("needs Cython: pip install cython")
    source = folder / SPIKE.name
    shutil.copy(SPIKE, source)
    built = subprocess.run(
        [sys.executable, "-m", "Cython.Build.Cythonize", "-i", "-q", "-3", str(source)],
        cwd=folder,
        capture_output=True,
        text=True,
    )
    if built.returncode != 0:
        raise SystemExit(f"the spike did not compile:\n{built.stderr}")
    sys.path.insert(0, str(folder))
    import replica_cclass

    return replica_cclass


def best_ns(stmt: str, scope: dict, number: int = 200_000) -> float:
    return min(timeit.repeat(stmt, globals=scope, number=number, repeat=5)) / number * 1e9


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="replcheck-typed-") as tmp:
        spike = compiled_spike(Path(tmp))
        named = Replica(**FIELDS)
        typed = spike.TReplica(**FIELDS)
        scope = {"nt": named, "tr": typed, "T": spike, "nts": (named,) * 3, "trs": (typed,) * 3}
        rows = [
            (
                "a successor with two fields changed",
                best_ns("nt.replace(hw=2, log=(1, 2))", scope),
                best_ns("tr.with_hw_log(2, (1, 2))", scope),
            ),
            (
                "hashing a fresh replica",
                best_ns("hash(nt.replace(hw=2))", scope) - best_ns("nt.replace(hw=2)", scope),
                best_ns("hash(tr.with_hw_log(2, tr.log))", scope)
                - best_ns("tr.with_hw_log(2, tr.log)", scope),
            ),
            (
                "3 field reads on 3 replicas, compiled loop",
                best_ns("T.hw_sum_untyped(nts)", scope),
                best_ns("T.hw_sum(trs)", scope),
            ),
        ]
    print("| operation | NamedTuple (ns) | cclass (ns) |")
    print("|---|---:|---:|")
    for what, before, after in rows:
        print(f"| {what} | {before:.0f} | {after:.0f} |")


if __name__ == "__main__":
    main()
