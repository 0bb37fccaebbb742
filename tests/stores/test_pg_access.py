"""PostgreSQL conventions: a table of yours read with SELECT rights only (nothing created, a clear
error on a write), schema-qualified and quoted names, filters on the table's real columns, and a
connection pool under concurrent calls."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from typing import Any

import pytest

pytestmark = pytest.mark.pg

NOW = "2025-06-01"
ROWS = [  # (id, body, published, category, meta)
    (f"{cat}-{i}", f"{cat} release notes {i}: changed the parser", f"202{i}-03-01T00:00:00Z", cat,
     {"project": "flask" if i % 2 else "click", "major": i})
    for cat in ("news", "docs") for i in range(5)
]
COLUMNS = {"id": "doc_id", "text": "body", "date": "published", "embedding": "emb", "metadata": "meta"}


@pytest.fixture(scope="module")
def ro(pg: Any, embedder: Any) -> Iterator[dict[str, Any]]:
    """A fresh database (no chronorank_schema) holding ``content.articles`` and
    ``content."Articles Mixed"``, and a role ``reader`` with USAGE and SELECT only."""
    psycopg = pytest.importorskip("psycopg")
    from pgvector.psycopg import register_vector

    admin = psycopg.connect(pg.dsn, autocommit=True)
    admin.execute("DROP DATABASE IF EXISTS ro_test")
    admin.execute("CREATE DATABASE ro_test")
    if not admin.execute("SELECT 1 FROM pg_roles WHERE rolname = 'reader'").fetchall():
        admin.execute("CREATE ROLE reader LOGIN")
    owner_dsn = pg.dsn.rsplit("/", 1)[0] + "/ro_test"
    reader_dsn = owner_dsn.replace("postgres@", "reader@")
    conn = psycopg.connect(owner_dsn, autocommit=True)
    conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    register_vector(conn)
    conn.execute("REVOKE CREATE ON SCHEMA public FROM PUBLIC")
    conn.execute("CREATE SCHEMA content")
    for table in ("content.articles", 'content."Articles Mixed"'):
        conn.execute(f"CREATE TABLE {table} (doc_id text PRIMARY KEY, body text, published timestamptz, "
                     "category text, emb vector(64), meta jsonb)")
        for did, body, published, cat, meta in ROWS:
            conn.execute(f"INSERT INTO {table} VALUES (%s, %s, %s, %s, %s, %s)",
                         (did, body, published, cat, embedder.embed([body])[0], psycopg.types.json.Jsonb(meta)))
    conn.execute("GRANT USAGE ON SCHEMA content TO reader")
    conn.execute("GRANT SELECT ON ALL TABLES IN SCHEMA content TO reader")
    yield {"owner": owner_dsn, "reader": reader_dsn, "conn": conn}
    conn.close()
    admin.execute("DROP DATABASE IF EXISTS ro_test WITH (FORCE)")
    admin.close()


@pytest.mark.parametrize("table", ["content.articles", 'content."Articles Mixed"', 'CONTENT."Articles Mixed"'])
def test_a_select_only_role_maps_a_schema_qualified_table(ro: dict[str, Any], embedder: Any, table: str) -> None:
    from chronorank.errors import InvalidInput
    from chronorank.stores import PgVectorStore

    with PgVectorStore(ro["reader"], table, embedder=embedder, columns=COLUMNS) as s:
        assert len(s) == len(ROWS) and s.dim == 64
        for method in ("lanes", "exact"):
            hits = s.search("what changed in the latest release", k=3, now=NOW, method=method)
            assert len(hits) == 3 and hits[0].payload["text"].endswith("changed the parser")
        with pytest.raises(InvalidInput, match="columns="):
            s.add([{"id": "x", "text": "y"}])
    # nothing was created: no bookkeeping table in the reader's database
    assert ro["conn"].execute("SELECT to_regclass('chronorank_schema')").fetchone()[0] is None


@pytest.mark.parametrize("flt", [
    {"category": "news"},  # a real column, not in the metadata
    {"category": {"$in": ["news"]}, "project": "flask"},  # a column and a metadata key together
    {"$not": {"category": "docs"}},
])
@pytest.mark.parametrize("method", ["lanes", "exact"])
def test_filters_read_the_mapped_table_s_own_columns(ro: dict[str, Any], embedder: Any, flt: Any, method: str) -> None:
    from chronorank.filters import filter_mask
    from chronorank.stores import PgVectorStore

    rows = [{"category": cat, **meta} for _, _, _, cat, meta in ROWS]
    expected = {ROWS[i][0] for i in range(len(ROWS)) if filter_mask(flt, rows)[i]}
    with PgVectorStore(ro["reader"], "content.articles", embedder=embedder, columns=COLUMNS) as s:
        got = s.search("release notes", k=len(ROWS), now=NOW, method=method, filter=flt)
    assert expected and set(got.ids) == expected


def test_names_a_mapped_table_cannot_have_are_refused(ro: dict[str, Any], embedder: Any) -> None:
    from chronorank.errors import InvalidInput
    from chronorank.stores import PgVectorStore

    for bad in ("content.", "a.b.c", 'content."open', "con tent.articles", ""):
        with pytest.raises(InvalidInput, match="table="):
            PgVectorStore(ro["reader"], bad, embedder=embedder, columns=COLUMNS)
    with pytest.raises(InvalidInput, match="does not exist"):
        PgVectorStore(ro["reader"], "content.nope", embedder=embedder, columns=COLUMNS)
    # a table chronorank creates keeps a plain name, and says where qualified names belong
    with pytest.raises(InvalidInput, match="columns="):
        PgVectorStore(ro["owner"], "content.articles", embedder=embedder)


def test_a_select_only_role_gets_clear_errors_where_it_needs_more(ro: dict[str, Any], embedder: Any) -> None:
    from chronorank.errors import StoreError
    from chronorank.stores import PgVectorStore

    # chronorank's own table in a database where the role may create nothing
    with pytest.raises(StoreError, match=r"permission denied for schema public.*SELECT only.*columns="):
        PgVectorStore(ro["reader"], "docs", embedder=embedder)
    # a chronorank table built by its owner, searched by the reader; a write says what it needs
    with PgVectorStore(ro["owner"], "owned", embedder=embedder) as own:
        own.add([{"id": r[0], "text": r[1], "date": r[2][:10]} for r in ROWS])
        expected = own.search("release notes", k=4, now=NOW).ids
    ro["conn"].execute("GRANT SELECT ON chronorank_schema, owned, owned_vec, owned_df TO reader")
    with PgVectorStore(ro["reader"], "owned", embedder=embedder) as s:
        assert s.search("release notes", k=4, now=NOW).ids == expected
        with pytest.raises(StoreError, match=r"permission denied for table.*add\(\) and delete\(\) need"):
            s.add([{"id": "x", "text": "new release notes", "date": "2024-01-01"}])
        assert s.search("release notes", k=4, now=NOW).ids == expected  # nothing half-written


# ---------------------------------------------------------------------- the connection pool


def test_concurrent_searches_run_on_pooled_connections(pg: Any, embedder: Any) -> None:
    from chronorank.stores import PgVectorStore

    queries = [f"what changed in the latest release {i}" for i in range(8)]
    with PgVectorStore(pg.dsn, "pooled", embedder=embedder, pool_size=3) as s:
        s.delete([r[0] for r in ROWS])
        s.add([{"id": r[0], "text": r[1], "date": r[2][:10]} for r in ROWS])
        sequential = [s.search(q, k=4, now=NOW).ids for q in queries]
        # while this thread holds a connection (as a long search would), the others still run
        with s._borrow() as held:

            async def all_at_once() -> list[Any]:
                return await asyncio.gather(*(s.asearch(q, k=4, now=NOW) for q in queries))

            box: list[Any] = []
            worker = threading.Thread(target=lambda: box.append(asyncio.run(all_at_once())))
            worker.start()
            worker.join()
            pids = {held.info.backend_pid}
        assert [r.ids for r in box[0]] == sequential
        pool = s._pool
        assert pool is not None and pool._open <= 3  # bounded
        pids |= {c.info.backend_pid for c in pool._idle}
        assert len(pids) == pool._open >= 2  # distinct server sessions
