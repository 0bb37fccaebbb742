"""The lead field in the stores: BM25 over each document's first sentence or line, weighted
and fused as the embedded index does (``lead_weight``, default 0.5), the PostgreSQL schema
migration that adds it, and Qdrant's schema-1 collections that cannot have it."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from store_cases import (  # (conftest.py puts tests/stores on sys.path)
    NOW,
    SERVER_STORES,
    STORES,
    docs_fixture,
)

from chronorank.errors import ChronorankError, InvalidInput

#: lead_weight is not named: the stores take the index's default
LEAD_CFG = "index(missing_date='keep', relative_recency=none, topical_margin=none)"
OFF_CFG = "index(missing_date='keep', relative_recency=none, topical_margin=none, lead_weight=0)"

#: releases whose first line names the project, and notes that merely mention it
LEAD_DOCS = [
    {"id": "polars-1.2", "text": "Polars 1.2.0\nAdds streaming joins and fixes a memory leak in group_by.", "date": "2024-06-01"},
    {"id": "notes-w23", "text": "Team notes for the week. We discussed the polars release and what the polars upgrade "
                                "means for us.", "date": "2024-06-03"},
    {"id": "httpx-0.27", "text": "httpx 0.27.0\nDrops Python 3.7 and adds a proxy argument.", "date": "2024-05-01"},
    {"id": "notes-w20", "text": "Weekly notes. The httpx upgrade went fine and the release train is on time.",
     "date": "2024-05-02"},
    {"id": "duckdb-1.0", "text": "DuckDB 1.0.0\nStable storage format and faster window functions.", "date": "2024-06-02"},
]
QUERIES = (
    "latest polars release join speed", "httpx proxy support as of 2023", "polars 3.0 release",
    "latest polars release", "what is new in polars", "httpx release in 2023",
)


def _index(embedder: Any, cfg: str, docs: list[dict[str, Any]]) -> Any:
    from chronorank.index import TemporalIndex

    idx = TemporalIndex(embedder=embedder, config=cfg)
    idx.add(docs)
    return idx


def _assert_same_scores(got: Any, want: Any, q: str) -> None:
    gs = {h.id: h.score for h in got}
    ws = {h.id: h.score for h in want}
    # ties may be cut at k in a different order: compare the score lists, then shared ids
    np.testing.assert_allclose(sorted(gs.values()), sorted(ws.values()), atol=1e-5, err_msg=q)
    for d in set(gs) & set(ws):
        assert gs[d] == pytest.approx(ws[d], abs=1e-5), (q, d)


@pytest.mark.parametrize("factory", SERVER_STORES, indirect=True)
def test_lead_is_on_by_default_and_scores_equal_the_index(factory, embedder) -> None:  # noqa: ANN001
    from chronorank.index import IndexConfig

    docs = docs_fixture() + LEAD_DOCS
    s = factory(config=LEAD_CFG)
    s.add(docs)
    assert s.config.index.lead_weight == IndexConfig().lead_weight > 0
    idx = _index(embedder, LEAD_CFG, docs)
    for q in QUERIES:
        want = idx.search(q, k=5, now=NOW)
        for kw in ({}, {"fallback": "client"}):
            got = s.search(q, k=5, now=NOW, **kw)
            _assert_same_scores(got, want, f"{q} {kw}")
            assert got.meta["max_lead"] > 0, q
            lead = got.signals["lead"]
            assert lead.shape == (len(got),) and (lead > 0).any(), q


@pytest.mark.parametrize("factory", SERVER_STORES, indirect=True)
def test_lead_share_and_a_query_no_lead_matches(factory, embedder) -> None:  # noqa: ANN001
    """A query whose words open no document: the lead leaves the total, as in _fuse; with
    keywords off there is no lead at all."""
    docs = docs_fixture() + LEAD_DOCS
    s = factory(config=LEAD_CFG)
    s.add(docs)
    idx = _index(embedder, LEAD_CFG, docs)
    q = "memory leak in group_by"  # body words only: no lead starts with them
    got = s.search(q, k=5, now=NOW)
    assert got.meta["max_lead"] == 0.0
    _assert_same_scores(got, idx.search(q, k=5, now=NOW), q)
    dense_only = "index(dense_weight=1, keyword_weight=0, missing_date='keep', relative_recency=none, topical_margin=none)"
    d = s.search("latest polars release", k=5, now=NOW, keyword_weight=0, dense_weight=1)
    assert "lead" not in d.signals
    _assert_same_scores(d, _index(embedder, dense_only, docs).search("latest polars release", k=5, now=NOW), "dense")


@pytest.mark.parametrize("factory", STORES, indirect=True)
def test_a_release_titled_with_the_project_outranks_a_note_that_mentions_it(factory) -> None:  # noqa: ANN001
    """The reason the lead exists: the note says "polars" twice and "release" once, so BM25
    and the dense signal prefer it; the release names the project in its first line."""
    for q in ("latest polars release", "polars release", "what is new in polars"):
        off = factory(config=OFF_CFG)
        off.add(LEAD_DOCS)
        assert [h.id for h in off.search(q, k=2, now="2024-07-01")] == ["notes-w23", "polars-1.2"], q
        on = factory(config=LEAD_CFG)
        on.add(LEAD_DOCS)
        assert [h.id for h in on.search(q, k=2, now="2024-07-01")] == ["polars-1.2", "notes-w23"], q


@pytest.mark.parametrize("factory", SERVER_STORES, indirect=True)
def test_lead_tokens_must_match_the_stored_leads(factory) -> None:  # noqa: ANN001
    s = factory(config=LEAD_CFG)
    s.add(LEAD_DOCS)
    with pytest.raises(InvalidInput, match="lead_tokens=12"):
        s.search("polars release", now=NOW, lead_tokens=3)
    assert len(s.search("polars release", now=NOW, lead_tokens=3, lead_weight=0)) > 0


# ---------------------------------------------------------------------- PostgreSQL migration


def _downgrade_to_schema_1(store: Any) -> None:
    """What a table written by chronorank with schema 1 looks like: one wide table, no lead
    column, and no lead statistics in its schema row."""
    from pg_legacy import to_legacy

    to_legacy(store, 1)


def _columns(store: Any) -> set[str]:
    from pg_legacy import columns

    return columns(store) | columns(store, f"{store.table}_vec")


@pytest.mark.pg
def test_pg_migrates_a_schema_1_table(pg, embedder) -> None:  # noqa: ANN001
    from chronorank.stores import PgVectorStore

    docs = docs_fixture() + LEAD_DOCS
    old = PgVectorStore(pg.dsn, "lead_migrate", embedder=embedder, config=OFF_CFG)
    old.add(docs)
    _downgrade_to_schema_1(old)
    s = PgVectorStore(pg.dsn, "lead_migrate", embedder=embedder, config=LEAD_CFG)
    try:
        assert s.schema_version == 3 and "lead" in _columns(s)
        assert len(s) == len(docs)
        n_lead = s._run(f"SELECT count(*) FROM {s.table}_vec WHERE lead IS NOT NULL")[0][0]
        assert n_lead == len(docs)  # every stored text has a lead
        idx = _index(embedder, LEAD_CFG, docs)
        for q in QUERIES:
            _assert_same_scores(s.search(q, k=5, now=NOW), idx.search(q, k=5, now=NOW), q)
        # writes after the migration keep the lead
        s.add([{"id": "polars-1.3", "text": "Polars 1.3.0\nLazy frames stream by default.", "date": "2024-06-20"}])
        hits = s.search("polars 1.3.0 lazy frames", k=3, now="2024-07-01")
        assert hits.ids[0] == "polars-1.3" and hits.signals["lead"][0] == pytest.approx(hits.meta["max_lead"])
    finally:
        s.close()


@pytest.mark.pg
def test_pg_failed_migration_changes_nothing(pg, embedder, monkeypatch) -> None:  # noqa: ANN001
    from chronorank.stores import PgVectorStore

    old = PgVectorStore(pg.dsn, "lead_rollback", embedder=embedder, config=OFF_CFG)
    old.add(LEAD_DOCS)
    _downgrade_to_schema_1(old)

    def boom(self: Any) -> None:
        self._run(f"UPDATE {self.table} SET text = 'corrupted'", fetch=False)
        raise RuntimeError("disk full")

    monkeypatch.setattr(PgVectorStore, "_fill_leads", boom)
    with pytest.raises(ChronorankError, match="rolled back, the table is unchanged"):
        PgVectorStore(pg.dsn, "lead_rollback", embedder=embedder, config=LEAD_CFG)
    monkeypatch.undo()
    s = PgVectorStore(pg.dsn, "lead_rollback", embedder=embedder, config=OFF_CFG)
    try:
        texts = dict(s._run(f"SELECT id, text FROM {s.table}"))
        assert texts == {d["id"]: d["text"] for d in LEAD_DOCS}  # the failed attempt left no trace
        assert s.schema_version == 3  # and the next open migrated it
    finally:
        s.close()


# ---------------------------------------------------------------------- Qdrant schema 1


def test_qdrant_schema_1_collection_needs_lead_off_or_a_rebuild(embedder) -> None:  # noqa: ANN001
    pytest.importorskip("qdrant_client")
    from qdrant_client import QdrantClient, models

    from chronorank.stores import QdrantStore

    client = QdrantClient(location=":memory:")
    client.create_collection(  # the layout chronorank wrote before the lead (schema 1)
        "old",
        vectors_config={"dense": models.VectorParams(size=64, distance=models.Distance.COSINE)},
        sparse_vectors_config={"bm25": models.SparseVectorParams(modifier=models.Modifier.IDF)},
        metadata={"chronorank_schema": 1, "dim": 64, "avgdl": 8.0, "k1": 1.2, "b": 0.3},
    )
    named = LEAD_CFG[:-1] + ", lead_weight=0.5)"  # the caller asks for the lead by name
    s = QdrantStore("old", client=client, embedder=embedder, config=named)
    assert s.add(LEAD_DOCS) == len(LEAD_DOCS)
    with pytest.raises(InvalidInput, match=r"schema 1.*re-create it.*lead_weight=0"):
        s.search("polars release", now=NOW)
    hits = s.search("polars release", k=2, now="2024-07-01", lead_weight=0)
    assert hits.ids == ["notes-w23", "polars-1.2"] and "lead" not in hits.signals


def test_qdrant_schema_1_collection_with_the_default_lead_searches_without_it(embedder) -> None:  # noqa: ANN001
    """Upgrading chronorank must not break search on an old collection: with the default
    lead weight (not named) it searches without the lead and warns once how to get it."""
    pytest.importorskip("qdrant_client")
    from qdrant_client import QdrantClient, models

    from chronorank.stores import QdrantStore

    client = QdrantClient(location=":memory:")
    client.create_collection(
        "old",
        vectors_config={"dense": models.VectorParams(size=64, distance=models.Distance.COSINE)},
        sparse_vectors_config={"bm25": models.SparseVectorParams(modifier=models.Modifier.IDF)},
        metadata={"chronorank_schema": 1, "dim": 64, "avgdl": 8.0, "k1": 1.2, "b": 0.3},
    )
    s = QdrantStore("old", client=client, embedder=embedder)  # the default config: lead 0.5, not named
    assert s.add(LEAD_DOCS) == len(LEAD_DOCS)
    with pytest.warns(UserWarning, match=r"schema 1.*without the lead.*Re-create it"):
        hits = s.search("polars release", k=2, now="2024-07-01")
    off = s.search("polars release", k=2, now="2024-07-01", lead_weight=0)
    assert hits.ids == off.ids and "lead" not in hits.signals
    with pytest.raises(InvalidInput, match=r"schema 1"):
        s.search("polars release", now=NOW, lead_weight=0.5)  # named: the caller asked for the lead
