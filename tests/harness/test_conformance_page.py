"""docs/conformance.md: its results block is rendered from docs/conformance.json, and the
results of one release still hold on the current model and harness."""

from __future__ import annotations

import importlib.util
import json
import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HAVE_JVM = shutil.which("java") is not None and shutil.which("mvn") is not None


def _generator():
    spec = importlib.util.spec_from_file_location(
        "make_conformance", ROOT / "docs" / "make_conformance.py"
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_the_page_is_rendered_from_its_data():
    gen = _generator()
    data = json.loads(gen.DATA.read_text(encoding="utf-8"))
    assert gen.page_text(data) == gen.PAGE.read_text(encoding="utf-8"), (
        "stale: run python docs/make_conformance.py"
    )


def test_the_data_covers_every_kraft_release_and_walks_one_of_each_minor_line():
    gen = _generator()
    data = json.loads(gen.DATA.read_text(encoding="utf-8"))
    assert list(data["releases"]) == list(gen.RELEASES)  # every modelled KRaft release
    walked = [r for r, result in data["releases"].items() if result["walks"]]
    assert walked == list(gen.WALK_RELEASES) and len(walked) >= 8
    assert {r.rsplit(".", 1)[0] for r in walked} == {r.rsplit(".", 1)[0] for r in gen.RELEASES}
    for release, result in data["releases"].items():
        assert {"F2", "F3"} <= set(result["entries"]), release
        if result["walks"]:
            assert result["walks"]["walks"] >= 1000, release
            assert sum(result["walks"]["classes"].values()) == result["walks"]["walks"], release


@pytest.mark.skipif(not HAVE_JVM, reason="conform needs java and mvn on PATH")
@pytest.mark.kafka_jvm
def test_one_releases_entries_are_what_the_page_says():
    gen = _generator()
    data = json.loads(gen.DATA.read_text(encoding="utf-8"))
    again = gen.run_release("4.1.0", walks=0, log=lambda _text: None, search=False)
    pinned = {
        k: v for k, v in data["releases"]["4.1.0"]["entries"].items() if k in again["entries"]
    }
    assert again["entries"] == pinned and {"F2", "F3", "F4"} <= set(pinned)
