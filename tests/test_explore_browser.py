"""``replcheck explore`` in headless Chromium: the seeds' loss taken button by button.

Skipped, with the reason, where Chromium, ChromeDriver or selenium is missing (as
tests/test_html.py).  Every wait is for an element or an attribute, never a fixed time.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import replcheck
from replcheck.traces.explore import Explorer
from tests.test_explore import LOSS, serve_cli

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
WAIT = 60  # seconds an element may take to appear: a bound, not a pause


def _driver(downloads: Path):
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
        "--no-proxy-server",
        "--window-size=1400,900",
    ):
        options.add_argument(flag)
    options.add_experimental_option(
        "prefs",
        {"download.default_directory": str(downloads), "download.prompt_for_download": False},
    )
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.execute_cdp_cmd(
        "Page.setDownloadBehavior", {"behavior": "allow", "downloadPath": str(downloads)}
    )
    return driver


def test_take_the_seeds_loss_by_hand_and_export_it(tmp_path):
    result = replcheck.check(kafka="0.10.2", invariants=[LOSS], workers=1)
    violation = result.violations[LOSS]
    actions = [step.action for step in violation.trace[1:]]
    explorer = Explorer(result.config)
    texts = [explorer.step_text(a) for a in actions]
    downloads = tmp_path / "downloads"
    downloads.mkdir()
    driver = _driver(downloads)
    try:
        from selenium.webdriver.common.by import By
        from selenium.webdriver.support.ui import WebDriverWait

        wait = WebDriverWait(driver, WAIT)

        def shown(path: str) -> None:
            """Wait until the page shows this path (the server answered and it drew it)."""
            body = driver.find_element(By.TAG_NAME, "body")
            wait.until(lambda _d: body.get_attribute("data-path") == path)

        def banner_shown() -> bool:
            return driver.find_element(By.ID, "banner").is_displayed()

        with serve_cli("--kafka", "0.10.2") as (_proc, url):
            driver.get(url)
            shown("")
            assert driver.current_url == url + "#/steps/"
            assert not banner_shown()
            for k, text in enumerate(texts, start=1):
                button = driver.find_element(By.CSS_SELECTOR, f'button.action[data-step="{text}"]')
                assert button.text == explorer.label(actions[k - 1])
                doc = button.find_element(By.XPATH, "following-sibling::span[@class='doc']")
                assert doc.text  # each action comes with its one-line description
                button.click()
                shown("/".join(texts[:k]))
                assert driver.find_element(By.ID, "count").text == f"{k} step" + (
                    "" if k == 1 else "s"
                )
            full = "/".join(texts)
            assert driver.current_url == url + "#/steps/" + full
            banner = driver.find_element(By.ID, "banner")
            assert banner.is_displayed()
            assert f"{LOSS} is violated: {violation.message}" in banner.text
            row = driver.find_element(By.CSS_SELECTOR, f'#invariants tr[data-invariant="{LOSS}"]')
            assert "violated" in row.get_attribute("class").split()
            # the state as the timeline draws it, with the step's changes outlined
            assert len(driver.find_elements(By.CSS_SELECTOR, "#view tr.lane[data-replica]")) == 2
            assert driver.find_elements(By.CSS_SELECTOR, "#view td.cell.changed")

            # two steps back: the loss has not happened yet
            driver.find_element(By.ID, "back").click()
            shown("/".join(texts[:-1]))
            driver.find_element(By.ID, "back").click()
            shown("/".join(texts[:-2]))
            assert not banner_shown()
            row = driver.find_element(By.CSS_SELECTOR, f'#invariants tr[data-invariant="{LOSS}"]')
            assert "ok" in row.get_attribute("class").split()
            # forward retakes the steps undone; a reload reproduces the state from the address
            driver.find_element(By.ID, "forward").click()
            shown("/".join(texts[:-1]))
            driver.find_element(By.ID, "forward").click()
            shown(full)
            assert not driver.find_element(By.ID, "forward").is_enabled()
            driver.refresh()
            shown(full)
            assert banner_shown()

            # a path that cannot be taken: its error, and no state or actions under it
            driver.get(url + "#/steps/" + texts[0] + "/frobnicate(r0)")
            body = driver.find_element(By.TAG_NAME, "body")
            wait.until(lambda _d: body.get_attribute("data-error"))
            error = driver.find_element(By.ID, "error")
            assert error.text.startswith("path: step 2: unknown action 'frobnicate'")
            assert not banner_shown() and not driver.find_element(By.ID, "actions").is_displayed()
            driver.get(url + "#/steps/" + full)
            shown(full)

            driver.find_element(By.ID, "export-itf").click()
            exported = downloads / "explore.itf.json"
            wait.until(lambda _d: exported.exists() and exported.read_text().endswith("}\n"))
            doc = json.loads(exported.read_text())
            assert doc["#meta"]["invariant"] == LOSS and len(doc["states"]) == len(actions) + 1

            driver.find_element(By.ID, "export-actions").click()
            listed = downloads / "explore.actions.json"
            wait.until(lambda _d: listed.exists() and listed.read_text().endswith("}\n"))
            assert json.loads(listed.read_text())["actions"] == [explorer.label(a) for a in actions]
    finally:
        driver.quit()

    # replay exits 0 when a trace replays exactly and ends in the violation it records
    for path in (exported, listed):
        proc = subprocess.run(
            [sys.executable, "-m", "replcheck", "replay", str(path)],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert proc.returncode == 0, proc.stderr
        assert f"=> {LOSS} violated (first at step {len(actions)}): {violation.message}" in (
            proc.stdout
        )
