"""The Qdrant server path (``url=``): requests per search, secrets in messages.

Every client call is a round trip to a server. The store is given the real qdrant-client in local
mode behind a proxy that counts calls (local mode has the server's API), so what is counted is
what a server would receive."""

from __future__ import annotations

import socket
import traceback
from typing import Any

import pytest

pytest.importorskip("qdrant_client")

from counting import Counting  # noqa: E402 - this folder, on the path (conftest)
from qdrant_client import QdrantClient  # noqa: E402

from chronorank.errors import ChronorankError  # noqa: E402
from chronorank.stores import Lanes, QdrantStore  # noqa: E402

NOW = "2025-01-01"
QUERIES = [
    "what changed in the latest polars release",  # recent intent: time lanes, the lead
    "polars release notes as of March 2024",  # as-of
    "how does the httpx proxy work",  # no time words
    "polars sorting and memory fixes",
]
#: every question shape: the client-side preparation makes its own requests for the last four
SHAPES = [
    *QUERIES,
    "polars changes between March and June 2024",  # a period
    "httpx proxy before version 3.0",  # an undated version anchor (client: dated by the corpus)
    "polars memory fixes before the csv reader release",  # an undated event anchor
    "httpx CLI and SLA support",  # an acronym (client: spelled as the pool spells it)
    "what changed in httpx2 proxy support",  # a glued name
]


TOPICS = ["parser", "cache", "lazy frames", "csv reader", "cli", "docs", "sync engine", "plugins", "windows",
          "arrow", "memory", "sorting"]


def docs() -> list[dict[str, Any]]:
    """No two scores equal at a cut (where they are, the engine is asked again for the tied rows:
    one more request, the price of TIE_RULE on an engine that orders ties its own way)."""
    out = []
    for i, topic in enumerate(TOPICS):
        out.append({"id": f"polars@{i}", "text": f"polars {i}.0 release fixes join speed and {topic}",
                    "date": f"2024-{i + 1:02d}-05", "major": i})
        out.append({"id": f"httpx@{i}", "text": f"httpx {i}.0 {topic} release: " + " ".join(
            ["http2", "proxy", "support", "for", "the", "client", "pool", "timeouts"][: 3 + i % 6]),
                    "date": f"2023-{i + 1:02d}-10", "major": i})
    return out


@pytest.fixture(params=["client", "error"])
def counted(embedder: Any, request: pytest.FixtureRequest) -> tuple[Counting, QdrantStore]:
    """The default store (the index's ranking over the pool) and one scored by the engine alone."""
    client = Counting(QdrantClient(":memory:"))
    store = QdrantStore("docs", client=client, embedder=embedder, fallback=request.param)
    store.add(docs())
    return client, store


@pytest.mark.parametrize("opts", [{}, {"lanes": Lanes.plain(8)}, {"filter": {"major": {"$gte": 0}}},
                                  {"diagnose": False}, {"lead_weight": 0}])
def test_a_search_is_at_most_two_requests(counted: tuple[Counting, QdrantStore], opts: dict[str, Any]) -> None:
    client, store = counted
    store.search(QUERIES[0], k=5, now=NOW, **opts)  # the first search after a write reads the statistics
    untied = 0
    for q in SHAPES:
        wide = store.search(q, k=6, now=NOW, **opts)
        client.calls.clear()
        hits = store.search(q, k=5, now=NOW, **opts)
        assert len(hits) == 5
        assert not {"collection_exists", "count(exact)", "count", "get_collection", "facet"} & set(client.calls)
        if store.config.fallback == "error" and wide[4].score == wide[5].score:
            # the engine orders equal scores its own way: the rows tied at the cut asked for
            assert client.calls["query_points"] >= 2
            continue
        if hits.meta.get("lane_tie_rounds"):
            # a lane's limit fell among equal scores: its tied rows asked for, one round each
            assert client.calls["query_batch_points"] == 1 + hits.meta["lane_tie_rounds"], (q, dict(client.calls))
            continue
        untied += 1
        assert sum(client.calls.values()) <= 2, (q, dict(client.calls))
    assert untied >= 3


def test_statistics_are_read_once_after_each_write(counted: tuple[Counting, QdrantStore]) -> None:
    client, store = counted
    client.calls.clear()
    store.search(QUERIES[0], k=5, now=NOW)
    first = dict(client.calls)
    assert first.get("facet") == 1 and sum(first.values()) <= 4  # count + facet, then the two requests
    store.add([{"id": "polars@new", "text": "polars 13.0 release notes: join speed", "date": "2024-12-20"}])
    client.calls.clear()
    assert store.search(QUERIES[0], k=1, now=NOW).ids == ["polars@new"]
    assert client.calls["facet"] == 1  # the new document's terms are counted
    client.calls.clear()
    store.search(QUERIES[0], k=1, now=NOW)
    assert "facet" not in client.calls


def test_the_statistics_are_the_exact_document_frequencies_here(counted: tuple[Counting, QdrantStore]) -> None:
    """Local mode's counts are exact: the cached frequencies equal one exact count per term."""
    from qdrant_client import models as m

    from chronorank.stores.bm25 import query_terms

    _, store = counted
    terms = sorted(query_terms("polars release join speed proxy"))
    n, df = store._frequencies(terms)
    assert n == len(docs())
    inner = store.client._inner
    for t in terms:
        exact = inner.count("docs", exact=True, count_filter=m.Filter(
            must=[m.FieldCondition(key="_terms", match=m.MatchValue(value=t))])).count
        assert df.get(t, 0) == exact


