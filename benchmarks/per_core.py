"""States per second on one core: an earlier release, this source as Python, this source compiled.

    python benchmarks/per_core.py                 # 3 variants x 2 rounds; ~4 min
    python benchmarks/per_core.py --baseline 03c3fac --states 500000 --rounds 3

Issue 24 asks for 3x the single-worker rate on ``--kafka 4.1.0 --replicas 3``.  Each
variant runs the same search (``check --workers 1 --max-states N``, default bounds)
in a fresh process, the variants taking turns round after round so that a busy
moment of the machine does not land on one of them only; the table gives each
variant's best round and every round's rate.  The variants:

* ``baseline``: the package as it was at ``--baseline`` (a git revision; default the
  last commit before the per-core work), extracted to a temporary folder, pure Python;
* ``python``: this checkout's source, run as Python (``REPLCHECK_PURE_PYTHON=1``);
* ``compiled``: this checkout as installed (its hot modules compiled, where the
  install could build them: setup.py).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BASELINE = "03c3fac"  # prove --pdr's Ctrl-C fix: the engine before the per-core work
SEARCH = ["check", "--kafka", "4.1.0", "--replicas", "3", "--workers", "1", "--json"]
PARTS = ("model", "invariants", "traces", "checker")


def baseline_tree(revision: str, folder: Path) -> tuple[Path, list[str]]:
    """The package as it was at ``revision``, laid out for PYTHONPATH (and to run from:
    ``python -c`` and ``-m`` put the working directory first on the path, where this
    checkout's own folders would shadow the old ones), and the command that runs its
    command line.  Since 2026-11-25 api/ is the package and the other folders its parts;
    before, ``model``, ``checker``... were top-level packages (issue 47's baseline,
    1121ce4, is one of those)."""
    source = folder / "source"
    source.mkdir()
    packaged = (
        "api"
        in subprocess.run(
            ["git", "-C", str(ROOT), "ls-tree", "--name-only", revision],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.split()
    )
    folders = ["api", *PARTS] if packaged else list(PARTS)
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", revision, *folders],
        check=True,
        capture_output=True,
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(source)], input=archive, check=True)
    if not packaged:
        launch = "import sys; from checker.launch import main; sys.exit(main())"
        return source, [sys.executable, "-c", launch]
    package = folder / "path" / "replcheck"
    shutil.copytree(source / "api", package)
    for part in PARTS:
        shutil.copytree(source / part, package / part)
    return folder / "path", [sys.executable, "-m", "replcheck"]


def run(states: int, env: dict[str, str], command: list[str], cwd: Path | None) -> dict:
    out = subprocess.run(
        [*command, *SEARCH, "--max-states", str(states)],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        cwd=cwd,
    )
    if out.returncode not in (0, 1, 3):
        raise SystemExit(f"the search failed:\n{out.stderr}")
    return json.loads(out.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", default=BASELINE, help="git revision (default %(default)s)")
    parser.add_argument("--states", type=int, default=500_000, help="default %(default)s")
    parser.add_argument("--rounds", type=int, default=2, help="default %(default)s")
    args = parser.parse_args()
    known = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--verify", "--quiet", f"{args.baseline}^{{commit}}"],
        capture_output=True,
    )
    if known.returncode != 0:
        parser.error(f"--baseline {args.baseline}: no such revision in {ROOT}")
    with tempfile.TemporaryDirectory(prefix="replcheck-per-core-") as tmp:
        path, command = baseline_tree(args.baseline, Path(tmp))
        here = [sys.executable, "-m", "replcheck"]
        variants = {
            f"baseline ({args.baseline}, Python)": (
                {"PYTHONPATH": str(path), "REPLCHECK_PURE_PYTHON": "1"},
                command,
                path,
            ),
            "this source, Python": ({"REPLCHECK_PURE_PYTHON": "1"}, here, None),
            "this source, compiled": ({}, here, None),
        }
        rates: dict[str, list[int]] = {name: [] for name in variants}
        for _round in range(args.rounds):
            for name, (env, command, cwd) in variants.items():
                doc = run(args.states, env, command, cwd)
                # Engines before issue 11 stop at the end of the state being expanded,
                # a few states past the limit.
                assert args.states <= doc["distinct_states"] < args.states * 1.001, doc
                rates[name].append(doc["states_per_second"])
                print(f"{name}: {doc['states_per_second']:,} states/s", file=sys.stderr)
    base = max(next(iter(rates.values())))
    print(f"`check {' '.join(SEARCH[1:])} --max-states {args.states}`, {args.rounds} rounds:\n")
    print("| variant | best states/s | vs baseline | every round |")
    print("|---|---:|---:|---|")
    for name, seen in rates.items():
        rounds = ", ".join(f"{r:,}" for r in seen)
        print(f"| {name} | {max(seen):,} | {max(seen) / base:.2f}x | {rounds} |")


if __name__ == "__main__":
    main()
