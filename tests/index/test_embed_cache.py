"""The on-disk embedding cache (``index/embed_cache.py``) and job progress (``index/progress.py``)."""

from __future__ import annotations

import io
import multiprocessing
import threading
from pathlib import Path

import numpy as np
import pytest

from chronorank.index import HashingEmbedder, TemporalIndex
from chronorank.index.embed_cache import (
    EmbeddingCache,
    cache_dir,
    content_keys,
    default_cache,
    embed_documents,
)
from chronorank.index.progress import Progress


class CountingEmbedder:
    """The hashing embedder, counting what it is asked to embed, with a cache key."""

    def __init__(self, key: str = "counting-test-model") -> None:
        self.inner = HashingEmbedder(64)
        self.name = "counting"
        self.cache_key = key
        self.calls: list[int] = []

    @property
    def dim(self) -> int:
        return self.inner.dim

    def embed(self, texts):
        self.calls.append(len(texts))
        return self.inner.embed(texts)

    @property
    def embedded(self) -> int:
        return sum(self.calls)


@pytest.fixture()
def cache_root(tmp_path, monkeypatch) -> Path:
    root = tmp_path / "emb-cache"
    monkeypatch.setenv("CHRONORANK_EMBED_CACHE", str(root))
    monkeypatch.setenv("CHRONORANK_PROGRESS", "0")
    return root


TEXTS = [f"release {i}: the pro plan costs {i} dollars" for i in range(150)]


def test_rerun_embeds_nothing_and_returns_the_same_vectors(cache_root):
    emb = CountingEmbedder()
    first = embed_documents(emb, TEXTS)
    assert emb.embedded == len(TEXTS)
    np.testing.assert_array_equal(first, HashingEmbedder(64).embed(TEXTS))
    again = embed_documents(emb, TEXTS)
    assert emb.embedded == len(TEXTS)  # nothing new
    np.testing.assert_array_equal(again, first)
    # one changed text, one new: only those two are embedded
    changed = [*TEXTS[:10], "a new document", "release 10 was edited", *TEXTS[11:]]
    out = embed_documents(emb, changed)
    assert emb.embedded == len(TEXTS) + 2
    np.testing.assert_array_equal(out, HashingEmbedder(64).embed(changed))


def test_the_model_key_separates_models(cache_root):
    a, b = CountingEmbedder("model-a"), CountingEmbedder("model-b")
    embed_documents(a, TEXTS[:20])
    embed_documents(b, TEXTS[:20])
    assert a.embedded == b.embedded == 20


def test_index_add_shares_the_cache(cache_root):
    docs = [{"id": f"d{i}", "text": t, "date": f"2024-01-{1 + i % 28:02d}"} for i, t in enumerate(TEXTS)]
    emb = CountingEmbedder()
    a = TemporalIndex(embedder=emb)
    a.add(docs)
    assert emb.embedded == len(docs)
    b = TemporalIndex(embedder=emb)
    b.add(docs)
    assert emb.embedded == len(docs)  # the second index embedded nothing
    q = "what does the pro plan cost"
    now = "2024-02-01"
    assert [h.id for h in a.search(q, k=10, now=now)] == [h.id for h in b.search(q, k=10, now=now)]