def test_the_same_ranking_as_a_fresh_store(counted: tuple[Counting, QdrantStore], embedder: Any) -> None:
    """The cached existence and statistics change no result: a store opened afresh on the same
    collection (which reads everything anew) ranks alike."""
    client, store = counted
    fresh = QdrantStore("docs", client=client._inner, embedder=embedder, fallback=store.config.fallback)
    for q in QUERIES:
        a, b = store.search(q, k=8, now=NOW), fresh.search(q, k=8, now=NOW)
        assert a.ids == b.ids and [h.score for h in a] == pytest.approx([h.score for h in b])


# ---------------------------------------------------------------------- secrets


def _dead_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _everything_said(exc: BaseException) -> str:
    """Every message a traceback of ``exc`` prints: its own and each cause or context shown."""
    said = []
    cur: BaseException | None = exc
    while cur is not None:
        said.append("".join(traceback.format_exception_only(type(cur), cur)))
        cur = cur.__cause__ or (None if cur.__suppress_context__ else cur.__context__)
    return "\n".join(said)


@pytest.mark.filterwarnings("ignore:Failed to obtain server version")
def test_an_unreachable_server_never_shows_the_password() -> None:
    url = f"http://reader:Pw-7c1e%40x@127.0.0.1:{_dead_port()}"
    with pytest.raises(ChronorankError, match="unreachable") as err:
        QdrantStore("docs", url=url, api_key="key-5b9d0e", timeout=2, embedder="hashing")
    said = _everything_said(err.value)
    for secret in ("Pw-7c1e%40x", "Pw-7c1e@x", "key-5b9d0e"):
        assert secret not in said


class _Quoting:
    """A client whose transport error quotes the URL it was given, as some transports do."""

    def __init__(self, url: str) -> None:
        self.url = url

    def collection_exists(self, name: str) -> bool:
        from qdrant_client.http.exceptions import ResponseHandlingException

        raise ResponseHandlingException(OSError(f"connection to {self.url} refused"))

    def close(self) -> None:
        pass


def test_a_client_error_quoting_the_url_is_masked(monkeypatch: pytest.MonkeyPatch) -> None:
    import qdrant_client

    url = "http://reader:Pw-7c1e%40x@qdrant.internal:6333/?api_key=key-5b9d0e"
    monkeypatch.setattr(qdrant_client, "QdrantClient", lambda url, **_: _Quoting(url))
    with pytest.raises(ChronorankError, match=r"unreachable .*reader:\*\*\*@qdrant.internal") as err:
        QdrantStore("docs", url=url, embedder="hashing")
    said = _everything_said(err.value)
    for secret in ("Pw-7c1e%40x", "Pw-7c1e@x", "key-5b9d0e"):
        assert secret not in said


# ---------------------------------------------------------------------- the deploy recipe


def test_the_deploy_recipe_creates_what_the_store_creates(embedder: Any) -> None:
    import importlib.util
    import warnings
    from pathlib import Path

    from chronorank.errors import InvalidInput

    path = Path(__file__).resolve().parents[2] / "deploy" / "qdrant_collection.py"
    spec = importlib.util.spec_from_file_location("deploy_qdrant_collection", path)
    assert spec is not None and spec.loader is not None
    recipe = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(recipe)

    client = QdrantClient(":memory:")
    calls = {}
    for name in ("by_recipe", "by_store"):  # what each asks the server to create
        counting = Counting(client)
        store = QdrantStore(name, client=counting, embedder=embedder)
        if name == "by_recipe":
            recipe.create(store, docs(), shards=3, replicas=2)
        else:
            store.add(docs())
        calls[name] = [(n, a[1:], kw) for n, a, kw in counting.log if n.startswith("create_")]
    made = calls["by_recipe"]
    assert made[0][0] == "create_collection"
    assert made[0][2].pop("shard_number") == 3 and made[0][2].pop("replication_factor") == 2
    assert made == calls["by_store"]  # the same vectors, metadata and payload indexes
    by_store = QdrantStore("by_store", client=client, embedder=embedder)
    a, b = client.get_collection("by_recipe"), client.get_collection("by_store")
    assert a.config.params.vectors == b.config.params.vectors
    assert a.config.params.sparse_vectors == b.config.params.sparse_vectors
    assert a.config.metadata == b.config.metadata and a.config.metadata["chronorank_schema"] == 2
    assert a.payload_schema == b.payload_schema
    # the current schema: no warning, lead_weight accepted, the same ranking once filled
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        store = QdrantStore("by_recipe", client=client, embedder=embedder)
        store.add(docs())
        for q in QUERIES:
            assert store.search(q, k=5, now=NOW, lead_weight=0.5).ids == by_store.search(q, k=5, now=NOW, lead_weight=0.5).ids
    with pytest.raises(InvalidInput, match="exists already"):
        recipe.create(store, docs(), shards=3, replicas=2)
