"""One conformance suite, the same fixtures, every backend: the embedded index, Qdrant
(local mode) and PostgreSQL + pgvector (a real server).

Settings used: ``missing_date='keep'`` so that every backend gives undated documents the
same weight (the stores' constant fill equals the index's policy there).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from store_cases import (  # (conftest.py puts tests/stores on sys.path)
    NOW,
    SERVER_STORES,
    STORES,
    docs_fixture,
    make_store,
)

from chronorank.errors import InvalidInput
from chronorank.types import Hit

CFG = "index(missing_date='keep', relative_recency=none, topical_margin=none, lead_weight=0)"


def built(factory, **kw):  # noqa: ANN001, ANN201
    s = factory(config=kw.pop("config", CFG), **kw)
    s.add(docs_fixture())
    return s


@pytest.mark.parametrize("factory", STORES, indirect=True)
def test_empty_store_and_empty_batch(factory) -> None:  # noqa: ANN001
    s = factory(config=CFG)
    assert len(s) == 0
    assert list(s.search("polars release", k=5, now=NOW)) == []
    assert s.add([]) == 0
    assert s.delete(["nope"]) == 0


@pytest.mark.parametrize("factory", STORES, indirect=True)
def test_bad_and_duplicate_input(factory) -> None:  # noqa: ANN001
    s = factory(config=CFG)
    with pytest.raises(InvalidInput, match="repeats id"):
        s.add([{"id": "a", "text": "x"}, {"id": "a", "text": "y"}])
    with pytest.raises(InvalidInput, match="text"):
        s.add([{"id": "a"}])
    with pytest.raises(InvalidInput, match="not a date"):
        s.add([{"id": "a", "text": "x", "date": "not a date at all"}])
    with pytest.raises(InvalidInput, match="query"):
        s.search("  ", now=NOW)
    with pytest.raises(InvalidInput, match="k="):
        s.search("polars", k=0, now=NOW)


@pytest.mark.parametrize("factory", STORES, indirect=True)
def test_upsert_partial_and_delete(factory) -> None:  # noqa: ANN001
    s = built(factory)
    n = len(docs_fixture())
    assert len(s) == n
    # partial batch: replace one document, add one
    s.add([{"id": "polars@11", "text": "polars 11.0 release rewrites the join engine", "date": "2024-12-05"},
           {"id": "new", "text": "unrelated gardening notes", "date": "2024-12-30"}])
    assert len(s) == n + 1
    hits = s.search("polars join engine rewrite", k=3, now=NOW)
    assert hits[0].id == "polars@11"
    assert s.delete(["new", "missing-id"]) == 1
    assert len(s) == n
    assert "new" not in [h.id for h in s.search("gardening notes", k=30, now=NOW)]


@pytest.mark.parametrize("factory", STORES, indirect=True)
def test_recent_query_prefers_newest(factory) -> None:  # noqa: ANN001
    s = built(factory)
    hits = s.search("latest polars release join speed", k=5, now=NOW)
    assert isinstance(hits[0], Hit)
    assert hits[0].id in ("polars@11", "polars@undated")
    top = [h.id for h in hits if h.id.startswith("polars@") and h.id[7:].isdigit()]
    assert top[0] == "polars@11"
    line = hits[0].explain()
    assert "time factor" in line and "similarity" in line


@pytest.mark.parametrize("factory", STORES, indirect=True)
def test_as_of_query(factory) -> None:  # noqa: ANN001
    s = built(factory)
    hits = s.search("polars release join speed as of June 2024", k=5, now=NOW)
    dated = [h for h in hits if not math.isnan(h.time) and h.decay > 0]
    assert dated[0].id == "polars@5"  # 2024-06-05, the newest valid at the end of June
    cutoff = 1719792000.0  # 2024-07-01
    assert all(h.time < cutoff for h in dated)
    assert "polars@future" not in [h.id for h in dated]


@pytest.mark.parametrize("factory", STORES, indirect=True)
def test_validity_expired_document_is_demoted(factory) -> None:  # noqa: ANN001
    s = built(factory)
    hits = s.search("polars 0.1 release", k=30, now=NOW)
    old = next(h for h in hits if h.id == "polars@old")
    assert old.decay < 0.01
    if factory.kind != "index":
        assert any("expired on 2021-01-01" in n for n in old.notes)


@pytest.mark.parametrize("factory", STORES, indirect=True)
def test_missing_dates(factory) -> None:  # noqa: ANN001
    s = built(factory)
    hits = s.search("polars release notes join speed", k=30, now=NOW)
    und = next(h for h in hits if h.id == "polars@undated")
    assert math.isnan(und.age_days) or math.isnan(und.time)
    assert und.decay == pytest.approx(1.0)
    assert any("undated" in n for n in und.notes)
    dropped = s.search("polars release notes join speed", k=30, now=NOW, missing_date="drop")
    assert "polars@undated" not in [h.id for h in dropped]


@pytest.mark.parametrize("factory", SERVER_STORES, indirect=True)
def test_stores_agree_with_the_index(factory, embedder) -> None:  # noqa: ANN001
    """Same documents, same configuration: same top hits and the same scores (1e-5)."""
    from chronorank.index import TemporalIndex

    idx = TemporalIndex(embedder=embedder, config=CFG)
    idx.add(docs_fixture())
    s = built(factory)
    for q in ("latest polars release join speed", "httpx proxy support as of 2023", "polars 3.0 release"):
        want = idx.search(q, k=5, now=NOW)
        got = s.search(q, k=5, now=NOW)
        ws = {h.id: h.score for h in want}
        gs = {h.id: h.score for h in got}
        np.testing.assert_allclose(sorted(gs.values()), sorted(ws.values()), atol=1e-5)
        for d in set(gs) & set(ws):
            assert gs[d] == pytest.approx(ws[d], abs=1e-5), (q, d)


@pytest.mark.parametrize("factory", SERVER_STORES, indirect=True)
@pytest.mark.parametrize("kernel", ["gaussian(half_life_days=60)", "weibull(half_life_days=90, shape=2, floor=0.1)",
                                    "cliff(half_life_days=120, steepness=10)", "piecewise(after=0.1)",
                                    "power_law(half_life_days=30, beta=1.5)", "linear(zero_at=400)", "constant()"])
def test_server_score_equals_apply_temporal(factory, kernel) -> None:  # noqa: ANN001
    """Parity: the engine's score == apply_temporal on the hits' own similarity (1e-6)."""
    from chronorank.intent import parse
    from chronorank.temporal import TemporalConfig, apply_temporal
    from chronorank.timeparse import resolve_now

    s = built(factory, config=f"index(dense_weight=1, keyword_weight=0, missing_date='keep', kernel={kernel!r})",
              fallback="error")
    now = resolve_now(NOW)
    for q in ("latest polars release", "polars release as of March 2024", "httpx release in 2023"):
        hits = s.search(q, k=20, now=NOW)
        sim = np.array([h.similarity for h in hits])
        start = np.array([h.time for h in hits])
        end = np.array([_valid_to(h) for h in hits])
        tcfg = s.config.index.temporal_config()
        assert repr(tcfg.kernel) == repr(TemporalConfig(kernel=kernel).kernel) and tcfg.missing_date == "keep"
        assert tcfg.range_slope > 0  # the in-range slope is part of the parity
        res = apply_temporal(sim, start, intent=parse(q, now=now), now=now,
                             config=tcfg, valid_to=end)
        np.testing.assert_allclose([h.score for h in hits], res.score, atol=1e-6)
        np.testing.assert_allclose([h.decay for h in hits], res.decay, atol=1e-9)


def _valid_to(h: Hit) -> float:
    from chronorank.timeparse import to_epoch

    v = (h.payload or {}).get("valid_to")
    return math.nan if v is None else float(to_epoch(v))


@pytest.mark.parametrize("factory", SERVER_STORES, indirect=True)
def test_uncompilable_kernel_needs_explicit_fallback(factory) -> None:  # noqa: ANN001
    s = built(factory, fallback="error")
    custom = "delayed_peak()"
    with pytest.raises(InvalidInput, match="fallback='client'"):
        s.search("latest polars release", now=NOW, kernel=custom)
    hits = s.search("latest polars release", now=NOW, kernel=custom, fallback="client")
    assert len(hits) > 0 and hits[0].score >= hits[-1].score


@pytest.mark.parametrize("factory", SERVER_STORES, indirect=True)
def test_client_fallback_matches_server_on_compilable_kernels(factory) -> None:  # noqa: ANN001
    s = built(factory)
    a = s.search("latest polars release join speed", k=5, now=NOW)
    b = s.search("latest polars release join speed", k=5, now=NOW, fallback="client")
    np.testing.assert_allclose([h.score for h in a], [h.score for h in b], atol=1e-5)


@pytest.mark.parametrize("factory", SERVER_STORES, indirect=True)
def test_truncated_pool_note(factory) -> None:  # noqa: ANN001
    """A fresh document that only the newest lane brought in, at that lane's edge."""
    from chronorank.stores import Lanes

    s = factory(config="index(dense_weight=1, keyword_weight=0, missing_date='keep', kernel='exponential(half_life_days=10)')",
                lanes=Lanes(dense=3, keyword=0, windows=(), newest=2, edge=0.9))
    docs = [{"id": f"old{i}", "text": "postgres vacuum tuning guide", "date": f"2020-01-{i + 1:02d}"} for i in range(10)]
    docs.append({"id": "fresh", "text": "postgres vacuum tuning notes", "date": "2024-12-30"})
    docs.append({"id": "fresh2", "text": "unrelated gardening notes", "date": "2024-12-31"})
    s.add(docs)
    hits = s.search("latest postgres vacuum tuning guide", k=5, now=NOW)
    fresh = next(h for h in hits if h.id == "fresh")
    assert fresh.rank_after == 1
    assert any("truncated pool" in n and "newest" in n for n in fresh.notes), fresh.notes



