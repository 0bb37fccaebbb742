"""The optional ANN path: HNSW candidates united with time-sliced lanes (chronorank.index.ann)."""

from __future__ import annotations

import builtins
import importlib.util
import subprocess
import sys

import numpy as np
import pytest

from chronorank.errors import InvalidInput, MissingDependency
from chronorank.index import IndexConfig, TemporalIndex
from chronorank.index.ann import AnnLanes, ann_search, lanes_for
from chronorank.types import Intent, Interval

needs_faiss = pytest.mark.skipif(importlib.util.find_spec("faiss") is None, reason="faiss-cpu is not installed")

DAY = 86400.0
NOW = 1_785_000_000.0  # 2026-07-25
DIM = 32
DENSE = IndexConfig(keyword_weight=0.0, dense_weight=1.0)


def _corpus(n: int = 600, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    vecs = rng.standard_normal((n, DIM)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    times = NOW - rng.uniform(60, 3000, n) * DAY  # nothing in the last 60 days
    return vecs, times


def _index(vecs: np.ndarray, times: np.ndarray, config: IndexConfig = DENSE) -> TemporalIndex:
    idx = TemporalIndex(embedder=None, config=config)
    docs = [{"id": f"d{i}", "text": f"doc {i}", "date": float(t)} for i, t in enumerate(times)]
    idx.add(docs, vectors=vecs)
    return idx


def _at_similarity(query: np.ndarray, sim: float, seed: int) -> np.ndarray:
    """A unit vector whose cosine with ``query`` is ``sim``."""
    rng = np.random.default_rng(seed)
    ortho = rng.standard_normal(DIM).astype(np.float32)
    ortho -= (ortho @ query) * query
    ortho /= np.linalg.norm(ortho)
    v = sim * query + np.sqrt(1 - sim**2) * ortho
    return (v / np.linalg.norm(v)).astype(np.float32)


def _topical(n: int = 600, cluster: int = 60, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Background + ``cluster`` old documents on the query's topic (cosine 0.90..0.99)."""
    vecs, times = _corpus(n, seed)
    q = vecs[0]
    sims = np.linspace(0.99, 0.90, cluster)
    vecs[1 : cluster + 1] = np.stack([_at_similarity(q, float(c), 100 + i) for i, c in enumerate(sims)])
    return vecs, times, q


LATEST = Intent("latest q", 1.0, "recent", None, "q")
TIMELESS = Intent("q", 0.0, "timeless", None, "q")


@needs_faiss
def test_candidates_cover_everything_when_ann_k_covers_the_corpus():
    vecs, times = _corpus(300)
    lanes = AnnLanes(vecs, times, m=8, ef_construction=40)
    rows = lanes.candidates(vecs[0], NOW, ann_k=300, lanes=())
    np.testing.assert_array_equal(rows, np.arange(300))


@needs_faiss
@pytest.mark.parametrize("intent", [LATEST, TIMELESS])
def test_results_equal_exact_search_when_ann_k_covers_the_corpus(intent):
    vecs, times = _corpus(400)
    idx = _index(vecs, times)
    q = vecs[7]
    exact = idx.search("q", 10, NOW, vector=q, intent=intent)
    approx = ann_search(idx, "q", 10, NOW, vector=q, intent=intent, ann_k=len(idx))
    assert list(approx.ids) == list(exact.ids)
    np.testing.assert_allclose(approx.score, exact.score)


@needs_faiss
def test_fresh_document_missed_by_ann_wins_through_the_lanes():
    vecs, times, q = _topical()
    fresh = _at_similarity(q, 0.925, 7)  # on topic, but similarity rank ~45: beyond ann_k=20
    idx = _index(np.vstack([vecs, fresh]), np.append(times, NOW - 2 * DAY))
    assert float(fresh @ q) < np.sort(vecs @ q)[::-1][19]
    exact = idx.search("latest q", 10, NOW, vector=q, intent=LATEST)
    assert exact.ids[0] == "d600"  # the exact path lets freshness win

    no_lanes = ann_search(idx, "latest q", 10, NOW, vector=q, intent=LATEST, ann_k=20, lanes=())
    assert "d600" not in list(no_lanes.ids)  # the approximation alone loses it

    for lanes in ((("newest", 5),), (("days", 30),)):
        got = ann_search(idx, "latest q", 10, NOW, vector=q, intent=LATEST, ann_k=20, lanes=lanes)
        assert got.ids[0] == "d600", lanes


@needs_faiss
def test_days_lane_is_the_exact_best_within_the_window():
    vecs, times = _corpus(500)
    times[:50] = NOW - np.linspace(1, 29, 50) * DAY  # 50 docs in the last 30 days
    lanes = AnnLanes(vecs, times, m=8, ef_construction=40)
    q = vecs[100]
    rows = lanes.candidates(q, NOW, ann_k=0, lanes=(("days", 30, 7),))
    in_window = np.flatnonzero(times >= NOW - 30 * DAY)
    best = in_window[np.argsort(-(vecs[in_window] @ q))[:7]]
    np.testing.assert_array_equal(rows, np.sort(best))


@needs_faiss
def test_wide_window_above_slice_cap_stays_inside_the_window():
    vecs, times = _corpus(500)
    lanes = AnnLanes(vecs, times, m=8, ef_construction=40, slice_cap=20)
    q = vecs[0]
    rows = lanes.candidates(q, NOW, ann_k=0, lanes=(("days", 1000, 10),))
    assert rows.size == 10
    assert ((times[rows] >= NOW - 1000 * DAY) & (times[rows] <= NOW)).all()


@needs_faiss
def test_newest_lane_ends_at_now_and_skips_undated():
    vecs, times = _corpus(50)
    times[0] = np.nan
    times[1] = NOW + 10 * DAY  # dated after now: not in the newest lane
    lanes = AnnLanes(vecs, times, m=8, ef_construction=40)
    rows = lanes.candidates(vecs[0], NOW, ann_k=0, lanes=(("newest", 3),))
    dated = np.flatnonzero(~np.isnan(times) & (times <= NOW))
    np.testing.assert_array_equal(rows, np.sort(dated[np.argsort(times[dated])[-3:]]))


@needs_faiss
def test_as_of_target_moves_the_lanes():
    vecs, times, q = _topical()
    target = (NOW - 1000 * DAY, NOW - 1000 * DAY)
    old = _at_similarity(q, 0.925, 7)  # fresh as of the target, similarity rank ~45
    vecs2 = np.vstack([vecs, old])
    times2 = np.append(times, target[0] - DAY)
    lanes = AnnLanes(vecs2, times2, m=8, ef_construction=40)
    at_target = lanes.candidates(q, NOW, ann_k=0, lanes=(("newest", 3),), target=target)
    assert 600 in at_target
    assert (times2[at_target] <= target[1]).all()
    at_now = lanes.candidates(q, NOW, ann_k=0, lanes=(("newest", 3),))
    assert 600 not in at_now

    idx = _index(vecs2, times2)
    as_of = Intent("q as of then", 1.0, "as_of", Interval(*target), "q")
    got = ann_search(idx, "q as of then", 10, NOW, vector=q, intent=as_of, ann_k=20, lanes=(("days", 30),))
    exact = idx.search("q as of then", 10, NOW, vector=q, intent=as_of)
    assert "d600" in list(exact.ids)
    assert "d600" in list(got.ids)  # the intent's target became the lanes' reference interval


@needs_faiss
def test_cache_rebuilds_when_the_index_changes():
    vecs, times = _corpus(100)
    idx = _index(vecs, times)
    first = lanes_for(idx, m=8, ef_construction=40)
    assert lanes_for(idx, m=8, ef_construction=40) is first
    idx.delete(["d0"])
    second = lanes_for(idx, m=8, ef_construction=40)
    assert second is not first and len(second) == 99


@needs_faiss
def test_hybrid_index_embeds_the_topical_query():
    from chronorank.index import HashingEmbedder

    idx = TemporalIndex(embedder=HashingEmbedder(64))
    idx.add([
        {"id": "a@1", "text": "alpha release notes one", "date": "2020-01-01"},
        {"id": "a@2", "text": "alpha release notes two", "date": "2026-07-01"},
        {"id": "b@1", "text": "beta something else", "date": "2026-07-20"},
    ])
    exact = idx.search("latest alpha release", 2, "2026-08-01")
    got = ann_search(idx, "latest alpha release", 2, "2026-08-01", ann_k=1)
    assert list(got.ids) == list(exact.ids)


@needs_faiss
def test_bad_inputs_raise_with_a_fix():
    vecs, times = _corpus(20)
    lanes = AnnLanes(vecs, times, m=8, ef_construction=40)
    with pytest.raises(InvalidInput, match="lane"):
        lanes.candidates(vecs[0], NOW, lanes=(("weeks", 2),))
    with pytest.raises(InvalidInput, match="shape"):
        lanes.candidates(vecs[0][:5], NOW)
    with pytest.raises(InvalidInput, match="target"):
        lanes.candidates(vecs[0], NOW, target=(NOW, NOW - 1))
    with pytest.raises(InvalidInput, match="times"):
        AnnLanes(vecs, times[:5])
    kw = TemporalIndex(embedder=None)
    kw.add([{"id": "x", "text": "hello"}])
    with pytest.raises(InvalidInput, match="vectors"):
        ann_search(kw, "hello", now=NOW)


def test_missing_faiss_raises_missing_dependency_with_the_pip_line(monkeypatch):
    real_import = builtins.__import__

    def no_faiss(name, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003
        if name == "faiss" or name.startswith("faiss."):
            raise ImportError("No module named 'faiss'")
        return real_import(name, *args, **kwargs)

    monkeypatch.delitem(sys.modules, "faiss", raising=False)
    monkeypatch.setattr(builtins, "__import__", no_faiss)
    monkeypatch.setattr("importlib.import_module", lambda name, *a: no_faiss(name))
    vecs, times = _corpus(10)
    with pytest.raises(MissingDependency, match=r'pip install "chronorank\[ann\]"') as err:
        AnnLanes(vecs, times)
    assert "faiss-cpu" in str(err.value)


def test_importing_the_module_does_not_import_faiss():
    code = "import chronorank.index.ann, sys; print('faiss' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@needs_faiss
def test_search_ann_option_equals_exact_when_the_pool_covers_the_corpus():
    vecs, times = _corpus(300)
    idx = _index(vecs, times)
    q = vecs[3]
    exact = idx.search("q", 10, NOW, vector=q, intent=LATEST)
    approx = idx.search("q", 10, NOW, vector=q, intent=LATEST, ann={"ann_k": 300})
    assert list(approx.ids) == list(exact.ids)
    np.testing.assert_allclose(approx.score, exact.score)


@needs_faiss
def test_search_ann_option_finds_the_fresh_document_through_a_lane():
    vecs, times, q = _topical()
    fresh = _at_similarity(q, 0.925, 7)
    idx = _index(np.vstack([vecs, fresh]), np.append(times, NOW - 2 * DAY))
    got = idx.search("latest q", 10, NOW, vector=q, intent=LATEST, ann={"ann_k": 20, "lanes": (("newest", 5),)})
    assert got.ids[0] == "d600"
