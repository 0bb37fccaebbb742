"""A third language from a data file, fuzzing, the CLI and the import hygiene."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chronorank.intent import (
    LANG_PATH_ENV,
    available_languages,
    detect_language,
    parse,
    reload_languages,
)
from chronorank.types import MODES

TOY = {
    "code": "xx",
    "name": "Toy",
    "detect": {"letters": "a-z", "stopwords": ["zork", "blip", "quux"]},
    "months": {"primo": 1, "secundo": 2, "terzo": 3},
    "units": {"wek": "week", "yar": "year"},
    "relatives": {"preva": -1},
    "prepositions": ["im"],
    "when": [{"unit": "year", "re": "{year}", "bare": False},
             {"unit": "month", "re": "{month} {year}", "bare": True}],
    "patterns": [{"kind": "range", "re": "im {when}"}, {"kind": "relative", "re": "{rel} {unit}"}],
    "lexicon": {"recent": ["novissimo"], "timeless": ["splain"]},
}


@pytest.fixture
def toy_language(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    (tmp_path / "xx.json").write_text(json.dumps(TOY))
    monkeypatch.setenv(LANG_PATH_ENV, str(tmp_path))
    reload_languages()
    yield
    monkeypatch.delenv(LANG_PATH_ENV)
    reload_languages()


def test_third_language_is_a_data_file(toy_language: None) -> None:
    assert "xx" in available_languages()
    assert detect_language("zork blip novissimo quux") == "xx"
    it = parse("zork novissimo blip", now="2026-08-20", lang="xx")
    assert it.mode == "recent" and it.topical_query == "zork blip"
    it = parse("zork blip im terzo 2024", now="2026-08-20")
    assert it.lang == "xx" and it.mode == "range"
    assert it.target.start_dt.isoformat()[:10] == "2024-03-01"
    assert it.target.end_dt.isoformat()[:10] == "2024-04-01"
    it = parse("zork preva wek", now="2026-08-20", lang="xx")
    assert it.target.start_dt.isoformat()[:10] == "2026-08-10"
    assert parse("zork splain quux", lang="xx").mode == "timeless"


def test_builtin_languages_unaffected_after_toy(toy_language: None) -> None:
    assert parse("latest release of polars").lang == "en"


def _check(it, query: str) -> None:
    assert it.mode in MODES
    assert 0.0 <= it.time_sensitivity <= 1.0
    assert isinstance(it.topical_query, str)
    for s in it.spans:
        assert query[s.start:s.end] == s.text


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=200), st.sampled_from([None, "en", "ru"]))
def test_fuzz_random_unicode_never_raises(query: str, lang: str | None) -> None:
    _check(parse(query, now=1_786_000_000.0, lang=lang), query)


_PIECES = ["in", "on", "as of", "since", "before", "between", "and", "to", "last", "past", "ago", "the",
           "February", "30", "31", "0", "99999", "2024", "1999", "-", "Q5", "Q3", "q", "9999", "29", "/",
           "2024-02-30", "13/45/2020", "в", "на", "марта", "году", "за", "прошлую", "неделю", "назад",
           "first half of", "weeks", "years", "months", "'s", "2.3.1", "v1", "latest", "1e9", "  "]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=14), st.floats(min_value=-5e10, max_value=2.5e11))
def test_fuzz_adversarial_dates_never_raise(words: list[str], now: float) -> None:
    query = " ".join(words)
    _check(parse(query, now=now), query)


@pytest.mark.parametrize("filler", ["a", " ", "in 2024 ", "9", "last week ", "на 1 марта ", "(" * 3])
def test_megabyte_queries_parse(filler: str) -> None:
    # parse speed on a ~1 MB query is measured by benchmarks/intent_speed.py, not asserted here
    query = filler * (1_000_000 // len(filler))
    it = parse(query, now=1_786_000_000.0)
    assert it.mode in MODES


def test_cli_intent_json() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "chronorank", "intent", "inflation in March 2025", "--now", "2026-08-20", "--json"],
        capture_output=True, text=True, check=True,
    ).stdout
    data = json.loads(out)
    assert data["mode"] == "range"
    assert data["target"] == {"start": "2025-03-01T00:00:00Z", "end": "2025-04-01T00:00:00Z"}
    assert data["topical_query"] == "inflation"


def test_cli_intent_text_and_bad_now() -> None:
    ok = subprocess.run([sys.executable, "-m", "chronorank", "intent", "latest news", "--now", "2026-08-20"],
                        capture_output=True, text=True)
    assert ok.returncode == 0 and "mode:        recent" in ok.stdout
    bad = subprocess.run([sys.executable, "-m", "chronorank", "intent", "x", "--now", "garbage"],
                         capture_output=True, text=True)
    assert bad.returncode == 2 and "error" in bad.stderr


def test_import_loads_no_optional_module() -> None:
    code = ("import sys, chronorank.intent as m; m.parse('latest news'); "
            "bad = [k for k in ('bm25s', 'Stemmer', 'onnxruntime', 'tdw_rag', 'hypothesis') if k in sys.modules]; "
            "print(bad)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
