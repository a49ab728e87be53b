"""The package's layout: imports point one way, and the README's map is the tree."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# Lowest first: a layer may import its own and lower layers only.
LAYERS = [
    ("model", "replcheck.model"),
    ("invariants", "replcheck.invariants"),
    ("traces", "replcheck.traces"),
    ("checker", "replcheck.checker"),  # the engines and the suites
    ("harness", "replcheck.harness"),  # model traces run on Kafka's classes
    ("cluster", "replcheck.cluster"),  # model traces taken by real Kafka clusters
    ("api", "replcheck"),  # the package's top: the Python API
    ("cli", "replcheck.cli"),
]


def layer_of_folder(path: Path) -> int:
    """A module's layer; ``python -m replcheck`` (api/__main__.py) is the command line's."""
    rel = path.relative_to(ROOT).as_posix()
    if rel == "api/__main__.py":
        return len(LAYERS) - 1
    return max(k for k, (folder, _) in enumerate(LAYERS) if rel.startswith(folder + "/"))


def layer_of_module(name: str) -> int:
    """The layer of an imported ``replcheck...`` module (its longest matching prefix)."""
    best = -1
    for k, (_, package) in enumerate(LAYERS):
        if name == package or name.startswith(package + "."):
            best = k if best < 0 or len(package) > len(LAYERS[best][1]) else best
    top = name.split(".")[1] if "." in name else ""
    if best == LAYERS.index(("api", "replcheck")) and top in {"model", "invariants", "traces"}:
        raise AssertionError(name)  # covered by the longer prefixes above
    return best


def imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module)
        elif isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
    return [n for n in names if n == "replcheck" or n.startswith("replcheck.")]


def test_imports_point_down():
    wrong = []
    for folder, _ in LAYERS:
        for path in sorted((ROOT / folder).rglob("*.py")):
            mine = layer_of_folder(path)
            for name in imports(path):
                if layer_of_module(name) > mine:
                    wrong.append(f"{path.relative_to(ROOT)} imports {name}")
    assert wrong == []


def test_no_module_imports_the_old_top_level_names():
    old = re.compile(r"^\s*(from|import) (model|checker|invariants|traces|api)\b", re.M)
    offenders = [
        str(p.relative_to(ROOT))
        for folder in ("model", "invariants", "traces", "checker", "api", "tests", "benchmarks")
        for p in (ROOT / folder).rglob("*.py")
        if old.search(p.read_text(encoding="utf-8"))
    ]
    assert offenders == []


def _readme_map() -> dict[str, str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Where things live", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| `([^`]+)/` \| (`[^`]*`)? ?\|", section, re.M)
    return {folder: installed.strip("`") for folder, installed in rows}


def test_the_readme_map_is_the_tree():
    mapped = _readme_map()
    packages = {
        p.parent.relative_to(ROOT).as_posix()
        for folder in ("model", "invariants", "traces", "checker", "api", "cli")
        for p in (ROOT / folder).rglob("__init__.py")
    }
    # Every package folder is on the map, or inside one that is (with its own row
    # where it is a subpackage the design names).
    for package in packages:
        assert any(package == f or package.startswith(f + "/") for f in mapped), package
    for folder, installed in mapped.items():
        assert (ROOT / folder).is_dir(), folder
        if installed:
            dotted = installed.split(".")
            assert dotted[0] == "replcheck" and (ROOT / folder / "__init__.py").is_file()


def test_the_readme_map_names_files_that_exist():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Where things live", 1)[1].split("\n## ", 1)[0]
    for line in section.splitlines():
        match = re.match(r"^\| `([^`]+)/` \|", line)
        if not match:
            continue
        folder = ROOT / match.group(1)
        for name in re.findall(r"`([\w/]+\.(?:py|toml))`", line):
            assert (folder / name).exists(), f"{folder.relative_to(ROOT)}/{name}"


def test_pyproject_maps_each_mapped_folder():
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    for folder, installed in _readme_map().items():
        if installed and "/" not in folder:
            assert f'"{installed}" = "{folder}"' in text


def test_checker_shows_the_engines_families():
    """Each engine lives in its family's folder; nothing but the package's own
    ``__init__.py`` sits loose in ``checker/`` (issue 47)."""
    loose = sorted(p.name for p in (ROOT / "checker").glob("*.py"))
    assert loose == ["__init__.py"]
    families = sorted(p.name for p in (ROOT / "checker").iterdir() if (p / "__init__.py").is_file())
    assert families == ["explicit", "spark", "suites", "symbolic", "walks"]
