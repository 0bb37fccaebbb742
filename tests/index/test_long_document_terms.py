"""A document longer than ``text.LONG_TEXT_CHARS`` is kept as its lead's terms in order and
its other distinct terms with their counts (``_Snapshot.term_tf``), not as every term id
(issue 31: the ids of a 100 MiB text held ~0.65x its size). BM25 needs only the counts and
the lengths, the lead features only the lead's terms, so an index holding long documents
ranks exactly as one holding every term: checked here with a part size small enough that
most documents of the release corpus are "long", through builds, appends, deletes,
replacements and a save/load round trip."""

from __future__ import annotations

import numpy as np
import pytest

import chronorank.index.text as T
from chronorank.index import TemporalIndex
from chronorank.index.bm25 import doc_lengths

NOW = "2026-08-01T00:00:00Z"
PART = 300  # characters: most release notes are longer


def _release_corpus() -> tuple[list[dict], list[dict]]:
    from chronorank.eval.datasets import release_benchmark_from_snapshot, release_snapshot

    corpus, queries = release_benchmark_from_snapshot(release_snapshot(None))
    return list(corpus), list(queries)


def _same_rankings(a: TemporalIndex, b: TemporalIndex, queries: list[dict]) -> None:
    for q in queries:
        ra = a.search(q["query"], k=20, now=q.get("reference_date") or NOW)
        rb = b.search(q["query"], k=20, now=q.get("reference_date") or NOW)
        assert ra.ranked_ids == rb.ranked_ids, q["query"]
        assert np.array_equal(ra.score, rb.score), q["query"]
        for name in ra.signals:
            assert np.array_equal(ra.signals[name], rb.signals[name]), (q["query"], name)


def _build(corpus: list[dict], monkeypatch: pytest.MonkeyPatch | None, steps: int = 1) -> TemporalIndex:
    if monkeypatch is not None:
        monkeypatch.setattr(T, "LONG_TEXT_CHARS", PART)
    idx = TemporalIndex(embedder="hashing")
    for chunk in np.array_split(np.arange(len(corpus)), steps):
        idx.add([corpus[i] for i in chunk.tolist()])
        idx.search("what changed in the latest release", now=NOW)  # appends then carry postings
    if monkeypatch is not None:
        monkeypatch.undo()
    return idx


def test_a_long_document_keeps_its_lead_and_its_distinct_terms_with_counts(monkeypatch):
    corpus, _ = _release_corpus()
    full = _build(corpus, None)
    folded = _build(corpus, monkeypatch)
    a, b = full._snap, folded._snap
    assert a.term_tf is None and b.term_tf is not None
    assert full._vocab == folded._vocab  # ids in order of first occurrence all the same
    assert np.array_equal(a.lead_len, b.lead_len)
    assert np.array_equal(doc_lengths(a.term_ptr), doc_lengths(b.term_ptr, b.term_tf))
    long_rows = [i for i, d in enumerate(corpus) if len(d["text"]) > PART]
    assert len(long_rows) > len(corpus) // 2
    assert b.term_ids.shape[0] < a.term_ids.shape[0]
    for i in long_rows:
        ids_a = a.term_ids[a.term_ptr[i] : a.term_ptr[i + 1]]
        ids_b = b.term_ids[b.term_ptr[i] : b.term_ptr[i + 1]]
        tf_b = b.term_tf[b.term_ptr[i] : b.term_ptr[i + 1]]
        lead = int(a.lead_len[i])
        assert np.array_equal(ids_b[:lead], ids_a[:lead]) and (tf_b[:lead] == 1).all()
        rest, counts = np.unique(ids_a[lead:], return_counts=True)
        assert np.array_equal(ids_b[lead:], rest) and np.array_equal(tf_b[lead:], counts)


@pytest.mark.parametrize("steps", [1, 4])
def test_long_documents_rank_exactly_as_every_term_held(monkeypatch, steps):
    corpus, queries = _release_corpus()
    full = _build(corpus, None, steps)
    folded = _build(corpus, monkeypatch, steps)
    timeless = [{"query": "how do I export my data"}, {"query": "polars streaming engine"}]
    _same_rankings(full, folded, queries + timeless)
    for t in (3, 7, 40):  # the lead field's matrix, at several widths
        ma, mb = full._snap.lead_bm25(full.k1, full.b, t), folded._snap.lead_bm25(folded.k1, folded.b, t)
        assert np.array_equal(ma.data, mb.data) and np.array_equal(ma.indptr, mb.indptr)
    assert np.array_equal(full._snap.bm25(full.k1, full.b).data, folded._snap.bm25(folded.k1, folded.b).data)


def test_deletes_replacements_and_a_reload_keep_the_counts(monkeypatch, tmp_path):
    corpus, queries = _release_corpus()
    full = _build(corpus, None)
    folded = _build(corpus, monkeypatch)
    gone = [d["id"] for d in corpus[::7]]
    changed = [dict(d, text=d["text"] + " " + d["text"]) for d in corpus[3::11]]
    monkeypatch.setattr(T, "LONG_TEXT_CHARS", PART)
    folded.delete(gone)
    folded.add(changed)
    monkeypatch.undo()
    full.delete(gone)
    full.add(changed)
    _same_rankings(full, folded, queries)
    folded.save(tmp_path / "idx")
    assert (next((tmp_path / "idx").glob("g-*")) / "term_tf.npy").is_file()
    loaded = TemporalIndex.load(tmp_path / "idx")
    assert np.array_equal(loaded._snap.term_tf, folded._snap.term_tf)
    _same_rankings(full, loaded, queries)
    loaded.add([dict(corpus[0], id="again", text=corpus[0]["text"] * 3)])  # an append after the load
    full.add([dict(corpus[0], id="again", text=corpus[0]["text"] * 3)])
    _same_rankings(full, loaded, queries)
