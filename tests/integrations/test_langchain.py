"""LangChain: TemporalRetriever over a real InMemoryVectorStore, and TemporalCompressor."""

from __future__ import annotations

import asyncio

import pytest

pytest.importorskip("langchain_core")

from itest_corpus import (  # noqa: E402
    AS_OF,
    CORPUS,
    CROWD,
    IN_2021,
    LATEST,
    NOW_S,
    PLAIN,
    TIMELESS,
    assert_same_as_core,
    core_ranking,
    hashing_embed,
    similarity_then_tie_rule,
)
from langchain_core.documents import Document  # noqa: E402
from langchain_core.embeddings import Embeddings  # noqa: E402
from langchain_core.vectorstores import InMemoryVectorStore  # noqa: E402

from chronorank import TemporalReranker  # noqa: E402
from chronorank.integrations._common import METADATA_KEYS  # noqa: E402
from chronorank.integrations.langchain import (  # noqa: E402
    TemporalCompressor,
    TemporalRetriever,
    detect_lane_filter,
)


class HashingEmbeddings(Embeddings):
    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [hashing_embed(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return hashing_embed(text)


def make_store(rows=CORPUS) -> InMemoryVectorStore:
    store = InMemoryVectorStore(HashingEmbeddings())
    store.add_documents(
        [Document(page_content=t, metadata={"date": d}, id=i) for i, t, d in rows]
    )
    return store


def retriever(store=None, **kw) -> TemporalRetriever:
    kw.setdefault("k", 3)
    kw.setdefault("fetch_k", 6)
    return TemporalRetriever.from_vectorstore(store or make_store(), now=NOW_S, **kw)


def ids(docs):
    return [d.id for d in docs]


def similarity_order(store, query, n):
    return [d.id for d, _ in store.similarity_search_with_score(query, k=n)]


def test_fresh_document_wins_latest_query():
    store = make_store()
    assert similarity_order(store, LATEST, 3)[0] != "acme-2026"  # similarity alone gets it wrong
    docs = retriever(store).invoke(LATEST)
    assert docs[0].id == "acme-2026"


@pytest.mark.parametrize(("query", "expected"), [(AS_OF, "acme-2022"), (IN_2021, "acme-2021")])
def test_old_document_wins_as_of_query(query, expected):
    docs = retriever().invoke(query)
    assert docs[0].id == expected


def test_timeless_query_keeps_similarity_order():
    store = make_store()
    docs = retriever(store).invoke(TIMELESS)
    pairs = [(d.id, s) for d, s in store.similarity_search_with_score(TIMELESS, k=len(CORPUS))]
    assert ids(docs) == similarity_then_tie_rule(pairs)[:3]
    assert all(d.metadata["chronorank_rank_delta"] == 0 for d in docs)


@pytest.mark.parametrize("query", [LATEST, AS_OF, IN_2021, TIMELESS])
def test_identical_to_core_reranker(query):
    store = make_store()
    # lanes off: the pool is exactly the store's top fetch_k
    r = retriever(store, lanes=())
    # the store is searched with the intent's topical query ("as of March 2022" removed)
    pool = store.similarity_search_with_score(r.search_query(query, NOW_S), k=6)
    core = core_ranking(query, [s for _, s in pool], [d.metadata["date"] for d, _ in pool],
                        [d.id for d, _ in pool], top_k=3)
    docs = r.invoke(query)
    assert_same_as_core([(d.id, d.metadata["chronorank_score"]) for d in docs], core)
    # lanes on: identical to the core on the merged pool
    r = retriever(store)
    pool = r.candidates(query, now=NOW_S)
    core = core_ranking(query, [s for _, s in pool], [d.metadata["date"] for d, _ in pool],
                        [d.id for d, _ in pool], top_k=3)
    docs = r.invoke(query)
    assert_same_as_core([(d.id, d.metadata["chronorank_score"]) for d in docs], core)


def test_metadata_keys_and_explain():
    doc = retriever().invoke(LATEST)[0]
    assert set(METADATA_KEYS) <= set(doc.metadata)
    assert doc.metadata["date"] == CORPUS[2][2]  # the original metadata is kept
    assert "acme-2026" in doc.metadata["chronorank_explain"]
    assert doc.metadata["chronorank_rank_before"] - doc.metadata["chronorank_rank_delta"] == 1


# the crowd shares these topical words ("latest" is dropped from the store's search)
CROWDED = "what changed in the cache and the plugin loader in the latest acme release notes"


def test_lanes_bring_in_the_fresh_document_a_small_fetch_misses():
    store = make_store(CORPUS + CROWD)
    topical = retriever(store).search_query(CROWDED, NOW_S)
    assert "latest" not in topical
    assert "acme-2026" not in similarity_order(store, topical, 4)
    without = retriever(store, k=2, fetch_k=4, lanes=()).invoke(CROWDED)
    assert "acme-2026" not in ids(without)
    with_lanes = retriever(store, k=2, fetch_k=4, **PLAIN)
    assert len(with_lanes.lane_plan(CROWDED, now=NOW_S)) == 2
    assert with_lanes.invoke(CROWDED)[0].id == "acme-2026"
    # as-of lane: everything dated before the target end, plus windows before it
    assert with_lanes.invoke(AS_OF)[0].id == "acme-2022"
    assert with_lanes.lane_plan(TIMELESS, now=NOW_S) == []


def test_mongo_filter_for_known_stores_and_none_for_unknown():
    class Chroma(InMemoryVectorStore):  # a store named like one that takes $gte dicts
        pass

    from chronorank.integrations._common import Lane

    build = detect_lane_filter(Chroma(HashingEmbeddings()))
    # InMemoryVectorStore is checked first, so its subclass still gets a predicate
    assert callable(build("date", Lane(0.0, 1.0)))

    from langchain_core.vectorstores import VectorStore

    class Unknown(VectorStore):
        add_texts = from_texts = similarity_search = None  # type: ignore[assignment]

    assert detect_lane_filter(Unknown.__new__(Unknown)) is None


def test_failing_lane_filter_warns_and_falls_back():
    def broken(field, lane):
        return {"not": "understood"}

    r = retriever(lane_filter=broken)
    with pytest.warns(RuntimeWarning, match="lane"):
        docs = r.invoke(LATEST)
    assert docs[0].id == "acme-2026"


def test_async_matches_sync():
    r = retriever()
    for q in (LATEST, AS_OF, TIMELESS):
        sync = r.invoke(q)
        asy = asyncio.run(r.ainvoke(q))
        assert [(d.id, d.metadata["chronorank_score"]) for d in asy] == [
            (d.id, d.metadata["chronorank_score"]) for d in sync
        ]


def test_compressor_identical_to_core_and_async():
    store = make_store()
    pool = store.similarity_search_with_score(LATEST, k=6)
    docs = [
        Document(page_content=d.page_content, metadata={**d.metadata, "relevance_score": s}, id=d.id)
        for d, s in pool
    ]
    comp = TemporalCompressor(reranker=TemporalReranker(**PLAIN), now=NOW_S, top_k=3)
    out = comp.compress_documents(docs, LATEST)
    core = core_ranking(LATEST, [s for _, s in pool], [d.metadata["date"] for d, _ in pool],
                        [d.id for d, _ in pool], top_k=3, **PLAIN)
    assert_same_as_core([(d.id, d.metadata["chronorank_score"]) for d in out], core)
    assert out[0].id == "acme-2026"
    aout = asyncio.run(comp.acompress_documents(docs, LATEST))
    assert [d.id for d in aout] == [d.id for d in out]
    # reranking the output again does not stack metadata keys
    again = comp.compress_documents(out, TIMELESS)
    assert sum(k.startswith("chronorank_") for k in again[0].metadata) == len(METADATA_KEYS)


def test_compressor_without_scores_uses_input_order():
    docs = [Document(page_content=t, metadata={"date": d}, id=i) for i, t, d in CORPUS]
    out = TemporalCompressor.build(now=NOW_S).compress_documents(docs, TIMELESS)
    assert ids(out) == [c[0] for c in CORPUS]
    assert out[0].metadata["chronorank_similarity"] == 1.0


def test_bad_arguments_raise():
    from chronorank.errors import InvalidInput

    with pytest.raises(InvalidInput, match="fetch_k"):
        retriever(k=5, fetch_k=2)
    with pytest.raises(InvalidInput, match="reranker"):
        TemporalRetriever.from_vectorstore(make_store(), reranker=TemporalReranker(), strength=0.5)
