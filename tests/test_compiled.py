"""The compiled build (setup.py) runs the same source as the pure-Python package, with
the same results, and never runs an extension older than its source."""

from __future__ import annotations

import ast
import importlib.machinery
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from replcheck import compiled

ROOT = Path(__file__).resolve().parent.parent


def hot_modules() -> list[str]:
    tree = ast.parse((ROOT / "setup.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and node.targets[0].id == "HOT_MODULES":
            return list(ast.literal_eval(node.value))
    raise AssertionError("setup.py has no HOT_MODULES")


def test_every_hot_module_exists_and_is_pure_python_source():
    paths = hot_modules()
    assert paths and all((ROOT / p).is_file() and p.endswith(".py") for p in paths)


def extension_of(path: str) -> Path | None:
    stem = ROOT / path.removesuffix(".py")
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        if stem.with_name(stem.name + suffix).exists():
            return stem.with_name(stem.name + suffix)
    return None


def fresh_build() -> bool:
    """Every hot module has an extension built since its source last changed."""
    built = [(extension_of(p), ROOT / p) for p in hot_modules()]
    return all(e is not None and not compiled._stale(str(e), str(s)) for e, s in built)


def run_check(pure: bool) -> tuple[dict, dict]:
    code = (
        "import json, replcheck; from replcheck.compiled import compiled_modules;"
        "r = replcheck.check(workers=2);"
        "lengths = {i: v.length for i, v in r.violations.items()};"
        "print(json.dumps([[r.status, r.distinct_states, r.depth, r.transitions, lengths],"
        " compiled_modules()]))"
    )
    env = {k: v for k, v in os.environ.items() if k != compiled.PURE_ENV}
    if pure:
        env[compiled.PURE_ENV] = "1"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    return tuple(json.loads(out.stdout))


def test_the_python_source_and_the_build_give_the_same_search():
    """The default check (0.10.2: five of seven invariants violated, their traces rebuilt) with 2
    workers: the model, symmetry, invariants and both engines' loops."""
    pure, pure_modules = run_check(pure=True)
    built, built_modules = run_check(pure=False)
    assert pure == built
    assert pure[:2] == ["complete", 87_065] and len(pure[4]) == 5, pure
    assert not any(pure_modules.values())
    if not fresh_build():
        pytest.skip("no fresh compiled build (none, or sources edited since): Python both times")
    assert built_modules and all(built_modules.values()), built_modules


def test_an_extension_older_than_its_source_is_not_run_in_a_checkout(tmp_path):
    (tmp_path / "pyproject.toml").write_text("")
    source = tmp_path / "model" / "kafka" / "state.py"
    source.parent.mkdir(parents=True)
    source.write_text("")
    extension = source.with_name("state" + importlib.machinery.EXTENSION_SUFFIXES[0])
    extension.write_bytes(b"")
    os.utime(extension, (1_000, 1_000))
    os.utime(source, (2_000, 2_000))
    assert compiled._stale(str(extension), str(source))
    os.utime(extension, (3_000, 3_000))
    assert not compiled._stale(str(extension), str(source))
    (tmp_path / "pyproject.toml").unlink()  # installed: both files come from one build
    os.utime(extension, (1_000, 1_000))
    assert not compiled._stale(str(extension), str(source))


def version_line(env: dict[str, str]) -> str:
    clean = {k: v for k, v in os.environ.items() if k != compiled.PURE_ENV}
    out = subprocess.run(
        [sys.executable, "-m", "replcheck", "--version"],
        capture_output=True,
        text=True,
        env={**clean, **env},
        check=True,
    )
    return out.stdout.strip()


def test_version_says_how_the_hot_modules_run():
    pure = version_line({compiled.PURE_ENV: "1"})
    assert pure.startswith("replcheck ") and "run as Python (REPLCHECK_PURE_PYTHON is set)" in pure
    built = version_line({})
    if fresh_build():
        assert built.endswith(f"; {len(hot_modules())} hot modules compiled (Cython)"), built
    else:
        assert "run as Python" in built or "of" in built, built