@pytest.mark.parametrize("factory", SERVER_STORES, indirect=True)
def test_relative_recency_needs_the_client_fallback(factory, embedder) -> None:  # noqa: ANN001
    """Competitive anchors compare candidates with each other: explicit fallback only, and
    then the pool is scored exactly as the index scores it."""
    from chronorank.index import TemporalIndex

    cfg = "index(missing_date='keep', relative_recency=0.9, topical_margin=none, lead_weight=0)"
    s = built(factory, config=cfg, fallback="error")
    with pytest.raises(InvalidInput, match="relative_recency"):
        s.search("latest polars release", now=NOW)
    idx = TemporalIndex(embedder=embedder, config=cfg)
    idx.add(docs_fixture())
    q = "latest httpx release proxy support"
    want = {h.id: h.score for h in idx.search(q, k=5, now=NOW)}
    got = {h.id: h.score for h in s.search(q, k=5, now=NOW, fallback="client")}
    for d in set(got) & set(want):
        assert got[d] == pytest.approx(want[d], abs=1e-5), d


class _Asymmetric:
    """A model with a query side, as e5 has ("query: " / "passage: "): here the query side
    embeds the text with two more words, so a store that embeds queries with ``embed`` scores
    otherwise than the index."""

    name = "asymmetric-test"

    def __init__(self) -> None:
        from chronorank.index import HashingEmbedder

        self.inner = HashingEmbedder(64)
        self.dim = self.inner.dim

    def embed(self, texts):  # noqa: ANN001, ANN201
        return self.inner.embed(texts)

    def embed_query(self, texts):  # noqa: ANN001, ANN201
        return self.inner.embed([f"{t} proxy support" for t in texts])


@pytest.mark.parametrize("kind", SERVER_STORES)
def test_stores_embed_queries_with_the_models_query_side(kind, request) -> None:  # noqa: ANN001
    from chronorank.index import TemporalIndex

    model = _Asymmetric()
    idx = TemporalIndex(embedder=model, config=CFG)
    idx.add(docs_fixture())
    s = make_store(kind, request, model, config=CFG)
    s.add(docs_fixture())
    q = "latest polars release join speed"
    plain = TemporalIndex(embedder=model.inner, config=CFG)
    plain.add(docs_fixture())
    want, got = idx.search(q, k=5, now=NOW), s.search(q, k=5, now=NOW)
    assert {h.id: round(h.score, 5) for h in plain.search(q, k=5, now=NOW)} != {h.id: round(h.score, 5) for h in want}
    np.testing.assert_allclose([h.score for h in got], [h.score for h in want], atol=1e-5)
    assert [h.id for h in got] == [h.id for h in want]
