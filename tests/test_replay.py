"""Replayed reruns of ``chronorank demo`` and ``eval`` (``commands/_replay.py``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from chronorank import _recache
from chronorank.cli import main
from chronorank.commands import _replay

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples" / "releases"


@pytest.fixture()
def results(tmp_path, monkeypatch) -> Path:
    root = tmp_path / "results"
    monkeypatch.setenv("CHRONORANK_RESULT_CACHE", str(root))
    monkeypatch.setenv("CHRONORANK_INDEX_CACHE", str(tmp_path / "indexes"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("CHRONORANK_PROGRESS", "0")
    return root


def _copy_inputs(tmp_path: Path) -> tuple[Path, Path]:
    corpus, queries = tmp_path / "corpus.jsonl", tmp_path / "queries.jsonl"
    corpus.write_bytes((EXAMPLES / "corpus.jsonl").read_bytes())
    queries.write_bytes((EXAMPLES / "queries.jsonl").read_bytes())
    return corpus, queries


def _eval(capsys, corpus: Path, queries: Path, *extra: str) -> tuple[int, str, str]:
    rc = main(["eval", "--corpus", str(corpus), "--queries", str(queries), "--embedder", "none", *extra])
    out = capsys.readouterr()
    return rc, out.out, out.err


def _no_computing(monkeypatch) -> None:
    """Make any index work fail: a replayed run must not reach it."""
    from chronorank.index import TemporalIndex

    def refuse(*a, **k):
        raise AssertionError("a replayed run built, loaded or searched an index")

    for name in ("add", "search", "load"):
        monkeypatch.setattr(TemporalIndex, name, refuse)


def test_an_identical_eval_rerun_prints_the_first_runs_results_without_ranking(results, tmp_path, capsys, monkeypatch):
    corpus, queries = _copy_inputs(tmp_path)
    rc, first, err = _eval(capsys, corpus, queries)
    assert rc == 0 and "overall" in first and "replayed" not in err
    assert len(list(results.glob("eval-*.run"))) == 1
    with monkeypatch.context() as m:
        _no_computing(m)
        rc, again, err = _eval(capsys, corpus, queries)
    assert rc == 0 and again == first
    assert "replayed" in err and "CHRONORANK_RESULT_CACHE=off" in err
    # --json is another run with its own output, and is replayed as such
    rc, as_json, _ = _eval(capsys, corpus, queries, "--json")
    assert rc == 0 and json.loads(as_json)["overall"]["queries"] == 7
    with monkeypatch.context() as m:
        _no_computing(m)
        assert _eval(capsys, corpus, queries, "--json")[1] == as_json


def test_an_edited_input_a_flag_or_another_chronorank_computes_again(results, tmp_path, capsys, monkeypatch):
    corpus, queries = _copy_inputs(tmp_path)
    first = _eval(capsys, corpus, queries)[1]
    # one query fewer, same file name: the bytes key the run, not the path or the mtime
    stat = queries.stat()
    lines = [ln for ln in queries.read_text().splitlines(keepends=True) if ln.strip()]
    queries.write_text("".join(lines[:-1]))
    os.utime(queries, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    rc, fewer, err = _eval(capsys, corpus, queries)
    assert rc == 0 and "replayed" not in err and fewer != first
    assert f"{'overall':<14}{len(lines) - 1:>8}" in fewer  # the new count of queries
    # a flag that changes the ranking settings
    rc, other, err = _eval(capsys, corpus, queries, "--config", "index(fusion='rrf')")
    assert rc == 0 and "replayed" not in err and "fusion='rrf'" in other
    # another chronorank (an edited module or language file) never replays an older one's output
    stamp = _recache.code_stamp()
    monkeypatch.setattr(_replay, "code_stamp", lambda: stamp + "-edited")
    rc, _, err = _eval(capsys, corpus, queries)
    assert rc == 0 and "replayed" not in err


@pytest.mark.parametrize("switch", ["CHRONORANK_RESULT_CACHE", "CHRONORANK_INDEX_CACHE"])
def test_the_result_cache_is_off_when_either_cache_is_turned_off(results, tmp_path, capsys, monkeypatch, switch):
    corpus, queries = _copy_inputs(tmp_path)
    first = _eval(capsys, corpus, queries)[1]
    monkeypatch.setenv(switch, "off")
    rc, again, err = _eval(capsys, corpus, queries)
    assert rc == 0 and again == first and "replayed" not in err


def test_a_damaged_entry_is_a_miss_and_is_rewritten(results, tmp_path, capsys):
    corpus, queries = _copy_inputs(tmp_path)
    first = _eval(capsys, corpus, queries)[1]
    (entry,) = results.glob("eval-*.run")
    head, body = entry.read_bytes().split(b"\n", 1)
    entry.write_bytes(head + b"\n" + body.replace(b"overall", b"OVERALL"))  # the output no longer matches its sha256
    rc, again, err = _eval(capsys, corpus, queries)
    assert rc == 0 and again == first and "replayed" not in err
    rc, third, err = _eval(capsys, corpus, queries)
    assert third == first and "replayed" in err


def test_a_failed_run_is_not_kept(results, tmp_path, capsys):
    corpus, queries = _copy_inputs(tmp_path)
    queries.write_text(json.dumps({"qid": "q1", "query": "latest tern", "reference_date": "2026-08-01",
                                   "relevance": {"no-such-document": 3}}) + "\n")
    rc, _, err = _eval(capsys, corpus, queries)
    assert rc == 2 and "no-such-document" in err
    assert not list(results.glob("*.run"))
    rc, _, err = _eval(capsys, corpus, queries)
    assert rc == 2 and "replayed" not in err


def test_demo_replays_its_answers_and_rebuild_or_no_cache_compute_them(results, capsys, monkeypatch):
    demo = ["demo", "--embedder", "hashing", "-k", "2", "what changed in the latest release of ruff"]
    assert main(demo) == 0
    first = capsys.readouterr().out
    assert first.startswith("chronorank demo: indexed")
    with monkeypatch.context() as m:
        _no_computing(m)
        assert main(demo) == 0
        again = capsys.readouterr().out
    head, rest = again.split("\n", 1)
    assert "replayed" in head and "--rebuild" in head and "now = 2026-08-01" in head
    assert rest == first.split("\n", 1)[1]  # the same answers, explanations included
    for flag in ("--rebuild", "--no-cache"):
        assert main([*demo, flag]) == 0
        out = capsys.readouterr().out
        assert "replayed" not in out.split("\n", 1)[0] and out.split("\n", 1)[1] == rest
    # other questions are another run
    assert main(["demo", "--embedder", "hashing", "-k", "2", "polars releases in 2025"]) == 0
    assert "replayed" not in capsys.readouterr().out.split("\n", 1)[0]


def test_only_embedders_pinned_by_a_package_are_replayed(results, tmp_path):
    corpus, queries = _copy_inputs(tmp_path)
    for spec in ("default", "minilm", "e5", "hashing", "hashing-64", "none"):
        assert _replay.replay_key("eval", {"embedder": spec}, [corpus, queries], spec) is not None, spec
    for spec in ("st:sentence-transformers/all-MiniLM-L6-v2", "fastembed:BAAI/bge-small-en-v1.5"):
        assert _replay.replay_key("eval", {"embedder": spec}, [corpus, queries], spec) is None, spec
    # an input that is not a readable file is the run's to report
    assert _replay.replay_key("eval", {}, [tmp_path / "missing.jsonl"], "none") is None
    assert _replay.replay_key("eval", {}, [tmp_path], "none") is None


def test_the_key_follows_settings_variables_not_cache_locations(results, tmp_path, monkeypatch):
    corpus, queries = _copy_inputs(tmp_path)

    def key() -> str | None:
        return _replay.replay_key("eval", {"embedder": "default"}, [corpus, queries], "default")

    base = key()
    monkeypatch.setenv("CHRONORANK_EMBED_CACHE", str(tmp_path / "elsewhere"))
    monkeypatch.setenv("CHRONORANK_REGEX_CACHE", str(tmp_path / "elsewhere-too"))
    assert key() == base
    monkeypatch.setenv("CHRONORANK_MINILM_PATH", str(tmp_path / "my-model.onnx"))  # another model
    assert key() != base


def test_at_most_keep_entries_per_command(results, monkeypatch):
    monkeypatch.setattr(_replay, "KEEP", 2)
    for i in range(4):
        key = str(i) * 64
        _replay.store("eval", key, f"run {i}\n")
        path = results / f"eval-{key[:40]}.run"
        os.utime(path, ns=(i * 10**9, i * 10**9))  # written in order
    _replay.store("demo", "f" * 64, "a demo\n")
    kept = sorted(p.name for p in results.glob("eval-*.run"))
    assert kept == [f"eval-{str(i) * 40}.run" for i in (2, 3)]  # the two written last
    hit = _replay.lookup("eval", "3" * 64)
    assert hit is not None and hit[0] == "run 3\n" and isinstance(hit[1]["written"], str)
    assert _replay.lookup("eval", "0" * 64) is None
    assert _replay.lookup("demo", "f" * 64) is not None  # another command's entries are its own


def test_a_replayed_rerun_imports_neither_numpy_nor_a_model(tmp_path):
    env = dict(os.environ, CHRONORANK_RESULT_CACHE=str(tmp_path / "results"), XDG_CACHE_HOME=str(tmp_path / "xdg"),
               CHRONORANK_INDEX_CACHE=str(tmp_path / "indexes"), CHRONORANK_REGEX_CACHE=str(tmp_path / "regex"))
    corpus, queries = _copy_inputs(tmp_path)
    args = ["eval", "--corpus", str(corpus), "--queries", str(queries), "--embedder", "none"]
    code = (
        "import contextlib, io, json, sys\nfrom chronorank.cli import main\n"
        f"out = io.StringIO()\nwith contextlib.redirect_stdout(out):\n    rc = main({args!r})\n"
        "print(json.dumps({'rc': rc, 'out': out.getvalue(), 'modules': sorted(sys.modules)}))"
    )
    runs = [json.loads(subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                                      check=True).stdout.strip().splitlines()[-1]) for _ in range(2)]
    assert runs[0]["rc"] == runs[1]["rc"] == 0 and runs[0]["out"] == runs[1]["out"]
    assert "numpy" in runs[0]["modules"]
    heavy = {"numpy", "onnxruntime", "tokenizers", "bm25s", "chronorank.index", "chronorank.eval"}
    assert not heavy & set(runs[1]["modules"]), sorted(heavy & set(runs[1]["modules"]))
