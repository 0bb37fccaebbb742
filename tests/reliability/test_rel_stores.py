"""Faults in the engines behind the stores: a Qdrant collection that disappears, points
written by another tool without dates. (PostgreSQL restarts are covered by the
conformance suite's reconnect test in tests/stores.)"""

import uuid

import pytest

pytest.importorskip("qdrant_client")

from qdrant_client import QdrantClient  # noqa: E402
from qdrant_client import models as m  # noqa: E402

from chronorank.index import HashingEmbedder  # noqa: E402
from chronorank.stores import QdrantStore  # noqa: E402

NOW = "2026-01-01"


def _store():
    client = QdrantClient(":memory:")
    return client, QdrantStore("docs", client=client, embedder=HashingEmbedder())


def test_search_before_any_add_is_empty_not_an_error():
    _, store = _store()
    assert len(store.search("pricing", k=3, now=NOW)) == 0


def test_collection_deleted_behind_our_back():
    client, store = _store()
    store.add([{"id": "a", "text": "pro plan pricing", "date": "2025-01-01"}])
    client.delete_collection("docs")
    assert len(store.search("pricing", k=3, now=NOW)) == 0  # no crash: nothing to find
    store.add([{"id": "b", "text": "pro plan pricing update", "date": "2025-06-01"}])
    assert [h.id for h in store.search("pricing", k=3, now=NOW)] == ["b"]


def test_points_without_dates_from_another_writer_are_undated():
    client, store = _store()
    store.add([{"id": "a", "text": "pro plan pricing", "date": "2025-01-01"}])
    point = client.scroll("docs", limit=1, with_vectors=True)[0][0]
    foreign = str(uuid.uuid4())
    client.upsert("docs", points=[m.PointStruct(id=foreign, vector=point.vector, payload={"text": "pro plan pricing"})])
    hits = store.search("pro plan pricing", k=3, now=NOW)
    by_id = {h.id: h for h in hits}
    assert set(by_id) == {"a", foreign}
    assert any("undated" in note for note in by_id[foreign].notes)


@pytest.mark.parametrize("name", ["a/b", "x" * 256, "bad\nname", "what?", ".", "..", "\u00e9" * 128, "x\ud800"],
                         ids=["slash", "long", "newline", "question", "dot", "dotdot", "256_bytes", "surrogate"])
def test_bad_collection_names_are_invalid_input_up_front(name):
    from chronorank.errors import InvalidInput

    with pytest.raises(InvalidInput, match="collection="):
        QdrantStore(name, client=QdrantClient(":memory:"), embedder=HashingEmbedder())


@pytest.mark.parametrize("name", [".", ".."])
def test_dot_collection_names_are_refused_before_qdrant_sees_them(tmp_path, name):
    from chronorank.errors import InvalidInput

    # qdrant-client's local mode raised a raw ValueError at the first add
    with pytest.raises(InvalidInput, match="names a directory"):
        QdrantStore(name, path=str(tmp_path / "q"), embedder=HashingEmbedder())


def test_poisoned_document_is_refused_before_anything_is_written():
    from chronorank.errors import InvalidInput

    client, store = _store()
    store.add([{"id": "a", "text": "pro plan pricing", "date": "2025-01-01"}])
    with pytest.raises(InvalidInput, match=r"docs\[1\].*metadata"):
        store.add([{"id": "b", "text": "fine"}, {"id": "c", "text": "x", "metadata": {"k": "\ud800"}}])
    assert [h.id for h in store.search("pricing", k=5, now=NOW)] == ["a"]
