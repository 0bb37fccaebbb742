"""TemporalIndex: add/upsert/delete, exact scoring, fusion, validation, concurrency."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chronorank.errors import InvalidInput
from chronorank.index import HashingEmbedder, IndexConfig, TemporalIndex
from chronorank.index.bm25 import build_matrix
from chronorank.index.text import analyze
from chronorank.types import Intent

NOW = "2026-08-01"
RECENT = Intent("q", 1.0, "recent", None, "q")


def _docs():
    return [
        {"id": "httpx@0.27.0", "text": "httpx 0.27.0. Add proxy support and fix timeouts", "date": "2024-02-21"},
        {"id": "httpx@0.28.1", "text": "httpx 0.28.1. Fix verify=False with custom ssl context", "date": "2024-12-06"},
        {"id": "flask@3.1.0", "text": "flask 3.1.0. Drop Python 3.8, add session partitioning", "date": "2024-11-13"},
        {"id": "flask@3.1.3", "text": "flask 3.1.3. Security fix for session cookies", "date": "2026-02-18",
         "metadata": {"project": "flask"}},
    ]


@pytest.fixture()
def small():
    idx = TemporalIndex(embedder=HashingEmbedder(64))
    idx.add(_docs())
    return idx


def test_analyzer_keeps_versions_and_compounds():
    terms = analyze("What changed in httpx v2.3.1 and scikit-learn send_json?")
    assert "2.3.1" in terms and "2" not in terms
    assert {"scikit-learn", "scikit", "learn", "send_json", "send", "json", "httpx"} <= set(terms)
    assert "2.3.10" not in analyze("release 2.3.1") and analyze("v2.3.1") == analyze("2.3.1")


def test_search_returns_hits_with_explanations(small):
    hits = small.search("latest httpx release", k=2, now=NOW)
    assert len(hits) == 2
    assert hits[0].id == "httpx@0.28.1"
    assert "httpx@0.28.1" in hits[0].explain()
    assert hits[0].payload["text"].startswith("httpx 0.28.1")
    assert set(hits[0].signals) >= {"dense", "bm25"}
    assert "query:" in hits.explain()


def test_version_query_finds_exact_version(small):
    hits = small.search("httpx 0.27.0 changelog", k=1, now=NOW)
    assert hits[0].id == "httpx@0.27.0"


def test_upsert_replaces_and_delete_removes(small):
    small.add([{"id": "httpx@0.27.0", "text": "httpx 0.27.0. Rewritten notes mentioning brotli", "date": "2024-02-21"}])
    assert len(small) == 4
    assert small.get("httpx@0.27.0")["text"].endswith("brotli")
    assert small.search("brotli", k=1, now=NOW)[0].id == "httpx@0.27.0"
    assert small.delete(["httpx@0.27.0", "nope"]) == 1
    assert "httpx@0.27.0" not in small and len(small) == 3
    assert all(h.id != "httpx@0.27.0" for h in small.search("brotli httpx", k=10, now=NOW))
    with pytest.raises(InvalidInput, match="nope"):
        small.delete(["nope"], missing="raise")


def test_metadata_is_merged_and_kept(small):
    rec = small.get("flask@3.1.3")
    assert rec["metadata"] == {"project": "flask"} and rec["date"] == "2026-02-18"


def test_bad_input_is_reported():
    idx = TemporalIndex(embedder=HashingEmbedder(16))
    with pytest.raises(InvalidInput, match="text"):
        idx.add([{"id": "a"}])
    with pytest.raises(InvalidInput, match="id"):
        idx.add([{"text": "x"}])
    with pytest.raises(InvalidInput, match="repeats id='a'"):
        idx.add([{"id": "a", "text": "x"}, {"id": "a", "text": "y"}])
    with pytest.raises(InvalidInput, match="'a'.*not a date"):
        idx.add([{"id": "a", "text": "x", "date": "the day after tomorrow-ish"}])
    assert len(idx) == 0  # nothing half-written
    with pytest.raises(InvalidInput, match="k=0"):
        idx.search("x", k=0)
    with pytest.raises(InvalidInput):
        TemporalIndex(embedder=None, config="index(fusion='bogus')")
    lenient = TemporalIndex(embedder=HashingEmbedder(16), bad_dates="missing")
    lenient.add([{"id": "a", "text": "x", "date": "the day after tomorrow-ish"}])
    assert np.isnan(lenient._snap.times[0, 0])
    assert lenient.get("a")["date"] == "the day after tomorrow-ish"  # kept as written


def test_user_vectors_key_and_argument():
    idx = TemporalIndex(embedder=None)
    idx.add([{"id": "a", "text": "alpha", "vector": [1, 0, 0]}, {"id": "b", "text": "beta", "vector": [0, 1, 0]}])
    idx.add([{"id": "c", "text": "gamma"}], vectors=np.array([[0, 0, 2.0]]))
    hits = idx.search("anything", vector=[0, 0, 1], now=NOW, intent=Intent("q", 0.0, "timeless"), dense_weight=1, keyword_weight=0)
    assert hits[0].id == "c" and hits[0].similarity == pytest.approx(1.0)
    with pytest.raises(InvalidInput, match="width 2"):
        idx.add([{"id": "d", "text": "d", "vector": [1, 0]}])
    with pytest.raises(InvalidInput, match="has no vector"):
        idx.add([{"id": "e", "text": "no vector"}])
    with pytest.raises(InvalidInput, match="no embedder"):
        idx.search("alpha", now=NOW)


def test_fresh_document_at_similarity_rank_500_wins():
    rng = np.random.default_rng(0)
    n, dim = 1200, 32
    q = rng.normal(size=dim).astype(np.float32)
    q /= np.linalg.norm(q)
    noise = rng.normal(size=(n, dim)).astype(np.float32)
    sims = np.linspace(0.9, 0.1, n)  # row i has similarity rank i + 1
    vecs = sims[:, None] * q[None, :] + np.sqrt(1 - sims[:, None] ** 2) * _orth(noise, q)
    docs = [{"id": f"d{i}", "text": f"doc {i}", "date": "2015-01-01"} for i in range(n)]
    docs[499]["date"] = "2026-07-31"
    idx = TemporalIndex(embedder=None, config="index(dense_weight=1, keyword_weight=0, topical_margin=none)")
    idx.add(docs, vectors=vecs)
    cfg = "index(dense_weight=1, keyword_weight=0, topical_margin=none, kernel='exponential(half_life_days=30)', relative_recency=none)"
    hits = idx.search("q", k=3, now=NOW, vector=q, intent=RECENT, config=cfg)
    assert hits[0].id == "d499"
    assert hits[0].rank_before == 500 and hits[0].rank_after == 1


def _orth(noise: np.ndarray, q: np.ndarray) -> np.ndarray:
    noise = noise - (noise @ q)[:, None] * q[None, :]
    return noise / np.linalg.norm(noise, axis=1, keepdims=True)


def test_fusions_and_overrides(small):
    rrf = small.search("httpx proxy", k=4, now=NOW, config="index(fusion='rrf', dense_weight=1, keyword_weight=1)")
    blend = small.search("httpx proxy", k=4, now=NOW, fusion="blend", strength=0.0)
    assert rrf.meta["fusion"] == "rrf" and blend.meta["fusion"] == "blend"
    assert blend[0].id == "httpx@0.27.0"  # strength 0: similarity alone
    assert all(0.0 <= h.similarity <= 1.0 for h in list(rrf) + list(blend))


def test_candidates_restrict_the_pool(small):
    hits = small.search("httpx", k=10, now=NOW, candidates=["flask@3.1.0", "httpx@0.27.0"])
    assert sorted(h.id for h in hits) == ["flask@3.1.0", "httpx@0.27.0"]
    with pytest.raises(InvalidInput, match="zzz"):
        small.search("httpx", now=NOW, candidates=["zzz"])


def test_config_spec_round_trips():
    cfg = IndexConfig.from_spec("index(fusion='rrf', kernel='weibull(half_life_days=90, shape=2)', relative_recency=0.8)")
    assert IndexConfig.from_spec(cfg.spec()).spec() == cfg.spec()
    with pytest.raises(InvalidInput, match="unknown temporal"):
        IndexConfig.from_spec("index(bogus=1)")


def test_search_during_upserts_sees_old_or_new_state():
    idx = TemporalIndex(embedder=HashingEmbedder(32))
    idx.add([{"id": f"a{i}", "text": f"alpha {i}", "date": "2025-01-01"} for i in range(200)])
    sizes: set[int] = set()
    errors: list[BaseException] = []
    stop = threading.Event()

    def reader() -> None:
        try:
            while not stop.is_set():
                r = idx.search("alpha beta", k=5, now=NOW)
                sizes.add(r.meta["n_docs"])
                assert len(r) == 5
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    t = threading.Thread(target=reader)
    t.start()
    for step in range(10):
        idx.add([{"id": f"b{step}-{i}", "text": f"beta {i}", "date": "2026-01-01"} for i in range(50)])
    stop.set()
    t.join()
    assert not errors
    assert sizes <= {200 + 50 * s for s in range(11)}


def test_bm25_numpy_builder_matches_bm25s():
    pytest.importorskip("bm25s")
    rng = np.random.default_rng(1)
    lengths = rng.integers(0, 30, size=60)
    ptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    ids = rng.integers(0, 40, size=int(ptr[-1])).astype(np.int32)
    a = build_matrix(ids, ptr, 40, k1=1.2, b=0.3)
    b = build_matrix(ids, ptr, 40, k1=1.2, b=0.3, builder="bm25s")
    assert np.array_equal(a.indptr, b.indptr) and np.array_equal(a.indices, b.indices)
    np.testing.assert_allclose(a.data, b.data, rtol=1e-5)
    import bm25s

    ref = bm25s.BM25(method="lucene")
    ref.scores = {"data": b.data, "indices": b.indices, "indptr": b.indptr, "num_docs": b.num_docs}
    ref.nonoccurrence_array = None
    query = [3, 7, 7, 21]
    np.testing.assert_allclose(a.scores(query), ref.get_scores_from_ids(query), rtol=1e-5)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.integers(0, 12), st.sampled_from(["red fox", "blue fox jumps", "lazy dog", "red dog 1.2.3"])), min_size=1, max_size=25))
def test_upserts_and_deletes_keep_bm25_consistent(ops):
    idx = TemporalIndex(embedder=None)
    truth: dict[str, str] = {}
    for is_add, key, text in ops:
        doc_id = f"d{key}"
        if is_add:
            idx.add([{"id": doc_id, "text": f"{text} {key}"}])
            truth[doc_id] = f"{text} {key}"
        else:
            idx.delete([doc_id])
            truth.pop(doc_id, None)
    assert sorted(idx.ids) == sorted(truth)
    fresh = TemporalIndex(embedder=None)
    fresh.add([{"id": k, "text": v} for k, v in truth.items()])
    if not truth:
        return
    for q in ("red fox", "dog 1.2.3", "jumps"):
        got = idx.search(q, k=len(truth), now=NOW, intent=Intent(q, 0.0, "timeless"))
        want = fresh.search(q, k=len(truth), now=NOW, intent=Intent(q, 0.0, "timeless"))
        assert dict(zip(got.ranked_ids, np.round(got.signals["bm25"], 5))) == dict(
            zip(want.ranked_ids, np.round(want.signals["bm25"], 5))
        )


def test_lead_is_the_first_sentence_weighted_by_the_corpus_idf():
    from chronorank.index.core import lead_lengths

    assert lead_lengths(["marshmallow 3.23.0. Features: typing", "Pricing\nPro plan: 25 dollars"]).tolist() == [
        len(analyze("marshmallow 3.23.0", prefixes=True)), len(analyze("Pricing"))]
    filler = [{"id": f"pip@{i}", "text": f"pip {i}.0. This release vendors a newer release of urllib3.",
               "date": "2026-01-01"} for i in range(20, 28)]
    docs = filler + [
        {"id": "marshmallow@3.23.0", "text": "marshmallow 3.23.0. Typing fixes.", "date": "2024-10-17"},
        # "release" opens this one: rare among opening lines, common in the corpus
        {"id": "aiohttp@3.13.3", "text": "This release of aiohttp fixes bugs. One example uses marshmallow.",
         "date": "2026-01-03"},
    ]
    idx = TemporalIndex(embedder=None)
    idx.add(docs)
    hits = idx.search("the latest release of marshmallow", k=len(docs), now=NOW)
    by_id = {h.id: h for h in hits}
    assert by_id["marshmallow@3.23.0"].signals["lead"] > 2 * by_id["aiohttp@3.13.3"].signals["lead"]
    # on similarity alone the title wins over the passing mention
    assert idx.search("the latest release of marshmallow", k=1, now=NOW, strength=0)[0].id == "marshmallow@3.23.0"
    assert by_id["pip@20"].signals["lead"] == 0.0  # "release" is not in its first sentence


def test_lead_lengths_follow_upserts_and_deletes(small):
    from chronorank.index.core import lead_lengths

    small.search("httpx proxy", now=NOW)  # builds the lead once
    small.add([{"id": "new", "text": "urllib3 2.7.0. Drop Python 3.9", "date": "2026-07-01"},
               {"id": "httpx@0.27.0", "text": "httpx proxy release notes\nreplaced text", "date": "2024-02-21"}])
    small.delete(["flask@3.1.0"])
    snap = small._snap
    assert snap.lead_len is not None
    assert snap.lead_len.tolist() == lead_lengths(r["text"] for r in snap.records).tolist()
    assert small.search("urllib3", k=1, now=NOW)[0].id == "new"


def test_version_series_queries():
    assert analyze("werkzeug 2.3.0", prefixes=True) == ["werkzeug", "2.3.0", "2.3.*", "2.3"]
    assert analyze("v2.3.1", prefixes=True) == ["2.3.1", "2.3.*"]
    assert analyze("werkzeug 2.3", series=True) == ["werkzeug", "2.3", "2.3.*"]
    assert analyze("werkzeug 2.3") == ["werkzeug", "2.3"]  # plain analysis is unchanged
    docs = [
        {"id": "werkzeug@2.2.3", "text": "werkzeug 2.2.3. Fix a bug in the router.", "date": "2023-02-14"},
        {"id": "werkzeug@2.3.0", "text": "werkzeug 2.3.0. Drop Python 3.7, new router.", "date": "2023-04-25"},
        {"id": "werkzeug@2.3.1", "text": "werkzeug 2.3.1. Fix a regression in the router.", "date": "2023-04-27"},
        {"id": "click@2.3", "text": "click 2.3. New option parsing.", "date": "2014-08-01"},
        {"id": "pip@23.1", "text": "pip 23.1. Remove legacy install.", "date": "2023-04-15"},
        {"id": "pip@23.1.2", "text": "pip 23.1.2. Fix a crash.", "date": "2023-04-26"},
        {"id": "attrs@23.1.0", "text": "attrs 23.1.0. Python 3.11 support.", "date": "2023-04-16"},
    ]
    idx = TemporalIndex(embedder=None)
    idx.add(docs)
    series = [h.id for h in idx.search("werkzeug 2.3 changelog", k=7, now=NOW)]
    assert series[0] == "werkzeug@2.3.0"  # "2.3" is 2.3.0
    assert series.index("werkzeug@2.3.1") < series.index("werkzeug@2.2.3")  # in the series
    assert idx.search("what changed in werkzeug 2.3.1", k=1, now=NOW)[0].id == "werkzeug@2.3.1"
    assert idx.search("pip 23.1 notes", k=1, now=NOW)[0].id == "pip@23.1"  # the exact name wins


def test_the_lead_keeps_its_share_when_the_dense_signal_is_missing():
    from chronorank.index.core import _fuse

    cfg = IndexConfig()  # dense 0.5, keyword 0.5, lead 0.5: the lead is a third of the whole
    bm25 = np.array([1.0, 1.0])
    lead = np.array([1.0, 0.0])  # only the first document's opening line names the subject
    keyword_only = _fuse({"bm25": bm25, "lead": lead}, cfg)
    full = _fuse({"dense": np.array([0.8, 0.8]), "bm25": bm25, "lead": lead}, cfg)
    # a perfect body match without the title words keeps 2/3 either way: inside the
    # topical margin (0.5), so time can still prefer it
    assert keyword_only[1] / keyword_only[0] == pytest.approx(2 / 3)
    assert full[1] / full[0] == pytest.approx((0.5 * 0.8 + 0.5) / (0.5 * 0.8 + 0.5 + 0.5))


def test_a_fresh_page_under_another_title_makes_the_titled_stale_page_old():
    """A "Price update" page a little less similar than two older "Pro plan pricing" pages
    still wins a time-sensitive question (relative recency counts from it)."""
    docs = [
        {"id": "old", "text": "Pro plan pricing. The Pro plan costs 12 dollars per seat.", "date": "2021-03-11"},
        {"id": "mid", "text": "Pro plan pricing. The Pro plan costs 18 dollars per seat.", "date": "2023-08-02"},
        {"id": "new", "text": "Announcing our 2026 prices: Pro now costs 25 dollars per seat per month.",
         "date": "2026-05-14"},
    ] + [{"id": f"f{i}", "text": f"Release notes {i}. Fixed a bug in the exporter and improved logging.",
          "date": "2025-01-01"} for i in range(30)]
    idx = TemporalIndex()  # the default: MiniLM + BM25 + lead
    idx.add(docs)
    for q in ("how much is the pro plan", "what does the pro plan cost now", "current pro plan pricing"):
        assert idx.search(q, k=1, now=NOW)[0].id == "new", q


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(alphabet=st.sampled_from(list("ab zv12.0!?\n-_+İΣσXé")), max_size=60)
                | st.builds(lambda w, n: (w + " ") * n, st.sampled_from(["scikit-learn", "v2.3.0.", "the", "İstanbul"]),
                            st.integers(0, 90)),
                min_size=1, max_size=8))
def test_lead_lengths_from_the_build_pass_equal_the_separate_analysis(texts):
    """add() takes each lead's length from its one analysis pass (analyze_documents); it must
    equal analysing the lead on its own, including a token cut at the 400-character scan."""
    from chronorank.index.core import lead_cut, lead_lengths
    from chronorank.index.text import analyze_documents, analyze_many

    terms, leads = analyze_documents(texts, [lead_cut(t) for t in texts])
    assert terms == analyze_many(texts, prefixes=True)
    assert leads == lead_lengths(texts).tolist()
