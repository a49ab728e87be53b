"""The compiled build (setup.py) runs the same source as the pure-Python package, with
the same results, and never runs an extension older than its source."""

from __future__ import annotations

import ast
import importlib.machinery
import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

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


def expected_modules() -> dict[str, bool]:
    """What ``compiled_modules()`` must say once every hot module is imported: each one
    with an extension, and whether that extension is fresh (built since its source last
    changed) and so runs.  Read off the files, as the import hook does."""
    with open(ROOT / "pyproject.toml", "rb") as f:
        package_dir = tomllib.load(f)["tool"]["setuptools"]["package-dir"]
    package_of = {folder: package for package, folder in package_dir.items()}
    expected = {}
    for path in hot_modules():
        extension = extension_of(path)
        if extension is not None:
            top, *rest = path.removesuffix(".py").split("/")
            name = ".".join([package_of[top], *rest])
            expected[name] = not compiled._stale(str(extension), str(ROOT / path))
    return expected


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
    """The default check (0.10.2: five of seven invariants violated, their traces
    rebuilt) with 2 workers: the model, symmetry, invariants and both engines' loops;
    each hot module ran compiled exactly where a fresh extension of it is installed."""
    pure, pure_modules = run_check(pure=True)
    built, built_modules = run_check(pure=False)
    assert pure == built
    assert pure[:2] == ["complete", 99_913] and len(pure[4]) == 5, pure
    expected = expected_modules()
    assert pure_modules == dict.fromkeys(expected, False)
    assert built_modules == expected


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
    expected = expected_modules()
    why = "REPLCHECK_PURE_PYTHON is set" if expected else "no compiled build: pip had no C compiler"
    assert pure.endswith(f"; hot modules run as Python ({why})"), pure
    built = version_line({})
    done = sum(expected.values())
    if not expected:
        assert built.endswith(f"; hot modules run as Python ({why})"), built
    elif not done:
        assert built.endswith(
            "; hot modules run as Python (edited since they were built: "
            "pip install -e . builds them again)"
        ), built
    elif done == len(expected):
        assert built.endswith(f"; {done} hot modules compiled (Cython)"), built
    else:
        assert f"; {done} of {len(expected)} hot modules compiled; the rest run as Python" in built
