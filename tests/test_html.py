"""``replay --html``: one self-contained page, checked as text and in headless Chromium."""

from __future__ import annotations

import json
import os
import re
import shutil
from itertools import pairwise
from pathlib import Path

import pytest

from replcheck.cli.main import main
from replcheck.traces.html import replica_html
from replcheck.traces.load import load_trace
from replcheck.traces.replay import replay_trace
from replcheck.traces.text import state_changes
from tests.conftest import chromium

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
LONG_TRACE = ROOT / "docs" / "traces" / "kip101.consistent-logs.itf.json"  # 18 steps


@pytest.fixture(scope="module")
def page(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("html") / "loss.html"
    assert main(["replay", str(EXAMPLES / "seed-data-loss.itf.json"), "--html", str(out)]) == 0
    return out


def test_page_is_self_contained(page):
    text = page.read_text()
    assert text.startswith("<!DOCTYPE html>")
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", text)
    assert "<link" not in text and "@import" not in text and "url(" not in text
    assert text.count('class="lane"') == 2 and 'class="lane controller"' in text
    assert "no-committed-data-loss is violated at step 9" in text


def test_divergent_trace_page_says_so(tmp_path):
    doc = json.loads((EXAMPLES / "seed-data-loss.itf.json").read_text())
    doc["states"][3]["replicas"][0]["hw"] = {"#bigint": "7"}
    bad = tmp_path / "bad.itf.json"
    bad.write_text(json.dumps(doc))
    out = tmp_path / "bad.html"
    assert main(["replay", str(bad), "--html", str(out)]) == 1
    text = out.read_text()
    assert "The trace diverges at step 3" in text
    assert 'id="timeline" data-focus="3"' in text  # it opens on the step that diverged


def test_page_in_headless_chromium(page, tmp_path):
    driver = chromium()
    try:
        from selenium.webdriver.common.by import By

        driver.get(page.as_uri())
        find = driver.find_elements
        assert driver.title == "replcheck: counterexample to no-committed-data-loss"
        lanes = find(By.CSS_SELECTOR, "tr.lane[data-replica]")
        assert [lane.get_attribute("data-replica") for lane in lanes] == ["0", "1"]
        assert len(find(By.CSS_SELECTOR, "thead th[data-step]")) == 10
        broken = find(By.CSS_SELECTOR, "thead th.broken")
        assert len(broken) == 1 and broken[0].text.startswith("9")
        assert len(find(By.CSS_SELECTOR, "td.cell.broken")) == 3  # two replicas + controller
        assert find(By.CSS_SELECTOR, "#step-table tr.step-row.broken")[0].text.startswith("9")
        # r0 holds m1 (epoch 1) at step 3, with its HW at 1 = LEO
        cell = driver.find_element(By.CSS_SELECTOR, 'td[data-step="3"][data-replica="0"]')
        assert cell.find_element(By.CSS_SELECTOR, ".rec.e1").text == "m1"
        assert cell.find_elements(By.CSS_SELECTOR, ".mark.hw")
        colour = cell.find_element(By.CSS_SELECTOR, ".rec.e1").value_of_css_property(
            "background-color"
        )
        assert colour.startswith("rgb")  # the epoch colour applies
        # crashes: r1 is down at step 4 and r0 from step 7
        assert (
            "crashed"
            in driver.find_element(By.CSS_SELECTOR, 'td[data-step="4"][data-replica="1"]').text
        )
        assert len(find(By.CSS_SELECTOR, 'td.down[data-replica="0"]')) == 3
        assert (
            "not in ISR"
            in driver.find_element(By.CSS_SELECTOR, 'td[data-step="9"][data-replica="0"]').text
        )
        verdict = driver.find_element(By.ID, "verdict").text
        assert "committed record m1@e1 at offset 0" in verdict
        # clicking a step selects its column and its row in the step table
        driver.find_element(By.CSS_SELECTOR, 'thead th[data-step="6"]').click()
        selected = find(By.CSS_SELECTOR, '.selected[data-step="6"]')
        assert len(selected) == 5  # header, two replicas, controller, table row
        shot = tmp_path / "timeline.png"
        assert driver.save_screenshot(str(shot))
        assert shot.stat().st_size > 10_000
        keep = os.environ.get("REPLCHECK_SCREENSHOT_DIR")
        if keep:
            shutil.copy(shot, Path(keep) / "timeline.png")
    finally:
        driver.quit()


# The page's box for an element, the part of it the timeline's scroll box shows
# (right of the sticky lane headers), and the part the window shows.
GEOMETRY = """
var el = arguments[0];
function box(e) { var r = e.getBoundingClientRect();
  return {left: r.left, right: r.right, top: r.top, bottom: r.bottom}; }
var tl = document.getElementById('timeline'), t = tl.getBoundingClientRect();
var steps = document.querySelector('.steps'), s = steps.getBoundingClientRect();
var lane = document.querySelector('#timeline thead th').getBoundingClientRect();
return {
  el: box(el),
  timeline: {left: lane.right, right: t.left + tl.clientLeft + tl.clientWidth},
  steps: {top: s.top + steps.clientTop, bottom: s.top + steps.clientTop + steps.clientHeight},
  window: {right: window.innerWidth, bottom: window.innerHeight},
  scrollLeft: tl.scrollLeft
};
"""


def _replay_page(trace: Path, out: Path) -> Path:
    assert main(["replay", str(trace), "--html", str(out)]) == 0
    return out


@pytest.mark.parametrize(
    ("trace", "broken"), [(EXAMPLES / "seed-data-loss.itf.json", 9), (LONG_TRACE, 18)]
)
def test_page_opens_on_the_violation(trace, broken, tmp_path):
    """At 1400 px the violating step (not steps 0-4) is in view, with steps before it."""
    page = _replay_page(trace, tmp_path / "page.html")
    driver = chromium(width=1400)
    try:
        from selenium.webdriver.common.by import By
        from selenium.webdriver.support.ui import WebDriverWait

        driver.get(page.as_uri())
        assert driver.execute_script("return window.innerWidth") == 1400
        head = driver.find_element(By.CSS_SELECTOR, "thead th.broken")
        assert head.get_attribute("data-step") == str(broken)
        g = driver.execute_script(GEOMETRY, head)
        assert g["scrollLeft"] > 0  # the whole trace does not fit: it had to scroll
        assert g["timeline"]["left"] - 1 <= g["el"]["left"]
        assert g["el"]["right"] <= g["timeline"]["right"] + 1
        assert (
            g["el"]["right"] <= g["window"]["right"] and g["el"]["bottom"] <= g["window"]["bottom"]
        )
        for cell in driver.find_elements(By.CSS_SELECTOR, "td.cell.broken"):
            c = driver.execute_script(GEOMETRY, cell)["el"]
            assert (
                g["timeline"]["left"] - 1 <= c["left"] and c["right"] <= g["timeline"]["right"] + 1
            )
            assert c["bottom"] <= g["window"]["bottom"]
        # context: the steps before it are whole columns in view too
        for step in range(broken - 3, broken):
            c = driver.execute_script(
                GEOMETRY, driver.find_element(By.CSS_SELECTOR, f'thead th[data-step="{step}"]')
            )["el"]
            assert (
                g["timeline"]["left"] - 1 <= c["left"] and c["right"] <= g["timeline"]["right"] + 1
            )
        # the step table beside it shows the violating row
        row = driver.find_element(By.CSS_SELECTOR, "#step-table tr.step-row.broken")
        r = driver.execute_script(GEOMETRY, row)
        assert r["steps"]["top"] <= r["el"]["top"] and r["el"]["bottom"] <= r["steps"]["bottom"] + 1
        assert r["el"]["bottom"] <= r["window"]["bottom"]
        # a window that changes size before the reader touches the page opens on it again
        driver.set_window_size(1150, 900)

        def in_view(_):
            e = driver.execute_script(GEOMETRY, head)
            return (
                e["scrollLeft"] > 0
                and e["timeline"]["left"] - 1 <= e["el"]["left"]
                and e["el"]["right"] <= e["timeline"]["right"] + 1
            )

        WebDriverWait(driver, 3).until(in_view)
        g = driver.execute_script(GEOMETRY, head)
        # clicking a step row brings a column scrolled out of view back
        first = driver.find_element(By.CSS_SELECTOR, 'thead th[data-step="0"]')
        assert driver.execute_script(GEOMETRY, first)["el"]["left"] < g["timeline"]["left"]
        driver.execute_script(
            "arguments[0].click()",
            driver.find_element(By.CSS_SELECTOR, '#step-table tr.step-row[data-step="0"]'),
        )
        c = driver.execute_script(GEOMETRY, first)["el"]
        assert g["timeline"]["left"] - 1 <= c["left"] and c["right"] <= g["timeline"]["right"] + 1
        keep = os.environ.get("REPLCHECK_SCREENSHOT_DIR")
        if keep:
            driver.get(page.as_uri())
            driver.save_screenshot(str(Path(keep) / f"open-{trace.name}.png"))
    finally:
        driver.quit()


# Every element of a cell whose content is wider than its box, or that sticks out of its cell.
CLIPPED = """
var out = [];
document.querySelectorAll(arguments[0]).forEach(function (td) {
  var t = td.getBoundingClientRect();
  [td].concat(Array.from(td.querySelectorAll('*'))).forEach(function (e) {
    var r = e.getBoundingClientRect();
    if (e.scrollWidth > e.clientWidth && e.clientWidth > 0)
      out.push([td.dataset.step, td.dataset.replica, e.className, 'content wider than its box']);
    if (r.width && (r.left < t.left - 0.5 || r.right > t.right + 0.5 || r.bottom > t.bottom + 0.5))
      out.push([td.dataset.step, td.dataset.replica, e.className, e.textContent, 'sticks out']);
  });
});
return out;
"""


@pytest.mark.parametrize("width", [1400, 1000, 700])
def test_crashed_replicas_are_not_clipped(width, tmp_path):
    """A crashed replica's cell shows all its text: not cut by the timeline's edge on load,
    nothing wider than its box or outside it."""
    pages = [
        _replay_page(EXAMPLES / "seed-data-loss.itf.json", tmp_path / "seed.html"),
        _replay_page(EXAMPLES / "seed-divergence-lossy-crash.itf.json", tmp_path / "lossy.html"),
    ]
    driver = chromium(width=width)
    try:
        from selenium.webdriver.common.by import By

        for page in pages:
            driver.get(page.as_uri())
            down = driver.find_elements(By.CSS_SELECTOR, "td.cell.down")
            assert down, page
            shown = 0
            for cell in down:
                g = driver.execute_script(GEOMETRY, cell)
                left, right = g["timeline"]["left"], g["timeline"]["right"]
                inside = left - 1 <= g["el"]["left"] and g["el"]["right"] <= right + 1
                outside = g["el"]["right"] <= left + 1 or g["el"]["left"] >= right - 1
                assert inside or outside, (page.name, cell.get_attribute("data-step"))
                shown += inside
            assert shown  # the violation's neighbourhood has crashed replicas in view
            assert driver.execute_script(CLIPPED, "td.cell.down") == []
            assert driver.execute_script(CLIPPED, "td.cell") == []  # nor any other cell
            for cell in down:
                assert "DOWN" in cell.text and "disk LEO" in cell.text and "HW ckpt" in cell.text
    finally:
        driver.quit()


def test_a_leader_owing_its_record_is_shown():
    """Finding F3's trace: the leader adopts its ISR from the AlterPartition response and
    owes the metadata record; explore's detail and the list of each step's changes say so."""
    steps = replay_trace(load_trace(ROOT / "docs" / "bugs" / "F3.itf.json")).steps
    owed = [(s, i) for _a, s in steps for i, r in enumerate(s.replicas) if r.record_owed]
    assert owed
    state, i = owed[0]
    assert "record owed" in replica_html(i, state.replicas[i], state, None, 1, False, detail=True)
    assert "record owed" not in replica_html(i, state.replicas[i], state, None, 1, False)
    text = "\n".join(line for (_a, p), (_b, s) in pairwise(steps) for line in state_changes(p, s))
    assert f"r{i} took its ISR from the controller's answer; the record is to come" in text
