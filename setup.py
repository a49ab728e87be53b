"""Compiles the explicit engine's hot modules with Cython, as they are (issue 24).

The package is pure Python and everything else about it is in pyproject.toml.  At
install, the modules below are also compiled to C extensions, which CPython imports
in place of the ``.py`` files beside them: the same source, run about 1.6 times
faster (benchmarks/README.md, "Per core").  Each extension is optional: where it
cannot be built (no C compiler) the module stays pure Python, which works everywhere
(``replcheck --version`` says how the hot modules run).  ``REPLCHECK_PURE_PYTHON=1``
at install builds nothing; at run time it makes an installed build run the Python
source instead (see api/compiled.py).
"""

from __future__ import annotations

import os
import sys
import tomllib

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

# The modules a BFS runs for every state: the Kafka model's rules, its symmetry
# reduction, its invariants, and the search loop with its visited set and levels.
HOT_MODULES = (
    "model/kafka/state.py",
    "model/kafka/epochs.py",
    "model/kafka/broker.py",
    "model/kafka/controller.py",
    "model/kafka/messages.py",
    "model/kafka/replication.py",
    "model/kafka/symmetry.py",
    "invariants/kafka/predicates.py",
    "checker/explicit/visited.py",
    "checker/explicit/frontier.py",
    "checker/explicit/bfs.py",
    "checker/explicit/parallel_bfs.py",
    "checker/explicit/bfs_worker.py",
)


def module_name(path: str, package_of: dict[str, str]) -> str:
    """``checker/explicit/bfs.py`` -> ``replcheck.checker.explicit.bfs``, by pyproject.toml's
    package-dir."""
    top, *rest = path.removesuffix(".py").split("/")
    return ".".join([package_of[top], *rest])


def extensions() -> list:
    if os.environ.get("REPLCHECK_PURE_PYTHON"):
        return []
    try:
        from Cython.Build import cythonize
    except ImportError:  # a build without the build requirements: pure Python
        return []
    with open("pyproject.toml", "rb") as f:
        package_dir = tomllib.load(f)["tool"]["setuptools"]["package-dir"]
    package_of = {folder: package for package, folder in package_dir.items()}
    modules = [Extension(module_name(p, package_of), [p]) for p in HOT_MODULES]
    try:
        return cythonize(
            modules,
            build_dir="build/cython",
            quiet=True,
            compiler_directives={
                "language_level": 3,
                # Annotations document; they must not become C type checks (a State is a
                # tuple subclass, which a typed ``tuple`` argument would refuse).
                "annotation_typing": False,
            },
        )
    except Exception as e:  # noqa: BLE001 - any failure leaves the package pure Python
        print(f"warning: replcheck: not compiled ({e}); it runs as Python", file=sys.stderr)
        return []


class OptionalBuildExt(build_ext):
    """Every extension is optional: one that does not build (no C compiler, no Python
    headers) leaves its module pure Python.  ``Extension(optional=True)`` is not
    enough: setuptools lets a failed compiler command through as CalledProcessError."""

    def finalize_options(self) -> None:
        super().finalize_options()
        if not self.parallel:  # one compiler per core: the modules are independent
            self.parallel = os.cpu_count() or 1

    def build_extension(self, ext: Extension) -> None:
        try:
            super().build_extension(ext)
        except Exception as e:  # noqa: BLE001
            print(f"warning: replcheck: {ext.name} not compiled ({e})", file=sys.stderr)


setup(ext_modules=extensions(), cmdclass={"build_ext": OptionalBuildExt})
