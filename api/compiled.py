"""Which hot modules run compiled: Cython's build of them, or their Python source.

``pip install`` compiles the explicit engine's hot modules (setup.py, HOT_MODULES)
where a C compiler is at hand, and CPython imports an extension in place of the
``.py`` beside it.  This module, installed as an import hook before anything else of
replcheck is imported, runs the Python source instead when

* ``REPLCHECK_PURE_PYTHON`` is set (for a comparison, or Python tracebacks), or
* in a source checkout (``pip install -e .``), the ``.py`` was edited after its
  extension was built: a stale extension would silently run the old rules.
  ``pip install -e .`` compiles it again.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
from pathlib import Path

PURE_ENV = "REPLCHECK_PURE_PYTHON"


class _SourceWhenNeeded(importlib.abc.MetaPathFinder):
    """Finds replcheck's modules as the path finder does, but returns the source
    module's spec where the extension must not run."""

    def __init__(self) -> None:
        self.compiled: dict[str, bool] = {}  # module -> ran compiled

    def find_spec(self, fullname, path, target=None):  # noqa: ANN001 (importlib's API)
        if not fullname.startswith("replcheck.") or path is None:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        origin = getattr(spec, "origin", None) or ""
        if spec is None or not origin.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES)):
            return None
        source = origin[: origin.index(".", len(os.path.dirname(origin)) + 1)] + ".py"
        if not os.path.exists(source):
            return None
        if os.environ.get(PURE_ENV) or _stale(origin, source):
            self.compiled[fullname] = False
            return importlib.util.spec_from_file_location(fullname, source)
        self.compiled[fullname] = True
        return None  # the path finder's answer: the extension


def _stale(extension: str, source: str) -> bool:
    """In a source checkout, the source is newer than its extension."""
    if not any((folder / "pyproject.toml").exists() for folder in Path(source).parents[:3]):
        return False  # installed: both files come from one build
    return os.stat(source).st_mtime > os.stat(extension).st_mtime


_FINDER = _SourceWhenNeeded()
sys.meta_path.insert(0, _FINDER)  # replcheck/__init__.py imports this module first


def compiled_modules() -> dict[str, bool]:
    """Each hot module imported so far that has an extension: True if it runs compiled."""
    return dict(_FINDER.compiled)


def describe() -> str:
    """How the hot modules imported so far run, for ``replcheck --version``."""
    ran = compiled_modules()
    done = sum(ran.values())
    stale = "edited since they were built: pip install -e . builds them again"
    if os.environ.get(PURE_ENV) and ran:
        return f"hot modules run as Python ({PURE_ENV} is set)"
    if not ran:
        return "hot modules run as Python (no compiled build: pip had no C compiler)"
    if not done:
        return f"hot modules run as Python ({stale})"
    if done == len(ran):
        return f"{done} hot modules compiled (Cython)"
    return f"{done} of {len(ran)} hot modules compiled; the rest run as Python ({stale})"
