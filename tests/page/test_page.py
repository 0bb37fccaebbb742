"""docs/index.html: offline, fast, and numerically the same as the Python library.

The browser tests drive the page in headless Chromium and compare every kernel, every
combine strategy and the whole temporal layer with chronorank's Python implementation
to 1e-9.
"""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "index.html"
ARTIFACTS = ROOT / "test-artifacts"

TOL = 1e-9
DAY = 86400.0

# kernel -> parameter sets (the page's spec dicts, without "name")
KERNEL_CASES: dict[str, list[dict[str, Any]]] = {
    "exponential": [{"half_life_days": 30}, {"half_life_days": 180, "floor": 0.1}, {"half_life_days": 7, "floor": 0.6}],
    "weibull": [{"half_life_days": 90, "shape": 2}, {"half_life_days": 365, "shape": 0.5, "floor": 0.2}, {"half_life_days": 30, "shape": 4.5}],
    "power_law": [{"half_life_days": 180, "beta": 1}, {"half_life_days": 60, "beta": 0.3, "floor": 0.05}, {"half_life_days": 400, "beta": 3.5}],
    "delayed_peak": [{"half_life_days": 60, "peak_days": 7}, {"half_life_days": 120, "peak_days": 30, "shape": 0.5, "floor": 0.1}, {"half_life_days": 20, "peak_days": 0}],
    "cliff": [{"half_life_days": 90, "steepness": 12}, {"half_life_days": 365, "steepness": 2, "floor": 0.3}, {"half_life_days": 30, "steepness": 40}],
    "linear": [{"zero_at": 360}, {"zero_at": 90, "floor": 0.25}],
    "gaussian": [{"half_life_days": 90}, {"half_life_days": 500, "floor": 0.45}],
    "piecewise": [{"points": [[0, 1], [90, 0.9], [180, 0.5], [365, 0.2], [730, 0.05]]}, {"points": [[0, 1], [30, 0.2]], "floor": 0.1}, {"points": [[0, 1], [30, 1], [180, 0.3]], "after": 0.1}],
    "constant": [{}, {"floor": 0.2}],
}
AGES = [0.0, 0.5, 1.0, 6.9, 7.0, 29.99, 30.0, 45.0, 90.0, 179.5, 180.0, 365.25, 1000.0, 4000.0, 20000.0, -3.0]

SIMILARITY_CASES = [
    [0.84, 0.82, 0.79, 0.5, 0.5, 0.1, 0.0],
    [0.31, 0.31, 0.31],
    [-0.2, 0.4, 0.9, 0.05],
]
DECAY_CASES = [
    [0.05, 0.3, 0.99, 0.5, 0.5, 1.0, 0.0],
    [0.2, 0.9, 0.2],
    [1.0, 0.0, 0.3, 0.3],
]

# (partial page state) for the end-to-end comparisons of the temporal layer
STATE_CASES: list[dict[str, Any]] = [
    {},
    {"kernel": "power_law", "beta": 0.7, "half_life_days": 90, "combine": "multiply", "strength": 0.6},
    {"kernel": "weibull", "shape": 3, "combine": "linear", "versions": False, "missing": "penalise"},
    {"kernel": "cliff", "steepness": 14, "half_life_days": 365, "combine": "rrf", "strength": 0.8, "missing": "keep"},
    {"kernel": "gaussian", "floor": 0.2, "as_of": "2022-06-01", "future": "not_yet_valid", "not_yet_valid": "zero"},
    {"kernel": "delayed_peak", "peak_days": 30, "as_of": "2024-01-15", "future": "symmetric", "missing": "drop"},
    {"kernel": "linear", "half_life_days": 400, "combine": "gated_multiply", "strength": 0.25},
    {"kernel": "piecewise", "combine": "multiply", "query": "pro plan price as of March 2022"},
    {"kernel": "exponential", "query": "what did the pro plan cost in 2023", "combine": "linear"},
    {"docset": "releases", "query": "what changed in the latest release of flask"},
    {"docset": "releases", "kernel": "cliff", "combine": "multiply", "strength": 0.5, "query": "what changed in requests in 2024"},
    {"docset": "releases", "kernel": "weibull", "combine": "rrf", "query": "what changed in pytest 8.3.0"},
    {"docset": "releases", "kernel": "power_law", "as_of": "2023-03-01", "query": "flask release notes", "versions": False},
    {"docset": "releases", "kernel": "exponential", "use_intent": False, "query": "explain how fixtures work"},
    # timeless: time is off, but a version its chain ended ranks below the one that replaced it
    {"docset": "releases", "query": "explain how fixtures work in pytest"},
    # the day after the as-of date holds a release (2.34.2, 14 May): not yet valid on the 13th
    {"docset": "releases", "query": "what was the newest requests release as of May 13, 2026"},
]

