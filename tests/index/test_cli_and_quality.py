"""The index/search/eval/demo commands, the MiniLM embedder, and benchmark quality floors."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from chronorank.cli import main

CORPUS = [
    {"id": "tool@1.0", "text": "tool 1.0. First release with caching", "date": "2024-01-10"},
    {"id": "tool@1.1", "text": "tool 1.1. Faster caching and retries", "date": "2025-03-02"},
    {"id": "tool@2.0", "text": "tool 2.0. New plugin API, caching rewritten", "date": "2026-06-01"},
    {"id": "other@0.1", "text": "other 0.1. Unrelated parser library", "date": "2026-07-01"},
]
QUERIES = [
    {"qid": "q1", "query": "what changed in the latest release of tool", "reference_date": "2026-08-01",
     "relevance": {"tool@2.0": 3, "tool@1.1": 1}, "kind": "latest"},
    {"qid": "q2", "query": "tool 1.1 changelog", "reference_date": "2026-08-01", "relevance": {"tool@1.1": 3}, "kind": "version"},
]


@pytest.fixture()
def files(tmp_path):
    c = tmp_path / "corpus.jsonl"
    q = tmp_path / "queries.jsonl"
    c.write_text("".join(json.dumps(d) + "\n" for d in CORPUS))
    q.write_text("".join(json.dumps(d) + "\n" for d in QUERIES))
    return c, q


def test_index_then_search(files, tmp_path, capsys):
    c, _ = files
    out = tmp_path / "idx"
    assert main(["index", str(c), "--out", str(out), "--embedder", "hashing"]) == 0
    capsys.readouterr()
    assert main(["search", str(out), "latest tool caching", "--now", "2026-08-01", "--json", "-k", "2"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert res["hits"][0]["id"] == "tool@2.0" and len(res["hits"]) == 2
    assert main(["search", str(out), "latest tool caching", "--now", "2026-08-01", "--explain"]) == 0
    text = capsys.readouterr().out
    assert "time: on; ages count from now" in text and "decay exponential" in text and "tool@2.0" in text


def test_search_on_foreign_directory_is_a_clean_error(tmp_path, capsys):
    assert main(["search", str(tmp_path), "anything"]) == 2
    assert "not a chronorank index" in capsys.readouterr().err


def test_eval_json_follows_format_md(files, capsys):
    c, q = files
    assert main(["eval", "--corpus", str(c), "--queries", str(q), "--embedder", "hashing", "--json"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert set(res) == {"overall", "by_kind", "config"}
    assert {"ndcg@10", "recall@10", "mrr", "stale@5", "queries"} <= set(res["overall"])
    assert res["overall"]["queries"] == 2 and set(res["by_kind"]) == {"latest", "version"}
    assert res["by_kind"]["version"]["ndcg@10"] == pytest.approx(1.0)
    assert res["config"].startswith("index(")


def test_eval_ignores_kind(files, tmp_path, capsys):
    c, q = files
    relabelled = tmp_path / "q2.jsonl"
    relabelled.write_text("".join(json.dumps({**d, "kind": "zzz"}) + "\n" for d in QUERIES))
    main(["eval", "--corpus", str(c), "--queries", str(q), "--embedder", "hashing", "--json"])
    a = json.loads(capsys.readouterr().out)
    main(["eval", "--corpus", str(c), "--queries", str(relabelled), "--embedder", "hashing", "--json"])
    b = json.loads(capsys.readouterr().out)
    assert a["overall"] == b["overall"]


def test_demo_runs_offline(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert main(["demo", "--embedder", "hashing", "-k", "1"]) == 0
    out = capsys.readouterr().out
    assert "polars" in out and "answer:" in out
    assert main(["demo", "--embedder", "hashing", "-k", "1", "--json", "what changed in the latest release of ruff"]) == 0
    assert "ruff" in json.loads(capsys.readouterr().out.splitlines()[0])["hits"][0]["id"]


def test_demo_reuses_its_index_until_the_code_or_the_corpus_changes(tmp_path, monkeypatch, capsys):
    from chronorank import _recache
    from chronorank.eval import datasets

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv("CHRONORANK_INDEX_CACHE")  # the default place: beside the other caches
    demo = ["demo", "--embedder", "hashing", "-k", "1", "what changed in the latest release of ruff"]

    def first_line() -> str:
        assert main(demo) == 0
        return capsys.readouterr().out.splitlines()[0]

    def cached() -> list[str]:
        return sorted(p.name for p in (tmp_path / "chronorank").iterdir() if p.name.startswith("demo-index-"))

    assert "indexed" in first_line()
    assert "loaded the cached index" in first_line()
    (entry,) = cached()
    stamp = _recache.code_stamp()
    monkeypatch.setattr(_recache, "code_stamp", lambda: stamp + "-edited")  # another chronorank
    assert "indexed" in first_line()
    assert "loaded the cached index" in first_line()
    assert len(cached()) == 1 and cached() != [entry]  # the older build's index is removed
    snap = datasets.release_snapshot(None)
    changed = {**snap, "documents": snap["documents"][1:]}
    edited = (json.dumps(changed).encode(), changed)
    monkeypatch.setattr(datasets, "read_release_snapshot", lambda path: edited[::-1])  # another corpus
    assert "indexed 241 release notes" in first_line()


class _CachedHashing:
    """The hashing embedder with a cache key, so that the embedding cache keeps its vectors."""

    def __init__(self) -> None:
        from chronorank.index import HashingEmbedder

        self.inner = HashingEmbedder()
        self.dim, self.name, self.cache_key = self.inner.dim, "hashing", "hashing-test"

    def embed(self, texts):
        return self.inner.embed(texts)


@pytest.mark.parametrize("switch", ["on", "CHRONORANK_INDEX_CACHE=off", "CHRONORANK_EMBED_CACHE=off", "--no-cache",
                                    "--rebuild"])
def test_demo_honours_every_cache_switch(switch, tmp_path, monkeypatch, capsys):
    import chronorank.index as index_pkg

    monkeypatch.setattr(index_pkg, "get_embedder", lambda spec: _CachedHashing())
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("CHRONORANK_INDEX_CACHE", str(tmp_path / "indexes"))
    monkeypatch.setenv("CHRONORANK_EMBED_CACHE", str(tmp_path / "vectors"))
    flags = []
    if switch.startswith("--"):
        flags.append(switch)
    elif switch != "on":
        monkeypatch.setenv(*switch.split("="))
    demo = ["demo", "-k", "1", *flags, "what changed in the latest release of ruff"]

    def written(name: str) -> list[str]:
        return sorted(str(p.relative_to(tmp_path)) for p in (tmp_path / name).rglob("*") if p.is_file())

    heads = []
    for _ in range(2):
        assert main(demo) == 0
        heads.append(capsys.readouterr().out.splitlines()[0])
    assert not written("xdg")  # every cache went where its switch said
    index_off = switch in ("CHRONORANK_INDEX_CACHE=off", "--no-cache")
    assert ("loaded the cached index" in heads[1]) == (switch in ("on", "CHRONORANK_EMBED_CACHE=off")), heads
    assert all("loaded" not in h for h in heads) == (index_off or switch == "--rebuild"), heads
    assert bool(written("indexes")) == (not index_off)
    assert bool(written("vectors")) == (switch != "CHRONORANK_EMBED_CACHE=off")


# ----------------------------------------------------------------- MiniLM embedder


def test_minilm_paraphrase_beats_unrelated(minilm):
    v = minilm.embed([
        "How do I reset my password?",
        "What is the procedure to change my password?",
        "The weather in Paris is sunny today.",
    ])
    assert v.dtype == np.float32 and v.shape == (3, 384) and v.flags["C_CONTIGUOUS"]
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    assert v[0] @ v[1] > 0.6 > 0.2 > v[0] @ v[2]


def test_minilm_batches_agree_with_single_texts(minilm):
    texts = ["short", "a somewhat longer sentence about release notes and caching", "x " * 400]
    together = minilm.embed(texts)
    alone = np.vstack([minilm.embed([t]) for t in texts])
    np.testing.assert_allclose(together, alone, atol=1e-4)


# ----------------------------------------------------------------- quality floors


@pytest.mark.slow  # embeds 242 release notes with MiniLM
def test_release_benchmark_ndcg_at_least_0_90(cached_minilm, release_corpus):
    from chronorank.eval.datasets import release_benchmark_from_snapshot
    from chronorank.eval.index_eval import evaluate_index, index_for_benchmark

    corpus, queries = release_benchmark_from_snapshot(release_corpus)
    assert len(queries) == 13
    idx = index_for_benchmark(corpus, embedder=cached_minilm)
    res = evaluate_index(idx, queries)
    assert res["overall"]["ndcg@10"] >= 0.90, res["per_query"]


@pytest.mark.slow
def test_changelogs_per_kind(cached_minilm):
    import importlib.util

    spec = importlib.util.spec_from_file_location("chronorank_index_conftest", Path(__file__).with_name("conftest.py"))
    assert spec is not None and spec.loader is not None
    conf = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(conf)
    shared_dir = conf.shared_dir

    from chronorank.eval.datasets import load_benchmark
    from chronorank.eval.index_eval import evaluate_index, index_for_benchmark

    d = shared_dir()
    if d is None:
        pytest.skip("needs ../shared/data (the team's data folder beside the repository; a clone has none)")
    corpus, queries = load_benchmark(d / "data" / "changelogs")
    idx = index_for_benchmark(corpus, embedder=cached_minilm)
    res = evaluate_index(idx, queries)
    by = {k: v["ndcg@10"] for k, v in res["by_kind"].items()}
    # floors a little under the measured values (see benchmarks/results/index_quality.json)
    assert by["version"] >= 0.95 and by["as_of"] >= 0.85 and by["as_of_date"] >= 0.85 and by["latest"] >= 0.75, by