def test_opt_out_and_uncacheable_embedders(tmp_path, monkeypatch):
    monkeypatch.setenv("CHRONORANK_EMBED_CACHE", "off")
    assert cache_dir() is None
    emb = CountingEmbedder()
    embed_documents(emb, TEXTS[:5])
    embed_documents(emb, TEXTS[:5])
    assert emb.embedded == 10
    monkeypatch.setenv("CHRONORANK_EMBED_CACHE", str(tmp_path / "c"))
    assert default_cache(HashingEmbedder(64)) is None  # no cache_key: never cached
    embed_documents(HashingEmbedder(64), TEXTS[:5])
    assert not (tmp_path / "c").exists()
    monkeypatch.delenv("CHRONORANK_EMBED_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_dir() == tmp_path / "xdg" / "chronorank" / "embeddings"


@pytest.mark.parametrize("damage", ["truncate", "garble", "flip", "empty"])
def test_a_corrupt_shard_is_a_miss_not_an_error(cache_root, damage):
    emb = CountingEmbedder()
    embed_documents(emb, TEXTS[:40], chunk=40)
    (shard,) = default_cache(emb).dir.glob("*.npz")
    raw = shard.read_bytes()
    if damage == "truncate":
        shard.write_bytes(raw[: len(raw) // 2])
    elif damage == "garble":
        shard.write_bytes(b"not a zip file" + raw[14:])
    elif damage == "flip":  # a flipped bit inside the vectors: the digest catches it
        z = dict(np.load(shard))
        z["vectors"] = z["vectors"].copy()
        z["vectors"][3, 5] += 1.0
        with open(shard, "wb") as f:
            np.savez(f, **z)
    else:
        shard.write_bytes(b"")
    out = embed_documents(emb, TEXTS[:40])
    assert emb.embedded == 80  # embedded again
    np.testing.assert_array_equal(out, HashingEmbedder(64).embed(TEXTS[:40]))
    assert not shard.exists()  # the damaged shard was removed
    embed_documents(emb, TEXTS[:40])
    assert emb.embedded == 80  # and the fresh one serves


def test_many_shards_are_merged_without_losing_rows(cache_root, monkeypatch):
    import chronorank.index.embed_cache as ec

    monkeypatch.setattr(ec, "_MERGE_AT", 5)
    emb = CountingEmbedder()
    for lo in range(0, 60, 6):
        embed_documents(emb, TEXTS[lo : lo + 6])
    assert len(list(default_cache(emb).dir.glob("*.npz"))) < 5
    out = embed_documents(emb, TEXTS[:60])
    assert emb.embedded == 60
    np.testing.assert_array_equal(out, HashingEmbedder(64).embed(TEXTS[:60]))


def _writer(root: str, lo: int) -> None:
    cache = EmbeddingCache(root, "concurrent-model", 64)
    texts = TEXTS[lo : lo + 50]
    vecs = HashingEmbedder(64).embed(texts)
    for i in range(0, 50, 5):
        cache.put(content_keys(texts[i : i + 5]), vecs[i : i + 5])


def test_concurrent_writers_leave_a_consistent_cache(tmp_path, monkeypatch):
    import chronorank.index.embed_cache as ec

    monkeypatch.setattr(ec, "_MERGE_AT", 8)  # merges race with writes too (fork copies it)
    root = str(tmp_path / "c")
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_writer, args=(root, lo)) for lo in (0, 25, 50, 100)]
    threads = [threading.Thread(target=_writer, args=(root, lo)) for lo in (0, 75)]
    for w in (*procs, *threads):
        w.start()
    for w in (*procs, *threads):
        w.join()
    assert all(p.exitcode == 0 for p in procs)
    cache = EmbeddingCache(root, "concurrent-model", 64)
    found = cache.get(content_keys(TEXTS))
    assert sorted(found) == list(range(150))
    want = HashingEmbedder(64).embed(TEXTS)
    for i, v in found.items():
        np.testing.assert_array_equal(v, want[i])
    assert not list(Path(root).rglob(".*.tmp"))


class _SlowEmbedder(CountingEmbedder):
    """Blocks each call until the progress stream shows something (bounded), then embeds."""

    def __init__(self, stream: io.StringIO) -> None:
        super().__init__("slow-model")
        self.stream = stream

    def embed(self, texts):
        for _ in range(500):
            if self.stream.getvalue():
                break
            threading.Event().wait(0.01)
        return super().embed(texts)


def test_progress_shows_before_the_first_batch_finishes(cache_root, monkeypatch):
    monkeypatch.setenv("CHRONORANK_PROGRESS", "1")
    import chronorank.index.embed_cache as ec

    stream = io.StringIO()
    real = ec.Progress
    monkeypatch.setattr(ec, "Progress", lambda total, desc: real(total, desc, stream=stream, delay=0.0, tty=False))
    emb = _SlowEmbedder(stream)
    embed_documents(emb, TEXTS[:12], chunk=4)
    lines = stream.getvalue().splitlines()
    assert lines[0].startswith("embedding: 0/12 docs (0%)")  # drawn while the first batch waited
    assert lines[-1].startswith("embedding: 12/12 docs in ") and lines[-1].endswith("docs/s)")


def test_progress_line_formats():
    tty = Progress(200, "embedding", stream=io.StringIO(), tty=True, delay=60)
    tty.update(50)
    line = tty.line()
    assert "50/200 docs" in line and "25%" in line and "docs/s" in line and "ETA" in line and "[######" in line
    tty.close()
    assert tty.stream.getvalue() == ""  # closed before the delay: nothing printed
    plain = Progress(10, "embedding", stream=io.StringIO(), tty=False, delay=60)
    assert plain.line().startswith("embedding: 0/10 docs (0%), - docs/s, elapsed 0:0")
    plain.close()


def test_progress_off(monkeypatch):
    monkeypatch.setenv("CHRONORANK_PROGRESS", "0")
    s = io.StringIO()
    p = Progress(10, stream=s, delay=0.0, tty=False)
    p.update(10)
    p.close()
    assert s.getvalue() == ""


def test_cached_queries_rerun_embeds_no_query_and_ranks_the_same(cache_root):
    """eval / demo wrap their searches in cached_queries: the second process's questions come
    from the query cache (one shard), the embedder is asked for nothing, the rankings and
    scores are the first run's, and document vectors never mix with query vectors."""
    from chronorank.index.embed_cache import CachedQueries, cached_queries

    docs = [{"id": f"d{i}", "text": t, "date": f"2024-01-{1 + i % 28:02d}"} for i, t in enumerate(TEXTS)]
    questions = ["what does the pro plan cost", "release 7", TEXTS[3]]  # the last is also a document
    runs = []
    for _ in range(2):  # two "processes": fresh embedder and index, the same cache directory
        emb = CountingEmbedder()
        idx = TemporalIndex(embedder=emb)
        idx.add(docs)
        before = emb.embedded
        with cached_queries(idx):
            assert isinstance(idx.embedder, CachedQueries)
            ranks = [idx.search(q, k=10, now="2024-02-01") for q in questions * 2]
        assert idx.embedder is emb
        runs.append((emb.embedded - before, [(r.ranked_ids, r.score.tolist()) for r in ranks]))
    assert runs[0][0] == len(questions)  # each distinct question embedded once, alone
    assert runs[1][0] == 0
    assert runs[0][1] == runs[1][1]
    query_dirs = [d for d in cache_root.iterdir() if d.is_dir()]
    assert len(query_dirs) == 2  # documents and queries in separate directories
    assert embed_documents(CountingEmbedder(), [TEXTS[3]]).shape == (1, 64)


def test_cached_queries_is_a_no_op_when_off_or_uncacheable(tmp_path, monkeypatch):
    from chronorank.index.embed_cache import cached_queries

    monkeypatch.setenv("CHRONORANK_EMBED_CACHE", "off")
    idx = TemporalIndex(embedder=CountingEmbedder())
    with cached_queries(idx):
        assert isinstance(idx.embedder, CountingEmbedder)
    monkeypatch.setenv("CHRONORANK_EMBED_CACHE", str(tmp_path))
    plain = TemporalIndex(embedder=HashingEmbedder(32))
    with cached_queries(plain):
        assert isinstance(plain.embedder, HashingEmbedder)
    assert not list(tmp_path.iterdir())


def test_library_progress_goes_to_logging_and_bars_on_request(monkeypatch, caplog, capsys):
    monkeypatch.setenv("CHRONORANK_PROGRESS", "1")  # a library call: no bar on stderr
    with caplog.at_level("INFO", logger="chronorank.progress"):
        p = Progress(10, "embedding", delay=0.0, every=0.01)
        p.update(10)
        threading.Event().wait(0.05)
        p.close()
    assert capsys.readouterr().err == ""
    assert any("embedding: 10/10 docs" in r.getMessage() for r in caplog.records)
    monkeypatch.setenv("CHRONORANK_PROGRESS", "bar")  # what the CLI sets
    caplog.clear()
    p = Progress(10, "embedding", delay=0.0, every=0.01, tty=False)
    p.update(10)
    threading.Event().wait(0.05)
    p.close()
    assert "embedding: 10/10 docs" in capsys.readouterr().err and not caplog.records