INTENT_QUERIES = [
    "what does the pro plan cost right now",
    "pro plan price as of March 2022",
    "what did the pro plan cost in 2023",
    "what changed in the latest release of flask",
    "what changed in requests in 2024",
    "what changed in pytest 8.3.0",
    "explain how cosine similarity works",
    "flask release notes from last year",
    "what was the newest pytest release as of June 3, 2025",
    "requests changes between 2022 and 2024",
    "what is new in flask this month",
    "history of the requests library",
    "pro plan price",
    "how to install flask",
    "What's new in pytest?",
    "flask changes in the year of 2021",
    "most recent jinja before July 4 2017",
    "latest flask in 2019",
    "newest click this year",
]


def _nan_list(values: Any) -> list[float]:
    return [math.nan if v is None else float(v) for v in values]


def _close(js: list[float], py: np.ndarray, what: str) -> float:
    a = np.asarray(_nan_list(js), dtype=np.float64)
    b = np.asarray(py, dtype=np.float64)
    assert a.shape == b.shape, f"{what}: shapes differ {a.shape} vs {b.shape}"
    nan_a, nan_b = np.isnan(a), np.isnan(b)
    assert (nan_a == nan_b).all(), f"{what}: NaN pattern differs: js={a} py={b}"
    if (~nan_a).any():
        diff = float(np.max(np.abs(a[~nan_a] - b[~nan_a])))
        assert diff <= TOL, f"{what}: max |js - py| = {diff:.3g} > {TOL}: js={a} py={b}"
        return diff
    return 0.0


def _py_kernel(name: str, params: dict[str, Any]) -> Any:
    from chronorank.kernels import get_kernel

    p = dict(params)
    if "points" in p:
        p["points"] = [tuple(pt) for pt in p["points"]]
    return get_kernel(name, **p)


# ---------------------------------------------------------------- no browser needed


def test_embedded_data_is_current() -> None:
    """The page embeds the intent language files and the pricing set as they are now."""
    proc = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "build_page.py"), "--check"],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_page_is_self_contained() -> None:
    html = PAGE.read_text(encoding="utf-8")
    csp = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]+)"', html)
    assert csp is not None, "the page must carry a CSP meta tag"
    policy = csp.group(1)
    assert "default-src 'none'" in policy
    assert "connect-src" not in policy, "the page must not be allowed to fetch anything"
    # no external resources of any kind
    assert not re.search(r'\s(?:src|href)\s*=\s*["\']?(?:https?:)?//', html, re.I)
    assert not re.search(r"<link\b", html, re.I)
    assert not re.search(r"<script\b[^>]*\bsrc=", html, re.I)
    assert not re.search(r"\b(?:fetch|XMLHttpRequest|WebSocket|EventSource|importScripts)\s*\(", html)
    assert not re.search(r"@import|url\(\s*['\"]?https?:", html)
    data = json.loads(re.search(r'id="cr-data">(.*?)</script>', html, re.S).group(1))  # type: ignore[union-attr]
    assert len(data["pricing"]) >= 4 and len(data["releases"]) >= 20
    for doc in data["releases"]:
        assert doc["licence"] in {"MIT", "BSD-2-Clause", "BSD-3-Clause", "Apache-2.0"}


# ---------------------------------------------------------------- browser


