"""Run the model against Kafka's own classes release by release, and write the results
into docs/conformance.md (between its results markers) and docs/conformance.json.

    python docs/make_conformance.py run                 # every release below (hours)
    python docs/make_conformance.py run --releases 4.1.0 --walks 200
    python docs/make_conformance.py run --walks 0       # the entries again, walks kept
    python docs/make_conformance.py                     # rewrite the page from the JSON
    python docs/make_conformance.py --check             # exit 1 if the page is stale

For each release: every catalogue entry whose bounds are KRaft, on its pinned steps;
``WALKS`` seeded random walks of ``WALK_BOUNDS`` (seed ``SEED``, depth ``DEPTH``); and,
once, every KRaft case of tests/conformance/ on the release its Kafka test ran at.
Running it needs java and mvn (replcheck conform); rendering needs neither, so the
page's freshness test runs everywhere (tests/harness/test_conformance_page.py), and a
kafka_jvm test re-runs one release's entries and cases and compares them with the JSON.
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import re
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from replcheck.model.kafka.releases import RELEASES as MODELLED

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "conformance.md"
DATA = ROOT / "docs" / "conformance.json"
BEGIN, END = "<!-- results: begin -->", "<!-- results: end -->"

KRAFT_FROM = "3.3.0"  # the first release with a production KRaft controller
# Every modelled release from KRAFT_FROM on: the catalogue's pinned steps run on each.
RELEASES = tuple(r for r in MODELLED if MODELLED.index(r) >= MODELLED.index(KRAFT_FROM))
# One release per minor line (the newest patch, and 4.1.0, the newest before 4.1.1's
# ELR rule): the random walks, and the entries whose steps BFS finds, run on these.
WALK_RELEASES = (
    "3.3.2", "3.4.1", "3.5.2", "3.6.2", "3.7.2", "3.8.1", "3.9.1",
    "4.0.2", "4.1.0", "4.1.2", "4.2.1", "4.3.2", "4.4.0",
)  # fmt: skip
WALKS = 1000
SEED = 1
DEPTH = 30
ENTRY_SEARCH_SECONDS = 120
WALK_BOUNDS = {"replicas": 3, "records": 2, "epochs": 4, "crashes": 1, "controller_failover": True}


def _key(result: Any) -> str:
    """A disagreement's class: what differed (or the refusal's kind) and at which action."""
    bad = result.first_bad
    if bad is None:
        return "agrees"
    action = bad.action.split("(")[0]
    if bad.refused:
        return f"refused ({bad.refused[0]}) at {action}"
    fields = sorted({d.field.split(".")[-1].split("[")[0] for d in bad.differences})
    return f"differs ({', '.join(fields)}) at {action}"


def run_release(release: str, walks: int, log: Any, search: bool = True) -> dict[str, Any]:
    """One release's results: its catalogue entries (``search``: also those whose steps
    the catalogue's BFS finds) and ``walks`` random walks."""
    import replcheck
    from replcheck.checker.suites.catalogue import _search, load_catalogue
    from replcheck.model.errors import InputError

    out: dict[str, Any] = {"entries": {}, "walks": {}}
    for entry in load_catalogue():
        # The entry's own releases (its pinned steps are theirs), and those with the fix:
        # there the same steps, where the model takes them, must agree without the loss.
        # Only fixes inside KRaft's span (3.3 on): an older bug was never run on Kafka here.
        first, last = (MODELLED.index(r) for r in entry.affected)
        fixed_here = bool(entry.fixed) and not entry.is_affected(release)
        fixed_here = fixed_here and first <= MODELLED.index(release)
        fixed_here = fixed_here and last >= MODELLED.index(KRAFT_FROM)
        if not entry.is_affected(release) and not fixed_here:
            continue
        if fixed_here and release != entry.fixed and not entry.steps_for(release):
            continue
        try:
            cfg = entry.config(release)
        except InputError:
            continue
        if not cfg.kraft:
            continue
        steps = entry.steps_for(release)
        how = "pinned steps"
        if not steps and not search:
            continue
        if not steps:  # the catalogue's BFS finds the interleaving: its shortest
            found = _search(entry, release, ENTRY_SEARCH_SECONDS).violations.get(entry.invariant)
            if found is None:
                continue  # none here (the fix): nothing for Kafka to take
            steps = tuple(st.action for st in found.trace[1:])
            how = "BFS's shortest counterexample"
        try:
            r = replcheck.conform(list(steps), cfg).results[0]
            summary = r.summary()
            verdict = r.verdict
            if entry.rule:
                summary += f" (the model breaks rule {entry.rule} on purpose: Kafka keeps it)"
            if fixed_here and verdict == "agrees" and not r.violations():
                verdict = "fixed"  # Kafka takes the affected releases' steps and keeps the data
                summary += f" and neither breaks {entry.invariant}: the fix"
            out["entries"][entry.id] = {"verdict": verdict, "summary": summary, "steps": how}
        except InputError as exc:
            verdict = "not run"
            if fixed_here and "does not take this trace" in str(exc):
                verdict = "fixed"  # the fix makes the affected releases' steps impossible
            out["entries"][entry.id] = {"verdict": verdict, "summary": str(exc), "steps": how}
        log(f"{release} {entry.id}: {out['entries'][entry.id]['summary']}")
    if walks:
        start = time.monotonic()
        report = replcheck.conform(
            walks=walks, seed=SEED, depth=DEPTH, kafka=release, kraft=True, **WALK_BOUNDS
        )
        classes: Counter[str] = Counter()
        first: dict[str, str] = {}
        for k, r in enumerate(report.results):
            key = _key(r)
            classes[key] += 1
            if key != "agrees":
                first.setdefault(key, f"walk {k}: {r.summary()}")
        out["walks"] = {
            "walks": walks,
            "seed": SEED,
            "depth": DEPTH,
            "bounds": WALK_BOUNDS,
            "classes": dict(classes.most_common()),
            "first": first,
            "seconds": round(time.monotonic() - start),
        }
        log(f"{release} walks: {dict(classes)}")
    return out


