"""``replcheck gate``: run a file of checks with expected outcomes; fail CI on any change."""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

from replcheck.checker.suites.gate import GateOutcome, load_gate, run_check
from replcheck.cli.exits import EXIT_INTERRUPTED, EXIT_OK, EXIT_VIOLATION
from replcheck.cli.junit import write_junit
from replcheck.cli.outputs import check_writable, prepare_out_dir
from replcheck.traces.itf import trace_to_itf, write_itf

NAME = "gate"
ORDER = 60


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        NAME,
        help="run a gate file of checks with expected outcomes (for CI)",
        description="Run each [[check]] of a TOML gate file and compare its outcome with its "
        '\'expect\' ("holds" or "violates:<id>").  Exit 0 when every expectation is met, '
        "1 when any is not, 2 for a bad gate file.  See examples/gate.toml.",
    )
    p.add_argument("gate_file", metavar="GATE.toml", help="the gate file")
    p.add_argument(
        "--junit", metavar="OUT.xml", help="also write JUnit XML (one testcase per check)"
    )
    p.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    p.add_argument(
        "--out", metavar="DIR", help="save counterexamples of unexpected outcomes here (ITF)"
    )


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-").lower() or "check"


def _save(outcome: GateOutcome, folder: Path) -> None:
    for inv_id, violation in outcome.violations.items():
        path = folder / f"{_slug(outcome.check.name)}.{inv_id}.itf.json"
        steps = [(s.action, s.state) for s in violation.trace]
        config = outcome.check.config
        document = trace_to_itf(config, steps, inv_id, violation.message)
        write_itf(path, document)
        outcome.saved[inv_id] = str(path)


def run(args: argparse.Namespace) -> int:
    checks = load_gate(args.gate_file)
    if args.junit:
        check_writable(args.junit, "--junit")
    folder = Path(prepare_out_dir(args.out, "--out")) if args.out else None

    outcomes: list[GateOutcome] = []
    width = max(len(c.name) for c in checks)
    interrupted = False
    try:
        for check in checks:
            outcome = run_check(check)
            if folder is not None and not outcome.passed:
                _save(outcome, folder)
            outcomes.append(outcome)
            if not args.json:
                mark = "ok  " if outcome.passed else "FAIL"
                print(f"{mark} {check.name:<{width}}  {outcome.detail}", flush=True)
    except KeyboardInterrupt:
        interrupted = True  # stop here: report the checks that ran, judge none of the rest
    if args.junit and outcomes:
        write_junit(args.junit, outcomes, Path(args.gate_file).stem)

    failed = [o for o in outcomes if not o.passed]
    not_run = len(checks) - len(outcomes)
    if args.json:
        doc = {
            "gate": str(args.gate_file),
            "passed": not failed and not interrupted,
            "interrupted": interrupted,
            "not_run": [c.name for c in checks[len(outcomes) :]],
            "checks": [
                {
                    "name": o.check.name,
                    "engine": o.check.engine,
                    "config": o.check.config.to_dict(),
                    "expect": o.check.expect,
                    "got": o.got,
                    "passed": o.passed,
                    "seconds": round(o.seconds, 3),
                    "traces": o.saved,
                }
                for o in outcomes
            ],
        }
        print(json.dumps(doc, indent=2))
    else:
        summary = f"{len(outcomes) - len(failed)} passed, {len(failed)} failed"
        if interrupted:
            names = ", ".join(c.name for c in checks[len(outcomes) :])
            print(
                f"\ninterrupted during {checks[len(outcomes)].name!r}: {not_run} not run ({names})"
            )
        print(f"\n{summary}")
    if interrupted:
        print(
            f"replcheck gate: interrupted after {len(outcomes)} of {len(checks)} checks",
            file=sys.stderr,
        )
        return EXIT_INTERRUPTED
    return EXIT_VIOLATION if failed else EXIT_OK
