"""LlamaIndex: TemporalPostprocessor and TemporalRetriever over a real VectorStoreIndex."""

from __future__ import annotations

import asyncio

import pytest

pytest.importorskip("llama_index.core")

from itest_corpus import (  # noqa: E402
    AS_OF,
    CORPUS,
    IN_2021,
    LATEST,
    NOW_S,
    TIMELESS,
    assert_same_as_core,
    core_ranking,
    hashing_embed,
    similarity_then_tie_rule,
)
from llama_index.core import VectorStoreIndex  # noqa: E402
from llama_index.core.base.embeddings.base import BaseEmbedding  # noqa: E402
from llama_index.core.schema import MetadataMode, NodeWithScore, QueryBundle, TextNode  # noqa: E402

from chronorank import TemporalReranker  # noqa: E402
from chronorank.integrations._common import METADATA_KEYS  # noqa: E402
from chronorank.integrations.llama_index import (  # noqa: E402
    TemporalPostprocessor,
    TemporalRetriever,
)


class HashingEmbedding(BaseEmbedding):
    def _get_text_embedding(self, text: str) -> list[float]:
        return hashing_embed(text)

    def _get_query_embedding(self, query: str) -> list[float]:
        return hashing_embed(query)

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return hashing_embed(query)


@pytest.fixture(scope="module")
def index():
    nodes = [
        TextNode(text=t, id_=i, metadata={"date": d}, excluded_embed_metadata_keys=["date"])
        for i, t, d in CORPUS
    ]
    return VectorStoreIndex(nodes, embed_model=HashingEmbedding())


def pool(index, query, n=6):
    return index.as_retriever(similarity_top_k=n).retrieve(query)


def test_fresh_document_wins_latest_query(index):
    assert pool(index, LATEST)[0].node.node_id != "acme-2026"
    out = TemporalRetriever.from_index(index, fetch_k=6, top_n=3, now=NOW_S).retrieve(LATEST)
    assert out[0].node.node_id == "acme-2026"
    assert out[0].score == out[0].node.metadata["chronorank_score"]


@pytest.mark.parametrize(("query", "expected"), [(AS_OF, "acme-2022"), (IN_2021, "acme-2021")])
def test_old_document_wins_as_of_query(index, query, expected):
    post = TemporalPostprocessor.build(now=NOW_S, top_n=3)
    out = post.postprocess_nodes(pool(index, query), query_str=query)
    assert out[0].node.node_id == expected


def test_timeless_query_keeps_similarity_order(index):
    nodes = pool(index, TIMELESS)
    out = TemporalRetriever.from_index(index, fetch_k=6, top_n=None, now=NOW_S).retrieve(TIMELESS)
    assert [n.node.node_id for n in out] == similarity_then_tie_rule([(n.node.node_id, n.score) for n in nodes])


@pytest.mark.parametrize("query", [LATEST, AS_OF, IN_2021, TIMELESS])
def test_identical_to_core_reranker(index, query):
    nodes = pool(index, query)
    core = core_ranking(query, [n.score for n in nodes], [n.node.metadata["date"] for n in nodes],
                        [n.node.node_id for n in nodes], top_k=3)
    post = TemporalPostprocessor(reranker=TemporalReranker(), now=NOW_S, top_n=3)
    out = post.postprocess_nodes(nodes, query_str=query)
    assert_same_as_core([(n.node.node_id, n.node.metadata["chronorank_score"]) for n in out], core)
    ret = TemporalRetriever.from_index(index, fetch_k=6, top_n=3, now=NOW_S)
    # the wrapper asks its inner retriever with the topical query (the time phrase removed)
    topical = ret.search_bundle(QueryBundle(query)).query_str
    assert topical == (TemporalReranker().intent(query, now=NOW_S).topical_query or query)
    nodes = pool(index, topical)
    core = core_ranking(query, [n.score for n in nodes], [n.node.metadata["date"] for n in nodes],
                        [n.node.node_id for n in nodes], top_k=3)
    out = ret.retrieve(query)
    assert_same_as_core([(n.node.node_id, n.score) for n in out], core)
    aout = asyncio.run(ret.aretrieve(query))
    assert_same_as_core([(n.node.node_id, n.score) for n in aout], core)


def test_metadata_is_copied_and_kept_out_of_llm_text(index):
    nodes = pool(index, LATEST)
    out = TemporalPostprocessor.build(now=NOW_S).postprocess_nodes(nodes, query_str=LATEST)
    node = out[0].node
    assert set(METADATA_KEYS) <= set(node.metadata)
    assert "chronorank" not in node.get_content(metadata_mode=MetadataMode.LLM)
    assert "chronorank" not in node.get_content(metadata_mode=MetadataMode.EMBED)
    # the stored node is not modified
    assert not any(k.startswith("chronorank_") for k in nodes[0].node.metadata)
    assert not any(k.startswith("chronorank_") for n in pool(index, LATEST) for k in n.node.metadata)


def test_nodes_without_scores_use_input_order():
    nodes = [NodeWithScore(node=TextNode(text=t, id_=i, metadata={"date": d})) for i, t, d in CORPUS]
    out = TemporalPostprocessor.build(now=NOW_S).postprocess_nodes(nodes, query_str=TIMELESS)
    assert [n.node.node_id for n in out] == [c[0] for c in CORPUS]


def test_query_is_required():
    from chronorank.errors import InvalidInput

    with pytest.raises(InvalidInput, match="query"):
        TemporalPostprocessor.build().postprocess_nodes([])
