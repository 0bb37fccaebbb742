"""Metadata filters inside every engine (index, Qdrant local mode, PostgreSQL + pgvector):
tenant isolation with lanes on or off, the SQL renderer against the numpy mask, async calls,
and tables chronorank did not create (refused at open, or read through ``columns=``)."""

from __future__ import annotations

import asyncio
import random
import sys
from pathlib import Path
from typing import Any

import pytest
from store_cases import NOW, STORES

from chronorank.errors import InvalidInput
from chronorank.filters import filter_mask

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from test_filters import METAS, _random_filter  # noqa: E402

PROJECTS = ("flask", "click", "attrs")
QUERIES = [
    "what changed in the latest release",
    "release notes as of March 2023",
    "what changed in 2022",
    "how does the release work",
]


def tenant_docs() -> list[dict[str, Any]]:
    """Three projects with the same release texts: only the filter tells them apart. The
    other projects' releases are newer, so a lane that dropped the filter would surface them."""
    out = []
    for p, shift in zip(PROJECTS, (0, 1, 2)):
        for i in range(8):
            out.append({
                "id": f"{p}@{i}", "text": "release notes: changed the parser and the cache",
                "date": f"{2016 + i}-0{1 + shift}-15", "project": p, "year": 2016 + i,
            })
    return out


def built(factory: Any, **kw: Any) -> Any:
    s = factory(**kw)
    s.add(tenant_docs())
    return s


def lanes_settings(kind: str) -> list[dict[str, Any]]:
    from chronorank.stores import Lanes

    if kind == "index":
        return [{}, {"ann": True}]  # the index has no lanes; with ann it would build them
    return [{}, {"lanes": Lanes.plain(5)}, {"lanes": Lanes(dense=3, keyword=3, windows=((30.0, 2), (400.0, 3)), newest=2)}]


@pytest.mark.parametrize("factory", STORES, indirect=True)
def test_tenant_isolation_lanes_on_or_off(factory: Any) -> None:
    s = built(factory)
    for opts in lanes_settings(factory.kind):
        for q in QUERIES:
            for flt, allowed in (
                ({"project": "flask"}, {"flask"}),
                ({"project": {"$in": ["click", "attrs"]}}, {"click", "attrs"}),
                ({"$and": [{"project": "attrs"}, {"year": {"$lt": 2022}}]}, {"attrs"}),
            ):
                hits = s.search(q, k=10, now=NOW, filter=flt, **opts)
                assert len(hits) > 0, (q, flt, opts)
                got = {h.payload["metadata"]["project"] for h in hits}
                assert got <= allowed, (q, flt, opts, hits.ids)
                if "year" in str(flt):
                    assert all(h.payload["metadata"]["year"] < 2022 for h in hits)


@pytest.mark.parametrize("factory", STORES, indirect=True)
def test_filter_keeps_the_ranking_inside_the_tenant(factory: Any) -> None:
    s = built(factory)
    hits = s.search("what changed in the latest release", k=3, now=NOW, filter={"project": "click"})
    assert hits.ids[0] == "click@7"  # the tenant's newest, not attrs@7 (dated later)
    none = s.search("what changed in the latest release", k=3, now=NOW, filter={"project": "nobody"})
    assert len(none) == 0
    with pytest.raises(InvalidInput, match="unknown operator"):
        s.search("release", k=3, now=NOW, filter={"project": {"$regex": "f.*"}})


@pytest.mark.parametrize("factory", STORES, indirect=True)
def test_async_search_and_add(factory: Any) -> None:
    s = factory()

    async def go() -> Any:
        await s.aadd(tenant_docs())
        return await asyncio.gather(*(s.asearch(q, 5, NOW, filter={"project": "flask"}) for q in QUERIES))

    results = asyncio.run(go())
    for q, got in zip(QUERIES, results):
        assert_same_up_to_ties(got, s.search(q, 5, NOW, filter={"project": "flask"}))