@pytest.mark.browser
def test_loads_offline_and_renders(page: Any) -> None:
    # how fast it loads is measured by benchmarks/page_load.py, not asserted here
    timing = page.execute_script(
        "var n = performance.getEntriesByType('navigation')[0];"
        "return {load: n.loadEventEnd - n.startTime, dom: n.domContentLoadedEventEnd - n.startTime};"
    )
    assert timing["load"] > 0, "the load event never fired"
    resources = page.execute_script(
        "return performance.getEntriesByType('resource').map(function (r) { return r.name; })"
    )
    external = [r for r in resources if not r.startswith(("file:", "data:"))]
    assert external == [], f"the page requested {external}"
    csp = page.execute_script(
        "var m = document.querySelector('meta[http-equiv=\"Content-Security-Policy\"]');"
        "return m && m.content;"
    )
    assert csp and "default-src 'none'" in csp
    errors = [e for e in page.get_log("browser") if e.get("level") == "SEVERE"]
    assert errors == [], errors
    rows = page.find_elements("css selector", "#ranking tbody tr")
    assert len(rows) >= 4
    assert page.find_elements("css selector", "#curve path.kern")
    ARTIFACTS.mkdir(exist_ok=True)
    page.save_screenshot(str(ARTIFACTS / "page.png"))
    if os.environ.get("CHRONORANK_UPDATE_SCREENSHOTS") == "1":  # the README's picture: never by hand, on request
        page.save_screenshot(str(ROOT / "docs" / "screenshots" / "page.png"))
    (ARTIFACTS / "page-timing.json").write_text(json.dumps(timing))


@pytest.mark.browser
@pytest.mark.parametrize("kernel", sorted(KERNEL_CASES))
def test_kernels_match_python(page: Any, kernel: str) -> None:
    ages = AGES + [math.nan]
    for params in KERNEL_CASES[kernel]:
        spec = {"name": kernel, **params}
        js = page.execute_script(
            "var a = arguments[1].map(function (x) { return x === null ? NaN : x; });"
            "return window.chronorank.kernelWeights(arguments[0], a);",
            spec,
            [None if math.isnan(a) else a for a in ages],
        )
        py = _py_kernel(kernel, params)(np.array(ages))
        _close(js, py, f"{kernel}{params}")


@pytest.mark.browser
def test_combine_matches_python(page: Any) -> None:
    from chronorank.fusion import combine

    for sim, decay in zip(SIMILARITY_CASES, DECAY_CASES):
        for strategy in ("gated_multiply", "multiply", "linear", "rrf"):
            for strength in (0.0, 0.25, 0.5, 0.9, 1.0):
                js = page.execute_script(
                    "return window.chronorank.combine(arguments[0], arguments[1], arguments[2], arguments[3]);",
                    sim, decay, strategy, strength,
                )
                py = combine(np.array(sim), np.array(decay), strategy, strength)
                _close(js, py, f"{strategy} s={strength} sim={sim}")


def _py_intent(js_intent: dict[str, Any]) -> Any:
    from chronorank.types import Intent, Interval

    target = js_intent.get("target")
    interval = None
    if target is not None:
        start = -math.inf if target["start"] is None else target["start"]
        end = math.inf if target["end"] is None else target["end"]
        interval = Interval(float(start), float(end))
    return Intent(
        query=js_intent["query"],
        time_sensitivity=float(js_intent["time_sensitivity"]),
        mode=js_intent["mode"],
        target=interval,
        topical_query=js_intent["topical_query"],
    )


def _py_config(cfg: dict[str, Any]) -> Any:
    from chronorank.temporal import TemporalConfig

    spec = dict(cfg["kernel"])
    name = spec.pop("name")
    return TemporalConfig(
        kernel=_py_kernel(name, spec),
        strength=cfg["strength"],
        combine=cfg["combine"],
        missing_date=cfg["missing_date"],
        future=cfg["future"],
        not_yet_valid=cfg["not_yet_valid"],
        expired_factor=cfg["expired_factor"],
    )


