"""How many pairs of action instances are independent, for partial-order reduction.

    python benchmarks/independence.py                  # 0.10.2 and 2.1.0, 2-3 replicas, ~10 s

Two instances are statically independent when neither writes a variable the other
reads or writes (read: the variables of its guard and of the terms it assigns;
write: the variables its effect changes), over the z3 encoding's terms.  Only
such pairs could be put in one canonical order in BMC without losing executions.
Each row counts them with and without the ghost ``committed`` log, which the
model updates after every step (KafkaReplication._record_commits).
"""

from __future__ import annotations

import argparse
import itertools

import z3

from replcheck.model.kafka.config import make_config
from replcheck.model.kafka.symbolic.replication import KafkaSymbolic

CONFIGS = (
    {"mode": "0.10.2"},
    {"mode": "2.1.0"},
    {"mode": "2.1.0", "replicas": 3},
    {"mode": "4.1.0", "replicas": 3},
)


def constants(term: z3.ExprRef, into: set[str]) -> set[str]:
    """The names of the state variables ``term`` mentions."""
    seen, stack = set(), [term]
    while stack:
        t = stack.pop()
        if t.get_id() in seen:
            continue
        seen.add(t.get_id())
        if z3.is_const(t) and t.decl().kind() == z3.Z3_OP_UNINTERPRETED:
            into.add(t.decl().name())
        else:
            stack.extend(t.children())
    return into


def count(values: dict) -> tuple[str, int, int, int]:
    model = KafkaSymbolic(make_config(values))
    template = model.variables(model.template())
    names = [v.decl().name() for v in template]
    reads, writes = {}, {}
    for action in model.instances():
        read = constants(model.guard_term(action), set())
        write = set()
        for name, old, new in zip(
            names, template, model.variables(model.effect_term(action)), strict=True
        ):
            if not new.eq(old):
                write.add(name)
                constants(new, read)
        reads[action], writes[action] = read, write

    def independent(a, b, keep=lambda name: True) -> bool:
        ra, wa = {n for n in reads[a] if keep(n)}, {n for n in writes[a] if keep(n)}
        rb, wb = {n for n in reads[b] if keep(n)}, {n for n in writes[b] if keep(n)}
        return not (wa & (rb | wb) or wb & ra)

    pairs = list(itertools.combinations(model.instances(), 2))
    with_ghost = sum(independent(a, b) for a, b in pairs)
    without = sum(independent(a, b, lambda n: "committed" not in n) for a, b in pairs)
    return model.config.describe(), len(pairs), with_ghost, without


def main() -> None:
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args()
    print("| bounds | instance pairs | independent | independent without the ghost |")
    print("|---|---:|---:|---:|")
    for values in CONFIGS:
        bounds, pairs, with_ghost, without = count(values)
        print(f"| {bounds} | {pairs:,} | {with_ghost} | {without} |", flush=True)


if __name__ == "__main__":
    main()