def assert_same_up_to_ties(a: Any, b: Any) -> None:
    """The same scores in the same order, and the same ids within each group of equal scores
    (the group cut at k only the same size): Qdrant's engine returns exact ties in no fixed
    order (identical texts tie here), the index and local mode in insertion order."""
    sa, sb = [round(h.score, 6) for h in a], [round(h.score, 6) for h in b]
    assert sa == sb
    last = sa[-1] if sa else None
    for score in set(sa) - {last}:
        assert {h.id for h in a if round(h.score, 6) == score} == {h.id for h in b if round(h.score, 6) == score}


@pytest.mark.pg
@pytest.mark.parametrize("factory", ["pgvector"], indirect=True)
def test_sql_renderer_agrees_with_numpy(factory: Any) -> None:
    s = factory()
    s.add([{"id": str(i), "text": "same words", "date": "2024-01-01", "metadata": m} for i, m in enumerate(METAS)])
    rng = random.Random(11)
    for _ in range(60):
        flt = _random_filter(rng)
        got = sorted(int(i) for i in s.search("same words", k=20, now=NOW, filter=flt, method="exact").ids)
        import numpy as np

        assert got == np.flatnonzero(filter_mask(flt, METAS)).tolist(), flt


# ---------------------------------------------------------------------- foreign tables


@pytest.fixture
def user_table(request: pytest.FixtureRequest, embedder: Any) -> Any:
    """A table a user made with their own tools: other column names, timestamptz dates."""
    pg = request.getfixturevalue("pg")
    psycopg = pytest.importorskip("psycopg")
    from pgvector.psycopg import register_vector

    name = f"user_docs_{abs(hash(request.node.name)) % 10_000}"
    conn = psycopg.connect(pg.dsn, autocommit=True)
    conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    register_vector(conn)
    conn.execute(f"DROP TABLE IF EXISTS {name}")
    conn.execute(f"CREATE TABLE {name} (doc_id text PRIMARY KEY, body text, published timestamptz, "
                 "emb vector(64), meta jsonb)")
    for d in tenant_docs():
        conn.execute(
            f"INSERT INTO {name} VALUES (%s, %s, %s, %s, %s)",
            (d["id"], d["text"], d["date"] + "T00:00:00Z", embedder.embed([d["text"]])[0],
             psycopg.types.json.Jsonb({"project": d["project"], "year": d["year"]})),
        )
    yield pg, name, conn
    conn.execute(f"DROP TABLE IF EXISTS {name}")
    conn.close()


COLUMNS = {"id": "doc_id", "text": "body", "date": "published", "embedding": "emb", "metadata": "meta"}


@pytest.mark.pg
def test_foreign_table_is_refused_at_open_and_left_unchanged(user_table: Any, embedder: Any) -> None:
    from chronorank.stores import PgVectorStore

    pg, name, conn = user_table
    with pytest.raises(InvalidInput, match=r"lacks the columns \['id', 'doc', 'text', 'record'\]"):
        PgVectorStore(pg.dsn, name, embedder=embedder)
    # nothing written: no schema row, so every later open sees the same table
    assert conn.execute("SELECT count(*) FROM chronorank_schema WHERE tbl = %s", (name,)).fetchone()[0] == 0
    with pytest.raises(InvalidInput, match="lacks the columns"):
        PgVectorStore(pg.dsn, name, embedder=embedder)
    with pytest.raises(InvalidInput, match=r"no column text='bodyx'"):
        PgVectorStore(pg.dsn, name, embedder=embedder, columns={**COLUMNS, "text": "bodyx"})
    with pytest.raises(InvalidInput, match="lacks"):
        PgVectorStore(pg.dsn, name, embedder=embedder, columns={"id": "doc_id"})


