"""``replcheck prove``: bounded model checking and k-induction with z3."""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

import replcheck
from replcheck.checker.explicit.bfs import Violation
from replcheck.checker.symbolic.pdr import PdrResult
from replcheck.checker.symbolic.prove import (
    BmcResult,
    DepthReport,
    InductionResult,
)
from replcheck.cli.args import (
    add_invariant_args,
    add_model_args,
    add_workers_arg,
    config_from_args,
    positive_int,
    seconds,
)
from replcheck.cli.exits import (
    EXIT_INCOMPLETE,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_VIOLATION,
    UsageError,
)
from replcheck.cli.outputs import check_writable
from replcheck.invariants.kafka.lemmas import LEMMAS
from replcheck.model.kafka.config import Config
from replcheck.run import DEFAULT_PROVE_DEPTH
from replcheck.traces.itf import trace_to_itf, write_itf
from replcheck.traces.text import format_trace

NAME = "prove"
ORDER = 15
DEFAULT_DEPTH = DEFAULT_PROVE_DEPTH
PROGRESS_EVERY = 10.0  # seconds between progress lines of a long induction step


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        NAME,
        help="symbolic checking with z3: every execution up to a depth, or a proof by induction",
        description="Bounded model checking: z3 checks every execution of up to --depth "
        "steps at once, depth by depth, so a counterexample is as short as any and a "
        "clear depth holds for every interleaving, at bounds BFS cannot exhaust.  Each "
        "counterexample is replayed through the explicit model before it is shown.  With "
        "--induction it tries to prove the invariants for every depth by k-induction, "
        "with the model's strengthening lemmas (list them with --list-lemmas); with --pdr "
        "by IC3/PDR, which finds its own strengthening.  Without "
        "options it finds the seeds' hw loss on 2 replicas, at the depth check reports.",
    )
    add_model_args(p)
    g = p.add_argument_group("proof")
    add_invariant_args(g)
    g.add_argument(
        "--depth",
        type=positive_int,
        default=DEFAULT_DEPTH,
        metavar="K",
        help=f"BMC: steps to unroll (default {DEFAULT_DEPTH}); with --induction: the "
        "largest k to try",
    )
    g.add_argument(
        "--induction",
        action="store_true",
        help="prove the invariants for every depth (k-induction, k = 1 .. --depth)",
    )
    g.add_argument(
        "--pdr",
        action="store_true",
        help="prove the invariants for every depth by IC3/PDR, which finds the "
        "strengthening itself and prints it as clauses; a counterexample is confirmed "
        "and shortened by BMC",
    )
    g.add_argument(
        "--lemma",
        action="append",
        metavar="ID",
        help="with --induction: strengthen with this lemma (repeatable; default: every "
        "lemma; 'none': no lemma).  Each lemma used is proved too.  With --pdr: the "
        "lemmas offered as seeds (default: every lemma), used only where PDR proves them",
    )
    g.add_argument("--list-lemmas", action="store_true", help="print the model's lemmas and exit")
    add_workers_arg(
        g,
        "with --induction: worker processes sharing the induction step, one z3 query per "
        "action; which CTI is shown may vary with N > 1, the verdict does not; BMC runs in "
        "one process",
    )
    g.add_argument(
        "--timeout",
        type=seconds,
        metavar="SECONDS",
        help="stop after this many seconds and report the depth reached (exit 3)",
    )
    g.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    g.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    g.add_argument(
        "--trace-out",
        metavar="FILE",
        help="write the first counterexample (ITF JSON, Apalache ADR-015) to FILE",
    )


def _progress(quiet: bool):
    def depth(report: DepthReport) -> None:
        if not quiet:
            print(
                f"depth {report.depth}: {report.result} (z3 {report.seconds:.1f} s)",
                file=sys.stderr,
                flush=True,
            )

    step_started = {"at": time.monotonic(), "shown": time.monotonic()}

    def step(kind: str, k: int, seconds: float) -> None:
        if kind == "base":  # the induction step at k starts now
            step_started.update(at=time.monotonic(), shown=time.monotonic())
        if not quiet:
            what = "base case: no violation in" if kind == "base" else "induction step at"
            unit = f"{k} states" if kind == "base" else f"k={k}"
            print(f"{what} {unit} (z3 {seconds:.1f} s)", file=sys.stderr, flush=True)

    def action(k: int, done: int, total: int) -> None:
        """A line every PROGRESS_EVERY seconds while the step's actions are checked."""
        now = time.monotonic()
        if not quiet and now - step_started["shown"] >= PROGRESS_EVERY and done < total:
            step_started["shown"] = now
            print(
                f"induction step at k={k}: {done} of {total} actions refuted "
                f"({now - step_started['at']:.0f} s)",
                file=sys.stderr,
                flush=True,
            )

    def frame(k: int, clauses: int, seconds: float) -> None:
        if not quiet:
            print(
                f"pdr: frame {k} done, {clauses} clauses learned ({seconds:.0f} s)",
                file=sys.stderr,
                flush=True,
            )

    return depth, step, action, frame


