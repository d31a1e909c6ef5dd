"""The review page in a real browser (Debian's Chromium, driven by selenium): a correction of
one page of the fixture news site, made by clicking its box, cleans the site's next page.

The server is `noisecbr serve` itself, started on a free loopback port and stopped by the test.
Set NOISECBR_REVIEW_SCREENSHOT=PATH to save a screenshot of the review page there (how
docs/review.png is made).
"""

from __future__ import annotations

import gzip
import json
import os
import urllib.request
from pathlib import Path

import pytest
from chromiumhelpers import headless_chromium, skip_without_chromium
from conftest import serving

pytest.importorskip("fastapi", reason="the serve extra is not installed")
webdriver = pytest.importorskip("selenium.webdriver", reason="selenium (dev extra) is missing")

from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions
from selenium.webdriver.support.ui import WebDriverWait

FIXTURE = Path(__file__).parent / "fixtures" / "casebase"
TRUTH = json.loads((FIXTURE / "ground-truth.json").read_text())
TOKEN = "browser-test-token"
BYLINE = "/html/body/main/div/div"  # "Posted in tips": kept by the flawed model on both pages
#: Seconds to wait for the server to answer, and for the page to show a result.
START_WAIT, PAGE_WAIT = 60, 30

skip_without_chromium()



@pytest.fixture
def server(tmp_path, flawed_model):
    """`noisecbr serve` on an empty case base, on a free loopback port."""
    with serving(tmp_path / "serve.log", "--db", str(tmp_path / "cb.sqlite"), "--token", TOKEN,
                 "--log-level", "warning", "--model", flawed_model,
                 ready=lambda health: health["casebase"] == "ok", wait=START_WAIT) as base:
        yield base


@pytest.fixture
def browser(tmp_path):
    with headless_chromium(tmp_path / "chromium-profile", PAGE_WAIT) as driver:
        yield driver


def _review(driver, tmp_path: Path, name: str) -> None:
    """Choose the fixture page ``name`` with its URL and press Review; wait for the answer."""
    page = tmp_path / f"{name}.html"
    page.write_bytes(gzip.decompress((FIXTURE / "html" / f"{name}.html.gz").read_bytes()))
    url = driver.find_element(By.ID, "url")
    url.clear()
    url.send_keys(TRUTH[name]["url"])
    driver.find_element(By.ID, "file").send_keys(str(page))
    before = driver.find_element(By.ID, "status").text
    driver.find_element(By.ID, "go").click()
    WebDriverWait(driver, PAGE_WAIT).until(
        lambda d: d.find_element(By.ID, "status").text not in (before, "Cleaning…"))
    assert "decided subtrees" in driver.find_element(By.ID, "status").text


