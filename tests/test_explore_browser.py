"""``replcheck explore`` in headless Chromium: the seeds' loss taken button by button.

Skipped, with the reason, where Chromium, ChromeDriver or selenium is missing (as
tests/test_html.py).  Every wait is for an element or an attribute, never a fixed time.

``REPLCHECK_SCREENSHOTS=1`` makes the first test save the page at the seeds' loss as
docs/explore.png (the picture in docs/explore.md and the README); without it the run
writes nothing in the repository.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import replcheck
from replcheck.traces.explore import Explorer
from tests.conftest import chromium
from tests.test_explore import LOSS, serve_cli

ROOT = Path(__file__).resolve().parent.parent
SCREENSHOT = ROOT / "docs" / "explore.png"
EXAMPLES = ROOT / "examples"
WAIT = 60  # seconds an element may take to appear: a bound, not a pause


def test_take_the_seeds_loss_by_hand_and_export_it(tmp_path):
    result = replcheck.check(kafka="0.10.2", invariants=[LOSS], workers=1)
    violation = result.violations[LOSS]
    actions = [step.action for step in violation.trace[1:]]
    explorer = Explorer(result.config)
    texts = [explorer.step_text(a) for a in actions]
    downloads = tmp_path / "downloads"
    downloads.mkdir()
    driver = chromium(1400, downloads)
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
                # on hover, where it leads: its changes, and what it breaks (the last: the loss)
                title = button.get_attribute("title")
                assert title.startswith(doc.text + "\n\nleads to:\n  ")
                breaks = button.get_attribute("data-breaks").split()
                assert (LOSS in breaks) == (k == len(texts))
                if k == len(texts):
                    assert f"breaks: {LOSS}" in title and "breaks" in button.get_attribute("class")
                    warn = button.find_element(By.XPATH, "following-sibling::span[@class='breaks']")
                    assert LOSS in warn.text
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
            if os.environ.get("REPLCHECK_SCREENSHOTS") == "1":
                assert driver.save_screenshot(str(SCREENSHOT))

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


def test_find_and_load_from_the_page(tmp_path):
    """Find loads the shortest loss (as long as check's) into the path; a trace file
    chosen on the page is read there, posted, and its path shown; a file of another
    configuration is refused with its one line."""
    result = replcheck.check(kafka="0.10.2", invariants=[LOSS], workers=1)
    violation = result.violations[LOSS]
    explorer = Explorer(result.config)
    first = explorer.step_text(violation.trace[1].action)
    driver = chromium(1400, tmp_path)
    try:
        from selenium.webdriver.common.by import By
        from selenium.webdriver.support.ui import Select, WebDriverWait

        wait = WebDriverWait(driver, WAIT)
        element = driver.find_element

        def attribute(name: str, value: str) -> None:
            page = driver.find_element(By.TAG_NAME, "body")
            wait.until(lambda _d: page.get_attribute(name) == value)

        with serve_cli("--kafka", "0.10.2") as (_proc, url):
            driver.get(url + "#/steps/" + first)
            attribute("data-path", first)
            Select(element(By.ID, "find-invariant")).select_by_value(LOSS)
            element(By.ID, "find").click()
            attribute("data-find", "violated")
            page = element(By.TAG_NAME, "body")
            wait.until(lambda _d: len(page.get_attribute("data-path").split("/")) > 1)
            found = page.get_attribute("data-path").split("/")
            assert found[0] == first and len(found) == violation.length - 1
            assert element(By.ID, "banner").is_displayed()
            status = element(By.ID, "find-status").text
            assert status.startswith(f"{LOSS}: violated {len(found) - 1} steps from here")
            assert status.endswith(violation.message)
            # a search that finds nothing within its limit says where it stopped
            element(By.ID, "restart").click()
            attribute("data-path", "")
            Select(element(By.ID, "find-invariant")).select_by_value("hw-le-leo")
            limit = element(By.ID, "find-max")
            limit.clear()
            limit.send_keys("50")
            element(By.ID, "find").click()
            attribute("data-find", "stopped")
            assert element(By.ID, "find-status").text == (
                "hw-le-leo: not violated within 50 states (stopped at the limit of 50 states)"
            )

            # load: the examples are of another configuration than this server's
            element(By.ID, "load-file").send_keys(str(EXAMPLES / "seed-data-loss.itf.json"))
            attribute("data-load", "error")
            assert element(By.ID, "load-status").text.startswith(
                "seed-data-loss.itf.json: a trace of mode=hw replicas=2 records=1 "
            )
            assert page.get_attribute("data-path") == ""

        trace = replcheck.replay(EXAMPLES / "data-loss.actions.toml")
        steps = "/".join(Explorer(trace.config).step_text(s.action) for s in trace.steps[1:])
        with serve_cli("--trace", str(EXAMPLES / "seed-data-loss.itf.json")) as (_proc, url):
            driver.get(url + "#/steps/")
            attribute("data-path", "")
            element(By.ID, "load-file").send_keys(str(EXAMPLES / "data-loss.actions.toml"))
            attribute("data-load", "loaded")
            attribute("data-path", steps)
            assert element(By.ID, "load-status").text == "loaded data-loss.actions.toml: 9 steps"
            assert LOSS in element(By.ID, "banner").text
    finally:
        driver.quit()