def run(args: argparse.Namespace) -> int:
    if args.list_lemmas:
        for lem in LEMMAS:
            print(f"{lem.id}: {lem.doc}")
        return EXIT_OK
    config = config_from_args(args)
    if args.induction and args.pdr:
        raise UsageError("--induction and --pdr: choose one proof method")
    if args.lemma and not (args.induction or args.pdr):
        raise UsageError("--lemma: only with --induction or --pdr")
    if args.trace_out:
        check_writable(args.trace_out, "--trace-out")
    on_depth, on_step, on_action, on_frame = _progress(args.quiet)
    result = replcheck.prove(
        config,
        invariants=args.invariant,
        depth=args.depth,
        induction=args.induction,
        pdr=args.pdr,
        lemmas=args.lemma,
        timeout=args.timeout,
        workers=args.workers,
        on_depth=on_depth,
        on_step=on_step,
        on_action=on_action,
        on_frame=on_frame,
    )
    if args.pdr:
        return _report_pdr(config, result.engine, args)
    if args.induction:
        return _report_induction(config, result.engine, args)
    return _report_bmc(config, result.engine, list(result.invariants), args)


def _write_trace(config: Config, violation: Violation, path: str | None) -> None:
    if path:
        steps = [(s.action, s.state) for s in violation.trace]
        write_itf(path, trace_to_itf(config, steps, violation.invariant, violation.message))


def _show(violation: Violation, what: str = "Shortest counterexample") -> None:
    print(f"{what} to {violation.invariant} ({violation.length} states):")
    for line in format_trace([(s.action, s.state) for s in violation.trace]):
        print(line)
    print(f"=> {violation.invariant} violated: {violation.message}")


def _bmc_verdict(result: BmcResult, inv_id: str) -> str:
    v = result.violations.get(inv_id)
    if v is not None:
        return f"VIOLATED at depth {v.length - 1} (trace of {v.length} states)"
    if result.cleared < 0:
        return "unknown"
    return f"holds to depth {result.cleared}"


def _report_bmc(config: Config, result: BmcResult, ids: list[str], args: Any) -> int:
    first = next(iter(result.violations.values()), None)
    if first is not None:
        _write_trace(config, first, args.trace_out)
    complete = result.status in ("complete", "all-violated")
    if result.violations:
        code = EXIT_VIOLATION
    elif result.status == "interrupted":
        code = EXIT_INTERRUPTED
    else:
        code = EXIT_OK if complete else EXIT_INCOMPLETE
    if args.json:
        doc = {
            "engine": "bmc",
            "status": result.status,
            "max_depth": result.max_depth,
            "cleared_depth": result.cleared,
            "seconds": round(result.seconds, 3),
            "config": config.to_dict(),
            "invariants": {i: _bmc_verdict(result, i) for i in ids},
            "violations": {
                v.invariant: {"depth": v.length - 1, "message": v.message}
                for v in result.violations.values()
            },
            "depths": [
                {"depth": d.depth, "result": d.result, "seconds": round(d.seconds, 3)}
                for d in result.depths
            ],
            "trace_file": args.trace_out if first else None,
        }
        print(json.dumps(doc, indent=2))
        return code
    print(f"replcheck prove: {config.describe()}")
    reached = f"depth {result.cleared}" if result.cleared >= 0 else "no depth"
    print(
        f"bounded model checking (z3) to depth {result.max_depth}: {result.status}, "
        f"{reached} cleared, in {result.seconds:.1f} s"
    )
    if not complete:
        print(f"note: stopped ({result.status}) before depth {result.max_depth}")
    print()
    width = max(len(i) for i in ids)
    for i in ids:
        print(f"{i:<{width}}  {_bmc_verdict(result, i)}")
    if first is not None:
        print()
        _show(first)
        if args.trace_out:
            print(f"trace written to {args.trace_out} (ITF JSON)")
    print()
    word = {
        EXIT_VIOLATION: "violated",
        EXIT_OK: f"holds to depth {result.cleared}",
        EXIT_INTERRUPTED: "interrupted",
    }
    print(f"result: {word.get(code, 'incomplete')}")
    return code


def _proof_exit(config: Config, result: InductionResult | PdrResult, trace_out: str | None) -> int:
    """A proof's exit code; its counterexample, if any, written to ``trace_out``."""
    if result.violation is not None:
        _write_trace(config, result.violation, trace_out)
    return {
        "proved": EXIT_OK,
        "violated": EXIT_VIOLATION,
        "interrupted": EXIT_INTERRUPTED,
    }.get(result.status, EXIT_INCOMPLETE)


