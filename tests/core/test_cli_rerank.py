import io
import json
import sys
from pathlib import Path

import pytest

from chronorank.cli import main

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "pricing_candidates.jsonl"


def run(argv, stdin_text, monkeypatch, capsys):
    monkeypatch.setattr(sys, "stdin", io.StringIO(stdin_text))
    code = main(argv)
    out = capsys.readouterr()
    return code, out.out, out.err


def test_rerank_table_puts_the_fresh_page_first(monkeypatch, capsys):
    code, out, _ = run(["rerank", "-q", "what does the pro plan cost right now", "--now", "2026-08-01"],
                       EXAMPLE.read_text(), monkeypatch, capsys)
    assert code == 0
    first = out.splitlines()[1].split()
    assert first[0] == "1" and first[-1] == "pricing-2026"


def test_rerank_json_carries_scores_and_intent(monkeypatch, capsys):
    code, out, _ = run(["rerank", "-q", "how much was the pro plan in 2023", "--now", "2026-08-01", "--json",
                        "--kernel", "exponential(half_life_days=90)"], EXAMPLE.read_text(), monkeypatch, capsys)
    assert code == 0
    doc = json.loads(out)
    assert doc["results"][0]["id"] == "pricing-2023"
    assert "mode=range" in doc["intent"]
    assert {"similarity", "decay", "score", "rank_before", "rank_after"} <= set(doc["results"][0])


@pytest.mark.parametrize(
    ("argv", "stdin", "needle"),
    [
        (["rerank", "-q", "x", "--kernel", "zigzag"], '{"id": "a", "score": 1, "date": "2024-01-01"}\n', "zigzag"),
        (["rerank", "-q", "x"], "not json\n", "line 1"),
        (["rerank", "-q", "x", "--gate", "maybe"], '{"id": "a", "score": 1}\n', "--gate"),
    ],
)
def test_rerank_errors_go_to_stderr_with_non_zero_exit(argv, stdin, needle, monkeypatch, capsys):
    code, out, err = run(argv, stdin, monkeypatch, capsys)
    assert code != 0 and out == ""
    assert needle in err
