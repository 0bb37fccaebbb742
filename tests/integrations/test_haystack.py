"""Haystack: the TemporalRanker component behind a real InMemoryDocumentStore retriever."""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("HAYSTACK_TELEMETRY_ENABLED", "False")  # tests never touch the network

pytest.importorskip("haystack")

from haystack import Document, Pipeline  # noqa: E402
from haystack.components.retrievers.in_memory import InMemoryEmbeddingRetriever  # noqa: E402
from haystack.document_stores.in_memory import InMemoryDocumentStore  # noqa: E402
from itest_corpus import (  # noqa: E402
    AS_OF,
    CORPUS,
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

from chronorank.integrations._common import METADATA_KEYS  # noqa: E402
from chronorank.integrations.haystack import TemporalRanker  # noqa: E402


@pytest.fixture(scope="module")
def store():
    s = InMemoryDocumentStore(embedding_similarity_function="cosine")
    s.write_documents(
        [Document(id=i, content=t, meta={"date": d}, embedding=hashing_embed(t)) for i, t, d in CORPUS]
    )
    return s


def fetch(store, query, n=6):
    retriever = InMemoryEmbeddingRetriever(store, top_k=n)
    return retriever.run(query_embedding=hashing_embed(query))["documents"]


def pipeline(store, top_k=3, **ranker_kw) -> Pipeline:
    p = Pipeline()
    p.add_component("retriever", InMemoryEmbeddingRetriever(store, top_k=6))
    p.add_component("ranker", TemporalRanker(top_k=top_k, **ranker_kw))
    p.connect("retriever.documents", "ranker.documents")
    return p


def run(p, query):
    out = p.run({"retriever": {"query_embedding": hashing_embed(query)},
                 "ranker": {"query": query, "now": NOW_S}})
    return out["ranker"]["documents"]


def test_fresh_document_wins_latest_query(store):
    assert fetch(store, LATEST)[0].id != "acme-2026"
    docs = run(pipeline(store, **PLAIN), LATEST)
    assert docs[0].id == "acme-2026"
    assert docs[0].score == docs[0].meta["chronorank_score"]
    assert set(METADATA_KEYS) <= set(docs[0].meta)


@pytest.mark.parametrize(("query", "expected"), [(AS_OF, "acme-2022"), (IN_2021, "acme-2021")])
def test_old_document_wins_as_of_query(store, query, expected):
    assert run(pipeline(store), query)[0].id == expected


def test_timeless_query_keeps_similarity_order(store):
    docs = run(pipeline(store, top_k=None), TIMELESS)
    assert [d.id for d in docs] == similarity_then_tie_rule([(d.id, d.score) for d in fetch(store, TIMELESS)])


@pytest.mark.parametrize("query", [LATEST, AS_OF, IN_2021, TIMELESS])
def test_identical_to_core_reranker(store, query):
    docs = fetch(store, query)
    core = core_ranking(query, [d.score for d in docs], [d.meta["date"] for d in docs],
                        [d.id for d in docs], top_k=3)
    out = TemporalRanker().run(query=query, documents=docs, top_k=3, now=NOW_S)["documents"]
    assert_same_as_core([(d.id, d.meta["chronorank_score"]) for d in out], core)
    assert_same_as_core([(d.id, d.score) for d in run(pipeline(store), query)], core)


def test_serialises_with_its_pipeline(store):
    ranker = TemporalRanker(kernel="exponential(half_life_days=90)", top_k=2, strength=0.5)
    data = ranker.to_dict()
    again = TemporalRanker.from_dict(data)
    assert again.to_dict() == data
    docs = fetch(store, LATEST)
    a = ranker.run(query=LATEST, documents=docs, now=NOW_S)["documents"]
    b = again.run(query=LATEST, documents=docs, now=NOW_S)["documents"]
    assert [(d.id, d.score) for d in a] == [(d.id, d.score) for d in b]


def test_input_documents_are_not_modified(store):
    docs = fetch(store, LATEST)
    TemporalRanker().run(query=LATEST, documents=docs, now=NOW_S)
    assert not any(k.startswith("chronorank_") for d in docs for k in d.meta)
