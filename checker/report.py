"""Turning a search result into what users read: verdicts, JSON, tables."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from checker.bfs import SearchResult
from invariants import Invariant
from model.config import Config


def result_word(result: SearchResult) -> str:
    """``violated`` if any counterexample; ``holds`` if exhaustive; else ``incomplete``."""
    if result.violations:
        return "violated"
    return "holds" if result.exhaustive else "incomplete"


def verdicts(result: SearchResult, invariants: Sequence[Invariant]) -> dict[str, str]:
    out = {}
    for inv in invariants:
        if inv.id in result.violations:
            out[inv.id] = "violated"
        else:
            out[inv.id] = "holds" if result.exhaustive else "not violated (search incomplete)"
    return out


def cell(result: SearchResult, inv_id: str) -> str:
    """One table cell: 'holds (N states)' or 'VIOLATED (trace of K states)'."""
    violation = result.violations.get(inv_id)
    if violation is not None:
        return f"VIOLATED (trace of {violation.length} states)"
    if result.exhaustive:
        return f"holds ({result.distinct_states} states)"
    return f"not violated ({result.distinct_states} states, incomplete)"


def to_json(
    config: Config,
    result: SearchResult,
    invariants: Sequence[Invariant],
    *,
    symmetry: bool,
    trace_out: str | None = None,
) -> dict[str, Any]:
    first = next(iter(result.violations.values()), None)
    return {
        "result": result_word(result),
        "invariant": first.invariant if first else None,
        "message": first.message if first else None,
        "trace_length": first.length if first else None,
        "trace_file": trace_out if first else None,
        "status": result.status,
        "distinct_states": result.distinct_states,
        "transitions": result.transitions,
        "depth": result.depth,
        "seconds": round(result.seconds, 3),
        "states_per_second": round(result.distinct_states / result.seconds)
        if result.seconds > 0
        else None,
        "mode": config.mode,
        "symmetry": symmetry,
        "fingerprint_collision_probability": result.collision_probability,
        "config": config.to_dict(),
        "invariants": verdicts(result, invariants),
        "violations": {
            v.invariant: {"trace_length": v.length, "message": v.message}
            for v in result.violations.values()
        },
    }


def table(rows: Sequence[str], columns: Sequence[str], cells: dict[tuple[str, str], str]) -> str:
    """A plain aligned text table: rows x columns."""
    header = ["invariant", *columns]
    body = [[row, *(cells[(row, col)] for col in columns)] for row in rows]
    widths = [max(len(line[k]) for line in [header, *body]) for k in range(len(header))]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    lines = [fmt.format(*header), fmt.format(*("-" * w for w in widths))]
    lines += [fmt.format(*line) for line in body]
    return "\n".join(line.rstrip() for line in lines)
