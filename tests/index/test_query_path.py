"""The search path's shortcuts (issue 19, item 4) against the plain computations they replace."""

from __future__ import annotations

import json

import numpy as np
import pytest

from chronorank.index import TemporalIndex
from chronorank.index.config import IndexConfig
from chronorank.index.core import SMALL_MATVEC, _cosines, _top_k
from chronorank.index.records import Records
from chronorank.ranking import burst_scale as _burst_scale

DAY = 86400.0


def test_top_k_is_best_first_with_ties_by_the_tie_rule() -> None:
    # TIE_RULE: equal scores newer first (undated last), then the smaller id
    rng = np.random.default_rng(3)
    for _ in range(200):
        n = int(rng.integers(1, 60))
        score = rng.integers(0, 5, size=n).astype(np.float64)  # many ties
        time = rng.integers(0, 3, size=n).astype(np.float64)  # ties in time too
        time[rng.random(n) < 0.2] = np.nan
        ids = [f"d{int(i):03d}" for i in rng.permutation(n)]
        k = int(rng.integers(1, n + 1))
        newer = np.where(np.isnan(time), np.inf, -time)
        expected = sorted(range(n), key=lambda i: (-score[i], newer[i], ids[i]))[:k]  # noqa: B023
        assert _top_k(score, k, time, ids).tolist() == expected


def test_top_k_of_a_pool_is_the_top_k_of_the_whole_when_the_rest_scores_lower() -> None:
    rng = np.random.default_rng(4)
    score = rng.integers(0, 4, size=500).astype(np.float64)
    time = rng.integers(0, 5, size=500).astype(np.float64)
    ids = range(500)
    pool = np.flatnonzero(score >= 2)  # everything outside scores below everything inside
    in_pool = _top_k(score[pool], 10, time[pool], [ids[i] for i in pool])
    assert pool[in_pool].tolist() == _top_k(score, 10, time, ids).tolist()


