"""Debian's headless Chromium for the browser tests: where it is, and one started as they use
it (its own profile folder, removed afterwards)."""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

CHROMIUM, CHROMEDRIVER = Path("/usr/bin/chromium"), Path("/usr/bin/chromedriver")


def skip_without_chromium() -> None:
    """Skip the calling test module when Chromium or its driver is not installed."""
    if not (CHROMIUM.is_file() and CHROMEDRIVER.is_file()):
        pytest.skip("Chromium and its driver are not installed (apt-get install chromium "
                    "chromium-driver)", allow_module_level=True)


@contextlib.contextmanager
def headless_chromium(profile: Path, page_wait: float, *arguments: str, width: int = 1400,
                      capabilities: Mapping[str, object] | None = None) -> Iterator:
    """A headless Chromium driven by selenium, with the profile folder ``profile``, a page-load
    timeout of ``page_wait`` seconds, any further command-line ``arguments`` and WebDriver
    ``capabilities`` (``{"goog:loggingPrefs": {"performance": "ALL"}}``: the DevTools
    network log)."""
    from selenium import webdriver

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
                     "--disable-background-networking", "--disable-component-update",
                     "--disable-sync", "--disable-dev-shm-usage", f"--window-size={width},900",
                     f"--user-data-dir={profile}", *arguments):
        options.add_argument(argument)
    for name, value in (capabilities or {}).items():
        options.set_capability(name, value)
    driver = webdriver.Chrome(options=options,
                              service=webdriver.ChromeService(str(CHROMEDRIVER)))
    try:
        driver.set_page_load_timeout(page_wait)
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)
