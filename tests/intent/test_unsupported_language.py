"""A question in a language without a language file warns and says so in its intent, instead of
ranking as timeless in silence; English and Russian questions never do."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest

from chronorank.cli import main
from chronorank.errors import LanguageWarning
from chronorank.intent import parse

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("query,language", [
    ("die neuesten Versionen von polars", "German"),
    ("polars 最新 版本", "Chinese or Japanese"),
    ("cuál es la última versión de polars", "Spanish"),
])
def test_an_unsupported_language_warns_and_the_intent_names_it(query: str, language: str) -> None:
    with pytest.warns(LanguageWarning, match=language):
        intent = parse(query, now="2026-08-01")
    assert intent.unsupported == language and intent.mode == "timeless"
    assert f"language={language}" in intent.describe()


def test_no_english_or_russian_question_is_flagged() -> None:
    rows = [json.loads(line) for line in (ROOT / "benchmarks/data/intent_queries.jsonl").read_text().splitlines()]
    assert {r["lang"] for r in rows} >= {"en", "ru"} and len(rows) > 500
    with warnings.catch_warnings():
        warnings.simplefilter("error", LanguageWarning)
        flagged = [r["query"] for r in rows if parse(r["query"], now=r["now"]).unsupported]
    assert not flagged


def test_a_named_language_is_not_second_guessed() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error", LanguageWarning)
        assert parse("die neuesten Versionen", now="2026-08-01", lang="en").unsupported is None


def test_the_cli_says_it_in_one_line(capsys) -> None:
    assert main(["intent", "die neuesten Versionen von polars"]) == 0
    out, err = capsys.readouterr()
    assert "seems German" in out
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("chronorank intent: warning:") and "German" in lines[0]