def run_cases(log: Any) -> dict[str, Any]:
    import replcheck
    from replcheck.model import make_config
    from replcheck.model.errors import InputError

    sys.path.insert(0, str(ROOT))
    from tests.conformance.cases import load_cases

    out: dict[str, Any] = {}
    for case in load_cases():
        if not case.steps:
            continue
        values = {"kafka": case.release, **case.config}
        if not make_config(values).kraft:
            continue
        try:
            r = replcheck.conform(case.steps, values).results[0]
            out[case.name] = {"release": case.release, "verdict": r.verdict, "summary": r.summary()}
        except InputError as exc:
            out[case.name] = {"release": case.release, "verdict": "not run", "summary": str(exc)}
        log(f"case {case.name}: {out[case.name]['summary']}")
    return out


def _cell(v: dict[str, Any]) -> str:
    """An entry's result on one release, in a word or two."""
    if v["verdict"] == "agrees":
        if "Kafka's state breaks" in v["summary"]:
            return "agrees, breaks"
        return "agrees, model breaks" if "the model breaks" in v["summary"] else "agrees"
    if v["verdict"] in ("disagrees", "refused"):
        step = re.search(r"at step (\d+)|refused step (\d+)", v["summary"])
        where = next((g for g in step.groups() if g), "") if step else ""
        return f"{'differs' if v['verdict'] == 'disagrees' else 'refused'} at {where}".strip()
    return v["verdict"]


def _entries(data: dict[str, Any]) -> list[str]:
    """Every entry's result in every release: a matrix, then each distinct outcome once
    with the releases that gave it."""
    ids: list[str] = []
    for r in data["releases"].values():
        ids += [k for k in r["entries"] if k not in ids]
    controls = [
        k for k in ids
        if any("the model breaks rule" in r["entries"].get(k, {}).get("summary", "")
               for r in data["releases"].values())
    ]  # fmt: skip
    lines = [
        "### Catalogue entries, release by release",
        "",
        "Each KRaft entry's pinned steps (and, on the releases with walks, the shortest "
        "counterexample of those BFS finds) in every release of its range, and in the "
        "releases after its fix.  *agrees, breaks*: Kafka agrees at every step and its state "
        "breaks the entry's invariant as the model's does; *agrees, model breaks*: the "
        "invariant reads whether a follower owes a truncation, the model's to say, so the "
        "break is judged on the model's state (every compared field agreeing); *fixed*: "
        "the fix's model does not take the steps, or takes them and both keep the data"
        + (
            f"; {', '.join(controls)} break a rule of Kafka's on purpose (negative controls: "
            "Kafka must differ)."
            if controls
            else "."
        ),
        "",
        "| Kafka | " + " | ".join(ids) + " |",
        "|---|" + "---|" * len(ids),
    ]
    for release, r in data["releases"].items():
        cells = [_cell(r["entries"][k]) if k in r["entries"] else "" for k in ids]
        lines.append(f"| {release} | " + " | ".join(cells) + " |")
    lines += [""]
    for k in ids:
        outcomes: dict[str, list[str]] = {}
        for release, r in data["releases"].items():
            if k in r["entries"]:
                v = r["entries"][k]
                text = f"({v['steps']}) {v['summary']}".replace(f"Kafka {release}", "Kafka R")
                outcomes.setdefault(text, []).append(release)
        for text, releases in outcomes.items():
            lines.append(f"- **{k}** on {', '.join(releases)}: {text}")
    return lines


