"""The CLI's input rules: one bad-dates rule for index and rerank, --dayfirst, lenient counts,
encodings, empty inputs, and optional dependencies checked before the work starts."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from chronorank.cli import main

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples" / "releases"


def _run(args: list[str], capsys: pytest.CaptureFixture[str], stdin: str | None = None,
         monkeypatch: pytest.MonkeyPatch | None = None) -> tuple[int, str, str]:
    if stdin is not None:
        assert monkeypatch is not None
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin.encode("utf-8")), encoding="utf-8"))
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


def _rerank_json(out: str) -> dict:
    return {r["id"]: r for r in json.loads(out)["results"]}


def test_dayfirst_reads_slash_dates_day_first_in_rerank(capsys, monkeypatch) -> None:
    line = '{"id": "a", "score": 0.5, "date": "03/04/2022"}\n'
    _, out, _ = _run(["rerank", "-q", "x", "--now", "2022-05-03", "--json"], capsys, line, monkeypatch)
    assert _rerank_json(out)["a"]["age_days"] == 60.0  # 4 March -> 3 May
    _, out, _ = _run(["rerank", "-q", "x", "--now", "2022-05-03", "--json", "--dayfirst"], capsys, line, monkeypatch)
    assert _rerank_json(out)["a"]["age_days"] == 30.0  # 3 April -> 3 May


def test_dayfirst_reads_slash_dates_day_first_in_index(tmp_path, capsys) -> None:
    corpus = tmp_path / "c.jsonl"
    corpus.write_text('{"id": "a", "text": "tern backup notes", "date": "03/04/2022"}\n', encoding="utf-8")
    for flags, day in (([], "2022-03-04"), (["--dayfirst"], "2022-04-03")):
        assert _run(["index", str(corpus), "--out", str(tmp_path / "i"), "--embedder", "none", *flags], capsys)[0] == 0
        code, out, _ = _run(["search", str(tmp_path / "i"), "tern backup", "--now", "2023-01-01", "--json"], capsys)
        assert code == 0 and json.loads(out)["hits"][0]["date"].startswith(day)


def test_one_bad_dates_rule_for_index_and_rerank(tmp_path, capsys, monkeypatch) -> None:
    rows = '{"id": "a", "text": "t", "score": 0.5, "date": "nope"}\n{"id": "b", "text": "u", "score": 0.4, "date": "2024-01-01"}\n'
    corpus = tmp_path / "c.jsonl"
    corpus.write_text(rows, encoding="utf-8")
    code_i, _, err_i = _run(["index", str(corpus), "--out", str(tmp_path / "i"), "--embedder", "none"], capsys)
    code_r, _, err_r = _run(["rerank", "-q", "x", "-i", str(corpus)], capsys)
    assert code_i == code_r == 2
    for err in (err_i, err_r):
        assert 'line 1 (id \'a\'): date "nope" is not a date' in err and "--bad-dates missing" in err
        assert "bad_dates=" not in err
    code_i, _, err_i = _run(["index", str(corpus), "--out", str(tmp_path / "i"), "--embedder", "none",
                             "--bad-dates", "missing"], capsys)
    code_r, out_r, err_r = _run(["rerank", "-q", "x", "-i", str(corpus), "--bad-dates", "missing", "--json"], capsys)
    assert code_i == code_r == 0
    assert "1 date(s) unreadable" in err_i and "1 date(s) unreadable" in err_r
    assert _rerank_json(out_r)["a"]["date"] is None and _rerank_json(out_r)["b"]["date"] is not None


def test_bom_and_json_array_corpora_index_like_plain_lines(tmp_path, capsys) -> None:
    plain = (EXAMPLES / "corpus.jsonl").read_bytes()
    docs = [json.loads(x) for x in plain.decode().splitlines() if x.strip()]
    variants = {"plain.jsonl": plain, "bom.jsonl": b"\xef\xbb\xbf" + plain, "array.json": json.dumps(docs).encode()}
    results = []
    for name, data in variants.items():
        (tmp_path / name).write_bytes(data)
        out_dir = tmp_path / (name + ".idx")
        assert _run(["index", str(tmp_path / name), "--out", str(out_dir), "--embedder", "none"], capsys)[0] == 0
        code, out, _ = _run(["search", str(out_dir), "team plan price", "--now", "2026-08-01", "--json"], capsys)
        results.append([h["id"] for h in json.loads(out)["hits"]])
    assert results[0] == results[1] == results[2] and results[0][0] == "plans-2026"


def test_empty_inputs_exit_3(tmp_path, capsys, monkeypatch) -> None:
    (tmp_path / "c.jsonl").write_text("\n\n", encoding="utf-8")
    code, _, err = _run(["index", str(tmp_path / "c.jsonl"), "--out", str(tmp_path / "i")], capsys)
    assert code == 3 and "holds no documents" in err and not (tmp_path / "i").exists()
    code, _, err = _run(["rerank", "-q", "x"], capsys, "", monkeypatch)
    assert code == 3 and "no candidates" in err


def test_plots_need_matplotlib_before_the_run(capsys, monkeypatch) -> None:
    import chronorank.eval.benchmark as bench

    def must_not_run(*a, **k):  # the check must stop the command before the benchmark
        raise AssertionError("the benchmark ran although --plots cannot be written")

    monkeypatch.setattr(bench, "run_benchmark", must_not_run)
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # importing it now raises ImportError
    code, _, err = _run(["benchmark", "--suite", str(EXAMPLES), "--plots", "p"], capsys)
    assert code == 2 and 'pip install "chronorank[plot]"' in err


def test_missing_peer_is_noted(capsys, monkeypatch) -> None:
    import chronorank.eval.peer as peer

    monkeypatch.setattr(peer, "peer_available", lambda: False)
    code, out, err = _run(["benchmark", "--suite", str(EXAMPLES), "--no-index"], capsys)
    assert code == 0 and "tdw-rag" not in out
    assert "no peer rows" in err and "chronorank[bench]" in err


def test_fit_reports_ties_and_the_rule(capsys) -> None:
    code, out, _ = _run(["fit", "--data", str(EXAMPLES), "--top", "3"], capsys)
    assert code == 0
    assert "configurations tie at the best score" in out and "gentlest" in out