@pytest.mark.parametrize("n", [50, SMALL_MATVEC // 16 + 7])
def test_cosines_match_the_matvec(n: int) -> None:
    rng = np.random.default_rng(5)
    v = rng.standard_normal((n, 16), dtype=np.float32)
    q = rng.standard_normal(16, dtype=np.float32)
    out = _cosines(v, q)
    assert out.dtype == np.float32 and out.shape == (n,)
    np.testing.assert_allclose(out, v @ q, rtol=1e-5, atol=1e-5)


def test_burst_scale_cached_collection_side_gives_the_same_answer() -> None:
    rng = np.random.default_rng(6)
    now = 1000 * DAY
    times = now - rng.exponential(200, size=400) * DAY
    times[::37] = np.nan
    cache: dict = {}
    for trial in range(30):
        sim = np.where(rng.random(400) < 0.2, rng.random(400), 0.0)
        if trial % 3 == 0:
            sim[np.argsort(-times)[:5]] = 2.0  # the newest match best: a burst
        t_now = now + (trial % 2) * 30 * DAY  # the cache key changes with now
        for past in (True, False):
            assert _burst_scale(sim, times, t_now, 0.1, past, cache=cache) == _burst_scale(sim, times, t_now, 0.1, past)


def test_temporal_config_is_built_once_per_config() -> None:
    cfg = IndexConfig()
    assert cfg.temporal_config() is cfg.temporal_config()
    other = cfg.replace(strength=0.5, kernel="exponential(half_life_days=30)")
    assert other.temporal_config().strength == 0.5 and other.temporal_config().kernel.half_life() == 30
    assert cfg.temporal_config().strength == 1.0
    assert other.spec() == IndexConfig.from_spec(other.spec()).spec()
    assert cfg == IndexConfig()  # the caches are not fields


def _docs() -> list[dict]:
    return [
        {"id": "a", "text": "alpha release notes.", "date": "2024-01-02", "metadata": {"project": "x", "n": 1}},
        {"id": "b", "text": "beta", "date": 1_700_000_000.0, "updated": "2024-02-01", "tier": "pro"},
        {"id": "c", "text": "gamma", "valid_from": "2023-05-01", "valid_to": "2024-05-01"},
    ]


def test_records_read_back_as_the_dicts_they_replaced() -> None:
    idx = TemporalIndex(embedder=None)
    idx.add(_docs())
    recs = idx._snap.records
    assert isinstance(recs, Records) and len(recs) == 3
    assert idx.get("a") == {"id": "a", "text": "alpha release notes.", "date": "2024-01-02", "updated": None,
                            "valid_from": None, "valid_to": None, "metadata": {"project": "x", "n": 1}}
    assert idx.get("b")["metadata"] == {"tier": "pro"} and idx.get("c")["metadata"] == {}
    assert list(recs[1:]) == [recs[1], recs[2]] and list(recs.take([2, 0])) == [recs[2], recs[0]]
    assert list(recs + [recs[0]]) == [*recs, recs[0]]
    idx.get("c")["metadata"]["x"] = 1  # a copy: the index is not changed through it
    assert idx.get("c")["metadata"] == {}
    hits = idx.search("alpha release", k=3, now="2024-06-01")
    assert hits.payloads[0] == idx.get("a")
    # a result's payloads: the records of its hits, in rank order, built when read
    view = recs.view([2, 0])
    assert len(view) == 2 and view[0] == recs[2] and view[-1] == recs[0] and view[:] == [recs[2], recs[0]]
    assert [h.payload for h in hits] == [idx.get(h.id) for h in hits]


def test_saved_documents_are_written_as_before(tmp_path) -> None:  # noqa: ANN001
    idx = TemporalIndex(embedder=None)
    idx.add(_docs())
    idx.delete("b")
    idx.add([{"id": "d", "text": "delta", "date": "2025-01-01"}])
    path = idx.save(tmp_path / "idx")
    gen = json.loads((path / "CURRENT").read_text())["generation"]
    lines = (path / gen / "docs.jsonl").read_text(encoding="utf-8").splitlines()
    # the key order and values of the per-document dicts the index used to keep
    assert [json.loads(x) for x in lines] == [dict(r) for r in idx._snap.records]
    assert list(json.loads(lines[0])) == ["id", "text", "date", "updated", "valid_from", "valid_to", "metadata"]
    loaded = TemporalIndex.load(path)
    assert [loaded.get(i) for i in loaded.ids] == [idx.get(i) for i in idx.ids]


def _anchor_plain(sim: np.ndarray, start: np.ndarray, ref: float, ratio: float) -> np.ndarray:
    """The binned competitive anchor written out plainly (the code before its in-place passes)."""
    from chronorank.temporal import ANCHOR_BINS

    usable = np.where(np.isnan(start) | (start > ref), -np.inf, start)
    threshold = np.where(sim >= 0, ratio * sim, sim / ratio if ratio > 0 else -np.inf)
    lo, hi = float(sim.min()), float(sim.max())
    scale = (ANCHOR_BINS - 1) / (hi - lo) if hi > lo else 0.0
    bins = ((sim - lo) * scale).astype(np.int64)
    bin_newest = np.full(ANCHOR_BINS, -np.inf)
    np.maximum.at(bin_newest, bins, usable)
    newest_above = np.maximum.accumulate(bin_newest[::-1])[::-1]
    tbin = np.clip(np.floor((threshold - lo) * scale), 0, ANCHOR_BINS - 1).astype(np.int64)
    anchor = newest_above[tbin]
    return np.where(np.isfinite(anchor), anchor, ref)


@pytest.mark.parametrize("case", ["positive", "negative", "ties", "undated", "future", "flat"])
def test_binned_competitive_anchor_is_the_plain_computation(case: str) -> None:
    from chronorank.temporal import EXACT_ANCHOR_MAX, competitive_anchor

    rng = np.random.default_rng(11)
    n = EXACT_ANCHOR_MAX + 500
    ref = 1_785_000_000.0
    sim = rng.random(n)
    start = ref - rng.exponential(300.0, n) * DAY
    if case == "negative":
        sim = sim - 0.3
    elif case == "ties":
        sim = np.round(sim, 2)
    elif case == "undated":
        start[rng.random(n) < 0.3] = np.nan
    elif case == "future":
        start[rng.random(n) < 0.2] = ref + DAY
        start[: n // 2] = np.nan  # with the upper half of the similarities also undated below
        sim[: n // 2] = sim[: n // 2] + 1.0
    elif case == "flat":
        sim = np.full(n, 0.4)
    for ratio in (0.9, 0.5):
        got = competitive_anchor(sim, start, ref, ratio)
        assert np.array_equal(got, _anchor_plain(sim, start, ref, ratio))


def test_at_least_compares_float32_as_float64_does() -> None:
    from chronorank.temporal import _at_least

    rng = np.random.default_rng(12)
    for _ in range(300):
        x = float(rng.random())
        base = np.float32(x)
        # the float32 neighbours of x, and random values
        v = np.concatenate([
            np.array([np.nextafter(base, np.float32(-1)), base, np.nextafter(base, np.float32(2))], dtype=np.float32),
            rng.random(20, dtype=np.float32),
        ])
        assert np.array_equal(v >= _at_least(x, v.dtype), v.astype(np.float64) >= x)


def test_topic_first_with_a_float32_signal_is_as_with_its_float64_copy() -> None:
    from chronorank.temporal import topic_first

    rng = np.random.default_rng(13)
    for _ in range(50):
        n = 400
        sim = rng.random(n)
        score = rng.random(n)
        dense = rng.random(n, dtype=np.float32)
        keep = rng.random(n) > 0.1
        # a few cosines exactly at the floor x best, in float32
        dense[:5] = np.float32(0.7 * float(dense.max()))
        a = topic_first(score, sim, 0.8, keep, None, others=[(dense, 0.7)])
        b = topic_first(score, sim, 0.8, keep, None, others=[(dense.astype(np.float64), 0.7)])
        assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_search_over_every_row_and_over_the_whole_index_rank_alike(seed: int) -> None:
    """The whole-corpus path and the row-subset one (candidates = every id) give the same
    ranking and scores, on a corpus with undated documents and tied dates and vectors."""
    rng = np.random.default_rng(seed)
    n, dim = 300, 8
    words = ["alpha", "beta", "gamma", "delta", "release", "notes", "api", "v2"]
    vecs = rng.standard_normal((n, dim)).astype(np.float32)
    vecs[n // 2 :] = vecs[: n - n // 2]  # duplicated vectors: ties in the dense signal
    now = 1_785_000_000.0
    docs = []
    for i in range(n):
        text = " ".join(rng.choice(words, size=6))
        d: dict = {"id": f"d{i}", "text": f"{text} {i % 7}.{i % 3}"}
        if rng.random() > 0.2:  # undated otherwise
            d["date"] = now - float(rng.integers(0, 40)) * 30 * DAY  # tied dates
        docs.append(d)
    idx = TemporalIndex(embedder=None)
    idx.add(docs, vectors=vecs)
    every = [d["id"] for d in docs]
    for query in ("latest alpha release", "beta api as of March 2026", "gamma notes in 2025", "delta v2"):
        q = rng.standard_normal(dim).astype(np.float32)
        full = idx.search(query, k=10, now=now, vector=q)
        sub = idx.search(query, k=10, now=now, vector=q, candidates=every)
        assert full.ids == sub.ids
        assert np.array_equal(np.asarray(full.score), np.asarray(sub.score))


@pytest.mark.parametrize("case", ["distinct", "ties", "dropped", "flat", "nan"])
def test_top_k_over_a_large_corpus_is_the_sorted_definition(case: str) -> None:
    """The sampled cut (n > 4096, k <= 64) gives what sorting everything gives."""
    rng = np.random.default_rng(21)
    for n in (5000, 40_000):
        score = rng.random(n)
        if case == "ties":
            score = np.round(score, 3)
        elif case == "dropped":
            score[rng.random(n) < 0.9] = -np.inf
        elif case == "flat":
            score = np.full(n, 0.25)
            score[::977] = 0.5
        elif case == "nan":
            score[rng.random(n) < 0.5] = np.nan
        for k in (1, 10, 50, 64):
            order = np.lexsort((np.arange(n), -np.nan_to_num(score, nan=-np.inf)))[:k]
            # every row undated: TIE_RULE orders equal scores by id alone
            got = _top_k(score, k, np.full(n, np.nan), range(n))
            if case == "nan":  # NaN sorts nowhere in particular; compare the scored rows only
                got = got[~np.isnan(score[got])]
                order = order[: got.shape[0]]
            assert got.tolist() == order.tolist()


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_rank_first_is_the_plain_where(dtype: type) -> None:
    from chronorank.temporal import TOPIC_GAP, rank_first, topic_gap

    rng = np.random.default_rng(22)
    for trial in range(100):
        n = 300
        score = (rng.random(n) - (0.7 if trial % 2 else 0.0)).astype(dtype)  # half the trials at or below 0
        first = rng.random(n) < 0.3
        live = rng.random(n) > 0.1
        on, off = first & live, ~first & live
        floor, worst = float(score[on].min()), float(score[off].max())
        if worst <= topic_gap(floor):
            expected = score
        elif floor > 0:
            expected = np.where(off, score * (floor * TOPIC_GAP / worst), score)
        else:
            expected = np.where(off, score - (worst - floor) - 1.0, score)
        got = rank_first(score, first, live)
        assert got.dtype == expected.dtype and np.array_equal(got, expected)


@pytest.mark.parametrize("floor", [0.5, 0.0, -0.25])
def test_rank_first_leaves_no_other_score_inside_the_gap(floor: float) -> None:
    """An off-topic score between topic_gap(floor) and the lowest on-topic score is brought down
    to the gap, so topic_gap(lowest on-topic) bounds every other score (conflicts_last needs it)."""
    from chronorank.temporal import rank_first, topic_gap

    gap = topic_gap(floor)
    inside = (gap + floor) / 2  # under the lowest on-topic score, above the gap
    score = np.array([floor + 0.3, floor, inside, gap - 0.5])
    first = np.array([True, True, False, False])
    got = rank_first(score, first)
    assert got[:2].tolist() == score[:2].tolist()
    assert got[2] == pytest.approx(gap, abs=1e-12) and got[3] < got[2]
    # one already at or under the gap keeps its score
    below = np.array([floor + 0.3, floor, gap, gap - 0.5])
    assert rank_first(below, first).tolist() == below.tolist()
