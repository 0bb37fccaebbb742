"""An index that answers before its embedder has finished (index/background.py).

The embedder here is gated: each ``embed`` call of the background job blocks until the test
lets one chunk through, and signals when the *next* call begins -- by then the previous
chunk has been published (``embed_documents`` publishes a chunk before embedding the next).
So every intermediate state is reached deterministically, with real threads and no clock.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from chronorank.errors import InvalidInput
from chronorank.eval.datasets import tdw_release_benchmark
from chronorank.index import TemporalIndex
from chronorank.index.background import DenseProgress, EmbeddingFailed, VectorsPending
from chronorank.index.embedders import HashingEmbedder

CHUNK = 64  # embed_documents' chunk
LONG = 60.0  # a bound for a hung thread, never reached when the code is right


class GatedEmbedder:
    """HashingEmbedder whose multi-text calls wait for a permit (queries pass freely)."""

    def __init__(self, fail_on_call: int | None = None) -> None:
        self.inner = HashingEmbedder(64)
        self.name = self.inner.name
        self.permits = threading.Semaphore(0)
        self.calls = 0
        self.entered = threading.Condition()
        self.fail_on_call = fail_on_call

    @property
    def dim(self) -> int:
        return self.inner.dim

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if len(texts) > 1:
            with self.entered:
                self.calls += 1
                call = self.calls
                self.entered.notify_all()
            if not self.permits.acquire(timeout=LONG):
                raise RuntimeError("test never released this chunk")
            if call == self.fail_on_call:
                raise RuntimeError("model crashed")
        return self.inner.embed(texts)

    def wait_calls(self, n: int) -> None:
        """Until the n-th chunk call has begun (so every earlier chunk is published)."""
        with self.entered:
            assert self.entered.wait_for(lambda: self.calls >= n, LONG)

    def release(self, k: int = 1) -> None:
        for _ in range(k):
            self.permits.release()


@pytest.fixture(scope="module")
def bench() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    corpus, queries = tdw_release_benchmark()
    return corpus, queries


def _docs(corpus: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: d.get(k) for k in ("id", "text", "date", "valid_from", "valid_to") if k in d} for d in corpus]


def _rankings(idx: TemporalIndex, queries: list[dict[str, Any]]) -> list[tuple[list[str], list[float]]]:
    out = []
    for q in queries:
        r = idx.search(q["query"], k=20, now=q["reference_date"])
        out.append((r.ranked_ids, [float(s) for s in r.score]))
    return out


def _n_chunks(n: int) -> int:
    return -(-n // CHUNK)


def test_answers_with_keywords_and_time_until_every_vector_is_in(bench: Any) -> None:
    corpus, queries = bench
    docs = _docs(corpus)
    emb = GatedEmbedder()
    idx = TemporalIndex(emb)
    assert idx.add(docs, embed="background") == len(docs)
    n = len(docs)
    # nothing embedded yet: exactly what an index without an embedder answers
    keyword_only = TemporalIndex(None)
    keyword_only.add(docs)
    assert not idx.ready and idx.wait(timeout=0) is False
    prog = idx.dense_progress
    assert prog == DenseProgress(0, n, running=True)
    assert _rankings(idx, queries) == _rankings(keyword_only, queries)
    r = idx.search(queries[0]["query"], now=queries[0]["reference_date"])
    assert "dense" not in r[0].signals
    assert r.meta["dense_complete"] is False
    assert f"dense: 0 / {n:,} embedded; keyword + time until the rest are in" in r.explain()
    # one chunk in: still keyword + time for every document, and the state says how far
    emb.release()
    emb.wait_calls(2)
    assert idx.dense_progress.embedded == CHUNK
    assert _rankings(idx, queries) == _rankings(keyword_only, queries)
    assert f"dense: {CHUNK} / {n} embedded" in idx.search("tern release", now="2026-08-01").explain()
    # the rest: identical to a synchronous build, ranking by ranking, score by score
    emb.release(_n_chunks(n) - 1)
    assert idx.wait(timeout=LONG) and idx.ready
    sync = TemporalIndex(HashingEmbedder(64))
    sync.add(docs)
    assert np.array_equal(idx._snap.vectors, sync._snap.vectors)
    assert _rankings(idx, queries) == _rankings(sync, queries)
    done = idx.search(queries[0]["query"], now=queries[0]["reference_date"])
    assert "dense" in done[0].signals and done.meta["dense"] == f"{n} / {n} embedded"
    assert "dense:" not in done.explain()  # said only while vectors are missing


def test_searches_from_threads_see_one_whole_state_at_a_time(bench: Any) -> None:
    corpus, queries = bench
    docs = _docs(corpus)
    keyword_only = TemporalIndex(None)
    keyword_only.add(docs)
    sync = TemporalIndex(HashingEmbedder(64))
    sync.add(docs)
    expect = {False: _rankings(keyword_only, queries), True: _rankings(sync, queries)}
    emb = GatedEmbedder()
    idx = TemporalIndex(emb)
    idx.add(docs, embed="background")
    seen: list[bool] = []
    errors: list[BaseException] = []
    stop = threading.Event()

    def reader() -> None:
        try:
            while not stop.is_set():
                for q, want_kw, want_dense in zip(queries, expect[False], expect[True]):
                    r = idx.search(q["query"], k=20, now=q["reference_date"])
                    complete = bool(r.meta["dense_complete"])
                    got = (r.ranked_ids, [float(s) for s in r.score])
                    assert got == (want_dense if complete else want_kw)
                    seen.append(complete)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=reader) for _ in range(3)]
    for t in threads:
        t.start()
    for c in range(_n_chunks(len(docs))):
        emb.release()
        if c + 1 < _n_chunks(len(docs)):
            emb.wait_calls(c + 2)
    assert idx.wait(timeout=LONG)
    # keep reading until every reader has seen the complete state at least once more
    target = len(seen) + 3 * len(queries)
    while len(seen) < target and not errors and any(t.is_alive() for t in threads):
        threading.Event().wait(0.01)
    stop.set()
    for t in threads:
        t.join(LONG)
    assert not errors, errors[0]
    assert False in seen and True in seen


def test_appends_replacements_and_deletes_while_embedding(bench: Any) -> None:
    corpus, queries = bench
    docs = _docs(corpus)
    first, second = docs[:150], docs[150:]
    emb = GatedEmbedder()
    idx = TemporalIndex(emb)
    idx.add(first, embed="background")
    emb.wait_calls(1)
    idx.add(second, embed="background")  # a second batch queued behind the first
    changed = dict(first[3], text=first[3]["text"] + " Now with a rewritten paragraph about rate limits.")
    idx.add([changed], embed="background")  # replaced before its first vector came
    same = dict(first[5])
    idx.add([same])  # a synchronous add of an unchanged waiting document: it keeps waiting
    assert idx._snap.pending is not None and idx._snap.pending[idx._snap.row_of[same["id"]]] > 0
    gone = [first[7]["id"], second[0]["id"]]
    assert idx.delete(gone) == 2
    emb.release(100)  # as many chunks as it takes
    assert idx.wait(timeout=LONG)
    final = [d for d in first + second if d["id"] not in gone and d["id"] != changed["id"]] + [changed]
    snap = idx._snap
    assert sorted(snap.ids) == sorted(d["id"] for d in final)
    by_id = {d["id"]: d["text"] for d in final}
    want = HashingEmbedder(64).embed([by_id[i] for i in snap.ids])
    assert np.array_equal(snap.vectors, want)  # every row holds its own text's vector
    sync = TemporalIndex(HashingEmbedder(64))
    sync.add(final)
    assert sorted(_rankings(idx, queries)) == sorted(_rankings(sync, queries))


def test_save_waits_for_the_vectors_and_never_writes_a_partial_index(bench: Any, tmp_path: Path) -> None:
    corpus, queries = bench
    docs = _docs(corpus)
    emb = GatedEmbedder()
    idx = TemporalIndex(emb)
    idx.add(docs, embed="background")
    with pytest.raises(VectorsPending, match="wait for their vectors"):
        idx.save(tmp_path / "a", wait=False)
    assert not (tmp_path / "a" / "CURRENT").exists()
    from chronorank.index.storage import save_index

    with pytest.raises(VectorsPending):
        save_index(idx, tmp_path / "b")  # the storage layer refuses on its own too
    saved: list[Path] = []
    saver = threading.Thread(target=lambda: saved.append(idx.save(tmp_path / "c")))
    saver.start()
    emb.release(_n_chunks(len(docs)))
    saver.join(LONG)
    assert saved and idx.ready
    loaded = TemporalIndex.load(tmp_path / "c", embedder=HashingEmbedder(64))
    assert loaded.ready and np.array_equal(np.asarray(loaded._snap.vectors), idx._snap.vectors)
    assert _rankings(loaded, queries) == _rankings(idx, queries)


def test_an_embedder_failure_keeps_keyword_answers_and_can_be_resumed(bench: Any, tmp_path: Path) -> None:
    corpus, queries = bench
    docs = _docs(corpus)
    emb = GatedEmbedder(fail_on_call=2)
    idx = TemporalIndex(emb)
    idx.add(docs, embed="background")
    emb.release(2)
    with pytest.raises(EmbeddingFailed, match="model crashed") as info:
        idx.wait(timeout=LONG)
    assert isinstance(info.value.__cause__, RuntimeError)
    prog = idx.dense_progress
    assert prog.embedded == CHUNK and not prog.running and "RuntimeError: model crashed" in (prog.error or "")
    r = idx.search("tern release", now="2026-08-01")
    assert len(r) and "embedding stopped (RuntimeError: model crashed)" in r.explain()
    assert "index.resume_embedding()" in r.explain()
    with pytest.raises(EmbeddingFailed):
        idx.save(tmp_path / "x")
    emb.fail_on_call = None
    idx.resume_embedding()
    emb.release(100)
    assert idx.wait(timeout=LONG)
    sync = TemporalIndex(HashingEmbedder(64))
    sync.add(docs)
    assert _rankings(idx, queries) == _rankings(sync, queries)


def test_bad_mode_and_indexes_without_an_embedder(bench: Any) -> None:
    docs = _docs(bench[0])[:5]
    idx = TemporalIndex(None)
    with pytest.raises(InvalidInput, match="embed='later'"):
        idx.add(docs, embed="later")
    assert len(idx) == 0
    idx.add(docs, embed="background")  # nothing to embed: keyword-only, complete at once
    assert idx.ready and idx.wait() and idx.dense_progress is None
    assert "dense" not in idx.search("tern", now="2026-08-01").meta


def test_embed_documents_reports_every_row_once_through_on_chunk(tmp_path: Path, monkeypatch: Any) -> None:
    from chronorank.index.embed_cache import EmbeddingCache, embed_documents

    class Keyed(HashingEmbedder):
        cache_key = "hashing-test"

    emb = Keyed(16)
    texts = [f"document number {i} " * (i % 7 + 1) for i in range(150)]
    cache = EmbeddingCache(tmp_path, emb.cache_key, emb.dim)
    embed_documents(emb, texts[:40], cache=cache)
    got: dict[int, np.ndarray] = {}

    def on_chunk(pos: list[int], vecs: np.ndarray) -> None:
        assert not set(pos) & set(got)
        got.update(zip(pos, vecs))

    out = embed_documents(emb, texts, cache=cache, on_chunk=on_chunk)
    assert sorted(got) == list(range(150))
    assert np.array_equal(np.stack([got[i] for i in range(150)]), out)


def test_demo_engine_serves_while_embedding_and_saves_once_complete(bench: Any, tmp_path: Path) -> None:
    from chronorank.demo_app import DemoEngine

    corpus, _ = bench
    emb = GatedEmbedder()
    engine = DemoEngine(corpus, embedder=emb, now="2026-08-01", index_path=tmp_path / "idx", embed="background")
    n = len(corpus)
    health = engine.health()
    assert health["dense_complete"] is False and health["dense"].startswith(f"0 / {n} embedded")
    res = engine.search("what changed in the latest tern release")
    assert res["after"] and res["dense_complete"] is False and "keyword + time" in res["dense"]
    assert not (tmp_path / "idx" / "CURRENT").exists()  # never a partial index on disk
    emb.release(_n_chunks(n))
    assert engine.saver is not None
    engine.saver.join(LONG)
    assert engine.save_error is None and (tmp_path / "idx" / "CURRENT").is_file()
    assert engine.health()["dense"] == f"{n} / {n} embedded"
    assert engine.search("tern release")["dense_complete"] is True
    assert TemporalIndex.load(tmp_path / "idx", embedder=HashingEmbedder(64)).ready


def test_cli_eval_and_search_report_the_dense_lane(tmp_path: Path, capsys: Any) -> None:
    from chronorank.cli import main

    ex = Path(__file__).resolve().parents[2] / "examples" / "releases"
    assert main(["eval", "--corpus", str(ex / "corpus.jsonl"), "--queries", str(ex / "queries.jsonl"),
                 "--embedder", "hashing"]) == 0
    assert "dense: 12 / 12 embedded" in capsys.readouterr().out
    assert main(["index", str(ex / "corpus.jsonl"), "--out", str(tmp_path / "i"), "--embedder", "hashing"]) == 0
    capsys.readouterr()
    assert main(["search", str(tmp_path / "i"), "latest tern release", "--now", "2026-08-01", "--json"]) == 0
    import json

    meta = json.loads(capsys.readouterr().out)["meta"]
    assert meta["dense"] == "12 / 12 embedded" and meta["dense_complete"] is True


def test_a_script_that_ends_while_embedding_exits_cleanly(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    script = tmp_path / "early_exit.py"
    script.write_text(
        "import atexit, time\n"
        "def after():  # registered first, so it runs after chronorank's own exit handler\n"
        "    print('stopped', idx._bg._thread is None, idx.dense_progress.embedded < len(idx))\n"
        "atexit.register(after)\n"
        "from chronorank.index import TemporalIndex\n"
        "from chronorank.index.embedders import HashingEmbedder\n"
        "class Slow(HashingEmbedder):\n"
        "    def embed(self, texts):\n"
        "        time.sleep(0.2)  # 50 chunks: ten seconds at least, far longer than the script\n"
        "        return super().embed(texts)\n"
        "idx = TemporalIndex(Slow(16))\n"
        "idx.add([{'id': str(i), 'text': f'note {i} about caching'} for i in range(64 * 50)], embed='background')\n"
        "print(len(idx.search('caching', now='2026-01-01')), idx.ready)\n"
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path), CHRONORANK_PROGRESS="0")
    p = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=LONG)
    assert p.returncode == 0, p.stderr
    # the job stopped after its chunk, before the interpreter went down, with work left
    assert p.stdout.split() == ["10", "False", "stopped", "True", "True"] and "Traceback" not in p.stderr


def test_ann_waits_for_the_vectors_too(bench: Any) -> None:
    pytest.importorskip("faiss")
    corpus, queries = bench
    docs = _docs(corpus)
    emb = GatedEmbedder()
    idx = TemporalIndex(emb)
    idx.add(docs, embed="background")
    keyword_only = TemporalIndex(None)
    keyword_only.add(docs)
    q = queries[0]
    got = idx.search(q["query"], k=20, now=q["reference_date"], ann=True)  # no HNSW over missing vectors
    want = keyword_only.search(q["query"], k=20, now=q["reference_date"])
    assert got.ranked_ids == want.ranked_ids
    emb.release(_n_chunks(len(docs)))
    assert idx.wait(timeout=LONG)
    sync = TemporalIndex(HashingEmbedder(64))
    sync.add(docs)
    after = idx.search(q["query"], k=20, now=q["reference_date"], ann=True)
    assert after.ranked_ids == sync.search(q["query"], k=20, now=q["reference_date"], ann=True).ranked_ids
    assert "dense" in after[0].signals