@pytest.mark.pg
def test_foreign_table_read_through_columns(user_table: Any, embedder: Any) -> None:
    from chronorank.stores import Lanes, PgVectorStore

    pg, name, _ = user_table
    s = PgVectorStore(pg.dsn, name, embedder=embedder, columns=COLUMNS)
    try:
        assert len(s) == 24 and s.dim == 64
        for method in ("lanes", "exact"):
            for lanes in (None, Lanes.plain(4)):
                hits = s.search("what changed in the latest release", k=5, now=NOW, method=method,
                                lanes=lanes, filter={"project": "flask"})
                assert {h.payload["metadata"]["project"] for h in hits} == {"flask"}
                if lanes is None:  # the time lanes bring the newest (identical texts tie on similarity)
                    assert hits.ids[0] == "flask@7"
                assert hits[0].payload["text"].startswith("release notes") and hits[0].age_days > 0
        as_of = s.search("release notes as of March 2023", k=3, now=NOW, filter={"project": "attrs"})
        assert as_of[0].payload["metadata"]["year"] <= 2023 and len(as_of) == 3
        with pytest.raises(InvalidInput, match="columns="):
            s.add([{"id": "x", "text": "y"}])
        with pytest.raises(InvalidInput, match="columns="):
            s.delete(["flask@1"])
    finally:
        s.close()


@pytest.mark.pg
@pytest.mark.parametrize("factory", ["pgvector"], indirect=True)
def test_columns_refused_for_own_tables(factory: Any) -> None:
    s = built(factory)
    from chronorank.stores import PgVectorStore

    with pytest.raises(InvalidInput, match="created by chronorank"):
        PgVectorStore(s.dsn, s.table, embedder=s.embedder, columns=COLUMNS)


# ---------------------------------------------------------------------- foreign Qdrant collections


def foreign_points(embedder: Any, named_vector: bool) -> list[tuple[int, Any, dict[str, Any]]]:
    """Points written the way langchain-qdrant writes them: an unnamed vector, the text in
    ``page_content``, everything else (the date as epoch seconds) under ``metadata``."""
    from chronorank.timeparse import to_epoch

    out = []
    for i, d in enumerate(tenant_docs()):
        vec = embedder.embed([d["text"]])[0].tolist()
        out.append((i, {"text-dense": vec} if named_vector else vec,
                    {"page_content": d["text"], "metadata": {"doc": d["id"], "date": to_epoch(d["date"]),
                                                             "project": d["project"], "year": d["year"]}}))
    return out


def foreign_collection(embedder: Any, name: str, engine: str, where: Path, named_vector: bool = False,
                       date_index: bool = True) -> dict[str, Any]:
    """A collection chronorank did not create, and the QdrantStore arguments that reach it:
    written with qdrant-client (local mode), or a shard written with qdrant-edge-py itself
    (with a float index on the date unless ``date_index=False``)."""
    pytest.importorskip("qdrant_client")
    if engine == "edge":
        qe = pytest.importorskip("qdrant_edge", reason="qdrant-edge-py is not installed")
        params = qe.EdgeVectorParams(size=embedder.dim, distance=qe.Distance.Cosine)
        shard = qe.EdgeShard.create(str(where / name), qe.EdgeConfig(vectors={"text-dense": params} if named_vector else params))
        if date_index:
            shard.update(qe.UpdateOperation.create_field_index("metadata.date", qe.PayloadSchemaType.Float))
        shard.update(qe.UpdateOperation.upsert_points(
            [qe.Point(id=i, vector=v, payload=pl) for i, v, pl in foreign_points(embedder, named_vector)]))
        shard.flush()
        shard.close()
        return {"edge_path": where}
    from qdrant_client import QdrantClient, models

    client = QdrantClient(location=":memory:")
    params = models.VectorParams(size=embedder.dim, distance=models.Distance.COSINE)
    client.create_collection(name, vectors_config={"text-dense": params} if named_vector else params)
    client.upsert(name, points=[models.PointStruct(id=i, vector=v, payload=pl)
                                for i, v, pl in foreign_points(embedder, named_vector)])
    return {"client": client}


QCOLUMNS = {"id": "metadata.doc", "text": "page_content", "date": "metadata.date", "metadata": "metadata", "embedding": ""}


