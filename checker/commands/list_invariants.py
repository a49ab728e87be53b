"""``replcheck list-invariants``: the ids ``--invariant`` accepts, and what each states."""

from __future__ import annotations

import argparse

from checker.cli import EXIT_OK
from invariants import INVARIANTS

NAME = "list-invariants"
ORDER = 90


def register(sub: argparse._SubParsersAction) -> None:
    sub.add_parser(NAME, help="print invariant ids and what each states")


def run(_: argparse.Namespace) -> int:
    width = max(len(inv.id) for inv in INVARIANTS)
    for inv in INVARIANTS:
        print(f"{inv.id:<{width}}  {inv.description}")
    return EXIT_OK