@pytest.mark.browser
@pytest.mark.parametrize("case", range(len(STATE_CASES)))
def test_rankings_match_python(page: Any, case: int) -> None:
    """Scores, decay weights, ages and the order: the page against chronorank.temporal."""
    from chronorank.temporal import apply_temporal
    from chronorank.types import best_first

    res = page.execute_script("return window.chronorank.rank(arguments[0]);", STATE_CASES[case])
    times = np.array(_nan_list(res["times"]))
    groups = None if res["groups"] is None else np.array(res["groups"], dtype=np.int64)
    py = apply_temporal(
        np.array(res["similarity"]),
        times,
        intent=_py_intent(res["intent"]),
        now=float(res["now"]),
        config=_py_config(res["config"]),
        groups=groups,
        ids=res["ids"],
    )
    by_id = {r["id"]: r for r in res["rows"] + res["excluded"]}
    order = [res["ids"].index(r["id"]) for r in res["rows"]]
    ids = res["ids"]
    _close([by_id[i]["score"] for i in ids if i in {r["id"] for r in res["rows"]}], py.score[py.keep], "score")
    _close([by_id[i]["decay"] for i in ids], py.decay, "decay")
    _close([by_id[i]["age_days"] for i in ids], py.age_days, "age_days")
    assert [i in {r["id"] for r in res["rows"]} for i in ids] == py.keep.tolist()
    assert math.isclose(res["effective_strength"], py.effective_strength, abs_tol=TOL)
    kept = np.flatnonzero(py.keep)
    py_order = best_first(py.score, kept, times, ids).tolist()  # equal scores by TIE_RULE, as every engine
    assert order == py_order, f"order differs: js={[ids[i] for i in order]} py={[ids[i] for i in py_order]}"


@pytest.mark.browser
def test_intent_matches_python(page: Any) -> None:
    intent_mod = pytest.importorskip("chronorank.intent")
    now_iso = "2026-08-20"
    now = 1787184000.0  # 2026-08-20T00:00:00Z
    for query in INTENT_QUERIES:
        js = page.execute_script("return window.chronorank.parseIntent(arguments[0], arguments[1]);", query, now)
        py = intent_mod.parse(query, now=now_iso)
        assert js["mode"] == py.mode, (query, js, py)
        assert abs(js["time_sensitivity"] - py.time_sensitivity) <= TOL, (query, js, py)
        assert js["topical_query"] == py.topical_query, (query, js, py)
        if py.target is None:
            assert js["target"] is None, (query, js, py)
        else:
            got = [math.inf * (-1 if k == "start" else 1) if js["target"][k] is None else js["target"][k] for k in ("start", "end")]
            assert got == [py.target.start, py.target.end], (query, js, py)


@pytest.mark.browser
def test_controls_reorder_the_ranking(page: Any) -> None:
    """Moving the real controls changes what the table shows."""
    from selenium.webdriver.support.ui import Select

    page.execute_script("window.chronorank.setState(window.chronorank.defaults());")
    first = page.find_element("css selector", "#ranking tbody tr td.doc b").text
    assert first == "Pricing guide (2026)"
    # no time pressure: similarity alone puts the canonical 2021 page first
    page.execute_script(
        "var s = document.getElementById('strength'); s.value = 0; s.dispatchEvent(new Event('input'));"
    )
    assert page.find_element("css selector", "#ranking tbody tr td.doc b").text == "Pricing guide (2021)"
    assert page.execute_script("return window.chronorank.getState().strength") == 0
    page.execute_script(
        "var s = document.getElementById('strength'); s.value = 1; s.dispatchEvent(new Event('input'));"
    )
    Select(page.find_element("id", "kernel")).select_by_visible_text("cliff")
    assert page.execute_script("return window.chronorank.getState().kernel") == "cliff"
    page.execute_script(
        "var d = document.getElementById('asof'); d.value = '2022-01-01'; d.dispatchEvent(new Event('change'));"
    )
    res = page.execute_script("return window.chronorank.lastResult();")
    assert res["now"] == 1640995200.0
    box = page.find_element("id", "query")
    box.clear()
    box.send_keys("what did the pro plan cost in 2023")
    chips = page.find_element("id", "intent").text
    assert "range" in chips and "2023-01-01" in chips
    page.execute_script("window.chronorank.setState(window.chronorank.defaults());")


@pytest.mark.browser
def test_as_of_a_day_is_half_open_on_the_page(page: Any) -> None:
    res = page.execute_script("return window.chronorank.rank(arguments[0]);", STATE_CASES[-1])
    by_id = {r["id"]: r for r in res["rows"] + res["excluded"]}
    assert by_id["requests@2.34.2"]["decay"] == 0.0  # dated 14 May, the as-of day is 13 May
    assert by_id["requests@2.34.1"]["decay"] > 0.0