@pytest.mark.parametrize("engine", ["local", "edge"])
def test_foreign_collection_is_refused_at_open(embedder: Any, engine: str, tmp_path: Path) -> None:
    from chronorank.stores import QdrantStore

    where = foreign_collection(embedder, "lc", engine, tmp_path)
    with pytest.raises(InvalidInput, match=r"not created by chronorank .*lacks vector 'dense'"):
        QdrantStore("lc", embedder=embedder, **where)
    with pytest.raises(InvalidInput, match="has no vector 'text-dense'"):
        QdrantStore("lc", embedder=embedder, columns={**QCOLUMNS, "embedding": "text-dense"}, **where)
    with pytest.raises(InvalidInput, match="epoch seconds"):
        QdrantStore("lc", embedder=embedder, columns={**QCOLUMNS, "date": "page_content"}, **where)
    s = QdrantStore("lc", embedder=embedder, columns=QCOLUMNS, **where)
    assert len(s) == 24  # untouched
    s.close()
    if engine == "edge":
        assert not (tmp_path / "lc" / "chronorank.json").exists()


@pytest.mark.parametrize("engine", ["local", "edge"])
@pytest.mark.parametrize("named", [False, True])
def test_foreign_collection_read_through_columns(embedder: Any, named: bool, engine: str, tmp_path: Path) -> None:
    from chronorank.stores import Lanes, QdrantStore

    where = foreign_collection(embedder, "lc", engine, tmp_path, named_vector=named)
    cols = {**QCOLUMNS, "embedding": "text-dense" if named else ""}
    s = QdrantStore("lc", embedder=embedder, columns=cols, **where)
    assert len(s) == 24 and s.dim == embedder.dim
    for lanes in (None, Lanes.plain(4)):
        for fallback in ({}, {"fallback": "client"}):
            hits = s.search("what changed in the latest release", k=5, now=NOW, lanes=lanes,
                            filter={"project": "flask"}, **fallback)
            assert {h.payload["metadata"]["project"] for h in hits} == {"flask"}
            assert all(h.id.startswith("flask@") for h in hits)
            if lanes is None:  # the time lanes bring the newest (identical texts tie on similarity)
                assert hits.ids[0] == "flask@7" and hits[0].age_days > 0
            assert hits[0].payload["text"].startswith("release notes")
    with pytest.raises(InvalidInput, match="columns="):
        s.add([{"id": "x", "text": "y"}])
    with pytest.raises(InvalidInput, match="columns="):
        s.delete(["flask@1"])
    s.close()


def test_foreign_edge_shard_without_a_date_index_searches_without_the_newest_lane(embedder: Any, tmp_path: Path) -> None:
    """The engine refuses order_by on an unindexed key (local mode does not check): the store
    says so at open, names the fix, and its searches still keep inside the filter."""
    from chronorank.stores import QdrantStore

    where = foreign_collection(embedder, "lc", "edge", tmp_path, date_index=False)
    with pytest.warns(UserWarning, match=r"no range index on 'metadata.date'.*create_payload_index"):
        s = QdrantStore("lc", embedder=embedder, columns=QCOLUMNS, **where)
    hits = s.search("what changed in the latest release", k=5, now=NOW, filter={"project": "attrs"})
    assert len(hits) == 5 and all(h.id.startswith("attrs@") for h in hits)
    s.close()


def test_index_filter_and_candidates_intersect(embedder: Any) -> None:
    from chronorank.index import TemporalIndex

    idx = TemporalIndex(embedder)
    idx.add(tenant_docs())
    hits = idx.search("release notes", k=10, now=NOW, candidates=["flask@1", "click@1", "click@2"],
                      filter={"project": "click"})
    assert sorted(hits.ids) == ["click@1", "click@2"]
    assert len(idx.search("release notes", k=10, now=NOW, candidates=["flask@1"], filter={"project": "click"})) == 0
    with pytest.raises(InvalidInput, match="give a dict"):
        idx.search("release notes", k=3, now=NOW, filter="project=click")
