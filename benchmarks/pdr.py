"""Proofs for every depth: IC3/PDR against k-induction and z3's Spacer, same bounds.

    python benchmarks/pdr.py                 # every row, 240 s per method, ~35 min on 2 cores
    python benchmarks/pdr.py --limit 60 --only 2.1.0-2-pair

Methods, each in its own process with the same time limit:

* ``pdr``: ``replcheck prove --pdr`` (IC3/PDR over z3's SAT solver), seeded with
  the model's lemmas and the invariants not being proved;
* ``pdr-bare``: the same with ``--lemma none`` (PDR finds every clause itself);
* ``k-induction``: ``replcheck prove --induction --workers 1`` with every lemma;
* ``spacer``: z3's Spacer engine on the same transition system written as
  constrained Horn clauses (an invariant relation over the state's variables; one
  rule per action instance), bit-vectors as the encoding has them.

Prints a Markdown table: each cell the verdict and the seconds it took.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

PAIR = ["hw-le-leo", "consistent-logs"]
# name: (replcheck model flags, invariants (None: every default), methods)
ROWS = {
    "2.1.0-2-pair": (["--kafka", "2.1.0"], PAIR, ["pdr", "pdr-bare", "k-induction", "spacer"]),
    "2.1.0-2-all": (["--kafka", "2.1.0"], None, ["pdr", "pdr-bare", "k-induction"]),
    "4.1.0-2-all": (["--kafka", "4.1.0"], None, ["pdr", "k-induction"]),
    "2.1.0-3-all": (["--kafka", "2.1.0", "--replicas", "3"], None, ["pdr", "k-induction"]),
    "4.1.0-3-all": (["--kafka", "4.1.0", "--replicas", "3"], None, ["pdr", "k-induction"]),
}


def _prove(flags: list[str], invariants: list[str] | None, method: str, limit: int) -> str:
    cmd = [sys.executable, "-m", "replcheck", "prove", *flags, "--json"]
    cmd += ["--timeout", str(limit)]
    for inv in invariants or []:
        cmd += ["--invariant", inv]
    cmd += {
        "pdr": ["--pdr"],
        "pdr-bare": ["--pdr", "--lemma", "none"],
        "k-induction": ["--induction", "--workers", "1", "--depth", "2"],
    }[method]
    start = time.monotonic()
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=limit + 120)
    seconds = time.monotonic() - start
    try:
        doc = json.loads(done.stdout)
    except json.JSONDecodeError:
        return f"error (exit {done.returncode}): {done.stderr.strip().splitlines()[-1:]}"
    status = doc["status"]
    if status == "violated":
        v = doc["violation"]
        return f"violated {v['invariant']} at depth {v['depth']}, {seconds:.0f} s"
    if status == "cti":
        broken = ", ".join(doc["cti"]["broken"])
        return f"CTI ({broken}), {seconds:.0f} s"
    if status == "proved" and method.startswith("pdr"):
        inv = doc["inductive_invariant"]
        return (
            f"proved at frame {doc['frames']}, {seconds:.0f} s "
            f"({len(inv['clauses'])} clauses, {len(inv['lemmas'])} lemmas)"
        )
    return f"{status}, {seconds:.0f} s"


def spacer(flags: list[str], invariants: list[str] | None, limit: int) -> str:
    """Spacer on the CHC form of the model, in this process (run by a child)."""
    import z3

    from replcheck.model.kafka.symbolic.replication import KafkaSymbolic
    from replcheck.run import model_config, properties

    keys = {flags[i].removeprefix("--"): flags[i + 1] for i in range(0, len(flags), 2)}
    cfg = model_config(None, {k: int(v) if v.isdigit() else v for k, v in keys.items()})
    m = KafkaSymbolic(cfg)
    x, y = m.fresh("x"), m.fresh("y")
    xs, ys = m.variables(x), m.variables(y)
    inv = z3.Function("Inv", *[v.sort() for v in xs], z3.BoolSort())
    fp = z3.Fixedpoint()
    fp.set(engine="spacer", timeout=limit * 1000)
    fp.register_relation(inv)
    fp.declare_var(*xs, *ys)
    fp.rule(inv(*xs), [m.init(x), m.domain(x)])
    for a in m.instances():
        effect = m.variables(m.effect(x, a))
        moves = [n == e for n, e in zip(ys, effect, strict=True)]
        fp.rule(inv(*ys), [inv(*xs), m.guard(x, a), m.domain(y), *moves])
    props = properties(m, invariants)
    start = time.monotonic()
    try:
        answer = fp.query(z3.And(inv(*xs), z3.Not(z3.And([p.holds(x) for p in props]))))
    except z3.Z3Exception:  # "canceled" at the time limit
        answer = z3.unknown
    seconds = time.monotonic() - start
    verdict = "proved" if answer == z3.unsat else "violated" if answer == z3.sat else "timeout"
    return f"{verdict}, {seconds:.0f} s"


def _spacer_cell(flags: list[str], invariants: list[str] | None, limit: int) -> str:
    cmd = [sys.executable, __file__, "--spacer-child", json.dumps([flags, invariants, limit])]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=limit + 60)
    except subprocess.TimeoutExpired:
        return f"timeout, {limit} s"
    return done.stdout.strip() or f"error: {done.stderr.strip().splitlines()[-1:]}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=240, help="seconds per method and row")
    parser.add_argument("--only", action="append", choices=list(ROWS))
    parser.add_argument("--jobs", type=int, default=2, help="cells run at once (default 2)")
    parser.add_argument("--spacer-child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.spacer_child:
        print(spacer(*json.loads(args.spacer_child)))
        return
    rows = args.only or list(ROWS)
    methods = ["pdr", "pdr-bare", "k-induction", "spacer"]
    cells = [(r, m) for r in rows for m in ROWS[r][2]]

    def one(cell: tuple[str, str]) -> str:
        row, method = cell
        flags, invariants, _ = ROWS[row]
        if method == "spacer":
            return _spacer_cell(flags, invariants, args.limit)
        return _prove(flags, invariants, method, args.limit)

    with ThreadPoolExecutor(args.jobs) as pool:
        results = dict(zip(cells, pool.map(one, cells), strict=True))
    print(f"| row (invariants) | {' | '.join(methods)} |")
    print("|---" * (len(methods) + 1) + "|")
    for row in rows:
        what = "hw-le-leo, consistent-logs" if ROWS[row][1] else "every default"
        line = [results.get((row, m), "-") for m in methods]
        print(f"| {row} ({what}) | {' | '.join(line)} |")
    print(f"\n(limit {args.limit} s per cell, {args.jobs} cells at once)")


if __name__ == "__main__":
    main()
