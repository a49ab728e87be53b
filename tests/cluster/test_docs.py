"""docs/reproduce.md stays true to the code: every changed broker setting and every step
the cluster takes is on the page."""

from __future__ import annotations

from pathlib import Path

from replcheck.cluster.nodes import BROKER_SETTINGS
from replcheck.cluster.plan import TAKEN

PAGE = (Path(__file__).resolve().parents[2] / "docs" / "reproduce.md").read_text(encoding="utf-8")


def test_every_changed_setting_is_on_the_page() -> None:
    settings = PAGE.split("## How each step is taken", 1)[0]
    assert [k for k in BROKER_SETTINGS if f"`{k}`" not in settings] == []


def test_every_step_the_cluster_takes_is_on_the_page() -> None:
    table = PAGE.split("## How each step is taken", 1)[1].split("\n## ", 1)[0]
    missing = [op for op in TAKEN if op != "reorder" and f"`{op}`" not in table]
    assert missing == []
