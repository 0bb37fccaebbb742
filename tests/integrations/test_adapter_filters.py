"""Filters through the rerank adapters: the conventional ``filter`` / ``filters`` keyword on
every constructor, and each framework's operators mapped onto chronorank's filter language
(or refused with one error naming the supported ones)."""

from __future__ import annotations

import pytest
from itest_corpus import CORPUS, LATEST, NOW_S, hashing_embed

from chronorank.errors import InvalidInput

# the same corpus with a project per document: acme's releases, and the rest
PROJECT = {i: ("acme" if i.startswith("acme") else "other") for i, _, _ in CORPUS}
TAGS = {"acme-2021": ["cache", "plugins"], "acme-2022": ["cache"], "acme-2026": ["sync"]}


def test_langchain_from_vectorstore_takes_filter() -> None:
    pytest.importorskip("langchain_core")
    from langchain_core.documents import Document
    from langchain_core.embeddings import Embeddings
    from langchain_core.vectorstores import InMemoryVectorStore

    from chronorank.integrations.langchain import TemporalRetriever

    class Emb(Embeddings):
        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            return [hashing_embed(t) for t in texts]

        def embed_query(self, text: str) -> list[float]:
            return hashing_embed(text)

    store = InMemoryVectorStore(Emb())
    store.add_documents([Document(page_content=t, metadata={"date": d, "project": PROJECT[i], "tags": TAGS.get(i, [])}, id=i)
                         for i, t, d in CORPUS])
    r = TemporalRetriever.from_vectorstore(store, k=6, fetch_k=6, now=NOW_S, lanes=(), filter={"project": "other"})
    assert {d.id for d in r.invoke(LATEST)} == {"bakery", "garden", "cache-guide"}
    tagged = TemporalRetriever.from_vectorstore(store, k=6, fetch_k=6, now=NOW_S, lanes=(), filter={"tags": "cache"})
    assert {d.id for d in tagged.invoke(LATEST)} == {"acme-2021", "acme-2022"}


def _llama_index():  # type: ignore[no-untyped-def]
    from llama_index.core import VectorStoreIndex
    from llama_index.core.base.embeddings.base import BaseEmbedding
    from llama_index.core.schema import TextNode

    class Emb(BaseEmbedding):
        def _get_text_embedding(self, text: str) -> list[float]:
            return hashing_embed(text)

        def _get_query_embedding(self, query: str) -> list[float]:
            return hashing_embed(query)

        async def _aget_query_embedding(self, query: str) -> list[float]:
            return hashing_embed(query)

    nodes = [TextNode(text=t, id_=i, metadata={"date": d, "project": PROJECT[i]}, excluded_embed_metadata_keys=["date", "project"])
             for i, t, d in CORPUS]
    return VectorStoreIndex(nodes, embed_model=Emb())


def test_llama_index_from_index_takes_filters() -> None:
    pytest.importorskip("llama_index.core")
    from llama_index.core.vector_stores.types import MetadataFilter, MetadataFilters

    from chronorank.integrations.llama_index import TemporalRetriever

    index = _llama_index()
    for filters in ({"project": "acme"}, MetadataFilters(filters=[MetadataFilter(key="project", value="acme")])):
        got = TemporalRetriever.from_index(index, fetch_k=6, top_n=6, now=NOW_S, filters=filters).retrieve(LATEST)
        assert {n.node.node_id for n in got} == {"acme-2021", "acme-2022", "acme-2026"}


def test_llama_index_operators_map_or_are_refused() -> None:
    pytest.importorskip("llama_index.core")
    from llama_index.core.vector_stores.types import (
        FilterCondition,
        MetadataFilter,
        MetadataFilters,
    )

    from chronorank.filters import filter_mask
    from chronorank.integrations.llama_index import from_llama_filters

    metas = [{"tags": ["a", "b"]}, {"tags": ["b"]}, {"tags": "c"}, {}]

    def rows(f: MetadataFilter | MetadataFilters) -> list[int]:
        return [i for i, ok in enumerate(filter_mask(from_llama_filters(f), metas)) if ok]

    assert rows(MetadataFilter(key="tags", value="b", operator="contains")) == [0, 1]
    assert rows(MetadataFilter(key="tags", value=["a", "c"], operator="any")) == [0, 2]
    assert rows(MetadataFilter(key="tags", value=["a", "b"], operator="all")) == [0]
    # LlamaIndex's NOT: none of the filters holds
    nots = MetadataFilters(filters=[MetadataFilter(key="tags", value="a", operator="contains"),
                                    MetadataFilter(key="tags", value="c", operator="contains")],
                           condition=FilterCondition.NOT)
    assert rows(nots) == [1, 3]
    for op in ("text_match", "is_empty"):
        with pytest.raises(InvalidInput, match=r"supports \['==', .*'contains', 'any', 'all'\]"):
            from_llama_filters(MetadataFilter(key="tags", value="a", operator=op))


def test_haystack_ranker_takes_filters_and_maps_not() -> None:
    pytest.importorskip("haystack")
    from haystack import Document

    from chronorank.integrations.haystack import TemporalRanker, from_haystack_filters

    docs = [Document(id=i, content=t, meta={"date": d, "project": PROJECT[i]}, score=0.5) for i, t, d in CORPUS]
    hs = {"operator": "NOT", "conditions": [{"field": "meta.project", "operator": "==", "value": "acme"}]}
    for flt in (hs, {"project": {"$ne": "acme"}}):
        ranker = TemporalRanker(filters=flt)
        out = ranker.run(query=LATEST, documents=docs, now=NOW_S)["documents"]
        assert {d.id for d in out} == {"bakery", "garden", "cache-guide"}
        again = TemporalRanker.from_dict(ranker.to_dict())  # the filter serialises with it
        assert [d.id for d in again.run(query=LATEST, documents=docs, now=NOW_S)["documents"]] == [d.id for d in out]
    assert from_haystack_filters(hs) == {"$not": {"project": {"$eq": "acme"}}}
    with pytest.raises(InvalidInput, match=r"None.*Supported operators: \['==', '!='"):
        from_haystack_filters({"field": "meta.project", "operator": "==", "value": None})