def render(data: dict[str, Any]) -> str:
    """The page's results block, from the JSON."""
    lines = [
        "## Results",
        "",
        f"Run with `python docs/make_conformance.py run` on {data['date']} ({data['machine']}); "
        "each release's harness built against that release's jars.",
        "",
        "| Kafka | catalogue entries | random walks | agree | differ | refused |",
        "|---|---|---|---|---|---|",
    ]
    for release, r in data["releases"].items():
        by_verdict: dict[str, list[str]] = {}
        for k, v in r["entries"].items():
            by_verdict.setdefault(v["verdict"], []).append(k)
        plural = {"agrees": "agree", "disagrees": "disagree"}
        cell = "; ".join(
            f"{', '.join(ks)} {plural.get(verdict, verdict) if len(ks) > 1 else verdict}"
            for verdict, ks in by_verdict.items()
        )
        w = r.get("walks") or {}
        if not w:
            lines.append(f"| {release} | {cell} | - | | | |")
            continue
        classes = w["classes"]
        differ = sum(v for k, v in classes.items() if k.startswith("differs"))
        refused = sum(v for k, v in classes.items() if k.startswith("refused"))
        lines.append(
            f"| {release} | {cell} | {w['walks']} | {classes.get('agrees', 0)} | {differ} "
            f"| {refused} |"
        )
    lines += ["", *_entries(data)]
    lines += [
        "",
        "### Random walks: what differed",
        "",
        "Each row is a class of first disagreement (the fields that differed, or the kind of "
        "refusal, at which action), with the first walk that shows it; "
        "`replcheck conform --walks N --seed S` with the bounds below reproduces it.",
        "",
    ]
    for release, r in data["releases"].items():
        w = r.get("walks")
        if not w:
            continue
        bounds = " ".join(f"--{k.replace('_', '-')} {v}" for k, v in w["bounds"].items())
        lines.append(
            f"**{release}** (`replcheck conform --kafka {release} --walks {w['walks']} --seed "
            f"{w['seed']} --depth {w['depth']} {bounds}`, {w['seconds']} s):"
        )
        lines.append("")
        for key, count in w["classes"].items():
            if key == "agrees":
                continue
            lines.append(f"- {count} {key}; first: {w['first'][key]}")
        lines.append("")
    lines += ["### Kafka's own tests (tests/conformance/), on the release each ran at", ""]
    lines += ["| case | release | result |", "|---|---|---|"]
    for name, v in data["cases"].items():
        lines.append(f"| `{name}` | {v['release']} | {v['summary']} |")
    return "\n".join(lines).replace("--controller-failover True", "--controller-failover")


def page_text(data: dict[str, Any]) -> str:
    text = PAGE.read_text(encoding="utf-8")
    head, rest = text.split(BEGIN, 1)
    _old, tail = rest.split(END, 1)
    return f"{head}{BEGIN}\n{render(data)}\n{END}{tail}"


def _save(
    machine: str, releases: dict[str, Any] | None = None, cases: dict[str, Any] | None = None
) -> dict[str, Any]:
    """Merge one release's (or the cases') results into the JSON on disk at once, so a
    killed run keeps what it finished and runs over other releases can share the file."""
    with open(DATA.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # two runs (halves of RELEASES) may finish together
        return _merge(machine, releases, cases)


def _merge(
    machine: str, releases: dict[str, Any] | None, cases: dict[str, Any] | None
) -> dict[str, Any]:
    data = json.loads(DATA.read_text(encoding="utf-8")) if DATA.exists() else {}
    merged = dict(data.get("releases", {}))
    for release, new in (releases or {}).items():
        old_walks = merged.get(release, {}).get("walks")
        merged[release] = {**new, "walks": new["walks"] or old_walks or {}}  # --walks 0
    data["releases"] = {r: merged[r] for r in RELEASES if r in merged}
    data["cases"] = cases if cases is not None else data.get("cases", {})
    data["date"] = time.strftime("%Y-%m-%d")
    data["machine"] = machine
    tmp = DATA.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(data, indent=1, sort_keys=False) + "\n", encoding="utf-8")
    tmp.replace(DATA)
    return data


def _count(text: str) -> int:
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"expected a whole number, 0 or more (got {text!r})")
    return int(text)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("what", nargs="?", choices=["run"], help="run Kafka (else: render)")
    parser.add_argument("--check", action="store_true", help="exit 1 if the page is stale")
    parser.add_argument(
        "--releases",
        nargs="*",
        default=list(RELEASES),
        choices=RELEASES,
        metavar="X.Y.Z",
        help="KRaft releases 3.3.0 to 4.4.0 (default: all)",
    )
    parser.add_argument("--walks", type=_count, default=WALKS, help="walks per release (0: none)")
    parser.add_argument("--no-cases", action="store_true")
    args = parser.parse_args()
    data = json.loads(DATA.read_text(encoding="utf-8")) if DATA.exists() else None
    if args.what == "run":
        import platform

        def log(text: str) -> None:
            print(text, file=sys.stderr, flush=True)

        machine = f"{platform.machine()}, {len(os.sched_getaffinity(0))} cores"
        for release in args.releases:
            sampled = release in WALK_RELEASES
            result = run_release(release, args.walks if sampled else 0, log, search=sampled)
            data = _save(releases={release: result}, machine=machine)
        if not args.no_cases:
            data = _save(cases=run_cases(log), machine=machine)
    if data is None:
        print(
            "no docs/conformance.json: run `python docs/make_conformance.py run`", file=sys.stderr
        )
        return 1
    text = page_text(data)
    if args.check:
        stale = text != PAGE.read_text(encoding="utf-8")
        if stale:
            print("stale: docs/conformance.md")
        return 1 if stale else 0
    PAGE.write_text(text, encoding="utf-8")
    print("wrote docs/conformance.md", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