def _label_box(driver, css: str, label: str, edge: int) -> str:
    """Click the box ``css`` in the drawn page (``edge`` -1: near its left edge, 0: its
    centre), then the button ``label``; wait for the answer. Returns what the panel said of
    the box's case before the click on the label."""
    driver.switch_to.frame("frame")
    box = driver.find_element(By.CSS_SELECTOR, css)
    offset = edge * (box.size["width"] // 2 - 3)
    ActionChains(driver).move_to_element_with_offset(box, offset, 0).click().perform()
    driver.switch_to.default_content()
    WebDriverWait(driver, PAGE_WAIT).until(
        expected_conditions.visibility_of_element_located((By.ID, "selected")))
    path = driver.find_element(By.ID, "sel-path").text.split()[0]
    assert driver.execute_script("return document.querySelector('#decisions li.active code')"
                                 ".textContent") == path
    before = driver.find_element(By.ID, "sel-stored").text
    driver.find_element(By.CSS_SELECTOR, f"#sel-actions button[data-label={label}]").click()
    WebDriverWait(driver, PAGE_WAIT).until(
        lambda d: f"labelled {label}" in d.find_element(By.ID, "status").text
        and path in d.find_element(By.ID, "sel-path").text)
    return before


def _decisions(driver) -> dict[str, str]:
    rows = driver.find_elements(By.CSS_SELECTOR, "#decisions li")
    return {row.find_element(By.TAG_NAME, "code").text: row.text for row in rows}


def test_a_box_labelled_noise_in_the_review_page_is_removed_from_the_sites_next_page(
        server, browser, tmp_path):
    browser.get(f"{server}/review#token={TOKEN}")
    assert browser.find_element(By.ID, "token").get_attribute("value") == TOKEN
    _review(browser, tmp_path, "news-1")
    decisions = _decisions(browser)
    assert decisions[BYLINE].split()[1] != "noise" and "site memory" not in decisions[BYLINE]
    kept = browser.execute_script("return document.getElementById('text').textContent")
    assert "Posted in" in kept  # the model alone keeps the byline

    # The boxes are drawn: every decided subtree outlined in its class colour.
    browser.switch_to.frame("frame")
    boxes = browser.find_elements(By.CSS_SELECTOR, "[data-ncbr]")
    assert len(boxes) == len(decisions)
    colour = {box.get_attribute("data-ncbr-label"): box.value_of_css_property("outline-color")
              for box in boxes}
    assert colour["noise"] == "rgba(211, 47, 47, 1)" and colour["data"] == "rgba(46, 125, 50, 1)"
    assert colour["mixture"] == "rgba(249, 168, 37, 1)"
    assert browser.execute_script("return document.scripts.length") == 0
    browser.switch_to.default_content()

    # Click the byline's box (its left edge: the centre is the link inside it) and label it.
    # First by mistake "data" (the page is stored with that label), then the title "data" (a
    # new case of the stored page), then the byline "noise" (its case relabelled).
    assert "Not in the case base yet" in _label_box(browser, "div.byline", "data", -1)
    assert "Stored as case" in browser.find_element(By.ID, "sel-stored").text
    _label_box(browser, "article h1", "data", 0)
    assert "Stored as case" in _label_box(browser, "div.byline", "noise", -1)
    browser.switch_to.frame("frame")
    assert browser.find_element(By.CSS_SELECTOR, "div.byline").get_attribute(
        "data-ncbr-corrected") == "noise"
    browser.switch_to.default_content()
    case_id = int(browser.find_element(By.ID, "sel-stored").text.split()[3].rstrip(":"))
    with urllib.request.urlopen(f"{server}/cases/{case_id}") as answer:
        case = json.load(answer)
    assert case["path"] == BYLINE and case["label"] == "noise"
    assert [(h["old_label"], h["new_label"]) for h in case["history"]] == [("data", "noise")]

    # The site's next page: the site memory decides the byline, and it is removed.
    _review(browser, tmp_path, "news-2")
    decisions = _decisions(browser)
    assert decisions[BYLINE].split()[1] == "noise" and "site memory" in decisions[BYLINE]
    assert "1 labelled page" in browser.find_element(By.ID, "status").text
    kept = browser.execute_script("return document.getElementById('text').textContent")
    assert "The Victorian market hall" in kept and "Posted in" not in kept
    browser.switch_to.frame("frame")
    assert browser.find_element(By.CSS_SELECTOR, "div.byline").get_attribute(
        "data-ncbr-label") == "noise"
    browser.switch_to.default_content()
    _save_screenshot(browser)


def _save_screenshot(browser) -> None:
    """With NOISECBR_REVIEW_SCREENSHOT set: the next page with the corrected box selected."""
    target = os.environ.get("NOISECBR_REVIEW_SCREENSHOT")
    if not target:
        return
    rows = browser.find_elements(By.CSS_SELECTOR, "#decisions li")
    next(row for row in rows if row.find_element(By.TAG_NAME, "code").text == BYLINE).click()
    browser.save_screenshot(target)


def test_the_api_docs_render_in_a_browser_without_a_cdn(server, browser):
    """/docs draws Swagger UI from files the package serves (Chromium here has no network
    beyond loopback: a CDN script would leave the page blank). Set
    NOISECBR_DOCS_SCREENSHOT=PATH to save it (docs/service-docs.png)."""
    browser.get(f"{server}/docs")
    title = WebDriverWait(browser, PAGE_WAIT).until(
        expected_conditions.visibility_of_element_located(
            (By.CSS_SELECTOR, ".swagger-ui .info .title")))
    assert title.text.startswith("noisecbr")
    operations = browser.find_elements(By.CSS_SELECTOR, ".opblock-summary-path")
    assert "/clean" in {op.text.strip() for op in operations}
    requested = browser.execute_script(
        "return performance.getEntriesByType('resource').map(e => e.name)")
    assert requested and all(url.startswith(server) for url in requested), requested
    target = os.environ.get("NOISECBR_DOCS_SCREENSHOT")
    if target:
        browser.save_screenshot(target)


def test_a_queue_entry_selects_its_box_and_a_label_takes_it_off_the_queue(
        server, browser, tmp_path):
    browser.get(f"{server}/review#token={TOKEN}")
    _review(browser, tmp_path, "news-1")
    entries = browser.find_elements(By.CSS_SELECTOR, "#queue li")
    assert 0 < len(entries) <= 10 and browser.find_element(By.ID, "queue-panel").is_displayed()
    first = entries[0]
    path, index = first.find_element(By.TAG_NAME, "code").text, first.get_attribute("data-index")
    assert path in _decisions(browser)
    first.click()
    WebDriverWait(browser, PAGE_WAIT).until(
        expected_conditions.visibility_of_element_located((By.ID, "selected")))
    # Selected as a click on its box selects it: the panel, the decision list, the frame.
    assert browser.find_element(By.ID, "sel-path").text.split()[0] == path
    assert "active" in first.get_attribute("class")
    assert browser.execute_script("return document.querySelector('#decisions li.active code')"
                                  ".textContent") == path
    browser.switch_to.frame("frame")
    selected = browser.find_element(By.CSS_SELECTOR, ".ncbr-selected")
    assert selected.get_attribute("data-ncbr") == index
    browser.switch_to.default_content()
    # Labelled, the box is stored, and the queue (now the stored page's) no longer lists it.
    browser.find_element(By.CSS_SELECTOR, "#sel-actions button[data-label=noise]").click()
    queued = "return [...document.querySelectorAll('#queue li code')].map(c => c.textContent)"
    WebDriverWait(browser, PAGE_WAIT).until(
        lambda d: "labelled noise" in d.find_element(By.ID, "status").text
        and path not in d.execute_script(queued))