def _report_induction(config: Config, result: InductionResult, args: Any) -> int:
    code = _proof_exit(config, result, args.trace_out)
    if args.json:
        doc = {
            "engine": "k-induction",
            "status": result.status,
            "k": result.k,
            "seconds": round(result.seconds, 3),
            "config": config.to_dict(),
            "invariants": list(result.properties),
            "lemmas": list(result.lemmas),
            "violation": None
            if result.violation is None
            else {
                "invariant": result.violation.invariant,
                "depth": result.violation.length - 1,
                "message": result.violation.message,
            },
            "cti": {
                "broken": list(result.cti_broken),
                "actions": [list(a) for a in result.cti_actions],
                "suggested_lemmas": list(result.suggestions),
            }
            if result.status == "cti"
            else None,
        }
        print(json.dumps(doc, indent=2))
        return code
    print(f"replcheck prove --induction: {config.describe()}")
    print(f"invariants: {', '.join(result.properties)}")
    print(f"lemmas: {', '.join(result.lemmas) or 'none'}")
    print()
    if result.status == "proved":
        print(
            f"proved for all depths at these bounds: k-induction with k={result.k} "
            f"({result.seconds:.1f} s); every lemma above is proved with them"
        )
    elif result.status == "violated" and result.violation is not None:
        _show(result.violation)
    elif result.status == "cti":
        print(
            f"not proved: the induction step fails at k={result.k} (tried k=1..{result.k}). "
            f"Counterexample to induction: {result.k} states where everything holds, then "
            f"a step that breaks {', '.join(result.cti_broken)}; the states need not be "
            "reachable:"
        )
        steps = [(None, result.cti[0])] + list(zip(result.cti_actions, result.cti[1:], strict=True))
        for line in format_trace(steps):
            print(line)
        if result.suggestions:
            print(
                "a lemma that would rule it out (false in the CTI before its last step): "
                + ", ".join(result.suggestions)
            )
    else:
        print(f"stopped ({result.status}) at k={result.k} after {result.seconds:.1f} s")
    print()
    print(f"result: {result.status}")
    return code


def _report_pdr(config: Config, result: PdrResult, args: Any) -> int:
    code = _proof_exit(config, result, args.trace_out)
    if args.json:
        doc = {
            "engine": "pdr",
            "status": result.status,
            "frames": result.frames,
            "seconds": round(result.seconds, 3),
            "queries": result.queries,
            "config": config.to_dict(),
            "invariants": list(result.properties),
            "inductive_invariant": {
                "clauses": result.invariant,
                "lemmas": result.seeds_used,
            }
            if result.status == "proved"
            else None,
            "violation": None
            if result.violation is None
            else {
                "invariant": result.violation.invariant,
                "depth": result.violation.length - 1,
                "pdr_depth": result.pdr_length - 1,
                "shortest": result.shortened,
                "message": result.violation.message,
            },
            "trace_file": args.trace_out if result.violation else None,
        }
        print(json.dumps(doc, indent=2))
        return code
    print(f"replcheck prove --pdr: {config.describe()}")
    print(f"invariants: {', '.join(result.properties)}")
    print()
    if result.status == "proved":
        print(
            f"proved for all depths at these bounds: IC3/PDR converged at frame "
            f"{result.frames} ({result.seconds:.1f} s, {result.queries} SAT queries)."
        )
        print(
            "Inductive invariant (checked again by a fresh solver): the invariants above, "
            f"{len(result.seeds_used)} lemmas and {len(result.invariant)} clauses"
        )
        if result.seeds_used:
            print(f"lemmas: {', '.join(result.seeds_used)}")
        for clause in result.invariant:
            print(f"  {clause}")
    elif result.status == "violated" and result.violation is not None:
        if result.shortened:
            print(
                f"PDR found a counterexample of {result.pdr_length - 1} steps; BMC from the "
                f"initial states confirms it, shortest at {result.violation.length - 1} steps."
            )
            _show(result.violation)
        else:
            print(
                f"PDR found a counterexample of {result.pdr_length - 1} steps, replayed "
                "through the model; Ctrl-C stopped BMC's search for a shorter one."
            )
            _show(result.violation, "Counterexample")
        if args.trace_out:
            print(f"trace written to {args.trace_out} (ITF JSON)")
    else:
        print(
            f"stopped ({result.status}) at frame {result.frames} after {result.seconds:.1f} s "
            f"({result.clauses_learned} clauses learned)"
        )
    print()
    print(f"result: {result.status}")
    return code
