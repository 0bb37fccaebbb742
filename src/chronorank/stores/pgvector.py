"""``PgVectorStore``: temporal scoring in SQL on PostgreSQL + pgvector.

Schema 3 (created and migrated by the adapter; ``chronorank_schema`` records each table's
version, dimension, BM25 statistics and document count ``n_docs``)::

    {table}      (id text PK, doc bigint UNIQUE, text, record jsonb)    -- fetched for the top k only
    {table}_vec  (doc bigint PK, id text, t_start float8, t_end float8,  -- what the scan scores:
                  embedding vector(d) STORAGE PLAIN,                     -- HNSW (cosine), btree on t_start
                  sparse sparsevec, lead sparsevec,                      -- BM25 of the body / first line
                  terms int[])                                           -- GIN: rows holding a query term
    {table}_df   (term int PK, df int)                                  -- BM25 document frequencies

The narrow ``_vec`` table holds only what a query scores, its vector kept inline in the row
(``STORAGE PLAIN``; ``MAIN`` above 1,000 dimensions so that a row still fits a page), so the
exact scan reads about as many pages as a bare (id, embedding) table. ``n_docs`` is kept in
the same transaction as every write, so no search counts rows.

Migrations run on open, each in one transaction holding the table's schema row locked (on any
error nothing changes): schema 2 added ``lead`` (filled from the stored texts); schema 3 split
the one wide table into ``{table}`` and ``{table}_vec`` and counted ``n_docs``.

Two ways to score a query, both one SQL statement (``method=``):

- ``"exact"``: every row passing the validity filter is scored -- similarity x decay over
  the whole filtered table (a parallel sequential scan of ``_vec``; no candidate limit). Where
  few rows hold a query term, those are scored with their keyword signals apart, and the scan
  of every row computes no sparse product;
- ``"lanes"`` (default): HNSW nearest neighbours, the best BM25 rows, nearest neighbours
  within each time window and the newest rows are unioned, then scored. Each hit carries its
  lane ranks, which drive the truncated-pool diagnostic.

The connection string is a parameter (any PostgreSQL with pgvector >= 0.7: managed services,
Citus). A lost connection raises :class:`~chronorank.errors.ChronorankError` with the cause;
the next call reconnects.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import threading
import weakref
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

import numpy as np

from chronorank.errors import ChronorankError, InvalidInput, StoreError, require
from chronorank.filters import filter_sql, parse_filter
from chronorank.index.embedders import embed_queries, get_embedder
from chronorank.stores import compile as cx
from chronorank.stores.bm25 import (
    bm25_doc_values,
    bm25_idf,
    bm25_params,
    lead_query_weights,
    query_terms,
)
from chronorank.stores.config import Lanes, StoreConfig
from chronorank.stores.documents import analyze_docs, as_matrix, column_roles, prepare_docs
from chronorank.stores.plan import QueryPlan, plan_query
from chronorank.stores.prepare import searched, store_query
from chronorank.stores.results import Candidates, build_ranking, client_score, empty_ranking
from chronorank.temporal import prepare_query
from chronorank.types import Intent, Ranking

__all__ = ["PgVectorStore", "SCHEMA_VERSION"]

SCHEMA_VERSION = 3
SPARSE_DIM = 1_000_000_000
METHODS = ("lanes", "exact")
#: batches at least this large drop and rebuild the HNSW index around the insert
BULK_REBUILD = 5000
#: above this many dimensions the vector is stored MAIN (inline unless the row cannot fit a page)
PLAIN_MAX_DIM = 1000
#: the suffix of each table's narrow scoring table
VEC = "_vec"
#: a time window of at most sqrt(WINDOW_COST x limit x rows) rows is read from the btree (PgVectorStore._btree_windows)
WINDOW_COST = 34.0
_NAME = re.compile(r"[a-z_][a-z0-9_]{0,40}")
#: PostgreSQL's reserved key words (the table name is not quoted in the SQL)
_RESERVED_TEXT = """
all analyse analyze and any array as asc asymmetric authorization binary both case cast check
collate collation column concurrently constraint create cross current_catalog current_date
current_role current_schema current_time current_timestamp current_user default deferrable desc
distinct do else end except false fetch for foreign freeze from full grant group having ilike in
initially inner intersect into is isnull join lateral leading left like limit localtime
localtimestamp natural not notnull null offset on only or order outer overlaps placing primary
references returning right select session_user similar some symmetric system_user table tablesample
then to trailing true union unique user using variadic verbose when where window with
"""
_RESERVED_WORDS = frozenset(_RESERVED_TEXT.split())


def _check_table_name(table: Any) -> None:
    if isinstance(table, str) and ("." in table or '"' in table or table != table.lower()):
        raise InvalidInput(
            f"table={table!r}: a table chronorank creates has a plain lower-case name (its own tables "
            "'<name>_vec' and '<name>_df' sit next to it), e.g. 'docs'; put it in another schema with the "
            "connection's search_path (dsn '...?options=-csearch_path%3Dcontent'). Schema-qualified and "
            "quoted names are for a table of yours read through columns=."
        )
    if not isinstance(table, str) or not _NAME.fullmatch(table):
        raise InvalidInput(f"table={table!r}; use lower-case letters, digits and '_' (at most 41), e.g. 'docs'.")
    if table in _RESERVED_WORDS or table == "chronorank_schema":
        raise InvalidInput(f"table={table!r} is a reserved word in PostgreSQL (or chronorank's own); "
                           f"choose another name, e.g. '{table}_docs'.")
    if table.endswith("_df"):
        raise InvalidInput(f"table={table!r}: names ending in '_df' are taken by the frequency tables "
                           f"(table 'x' keeps its frequencies in 'x_df'); choose another name.")


_IDENT = r'"((?:[^"\x00]|"")+)"|([A-Za-z_][A-Za-z0-9_$]*)'
_RELATION = re.compile(rf"(?:{_IDENT})(?:\.(?:{_IDENT}))?")


def _relation_name(table: Any) -> str:
    """A mapped table's name as SQL: ``articles``, ``content.articles``, ``"Articles"`` or
    ``content."My Table"`` (unquoted parts fold to lower case, as PostgreSQL folds them), each
    part quoted in the result."""
    m = _RELATION.fullmatch(table) if isinstance(table, str) else None
    if m is None:
        raise InvalidInput(
            f"table={table!r}; give a table name as PostgreSQL writes it: 'articles', 'content.articles', "
            "'\"Articles\"' or 'content.\"My Table\"' (quoted parts keep their case)."
        )
    g = m.groups()
    parts = [q.replace('""', '"') if q is not None else p.lower()
             for q, p in (g[0:2], g[2:4]) if q is not None or p is not None]
    return ".".join('"' + p.replace('"', '""') + '"' for p in parts)


def _nul_field(rec: Mapping[str, Any]) -> str | None:
    """The first field of a record holding a NUL character (PostgreSQL text and jsonb refuse it)."""
    def walk(v: Any, where: str) -> str | None:
        if isinstance(v, str):
            return where if "\x00" in v else None
        if isinstance(v, Mapping):
            for k, x in v.items():
                hit = walk(str(k), f"{where} key") or walk(x, f"{where}[{k!r}]")
                if hit:
                    return hit
        elif isinstance(v, (list, tuple)):
            for j, x in enumerate(v):
                hit = walk(x, f"{where}[{j}]")
                if hit:
                    return hit
        return None

    for name, v in rec.items():
        hit = walk(v, name)
        if hit:
            return hit
    return None


def _vec_table(t: str, dim: int) -> list[str]:
    """The narrow scoring table: the vector inline (PLAIN: never compressed nor moved to TOAST;
    MAIN above PLAIN_MAX_DIM, inline unless the row could not fit a page otherwise)."""
    storage = "PLAIN" if dim <= PLAIN_MAX_DIM else "MAIN"
    return [
        f"CREATE TABLE {t}{VEC} (doc bigint PRIMARY KEY, id text NOT NULL, t_start float8, t_end float8, "
        f"embedding vector({dim}) NOT NULL, sparse sparsevec({SPARSE_DIM}), lead sparsevec({SPARSE_DIM}), "
        "terms int4[])",
        f"ALTER TABLE {t}{VEC} ALTER COLUMN embedding SET STORAGE {storage}",
    ]


def _indexes(t: str) -> list[str]:
    return [
        f"CREATE INDEX {t}{VEC}_terms ON {t}{VEC} USING gin (terms)",
        f"CREATE INDEX {t}{VEC}_hnsw ON {t}{VEC} USING hnsw (embedding vector_cosine_ops)",
        f"CREATE INDEX {t}{VEC}_start ON {t}{VEC} (t_start)",
    ]


def _layout(t: str, dim: int) -> list[str]:
    """A new table, created at the current schema."""
    return [
        f"CREATE TABLE {t} (id text PRIMARY KEY, doc bigint GENERATED BY DEFAULT AS IDENTITY UNIQUE, "
        "text text NOT NULL, record jsonb NOT NULL)",
        *_vec_table(t, dim),
        f"CREATE TABLE {t}_df (term int PRIMARY KEY, df int NOT NULL)",
        *_indexes(t),
    ]


def _migrations(t: str, dim: int) -> dict[int, list[str]]:
    """Statements that bring a table from version ``v - 1`` to ``v`` (version 1 was the first)."""
    return {
        # the lead field; its values are filled by PgVectorStore._fill_leads in the same transaction
        2: [f"ALTER TABLE {t} ADD COLUMN IF NOT EXISTS lead sparsevec({SPARSE_DIM})"],
        # the wide table split: what a query scores moves to {t}_vec under an integer key, with
        # each row's term ids (sparsevec's text form is 1-based) for a GIN index; the dropped
        # columns' space is reused by later writes (VACUUM FULL {t} returns it at once)
        3: [
            f"ALTER TABLE {t} ADD COLUMN doc bigint GENERATED BY DEFAULT AS IDENTITY",
            f"ALTER TABLE {t} ADD CONSTRAINT {t}_doc_key UNIQUE (doc)",
            *_vec_table(t, dim),
            f"INSERT INTO {t}{VEC} (doc, id, t_start, t_end, embedding, sparse, lead, terms) "
            f"SELECT doc, id, t_start, t_end, embedding, sparse, lead, CASE WHEN sparse IS NOT NULL THEN "
            rf"ARRAY(SELECT (m[1])::int4 - 1 FROM regexp_matches(sparse::text, '(\d+):', 'g') AS m) END FROM {t}",
            f"DROP INDEX IF EXISTS {t}_hnsw",
            f"DROP INDEX IF EXISTS {t}_start",
            f"ALTER TABLE {t} DROP COLUMN t_start, DROP COLUMN t_end, DROP COLUMN embedding, "
            "DROP COLUMN sparse, DROP COLUMN lead",
            *_indexes(t),
            f"UPDATE chronorank_schema SET n_docs = (SELECT count(*) FROM {t}) WHERE tbl = '{t}'",
            f"ANALYZE {t}",
            f"ANALYZE {t}{VEC}",
        ],
    }


class PgVectorStore:
    """A PostgreSQL table scored with chronorank's temporal layer, in SQL.

    ``dsn`` is a libpq connection string (``postgresql://user:pw@host:5432/db``). Other
    parameters are those of :class:`~chronorank.stores.QdrantStore`; ``method`` picks the
    default scoring path (``"lanes"`` or ``"exact"``).
    """

    def __init__(
        self,
        dsn: str,
        table: str = "chronorank_docs",
        *,
        embedder: Any = "default",
        config: Any = None,
        lanes: Lanes | None = None,
        missing_weight: float = 0.5,
        fallback: str = "client",
        method: str = "lanes",
        bad_dates: str = "raise",
        infer_dates: bool = True,
        k1: float | None = None,
        b: float | None = None,
        connect_timeout: int = 10,
        columns: Mapping[str, str] | None = None,
        pool_size: int = 8,
    ) -> None:
        if not isinstance(dsn, str) or not dsn:
            raise InvalidInput(f"dsn={dsn!r}; give a connection string such as 'postgresql://postgres@localhost:5432/postgres'.")
        if columns is None:
            _check_table_name(table)
            self._rel = table
        else:  # a table of yours: any name PostgreSQL accepts, schema-qualified or quoted
            self._rel = _relation_name(table)
        if method not in METHODS:
            raise InvalidInput(f"method={method!r}; use one of {list(METHODS)}.")
        if bad_dates not in ("raise", "missing"):
            raise InvalidInput(f"bad_dates={bad_dates!r}; use 'raise' or 'missing'.")
        require("psycopg", extra="pgvector", package="psycopg")
        require("pgvector.psycopg", extra="pgvector", package="pgvector")
        self.dsn = dsn
        self.table = table
        self.method = method
        self.connect_timeout = int(connect_timeout)

        self.embedder = get_embedder(embedder)
        self.config = StoreConfig.coerce(config, lanes, missing_weight, fallback)
        self.bad_dates = bad_dates
        self.infer_dates = bool(infer_dates)
        self.last_inferred: dict[str, int] = {}  # the last add()'s inferred dates by source
        self.k1, self.b = bm25_params(k1, b)
        self.dim: int | None = None
        self.avgdl: float | None = None
        self.lead_avgdl: float | None = None
        self.lead_tokens = int(self.config.index.lead_tokens)
        if isinstance(pool_size, bool) or not isinstance(pool_size, int) or pool_size < 1:
            raise InvalidInput(f"pool_size={pool_size!r}; give a positive integer such as 8 (connections at most).")
        self.pool_size = pool_size
        self._pool: _Pool | None = None
        self._local = threading.local()  # the connection this thread holds (see _borrow)
        self.columns = _check_columns(columns)
        self._source: str | None = None  # the read-only SELECT over a mapped table
        self._load_meta()

    # ------------------------------------------------------------------ connection

    def _connect(self) -> Any:
        """A new connection, set up for the store (pgvector's types, iterative HNSW scans)."""
        psycopg = require("psycopg", extra="pgvector", package="psycopg")
        pgv = require("pgvector.psycopg", extra="pgvector", package="pgvector")
        try:
            conn = psycopg.connect(self.dsn, autocommit=True, connect_timeout=self.connect_timeout)
            try:
                conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
            except psycopg.errors.InsufficientPrivilege:
                # a read-only role: fine where the extension is there already
                if not conn.execute("SELECT 1 FROM pg_extension WHERE extname = 'vector'").fetchall():
                    conn.close()
                    raise ChronorankError(
                        "the pgvector extension is not installed in this database and this role may not "
                        "create it; ask its owner to run CREATE EXTENSION vector, or connect as a role "
                        "that may.") from None
            pgv.register_vector(conn)
            conn.execute("SET hnsw.iterative_scan = relaxed_order")
        except psycopg.OperationalError as exc:
            # from None: the driver's own exception may quote the connection string
            raise ChronorankError(_scrub(
                f"cannot connect to PostgreSQL ({self.dsn}): {exc}".strip()
                + " -- check that the server is up and the connection string is right.", self.dsn)
            ) from None
        except psycopg.Error as exc:  # a connection string libpq cannot parse
            raise InvalidInput(_scrub(
                f"dsn={self.dsn!r} is not a valid connection string ({exc}); write it as "
                "'postgresql://user@host:5432/db' or 'host=... port=... dbname=...'.", self.dsn)
            ) from None
        return conn

    @contextlib.contextmanager
    def _borrow(self) -> Iterator[Any]:
        """This thread's connection: one from the pool for the outermost call (a transaction and
        every statement inside it share it), returned to the pool after."""
        held = getattr(self._local, "conn", None)
        if held is not None:
            yield held
            return
        if self._pool is None:
            self._pool = _Pool(self._connect, self.pool_size)
        pool = self._pool
        conn = pool.get()
        self._local.conn = conn
        try:
            yield conn
        finally:
            self._local.conn = None
            pool.put(conn)

    def _run(self, sql: str, params: Any = None, *, fetch: bool = True, many: list[Any] | None = None) -> list[Any]:
        ahead = getattr(self._local, "ahead", None)
        if ahead and many is None and (sql, repr(params)) in ahead:  # run ahead by _run_ahead
            return list(ahead.pop((sql, repr(params))))
        with self._statements() as conn, conn.cursor() as cur:
            if many is not None:
                cur.executemany(sql, many)
                return []
            cur.execute(sql, params)
            return cur.fetchall() if fetch and cur.description is not None else []

    def _run_ahead(self, statements: list[tuple[str, Any]]) -> None:
        """Run ``statements`` in one round trip (psycopg's pipeline mode) on this thread's
        connection; the next ``_run`` of each on this thread reads its rows."""
        if not statements:
            return
        psycopg = require("psycopg", extra="pgvector", package="psycopg")
        if not psycopg.Pipeline.is_supported():  # libpq < 14: one round trip each
            self._local.ahead = {(sql, repr(params)): self._run(sql, params) for sql, params in statements}
            return
        with self._statements() as conn:
            cursors = []
            with conn.pipeline() as pipe:
                for sql, params in statements:
                    cur = conn.cursor()
                    cur.execute(sql, params)
                    cursors.append(cur)
                pipe.sync()
                rows = [cur.fetchall() if cur.description is not None else [] for cur in cursors]
            for cur in cursors:
                cur.close()
        self._local.ahead = {(sql, repr(params)): r for (sql, params), r in zip(statements, rows)}

    @contextlib.contextmanager
    def _statements(self) -> Iterator[Any]:
        """This thread's connection, with a refused statement or a lost connection said clearly."""
        psycopg = require("psycopg", extra="pgvector", package="psycopg")
        with self._borrow() as conn:
            try:
                yield conn
            except psycopg.errors.InsufficientPrivilege as exc:
                raise StoreError(
                    f"PostgreSQL refused this role a statement for table {self.table!r}: "
                    f"{_scrub(exc, self.dsn).strip().splitlines()[0]}. "
                    "Searching needs SELECT only (on a table of yours read through columns=, or on a chronorank "
                    "table, its _vec and _df tables and chronorank_schema); add() and delete() need INSERT, "
                    "UPDATE and DELETE there, and the first add() CREATE on the schema: GRANT them, or connect "
                    "as a role that has them."
                ) from None
            except (psycopg.OperationalError, psycopg.InterfaceError) as exc:
                conn.close()  # the pool drops it, and the idle ones (a restart took them too)
                if self._pool is not None:
                    self._pool.discard_idle()
                raise StoreError(
                    f"the PostgreSQL connection was lost during the query ({type(exc).__name__}: "
                    f"{_scrub(exc, self.dsn)}); nothing was retried -- call again and the store reconnects."
                ) from None

    def close(self) -> None:
        """Close every pooled connection (a later call opens new ones)."""
        if self._pool is not None:
            self._pool.close()
            self._pool = None

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def asearch(self, query: str, k: int = 10, now: Any = None, **kwargs: Any) -> Ranking:
        """:meth:`search` in a worker thread, on its own pooled connection (``pool_size`` searches
        run at once)."""
        import asyncio

        return await asyncio.to_thread(self.search, query, k, now, **kwargs)

    async def aadd(self, docs: Iterable[Mapping[str, Any]], vectors: Any = None) -> int:
        """:meth:`add` in a worker thread."""
        import asyncio

        return await asyncio.to_thread(self.add, list(docs), vectors)

    # ------------------------------------------------------------------ schema

    def _load_meta(self) -> None:
        # what may this role read, and is chronorank's bookkeeping there (one round trip)
        (readable,) = self._run(
            "SELECT CASE WHEN to_regclass('chronorank_schema') IS NULL THEN NULL "
            "ELSE has_table_privilege('chronorank_schema', 'SELECT') END"
        )[0]
        if self.columns is not None:
            # a table of yours, read-only: SELECT on it is all it needs (nothing is created)
            if readable and '"."' not in self._rel and self._run(
                    "SELECT 1 FROM chronorank_schema WHERE tbl = %s", (self._rel.strip('"'),)):
                raise InvalidInput(
                    f"table {self.table!r} was created by chronorank; open it without columns= (that maps tables "
                    "chronorank did not create)."
                )
            self._open_foreign()
            return
        if readable is None:
            self._run(
                "CREATE TABLE IF NOT EXISTS chronorank_schema (tbl text PRIMARY KEY, version int NOT NULL, "
                "dim int NOT NULL, avgdl float8 NOT NULL, k1 float8 NOT NULL, b float8 NOT NULL, "
                "n_docs bigint NOT NULL DEFAULT 0)",
                fetch=False,
            )
        # schema 2: the lead's length statistics, per table
        has = self._run(
            "SELECT 1 FROM information_schema.columns WHERE table_name = 'chronorank_schema' "
            "AND column_name = 'lead_tokens' AND table_schema = ANY(current_schemas(false))"
        )
        if not has:
            self._run(
                "ALTER TABLE chronorank_schema ADD COLUMN IF NOT EXISTS lead_avgdl float8, "
                "ADD COLUMN IF NOT EXISTS lead_tokens int",
                fetch=False,
            )
        rows = self._run("SELECT version, dim, avgdl FROM chronorank_schema WHERE tbl = %s", (self.table,))
        if not rows:
            if self.table.endswith(VEC):
                raise InvalidInput(
                    f"table={self.table!r}: names ending in '{VEC}' are taken by the scoring tables (table 'x' "
                    f"keeps its vectors in 'x{VEC}'); choose another name."
                )
            self._open_foreign()
            return
        version, dim, avgdl = rows[0]
        if version > SCHEMA_VERSION:
            raise InvalidInput(
                f"table {self.table!r} has chronorank schema {version}, newer than this version "
                f"understands ({SCHEMA_VERSION}); upgrade chronorank."
            )
        self.dim, self.avgdl = int(dim), float(avgdl)
        if version < SCHEMA_VERSION:
            self._migrate()
        self._load_lead()

    def _load_lead(self) -> None:
        rows = self._run("SELECT lead_avgdl, lead_tokens FROM chronorank_schema WHERE tbl = %s", (self.table,))
        if rows and rows[0][0] is not None:
            self.lead_avgdl, self.lead_tokens = float(rows[0][0]), int(rows[0][1])

    def _migrate(self) -> None:
        """Bring the table to SCHEMA_VERSION in one transaction, holding its schema row locked
        (a concurrent opener waits, then finds it done); any error rolls every step back."""
        assert self.dim is not None
        steps = _migrations(self.table, self.dim)
        try:
            with self._borrow() as conn, conn.transaction():
                rows = self._run("SELECT version FROM chronorank_schema WHERE tbl = %s FOR UPDATE", (self.table,))
                for v in range(int(rows[0][0]) + 1, SCHEMA_VERSION + 1):
                    if v not in steps:
                        raise ChronorankError(f"table {self.table!r} has chronorank schema {v - 1}, which no "
                                              "release wrote; re-create the table and add() the documents.")
                    if v == 3:
                        self._check_free(f"{self.table}{VEC}")
                    for stmt in steps[v]:
                        self._run(stmt, fetch=False)
                    if v == 2:
                        self._fill_leads()
                    self._run("UPDATE chronorank_schema SET version = %s WHERE tbl = %s", (v, self.table), fetch=False)
        except ChronorankError:
            raise
        except Exception as exc:
            raise ChronorankError(
                f"migrating table {self.table!r} to chronorank schema {SCHEMA_VERSION} failed and was rolled "
                f"back, the table is unchanged ({type(exc).__name__}: {_scrub(exc, self.dsn)}); fix the cause and open the store "
                f"again, or use a new table and add() the documents there."
            ) from exc

    def _fill_leads(self) -> None:
        """Schema 1 -> 2: the lead values of the rows already stored, from their texts (the lead's
        average length is taken over them, as the body's was over the first batch)."""
        t = self.table
        row = self._run("SELECT lead_avgdl FROM chronorank_schema WHERE tbl = %s", (t,))
        if row and row[0][0] is not None:
            return  # created as schema 2 (empty table, statistics from the first batch)
        pgv = require("pgvector", extra="pgvector", package="pgvector")
        ids_texts = self._run(f"SELECT id, text FROM {t} ORDER BY id")
        _, _, lead_terms, lead_len = analyze_docs([r[1] for r in ids_texts], self.lead_tokens)
        lead_avgdl = float(lead_len.mean()) if lead_len.size and lead_len.mean() > 0 else 1.0
        rows = []
        for (did, _text), counts, n in zip(ids_texts, lead_terms, lead_len.tolist()):
            vals = bm25_doc_values(counts, n, lead_avgdl, self.k1, self.b)
            if vals:
                rows.append((pgv.SparseVector(vals, SPARSE_DIM), did))
        if rows:
            self._run(f"UPDATE {t} SET lead = %s WHERE id = %s", many=rows)
        self._run(
            "UPDATE chronorank_schema SET lead_avgdl = %s, lead_tokens = %s WHERE tbl = %s",
            (lead_avgdl, self.lead_tokens, t), fetch=False,
        )

    def _create(self, dim: int, avgdl: float, lead_avgdl: float) -> None:
        # the schema row and the tables in one transaction: a failure leaves neither behind
        with self._borrow() as conn, conn.transaction():
            made = self._run(
                "INSERT INTO chronorank_schema (tbl, version, dim, avgdl, k1, b, lead_avgdl, lead_tokens, n_docs) "
                "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, 0) ON CONFLICT (tbl) DO NOTHING RETURNING tbl",
                (self.table, SCHEMA_VERSION, dim, avgdl, self.k1, self.b, lead_avgdl, self.lead_tokens),
            )
            if made:
                for name in (f"{self.table}{VEC}", f"{self.table}_df"):
                    self._check_free(name)
                for stmt in _layout(self.table, dim):
                    self._run(stmt, fetch=False)
        if not made:  # another store created it meanwhile: take its statistics
            self._load_meta()
            if self.dim != dim:
                raise InvalidInput(f"table {self.table!r} was just created by another store with {self.dim}-dimensional "
                                   f"vectors, not {dim}; embed with the same model or use another table.")
            return
        self.dim, self.avgdl = dim, avgdl
        self._load_lead()

    def _check_free(self, name: str) -> None:
        if self._run("SELECT to_regclass(%s)", (name,))[0][0] is not None:
            raise InvalidInput(
                f"table {self.table!r} needs the name {name!r} for its own table, but a relation of that name "
                f"already exists (not chronorank's); rename or drop it, or choose another table name. Nothing "
                "was changed."
            )

    def _open_foreign(self) -> None:
        """A table without a chronorank schema row: read it through ``columns=``, or refuse it
        now (naming what it lacks) rather than fail half-way through the first ``add``."""
        t, rel = self.table, self._rel
        cols = {
            name: (dtype, udt, fmt)
            for name, dtype, udt, fmt in self._run(
                "SELECT a.attname, format_type(a.atttypid, NULL), t.typname, format_type(a.atttypid, a.atttypmod) "
                "FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid "
                "WHERE a.attrelid = to_regclass(%s) AND a.attnum > 0 AND NOT a.attisdropped",
                (rel,),
            )
        }
        if self.columns is None:
            if not cols:
                return  # a new table: created by the first add()
            own = ("id", "doc", "text", "record")
            missing = [c for c in own if c not in cols]
            raise InvalidInput(
                f"table {t!r} exists but was not created by chronorank (no chronorank_schema row)"
                + (f" and lacks the columns {missing}" if missing else "")
                + "; nothing was changed. To search it read-only, map your columns: "
                f"PgVectorStore(dsn, {t!r}, columns={{'id': ..., 'text': ..., 'date': ..., 'embedding': ..., "
                "'metadata': ...}), or pick another table name for chronorank to create."
            )
        if not cols:
            raise InvalidInput(f"columns= maps an existing table, but table {t!r} does not exist; create it or drop columns=.")
        missing = [f"{role}={name!r}" for role, name in self.columns.items() if name not in cols]
        if missing:
            raise InvalidInput(
                f"table {t!r} has no column {', '.join(missing)} (it has {sorted(cols)}); fix the columns= mapping."
            )
        c = self.columns
        emb = cols[c["embedding"]]
        if emb[1] != "vector":
            raise InvalidInput(f"column {c['embedding']!r} of {t!r} is {emb[0]}, not a pgvector vector; map a vector column.")
        m = re.match(r"vector\((\d+)\)", emb[2])
        q = {role: f'x."{name}"' for role, name in c.items()}
        if "date" in c:
            kind = cols[c["date"]][0]
            if kind in ("timestamp with time zone", "timestamp without time zone", "date"):
                start, date = f"extract(epoch from {q['date']})::float8", f"to_jsonb({q['date']})"
            elif kind in ("double precision", "real", "integer", "bigint", "numeric", "smallint"):
                start, date = f"{q['date']}::float8", f"to_jsonb({q['date']}::float8)"
            else:
                raise InvalidInput(
                    f"column {c['date']!r} of {t!r} is {kind}; map a timestamptz, date or epoch-seconds number "
                    "column as the date (a view can convert text dates)."
                )
        else:
            start, date = "NULL::float8", "'null'::jsonb"
        if "metadata" in c:
            kind = cols[c["metadata"]][0]
            if kind not in ("jsonb", "json"):
                raise InvalidInput(f"column {c['metadata']!r} of {t!r} is {kind}; map a jsonb or json column as metadata.")
            meta = f"COALESCE({q['metadata']}::jsonb, '{{}}'::jsonb)"
        else:
            meta = "'{}'::jsonb"
        # what a filter reads: the metadata column's keys and the table's own columns (a column
        # wins over a metadata key of the same name; the vector is left out)
        emb_key = c["embedding"].replace("'", "''")
        self._source = (
            f"SELECT {q['id']}::text AS doc, {q['id']}::text AS id, {q['text']}::text AS text, jsonb_build_object('id', {q['id']}::text, "
            f"'text', {q['text']}::text, 'date', {date}, 'metadata', {meta}) AS record, {start} AS t_start, "
            f"NULL::float8 AS t_end, {q['embedding']} AS embedding, NULL::sparsevec AS sparse, "
            f"NULL::sparsevec AS lead, {meta} || (to_jsonb(x) - '{emb_key}') AS filt FROM {rel} x"
        )
        # a mapped table has no BM25 columns: dense similarity and time only
        self.config = self.config.replace(keyword_weight=0.0, lead_weight=0.0)
        if m:
            self.dim = int(m.group(1))
        else:
            row = self._run(f"SELECT vector_dims({q['embedding']}) FROM {rel} x LIMIT 1")
            self.dim = int(row[0][0]) if row else None

    def _writable(self) -> None:
        if self._source is not None:
            raise InvalidInput(
                f"table {self.table!r} is read through columns= (chronorank did not create it); write to it "
                "with your own tools, or add() the documents to a table chronorank creates."
            )

    @property
    def schema_version(self) -> int | None:
        rows = self._run("SELECT version FROM chronorank_schema WHERE tbl = %s", (self.table,))
        return int(rows[0][0]) if rows else None

    # ------------------------------------------------------------------ writing

    def add(self, docs: Iterable[Mapping[str, Any]], vectors: Any = None) -> int:
        """Insert or replace documents by ``id``; returns how many were written."""
        self._writable()
        prep = prepare_docs(docs, vectors, embedder=self.embedder, dim=self.dim, bad_dates=self.bad_dates,
                            need_terms=True, lead_tokens=self.lead_tokens, infer_dates=self.infer_dates)
        self.last_inferred = prep.inferred
        n = len(prep.ids)
        if n == 0:
            return 0
        assert prep.vectors is not None
        if self.dim is None:
            avgdl = float(prep.lengths.mean()) if prep.lengths.mean() > 0 else 1.0
            lead_avgdl = float(prep.lead_lengths.mean()) if prep.lead_lengths.mean() > 0 else 1.0
            self._create(int(prep.vectors.shape[1]), avgdl, lead_avgdl)
        for i, rec in enumerate(prep.records):
            bad = _nul_field(rec)
            if bad is not None:
                raise InvalidInput(
                    f"docs[{i}] (id={rec['id']!r}): {bad} holds a NUL character (\\x00), which PostgreSQL "
                    "cannot store; remove it (e.g. text.replace('\\x00', '')). Nothing was written."
                )
        pgv = require("pgvector", extra="pgvector", package="pgvector")
        t = self.table
        with self._write_transaction("add"):
            old = self._run(f"SELECT v.sparse FROM {t} d LEFT JOIN {t}{VEC} v USING (doc) WHERE d.id = ANY(%s)",
                            (prep.ids,))
            delta: Counter[int] = Counter()
            for (sv,) in old:
                for term in (sv.indices() if sv is not None else ()):
                    delta[int(term)] -= 1
            rows = []
            avgdl = float(self.avgdl or 1.0)
            lead_avgdl = float(self.lead_avgdl or 1.0)
            for i in range(n):
                vals = bm25_doc_values(prep.terms[i], prep.lengths[i], avgdl, self.k1, self.b)
                for term in vals:
                    delta[term] += 1
                sparse = pgv.SparseVector(vals, SPARSE_DIM) if vals else None
                lvals = bm25_doc_values(prep.lead_terms[i], prep.lead_lengths[i], lead_avgdl, self.k1, self.b)
                lead = pgv.SparseVector(lvals, SPARSE_DIM) if lvals else None
                s, e = float(prep.start[i]), float(prep.end[i])
                rows.append((
                    prep.ids[i], prep.texts[i], json.dumps(prep.records[i]), prep.ids[i],
                    None if math.isnan(s) else s, None if math.isnan(e) else e, prep.vectors[i], sparse, lead,
                    sorted(vals) or None,
                ))
            # a large batch is loaded without the HNSW index, which is then built once (much faster
            # than n incremental inserts); searches meanwhile fall back to exact scans
            rebuild = n >= BULK_REBUILD
            if rebuild:
                self._run(f"DROP INDEX IF EXISTS {t}{VEC}_hnsw", fetch=False)
            # one statement per document: the wide row (its integer key kept on update), then the
            # narrow row under that key
            self._run(
                f"WITH w AS (INSERT INTO {t} (id, text, record) VALUES (%s, %s, %s) "
                "ON CONFLICT (id) DO UPDATE SET text = EXCLUDED.text, record = EXCLUDED.record "
                f"RETURNING doc) INSERT INTO {t}{VEC} (doc, id, t_start, t_end, embedding, sparse, lead, terms) "
                "SELECT w.doc, %s::text, %s::float8, %s::float8, %s::vector, %s::sparsevec, %s::sparsevec, %s::int4[] "
                "FROM w ON CONFLICT (doc) DO UPDATE SET t_start = EXCLUDED.t_start, t_end = EXCLUDED.t_end, "
                "embedding = EXCLUDED.embedding, sparse = EXCLUDED.sparse, lead = EXCLUDED.lead, terms = EXCLUDED.terms",
                many=rows,
            )
            if rebuild:
                self._run("SET LOCAL maintenance_work_mem = '512MB'", fetch=False)
                self._run(f"CREATE INDEX IF NOT EXISTS {t}{VEC}_hnsw ON {t}{VEC} USING hnsw (embedding vector_cosine_ops)",
                          fetch=False)
            self._apply_df(delta)
            self._count(n - len(old))
        if rebuild:
            self._run(f"ANALYZE {t}", fetch=False)
            self._run(f"ANALYZE {t}{VEC}", fetch=False)
        return n

    def _count(self, change: int) -> None:
        """n_docs follows every write, in its transaction (the advisory lock makes it exact)."""
        if change:
            self._run("UPDATE chronorank_schema SET n_docs = n_docs + %s WHERE tbl = %s", (int(change), self.table),
                      fetch=False)

    @contextlib.contextmanager
    def _write_transaction(self, what: str) -> Iterator[None]:
        """One transaction for a write and its frequency update, serialised per table with an
        advisory lock (two stores writing the same table wait for each other, so the frequencies
        stay exact); a database error rolls everything back and is raised as InvalidInput (the
        data was refused) or StoreError (the database failed)."""
        psycopg = require("psycopg", extra="pgvector", package="psycopg")
        try:
            with self._borrow() as conn, conn.transaction():
                self._run("SELECT pg_advisory_xact_lock(hashtext(%s))", (f"chronorank:{self.table}",), fetch=False)
                yield
        except ChronorankError:
            raise
        except psycopg.DataError as exc:
            raise InvalidInput(
                f"PostgreSQL refused the data of this {what}() on table {self.table!r} ({_scrub(exc, self.dsn)}); the whole batch "
                "was rolled back, nothing was written. Fix the offending value and call again."
            ) from exc
        except psycopg.Error as exc:
            raise StoreError(
                f"{what}() on table {self.table!r} failed in PostgreSQL and was rolled back, nothing was written "
                f"({type(exc).__name__}: {_scrub(exc, self.dsn)}); fix the cause and call again."
            ) from exc

    def _apply_df(self, delta: Counter[int]) -> None:
        changes = [(int(term), int(d)) for term, d in delta.items() if d != 0]
        if not changes:
            return
        self._run(
            f"INSERT INTO {self.table}_df (term, df) SELECT * FROM unnest(%s::int[], %s::int[]) "
            "ON CONFLICT (term) DO UPDATE SET df = " + f"{self.table}_df.df + EXCLUDED.df",
            ([c[0] for c in changes], [c[1] for c in changes]), fetch=False,
        )

    def delete(self, ids: Iterable[str] | str) -> int:
        """Remove documents by id; returns how many existed."""
        self._writable()
        if isinstance(ids, str):
            ids = [ids]
        wanted = [str(i) for i in ids]
        if not wanted or self.dim is None:
            return 0
        t = self.table
        with self._write_transaction("delete"):
            docs = [r[0] for r in self._run(f"DELETE FROM {t} WHERE id = ANY(%s) RETURNING doc", (wanted,))]
            gone = self._run(f"DELETE FROM {t}{VEC} WHERE doc = ANY(%s) RETURNING sparse", (docs,)) if docs else []
            delta: Counter[int] = Counter()
            for (sv,) in gone:
                if sv is not None:
                    for term in sv.indices():
                        delta[int(term)] -= 1
            self._apply_df(delta)
            self._count(-len(docs))
        return len(docs)

    def __len__(self) -> int:
        if self.dim is None:
            return 0
        if self._source is not None:  # a mapped table keeps no count
            return int(self._run(f"SELECT count(*) FROM {self._rel}")[0][0])
        return int(self._run("SELECT n_docs FROM chronorank_schema WHERE tbl = %s", (self.table,))[0][0])

    # ------------------------------------------------------------------ search

    def search(
        self,
        query: str,
        k: int = 10,
        now: Any = None,
        *,
        vector: Any = None,
        intent: Intent | None = None,
        lanes: Lanes | None = None,
        method: str | None = None,
        filter: Mapping[str, Any] | None = None,  # noqa: A002 - the name every vector store uses
        raw: bool = False,
        **overrides: Any,
    ) -> Ranking:
        """The best ``k`` documents for ``query`` at ``now``, scored in SQL.

        ``filter`` is a metadata filter (:mod:`chronorank.filters`): a bound-parameter
        ``WHERE`` clause ANDed into every lane (and the exact scan). ``raw=True``: the query as
        given, without the preparation of :mod:`chronorank.stores.prepare`.
        """
        pq = prepare_query(query, k, now, intent, self.config, overrides)
        sq = store_query(pq, searched(lambda text, n, **kw: self.search(text, n, pq.now, raw=True, **kw)),
                         lanes or pq.config.lanes, raw=raw, vector=vector)

        user_filter = parse_filter(filter)
        method = method or self.method
        if method not in METHODS:
            raise InvalidInput(f"method={method!r}; use one of {list(METHODS)}.")
        cfg, now_s, intent, topical = pq.config, pq.now, sq.intent, sq.topical
        lanes = lanes or cfg.lanes
        plan = plan_query(intent, now_s, cfg)
        if self.dim is None:
            return empty_ranking(query, intent, now_s, "pgvector")
        qvec = self._query_vector(topical, vector, plan)
        self._check_lead(plan)
        if plan.client:
            method = "lanes"
        need_ef = min(int(max(40, lanes.dense, *[w[1] for w in lanes.windows], 0)), 1000)
        walks = method == "lanes" and (lanes.dense > 0 or bool(lanes.windows))  # an HNSW walk reads ef_search
        with self._borrow() as conn:  # the setting and the statements on one connection
            # one round trip for what does not depend on another answer: the setting, the
            # query terms' frequencies and the time windows' row estimates
            ahead: list[tuple[str, Any]] = []
            if walks and self._pool is not None and self._pool.ef.get(conn) != need_ef:
                ahead.append((f"SET hnsw.ef_search = {need_ef}", None))
                self._pool.ef[conn] = need_ef
            if plan.keyword_w > 0 and query_terms(sq.keywords):
                ahead.append(self._df_sql(query_terms(sq.keywords)))
            explain = self._btree_sql(self._windows(plan, lanes)) if method == "lanes" and self._source is None else None
            if explain is not None:
                ahead.append((explain, None))
            self._run_ahead(ahead)
            try:
                svec, lvec, holding = (self._query_sparse(sq.keywords, plan, sq.lead_keywords) if plan.keyword_w > 0
                                       else (None, None, None))
                sql, params = self.sql(plan, lanes, qvec, svec, method, limit=None if plan.client else int(k),
                                       lvec=lvec, filter=user_filter, holding=holding)
            finally:
                self._local.ahead = None
            rows = self._run(sql, params)
        if not rows and len(self) == 0:
            return empty_ranking(query, intent, now_s, "pgvector")
        cand = _candidates(rows, lead=lvec is not None)
        max_bm25 = float(rows[0][8]) if rows else 0.0
        max_lead = float(rows[0][9]) if rows else 0.0
        meta: dict[str, Any] = {"method": method, **({"anchor": sq.anchor_line} if sq.anchor_line else {})}
        if plan.client:
            cand.vectors = self._vector_lookup(cand.ids)
            order, cand, res = client_score(plan, cand, max_bm25, int(k), max_lead)
            return build_ranking(plan, cand, query=query, max_bm25=max_bm25, lanes=lanes, store="pgvector",
                                 order=order, client_res=res, meta=meta, max_lead=max_lead)
        return build_ranking(plan, cand, query=query, max_bm25=max_bm25, lanes=lanes, store="pgvector", meta=meta,
                             max_lead=max_lead)

    def _vector_lookup(self, ids: list[Any]) -> Callable[[np.ndarray], np.ndarray | None]:
        """The pool's embeddings by position, for the version cosine test: selected only when
        that test runs (the first hit and its off-topic same-series pages), not with every pool
        row (pool x dim floats a search)."""
        t = self.table
        sql = (f"SELECT d.id, v.embedding::real[] FROM {t} d JOIN {t}{VEC} v USING (doc) WHERE d.id = ANY(%s)"
               if self._source is None else f"SELECT id, embedding::real[] FROM ({self._source}) src WHERE id = ANY(%s)")

        def vectors(pos: np.ndarray) -> np.ndarray | None:
            want = [ids[i] for i in np.asarray(pos, dtype=np.int64).tolist()]
            got = {did: emb for did, emb in self._run(sql, (want,))}
            rows = [got.get(d) for d in want]
            return None if any(r is None for r in rows) else np.asarray(rows, dtype=np.float64)

        return vectors

    def _check_lead(self, plan: QueryPlan) -> None:
        if plan.lead_w > 0 and self.lead_avgdl is not None and plan.lead_tokens != self.lead_tokens:
            raise InvalidInput(
                f"lead_tokens={plan.lead_tokens} but table {self.table!r} stores leads of at most "
                f"{self.lead_tokens} terms; use lead_tokens={self.lead_tokens}, or add the documents to a "
                "new table built with the lead_tokens you want."
            )

    def sql(
        self, plan: QueryPlan, lanes: Lanes, qvec: Any, svec: Any, method: str, limit: int | None,
        lvec: Any = None, filter: Any = None, holding: int | None = None,  # noqa: A002
    ) -> tuple[str, dict[str, Any]]:
        """The scoring statement and its parameters (public for EXPLAIN and the docs).

        Written so that the planner can run it in parallel and read only what it needs: no CTE
        over the whole table is referenced twice (that is materialised, in one process); the
        exact scan reads the narrow ``_vec`` table and keeps ``doc, id, score`` per row, the top
        ``k`` then fetch their texts and records; the BM25 maxima that normalise the keyword
        signals come from the rows holding a query term (GIN on ``terms``), not from a second
        pass over every row. ``holding``: a bound on how many rows hold a query term (from
        ``_query_sparse``); given, the exact scan scores those rows apart and every row without
        sparse products (the same ranking, less work per row).
        """
        own = self._source is None
        vt, wt = (f"{self.table}{VEC}", self.table) if own else ("src", "src")
        params: dict[str, Any] = {"q": qvec, "sq": svec, "lq": lvec}
        where = ["TRUE"]
        if filter is not None and not own:  # a mapped table: its metadata and its own columns, on the row
            where.append(filter_sql(filter, "v.filt", params, time_sql={"start": "v.t_start", "end": "v.t_end"}))
        elif filter is not None:
            meta = filter_sql(filter, "(w.record -> 'metadata')", params,
                              time_sql={"start": "v.t_start", "end": "v.t_end"})
            where.append(f"EXISTS (SELECT 1 FROM {wt} w WHERE w.doc = v.doc AND {meta})")
        if plan.exclude_future:
            op = "<" if plan.half_open else "<="
            where.append(f"(v.t_start IS NULL OR v.t_start {op} {_f(plan.ref)})")
        if plan.drop_undated:
            where.append("v.t_start IS NOT NULL")
        flt = " AND ".join(where)
        cos_col = "1.0 - (v.embedding <=> %(q)s)"
        bm25_col = "COALESCE(-(v.sparse <#> %(sq)s), 0.0)" if svec is not None else "0.0"
        lead_on = lvec is not None and plan.lead_w > 0
        lead_col = "COALESCE(-(v.lead <#> %(lq)s), 0.0)" if lead_on else "0.0"
        # the rows a keyword signal can be above 0 on: those holding a query term (a lead's terms
        # are among its body's)
        holds = "TRUE"
        if own and (svec is not None or lead_on):
            params["qt"] = sorted({int(i) for i in (svec.indices() if svec is not None else [])}
                                  | {int(i) for i in (lvec.indices() if lead_on else [])})
            holds = "v.terms && %(qt)s::int4[]"
        tail = "" if limit is None else f" LIMIT {int(limit)}"
        def score_of(cos: str, bm25: str, lead: str, t: str, m: str, lm: str) -> str:
            """The fused score; BM25 and the lead are divided by their maxima (m, lm), as _fuse does."""
            cols = {
                "cos": cos, "bm25": f"({bm25} / NULLIF({m}, 0.0))", "lead": f"({lead} / NULLIF({lm}, 0.0))",
                "bm25_on": f"(CASE WHEN {m} > 0 THEN 1.0 ELSE 0.0 END)",
                "lead_on": f"(CASE WHEN {lm} > 0 THEN 1.0 ELSE 0.0 END)",
                "start": f"{t}t_start", "end": f"{t}t_end",
            }
            return cx.to_sql(plan.score_expr(1.0, 1.0, pooled=True), cols)

        sim = plan.sim_expr(1.0, 1.0, pooled=True)
        den = sim.args[1] if isinstance(sim, cx.Op) and sim.op == "div" else None

        def den_of(m: str, lm: str) -> str:
            """The pooled similarity's denominator (its weights present), as score_of renders it."""
            on = {"bm25_on": f"(CASE WHEN {m} > 0 THEN 1.0 ELSE 0.0 END)", "lead_on": f"(CASE WHEN {lm} > 0 THEN 1.0 ELSE 0.0 END)"}
            return cx.to_sql(den, on) if den is not None else "1.0"

        def once(score: str) -> str:
            """The denominator depends on the maxima only: computed once in mx, not per row."""
            return score.replace(den_of("(SELECT m FROM mx)", "(SELECT l FROM mx)"), "(SELECT dn FROM mx)")

        if method == "exact":
            keyword = svec is not None or lead_on
            out = (f"{{cos}} AS cos, {{bm25}} AS bm25, {{lead}} AS lead, NULL::jsonb AS lanes, {{m}} AS m, {{lm}} AS l, "
                   f"top.score FROM top JOIN {vt} v USING (doc) JOIN {wt} d USING (doc) ORDER BY top.score DESC, top.id")
            if keyword and holding is not None and limit is not None:
                # few rows hold a query term: score those (hold) with their keyword signals, and
                # every row without them -- its exact score where it holds none -- in one parallel
                # scan that computes no sparse product; the scan keeps k + |hold| rows, so at
                # least k that hold no term
                m, lm = "(SELECT m FROM mx)", "(SELECT l FROM mx)"
                sql = (
                    f"WITH hold AS MATERIALIZED (SELECT v.doc, v.id, v.t_start, v.t_end, {cos_col} AS cos, "
                    f"{bm25_col} AS bm25, {lead_col} AS lead FROM {vt} v WHERE {flt} AND {holds}), "
                    f"mx AS (SELECT m, l, n, {den_of('m', 'l')} AS dn FROM (SELECT COALESCE(max(bm25), 0.0) AS m, "
                    "COALESCE(max(lead), 0.0) AS l, count(*) AS n FROM hold) x), "
                    f"rest AS (SELECT v.doc, v.id, v.t_start, {once(score_of(f'({cos_col})', '0.0', '0.0', 'v.', m, lm))} AS score "
                    f"FROM {vt} v WHERE {flt} ORDER BY score DESC, {_ties('v.')} LIMIT {int(limit)} + (SELECT n FROM mx)), "
                    f"top AS (SELECT doc, id, score FROM (SELECT h.doc, h.id, h.t_start, "
                    f"{once(score_of('h.cos', 'h.bm25', 'h.lead', 'h.', m, lm))} AS score FROM hold h UNION ALL "
                    "SELECT r.doc, r.id, r.t_start, r.score FROM rest r WHERE r.doc NOT IN (SELECT doc FROM hold)) u "
                    f"ORDER BY score DESC, {_ties('')}{tail}) "
                    "SELECT top.id, d.record, v.t_start, v.t_end, "
                    + out.format(cos=cos_col, bm25=bm25_col, lead=lead_col, m=m, lm=lm)
                )
            else:
                heads = []
                if keyword:
                    heads.append(f"mx AS (SELECT m, l, {den_of('m', 'l')} AS dn FROM (SELECT COALESCE(max({bm25_col}), "
                                 f"0.0) AS m, COALESCE(max({lead_col}), 0.0) AS l FROM {vt} v WHERE {flt} AND {holds}) x)")
                    m, lm = "(SELECT m FROM mx)", "(SELECT l FROM mx)"
                else:
                    m = lm = "0.0"
                # the per-row inputs are written into the expression (a subquery would be flattened
                # into it anyway), each once; the sorted rows carry no text, record or vector
                score = score_of(f"({cos_col})", bm25_col, lead_col, "v.", m, lm)
                score = once(score) if keyword else score  # (without mx the denominator is a constant)
                heads.append(f"top AS (SELECT v.doc, v.id, {score} AS score FROM {vt} v WHERE {flt} "
                             f"ORDER BY score DESC, {_ties('v.')}{tail})")
                sql = (f"WITH {', '.join(heads)} SELECT top.id, d.record, v.t_start, v.t_end, "
                       + out.format(cos=cos_col, bm25=bm25_col, lead=lead_col, m=m, lm=lm))
        else:
            parts = []
            if lanes.dense and plan.dense_w > 0:
                parts.append(("dense", f"SELECT v.doc, v.id, v.embedding <=> %(q)s AS o FROM {vt} v WHERE {flt} "
                                       f"ORDER BY o LIMIT {lanes.dense}"))
            if lanes.keyword and svec is not None:
                parts.append(("keyword", f"SELECT v.doc, v.id, v.sparse <#> %(sq)s AS o FROM {vt} v WHERE {flt} "
                                         f"AND v.sparse IS NOT NULL AND {holds} ORDER BY o, v.id LIMIT {lanes.keyword}"))
            windows = self._windows(plan, lanes)
            by_btree = self._btree_windows(windows) if own else set()
            for (lo, hi), (days, lim) in windows.items():
                # a window of few rows: all of them from the btree, in exact distance order (the
                # "+ 0.0" keeps the HNSW index out); else the HNSW walk, filtered
                # an exact window cuts equal distances by TIE_RULE; the HNSW walk (approximate) cannot
                exact = (lo, hi) in by_btree
                o = "(v.embedding <=> %(q)s) + 0.0" if exact else "v.embedding <=> %(q)s"
                ties = f", {_ties('v.')}" if exact else ""
                parts.append((f"last_{days:g}d", f"SELECT v.doc, v.id, {o} AS o FROM {vt} v WHERE {flt} "
                                                 f"AND v.t_start BETWEEN {_f(lo)} AND {_f(hi)} ORDER BY o{ties} LIMIT {lim}"))
            if lanes.newest:
                # t_start DESC (not -t_start): the btree on t_start serves it, read backwards
                parts.append(("newest", f"SELECT v.doc, v.id, -v.t_start AS o FROM {vt} v WHERE {flt} "
                                        f"AND v.t_start <= {_f(plan.newest_bound())} ORDER BY v.t_start DESC, v.id COLLATE \"C\" "
                                        f"LIMIT {lanes.newest}"))
            if not parts:
                raise InvalidInput("no lane is on for this query; enable Lanes(dense=...) or another lane.")
            union = " UNION ALL ".join(
                f"SELECT doc, '{name}' AS lane, row_number() OVER (ORDER BY o, id) AS r FROM ({q}) s{i}"
                for i, (name, q) in enumerate(parts)
            )
            # the pool is a few hundred rows: materialising c (read by mx and the scoring) is cheap
            sql = (
                f"WITH pool AS (SELECT doc, jsonb_object_agg(lane, r) AS lanes FROM ({union}) u GROUP BY doc), "
                f"c AS (SELECT v.doc, v.id, v.t_start, v.t_end, {cos_col} AS cos, {bm25_col} AS bm25, "
                f"{lead_col} AS lead, pool.lanes FROM pool JOIN {vt} v USING (doc)), "
                "mx AS (SELECT COALESCE(max(bm25), 0.0) AS m, COALESCE(max(lead), 0.0) AS l FROM c), "
                f"top AS (SELECT c.*, mx.m, mx.l, {score_of('c.cos', 'c.bm25', 'c.lead', 'c.', 'mx.m', 'mx.l')} AS score FROM c, mx "
                f"ORDER BY score DESC, {_ties('c.')}{tail}) "
                "SELECT top.id, d.record, top.t_start, top.t_end, top.cos, top.bm25, top.lead, top.lanes, top.m, top.l, "
                f"top.score FROM top JOIN {wt} d USING (doc) ORDER BY top.score DESC, top.id"
            )
        if self._source is not None:  # a mapped table, inlined so its own indexes serve the lanes
            sql = sql.replace("WITH ", f"WITH src AS NOT MATERIALIZED ({self._source}), ", 1)
        return sql, params

    def _btree_windows(self, windows: Mapping[tuple[float, float], tuple[float, int]]) -> set[tuple[float, float]]:
        """The time windows whose rows the start-time btree serves faster than a filtered HNSW walk.

        A filtered walk visits about ``limit / fraction`` candidates, the btree every row in the
        window, so the btree wins below ``sqrt(WINDOW_COST x limit x n)`` rows; the row counts
        are the planner's estimates (one EXPLAIN, no row read). WINDOW_COST = 34 was measured
        at 100k random 384-d vectors (benchmarks/store_pg.py: a 30-day window of 1.6k rows 8 ms by
        btree against 24 by HNSW, 180 days / 9.8k rows 119 against 194, 365 days / 20k rows 199
        against 84); the btree path is exact, the filtered walk is not.
        """
        explain = self._btree_sql(windows)
        if explain is None:
            return set()
        plan = self._run(explain)[0][0][0]["Plan"]
        rows = [float(p["Plan Rows"]) for p in plan.get("Plans", [])]
        if len(rows) != len(windows) + 1:
            return set()  # a plan of another shape: keep the HNSW walks
        n = max(rows[0], 1.0)
        return {w for w, r, (_, lim) in zip(windows, rows[1:], windows.values()) if r <= math.sqrt(WINDOW_COST * lim * n)}

    def _btree_sql(self, windows: Mapping[tuple[float, float], Any]) -> str | None:
        """The EXPLAIN whose row estimates ``_btree_windows`` reads (None: no window)."""
        if not windows:
            return None
        t = f"{self.table}{VEC}"
        parts = [f"SELECT 1 FROM {t} WHERE t_start BETWEEN {_f(lo)} AND {_f(hi)}" for lo, hi in windows]
        return "EXPLAIN (FORMAT JSON) " + " UNION ALL ".join([f"SELECT 1 FROM {t}", *parts])

    @staticmethod
    def _windows(plan: QueryPlan, lanes: Lanes) -> dict[tuple[float, float], tuple[float, int]]:
        """The time lanes' distinct (lo, hi) intervals -> (days, limit)."""
        windows: dict[tuple[float, float], tuple[float, int]] = {}
        for days, lim in lanes.windows:
            windows.setdefault(plan.window(days), (days, lim))
        return windows

    def _df_sql(self, terms: Mapping[int, Any]) -> tuple[str, Any]:
        """The query terms' frequencies and the document count in one statement (one snapshot)."""
        return (f"SELECT term, df FROM {self.table}_df WHERE term = ANY(%s) AND df > 0 "
                "UNION ALL SELECT NULL, n_docs FROM chronorank_schema WHERE tbl = %s", (list(terms), self.table))

    def _query_vector(self, topical: str, vector: Any, plan: QueryPlan) -> Any:
        if vector is not None:
            q = as_matrix(vector, self.dim, "vector")[0]
        elif self.embedder is not None:
            q = as_matrix(np.asarray(embed_queries(self.embedder, [topical]), dtype=np.float32), self.dim,
                          "query embedding")[0]  # an asymmetric model's query side (e5: "query: ")
        else:
            if plan.dense_w > 0:
                raise InvalidInput(
                    "this store has no embedder to embed the query; pass vector=... to search(), an "
                    "embedder to PgVectorStore(...), or dense_weight=0 for keywords only."
                )
            q = np.zeros(int(self.dim or 1), dtype=np.float32)
            q[0] = 1.0
        return q

    def _query_sparse(self, topical: str, plan: QueryPlan, lead_text: str = "") -> tuple[Any, Any, int | None]:
        """The body's query vector (count x idf x idf**idf_power), the lead's (count x body idf)
        and, where few rows hold a query term, a bound on how many do (``sql(holding=)``)."""
        terms = query_terms(topical)
        if not terms:
            return None, None, None
        pgv = require("pgvector", extra="pgvector", package="pgvector")
        rows = self._run(*self._df_sql(terms))
        df = {int(term): int(d) for term, d in rows if term is not None}
        n_docs = next((int(d) for term, d in rows if term is None), 0)
        vals = {}
        for term, d in df.items():
            idf = bm25_idf(n_docs, d)
            vals[term] = idf * terms[term] * (idf ** plan.idf_power if plan.idf_power else 1.0)
        only = set(query_terms(lead_text)) if lead_text else None
        lead = lead_query_weights(terms, df, n_docs, only) if plan.lead_w > 0 else {}
        # at most this many rows hold a query term; few enough (a quarter of the table) for the
        # exact scan to score them apart
        held = sum(df.values())
        return (pgv.SparseVector(vals, SPARSE_DIM) if vals else None,
                pgv.SparseVector(lead, SPARSE_DIM) if lead else None,
                held if held <= max(n_docs // 4, 1000) else None)

    def __repr__(self) -> str:
        return f"PgVectorStore(dsn={_scrub(self.dsn, self.dsn)!r}, table={self.table!r}, method={self.method!r})"


_COLUMN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,62}$")
def _check_columns(columns: Mapping[str, str] | None) -> dict[str, str] | None:
    out = column_roles(columns, ("id", "text", "embedding"), "{'id': 'doc_id', 'text': 'body', 'embedding': 'emb'}")
    for role, name in (out or {}).items():
        if not isinstance(name, str) or not _COLUMN.match(name):
            raise InvalidInput(f"columns[{role!r}]={name!r}; give a plain column name (letters, digits, '_').")
    return out


def _f(x: float) -> str:
    if not math.isfinite(x):
        raise InvalidInput(f"time bound {x!r} is not finite")
    return f"{float(x)!r}::float8"


_URL_PASSWORD = re.compile(r"(://[^:/@?#]*):.*@")  # to the last '@': a password may hold one
_PARAM_PASSWORD = re.compile(r"([?&]\w*password=)[^&#]*", re.IGNORECASE)
_KV_PASSWORD = re.compile(r"(\b\w*password\s*=\s*)('(?:[^'\\]|\\.)*'?|\S*)", re.IGNORECASE)


def _safe_dsn(dsn: str) -> str:
    """``dsn`` with every password masked: the URL form's ``user:PW@``, a ``?password=PW``
    parameter and the key=value form's ``password=PW`` (quoted or not; ``sslpassword`` too)."""
    out = _URL_PASSWORD.sub(r"\1:***@", dsn)
    out = _PARAM_PASSWORD.sub(r"\1***", out)
    return _KV_PASSWORD.sub(r"\1***", out)


def _secrets(dsn: str) -> set[str]:
    """The passwords ``dsn`` and the environment hold (as written, unquoted, URL-decoded)."""
    from urllib.parse import unquote

    found: set[str] = set()
    m = re.search(r"://[^:/@?#]*:(.*)@", dsn)
    if m:
        found |= {m.group(1), unquote(m.group(1))}
    for m in _PARAM_PASSWORD.finditer(dsn):
        v = dsn[m.end(1):m.end()]
        found |= {v, unquote(v)}
    for m in _KV_PASSWORD.finditer(dsn):
        v = m.group(2)
        found |= {v, v[1:-1].replace("\\'", "'").replace("\\\\", "\\") if v.startswith("'") else v}
    env = os.environ.get("PGPASSWORD")
    if env:
        found.add(env)
    # a very short secret would blank out ordinary words; the masks above still cover the DSN
    return {v for v in found if len(v) >= 4}


def _scrub(text: Any, dsn: str) -> str:
    """``text`` (a driver's message) with the DSN masked and every password replaced by ***."""
    out = str(text).replace(dsn, _safe_dsn(dsn))
    for secret in sorted(_secrets(dsn), key=len, reverse=True):
        out = out.replace(secret, "***")
    return out


def _ties(t: str) -> str:
    """``TIE_RULE`` in SQL: newer first, undated last, then the id by code point (as Python compares)."""
    return f'{t}t_start DESC NULLS LAST, {t}id COLLATE "C"'


class _Pool:
    """At most ``size`` connections, opened on demand and reused; a caller waits for a free one.
    (psycopg_pool does more; this is what concurrent searches need, without a dependency.)"""

    def __init__(self, connect: Any, size: int) -> None:
        self._connect, self._size = connect, size
        self._idle: list[Any] = []
        self._open = 0
        self._closed = False
        self._cond = threading.Condition()
        self.ef: weakref.WeakKeyDictionary[Any, int] = weakref.WeakKeyDictionary()  # hnsw.ef_search per connection

    def get(self) -> Any:
        with self._cond:
            while True:
                while self._idle:
                    conn = self._idle.pop()
                    if not conn.closed:
                        return conn
                    self._open -= 1
                if self._open < self._size:
                    self._open += 1
                    break
                self._cond.wait()
        try:
            return self._connect()
        except BaseException:
            with self._cond:
                self._open -= 1
                self._cond.notify()
            raise

    def put(self, conn: Any) -> None:
        with self._cond:
            if self._closed and not conn.closed:
                conn.close()  # the store was closed while this call ran
            if conn.closed:
                self._open -= 1
            else:
                self._idle.append(conn)
            self._cond.notify()

    def discard_idle(self) -> None:
        with self._cond:
            idle, self._idle = self._idle, []
            self._open -= len(idle)
            self._cond.notify_all()
        for conn in idle:
            with contextlib.suppress(Exception):
                conn.close()

    def close(self) -> None:
        with self._cond:
            self._closed = True
        self.discard_idle()


def _candidates(rows: list[Any], lead: bool) -> Candidates:
    n = len(rows)
    ids, recs, lanes = [], [], []
    start, end = np.full(n, np.nan), np.full(n, np.nan)
    cos, bm25, lead_v, score = np.zeros(n), np.zeros(n), np.zeros(n), np.zeros(n)
    for i, (did, rec, ts, te, c, b, ld, ln, _m, _l, sc) in enumerate(rows):
        ids.append(did)
        recs.append(rec if isinstance(rec, dict) else json.loads(rec))
        start[i] = np.nan if ts is None else ts
        end[i] = np.nan if te is None else te
        cos[i], bm25[i], lead_v[i], score[i] = float(c), float(b), float(ld), float(sc)
        lanes.append({k: int(v) for k, v in (ln or {}).items()})
    return Candidates(ids=ids, records=recs, score=score, cos=cos, bm25=bm25, start=start, end=end, lane_ranks=lanes,
                      lead=lead_v if lead else None)
