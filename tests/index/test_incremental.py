"""Appends and the batch analyzer give exactly what a rebuild and the per-text analyzer give.

- An index built by one ``add`` and one built by many appends (searched in between, so the
  carried BM25 postings are used) rank and score every query identically, and save the same
  BM25 and lead matrices.
- ``analyze_many`` / ``analyze_documents`` / ``encode_documents`` (one regex scan per text,
  a table per distinct token) equal ``analyze`` text by text, token for token, on the bundled
  release notes and, when ``../shared/data`` is beside the repository, on every corpus there.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chronorank.index import TemporalIndex
from chronorank.index.bm25 import Bm25Postings, build_matrix, encode_terms
from chronorank.index.core import lead_cut
from chronorank.index.text import analyze, analyze_documents, analyze_many, encode_documents

SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "data"
NOW = "2026-08-01T00:00:00Z"


def _release_corpus() -> tuple[list[dict], list[dict]]:
    from chronorank.eval.datasets import release_benchmark_from_snapshot, release_snapshot

    corpus, queries = release_benchmark_from_snapshot(release_snapshot(None))
    return list(corpus), list(queries)


def _shared_texts() -> list[tuple[str, list[str]]]:
    out = []
    for name in ("changelogs", "news-dev"):
        path = SHARED / name / "corpus.jsonl"
        if path.is_file():
            with path.open(encoding="utf-8") as fh:
                out.append((name, [json.loads(line)["text"] for line in fh if line.strip()]))
    rel = SHARED / "tdw-rag-release-corpus" / "release_corpus.json"
    if rel.is_file():
        docs = json.loads(rel.read_text(encoding="utf-8"))["documents"]
        out.append(("tdw-rag-release-corpus", [d["text"] for d in docs]))
    return out


# ---------------------------------------------------------------------- appends


def _appended(corpus: list[dict], first: int, seed: int, search_every: bool, **kw) -> TemporalIndex:
    idx = TemporalIndex(**kw)
    idx.add(corpus[:first])
    rng = np.random.default_rng(seed)
    i = first
    while i < len(corpus):
        k = int(rng.integers(1, 9))
        idx.add(corpus[i : i + k])
        i += k
        if search_every or rng.random() < 0.3:
            idx.search("what changed in the latest release", now=NOW)
    return idx


def _same_rankings(a: TemporalIndex, b: TemporalIndex, queries: list[dict]) -> None:
    for q in queries:
        ra = a.search(q["query"], k=20, now=q.get("reference_date") or NOW)
        rb = b.search(q["query"], k=20, now=q.get("reference_date") or NOW)
        assert ra.ranked_ids == rb.ranked_ids, q["query"]
        assert np.array_equal(ra.score, rb.score), q["query"]
        assert ra.signals.keys() == rb.signals.keys()
        for name in ra.signals:
            assert np.array_equal(ra.signals[name], rb.signals[name]), (q["query"], name)


@pytest.mark.parametrize("search_every", [True, False])
def test_many_appends_rank_exactly_as_one_build(search_every):
    corpus, queries = _release_corpus()
    one = TemporalIndex(embedder="hashing")
    one.add(corpus)
    many = _appended(corpus, 40, 7, search_every, embedder="hashing")
    if search_every:  # the carried postings were used, not a rebuild
        assert isinstance(many._snap._bm25, Bm25Postings)
        assert all(isinstance(m, Bm25Postings) for m in many._snap._lead.values())
    assert many._vocab == one._vocab
    for name in ("term_ids", "term_ptr", "lead_len", "vectors"):
        assert np.array_equal(getattr(many._snap, name), getattr(one._snap, name)), name
    assert np.array_equal(many._snap.times, one._snap.times, equal_nan=True)
    timeless = [{"query": "how do I export my data"}, {"query": "polars streaming engine"}]
    _same_rankings(one, many, queries + timeless)
    # the same title groups (an appended index numbers the titles it meets later after the others)
    assert np.array_equal(_groups(one._snap.titles), _groups(many._snap.titles))


def _groups(codes: np.ndarray) -> np.ndarray:
    """Codes renumbered by first occurrence: equal for two labellings of one partition."""
    _, first, inv = np.unique(codes, return_index=True, return_inverse=True)
    rank = np.empty(first.shape[0], dtype=np.int64)
    rank[np.argsort(first)] = np.arange(first.shape[0])
    return rank[inv.reshape(-1)]


def test_appended_index_saves_the_matrices_of_a_build(tmp_path):
    corpus, queries = _release_corpus()
    one = TemporalIndex(embedder=None)
    one.add(corpus)
    many = _appended(corpus, 100, 3, True, embedder=None)
    one.save(tmp_path / "one")
    many.save(tmp_path / "many")
    gen = {k: tmp_path / k / json.loads((tmp_path / k / "CURRENT").read_text())["generation"] for k in ("one", "many")}
    for stem in ("bm25", "lead"):
        for part in ("data", "indices", "indptr"):
            f = f"{stem}_{part}.npy"
            assert np.array_equal(np.load(gen["one"] / f), np.load(gen["many"] / f)), f
    _same_rankings(TemporalIndex.load(tmp_path / "one"), TemporalIndex.load(tmp_path / "many"), queries[:20])


def test_appends_after_a_load_and_replacements_stay_exact(tmp_path):
    corpus, queries = _release_corpus()
    base = TemporalIndex(embedder=None)
    base.add(corpus[:150])
    base.search("duckdb release", now=NOW)
    base.save(tmp_path / "ix")
    loaded = TemporalIndex.load(tmp_path / "ix")
    loaded.search("duckdb release", now=NOW)  # a loaded (memory-mapped) matrix, then appends
    for i in range(150, len(corpus), 10):
        loaded.add(corpus[i : i + 10])
        loaded.search("duckdb release", now=NOW)
    edited = dict(corpus[3], text=corpus[3]["text"] + " (edited)")
    loaded.add([edited])  # a replacement compacts: a rebuild, still the same result
    one = TemporalIndex(embedder=None)
    one.add([d for i, d in enumerate(corpus) if i != 3] + [edited])
    _same_rankings(one, loaded, queries[:25])


def test_an_older_snapshot_keeps_its_rows_while_appends_fill_the_spare_room():
    corpus, _ = _release_corpus()
    idx = TemporalIndex(embedder="hashing")
    idx.add(corpus[:50])
    idx.add(corpus[50:51])
    old = idx._snap
    saved = {k: np.array(getattr(old, k), copy=True) for k in ("vectors", "times", "term_ids", "term_ptr", "lead_len")}
    idx.add(corpus[51:52])
    idx.add(corpus[52:60])
    new = idx._snap
    # the new rows went into the buffer the older snapshot's arrays are views of
    assert np.shares_memory(old.vectors, new.vectors) and np.shares_memory(old.term_ids, new.term_ids)
    for k, v in saved.items():
        assert np.array_equal(getattr(old, k), v, equal_nan=True), k
    assert len(old) == 51 and len(new) == 60 and old.ids == [d["id"] for d in corpus[:51]]
    assert old.row_of.get(corpus[55]["id"]) is None and new.row_of[corpus[55]["id"]] == 55
    # a second branch from the old snapshot cannot write into rows another snapshot owns
    from chronorank.index.core import _concat_vectors

    before = new.vectors.copy()
    extra = np.ones((1, old.vectors.shape[1]), dtype=np.float32)
    branch = _concat_vectors(old.vectors, extra, len(old), extra.shape[1], dict(old.bufs))
    assert branch is not None and not np.shares_memory(branch, new.vectors)
    assert np.array_equal(new.vectors, before)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.lists(st.integers(0, 30), max_size=25), min_size=1, max_size=40),
    st.lists(st.integers(1, 6), min_size=1, max_size=40),
    st.sampled_from([(1.2, 0.3), (1.5, 0.75), (0.9, 0.0), (2.0, 1.0)]),
)
def test_postings_scores_equal_the_built_matrix_to_the_bit(docs, chunks, params):
    """Bm25Postings built in pieces (any chunking, merges included) scores every query
    exactly as build_matrix over all documents, idf included; matrix() is that matrix."""
    k1, b = params

    def flat(ds):
        ptr = np.zeros(len(ds) + 1, dtype=np.int64)
        np.cumsum([len(d) for d in ds], out=ptr[1:])
        ids = np.array([t for d in ds for t in d], dtype=np.int32)
        return ids, ptr

    post = None
    i = 0
    sizes = iter(chunks * 40)
    while i < len(docs):
        part = docs[i : i + next(sizes)]
        n_terms = 1 + max([t for d in docs[: i + len(part)] for t in d], default=0)
        ids, ptr = flat(part)
        post = Bm25Postings.build(ids, ptr, n_terms, k1=k1, b=b) if post is None else post.append(ids, ptr, n_terms)
        i += len(part)
    assert post is not None
    ids, ptr = flat(docs)
    n_terms = 1 + max([t for d in docs for t in d], default=0)
    ref = build_matrix(ids, ptr, n_terms, k1=k1, b=b)
    q = np.arange(n_terms)
    assert np.array_equal(post.idf(q), ref.idf(q))
    for terms in ([0], [1, 2, 2, 5], list(range(n_terms))):
        assert np.array_equal(post.scores(terms), ref.scores(terms))
        assert np.array_equal(post.scores(terms, idf_power=0.5), ref.scores(terms, idf_power=0.5))
    # holds: each term's score above 0 at some rows (any order, repeats), from the postings alone
    rows = np.array([len(docs) - 1, 0, *range(0, len(docs), 2), 0], dtype=np.int64)
    terms = np.array([0, n_terms - 1, *range(n_terms), n_terms + 3, -1], dtype=np.int64)
    want = np.stack([ref.scores([t])[rows] > 0 for t in terms.tolist()])
    assert np.array_equal(post.holds(terms, rows), want)  # the segments (no matrix built yet)
    assert np.array_equal(ref.holds(terms, rows), want)
    m = post.matrix()
    assert np.array_equal(post.holds(terms, rows), want)  # through the matrix
    assert np.array_equal(m.indptr, ref.indptr) and np.array_equal(m.indices, ref.indices)
    assert np.array_equal(m.data, ref.data)
    # the postings solved from the matrix's scores (the first append after a build or a
    # load) are the counted ones
    solved = Bm25Postings.from_matrix(ref, np.diff(ptr), k1=k1, b=b)
    counted = Bm25Postings.build(ids, ptr, n_terms, k1=k1, b=b)
    assert solved is not None and len(solved.segments) == len(counted.segments)
    for x, y in zip(solved.segments, counted.segments):
        assert all(np.array_equal(getattr(x, f), getattr(y, f)) for f in ("terms", "rows", "tf"))


# ---------------------------------------------------------------------- the batch analyzer


def _check_identical(texts: list[str]) -> None:
    cuts = [lead_cut(t) for t in texts]
    ref = [analyze(t, prefixes=True) for t in texts]
    terms, leads = analyze_documents(texts, cuts)
    assert terms == ref
    assert leads == [len(analyze(t[:c], prefixes=True)) for t, c in zip(texts, cuts)]
    assert analyze_many(texts, prefixes=True) == ref
    assert analyze_many(texts) == [analyze(t) for t in texts]
    assert analyze_many(texts, stem=False) == [analyze(t, stem=False) for t in texts]
    v_ref: dict[str, int] = {"pre": 0}
    v_new: dict[str, int] = {"pre": 0}
    ids_ref, ptr_ref = encode_terms(ref, v_ref)
    ids, ptr, lead = encode_documents(texts, cuts, v_new)
    assert v_new == v_ref and list(v_new) == list(v_ref)  # the same ids, in the same order
    assert ids.dtype == ids_ref.dtype and np.array_equal(ids, ids_ref) and np.array_equal(ptr, ptr_ref)
    assert lead.tolist() == leads


def test_batch_analyzer_equals_analyze_on_the_bundled_release_notes():
    corpus, _ = _release_corpus()
    _check_identical([d["text"] for d in corpus])


@pytest.mark.skipif(not SHARED.is_dir(), reason="needs ../shared/data (the team's corpora beside the repository)")
def test_batch_analyzer_equals_analyze_on_every_shared_corpus():
    found = _shared_texts()
    assert found, f"no corpus found under {SHARED}"
    for _name, texts in found:
        _check_identical(texts)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(alphabet=st.sampled_from(list("aZ _.-+1v2.0!?\nİΣσ²é")), max_size=50), min_size=1, max_size=6))
def test_batch_analyzer_equals_analyze_on_odd_text(texts):
    """Underscores, joiners, versions, case changes that move offsets, a cut inside a token."""
    _check_identical(texts + [t * 30 for t in texts])


def test_appended_columns_copy_the_recent_values_only_and_leave_older_ones_unchanged(monkeypatch):
    from chronorank.index.records import Grown, grown

    monkeypatch.setattr(Grown, "FOLD", 5)
    base = list(range(10))
    a = grown(base, [10, 11])
    b = grown(a, [12])
    assert isinstance(b, Grown) and b.base is base  # the 10 first values are not copied
    assert list(a) == list(range(12)) and b == list(range(13)) and len(b) == 13
    assert b[-1] == 12 and b[3] == 3 and b[10:12] == [10, 11]
    assert b[8:12] == [8, 9, 10, 11] and b[2:4] == [2, 3] and b[::5] == [0, 5, 10] and b[11:99] == [11, 12]
    with pytest.raises(IndexError):
        b[13]
    c = grown(b, [13, 14, 15])  # past FOLD: one plain list again
    assert isinstance(c, list) and c == list(range(16))
    assert a == list(range(12)) and base == list(range(10))  # older states unchanged
