"""``replcheck list-invariants``: the ids ``--invariant`` accepts, and what each states."""

from __future__ import annotations

import argparse

from replcheck.cli.exits import EXIT_OK
from replcheck.invariants import INVARIANTS

NAME = "list-invariants"
ORDER = 90


def register(sub: argparse._SubParsersAction) -> None:
    sub.add_parser(
        NAME,
        help="print invariant ids and what each states",
        description="Print each invariant's id (what --invariant ID and a gate file's "
        "'invariants' accept) and the property it states.  Every command checks the ones marked "
        "'default' unless --invariant names others (--invariant all: every one).",
    )


def run(_: argparse.Namespace) -> int:
    width = max(len(inv.id) for inv in INVARIANTS)
    for inv in INVARIANTS:
        mark = "default" if inv.default else "on request"
        print(f"{inv.id:<{width}}  {mark:<10}  {inv.description}")
    return EXIT_OK
