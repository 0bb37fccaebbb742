"""Headless Chromium for the page tests (Selenium + Debian's chromium-driver)."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "index.html"
ARTIFACTS = ROOT / "test-artifacts"
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)


def _binary(*names: str) -> str | None:
    for name in names:
        found = shutil.which(name)
        if found:
            return found
    return None


CHROMIUM = os.environ.get("CHRONORANK_CHROMIUM") or _binary("chromium", "chromium-browser", "google-chrome")
CHROMEDRIVER = os.environ.get("CHRONORANK_CHROMEDRIVER") or _binary("chromedriver")


def make_driver(width: int = 1360, height: int = 1500) -> Any:
    """A fresh headless Chromium, or skip when chromium, its driver or selenium is absent."""
    if CHROMIUM is None or CHROMEDRIVER is None:
        pytest.skip("headless chromium + chromedriver not installed (apt-get install chromium chromium-driver)")
    webdriver = pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="chronorank-chromium-")
    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for flag in CHROMIUM_FLAGS:
        opts.add_argument(flag)
    opts.add_argument(f"--user-data-dir={profile}")
    opts.add_argument(f"--window-size={width},{height}")
    opts.add_argument("--hide-scrollbars")
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=opts)
    driver._chronorank_profile = profile  # removed in close_driver
    return driver


def close_driver(driver: Any) -> None:
    profile = getattr(driver, "_chronorank_profile", None)
    try:
        driver.quit()
    finally:
        if profile:
            shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture(scope="session")
def browser_factory() -> Iterator[Any]:
    """``make()`` returns a fresh headless Chromium; all are closed at the end."""
    made: list[Any] = []

    def make(width: int = 1360, height: int = 1500) -> Any:
        driver = make_driver(width, height)
        made.append(driver)
        return driver

    yield make
    for driver in made:
        close_driver(driver)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    driver = make_driver()
    try:
        yield driver
    finally:
        close_driver(driver)


@pytest.fixture(scope="module")
def page(browser: Any) -> Any:
    """The page loaded from disk (file://), with window.chronorank ready."""
    browser.get(PAGE.as_uri())
    browser.execute_script("return window.chronorank.version")
    return browser
