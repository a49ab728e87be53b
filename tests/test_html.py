"""``replay --html``: one self-contained page, checked as text and in headless Chromium."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest

from checker.cli import main

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"


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
    assert "The trace diverges at step 3" in out.read_text()


def _driver():
    if not (os.path.exists(CHROMIUM) and os.path.exists(CHROMEDRIVER)):
        pytest.skip("headless Chromium is not installed (apt-get install chromium chromium-driver)")
    webdriver = pytest.importorskip(
        "selenium.webdriver", reason="selenium is not installed (pip install selenium)"
    )
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--window-size=1600,900",
    ):
        options.add_argument(flag)
    return webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)


def test_page_in_headless_chromium(page, tmp_path):
    driver = _driver()
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
