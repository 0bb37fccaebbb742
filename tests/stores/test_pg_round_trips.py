"""PostgreSQL round trips per search: the statements that do not depend on another answer (the
HNSW setting, the query terms' frequencies, the time windows' row estimates) go together in one
pipeline, then the scoring statement -- two round trips for a question the store does not
prepare from the corpus, whichever way it scores. An undated anchor, an acronym or a glued name
(the default client-side ranking: :mod:`chronorank.stores.prepare`) adds two a request."""

from __future__ import annotations

from typing import Any

import pytest
from store_cases import make_store  # this folder's conftest, loaded by path
from test_qdrant_server_path import NOW, QUERIES, docs

pytestmark = pytest.mark.pg

SHAPES = [*QUERIES, "polars changes between March and June 2024"]  # latest, as-of, timeless, plain, a period


def _counted(store: Any) -> list[str]:
    """What ``store`` sends, one entry per round trip (a statement, or a pipeline of them)."""
    sent: list[str] = []
    run, ahead = store._run, store._run_ahead

    def counted_run(sql: str, params: Any = None, **kw: Any) -> Any:
        if (sql, repr(params)) not in (getattr(store._local, "ahead", None) or {}):  # else answered already
            sent.append(sql.split()[0])
        return run(sql, params, **kw)

    def counted_ahead(statements: list[tuple[str, Any]]) -> None:
        if statements:
            sent.append("pipeline: " + " + ".join(s.split()[0] for s, _ in statements))
        ahead(statements)

    store._run, store._run_ahead = counted_run, counted_ahead
    return sent


@pytest.mark.parametrize("fallback", ["client", "error"])
def test_a_search_is_two_round_trips(request: pytest.FixtureRequest, embedder: Any, pg: Any, fallback: str) -> None:
    store = make_store("pgvector", request, embedder, fallback=fallback)  # closed by the fixture
    store.add(docs())
    store.search(QUERIES[0], k=5, now=NOW)
    sent = _counted(store)
    for q in SHAPES:
        sent.clear()
        hits = store.search(q, k=5, now=NOW)
        assert len(hits) == 5
        assert len(sent) <= 2 and sent[-1] == "WITH", (q, sent)
