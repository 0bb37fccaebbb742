"""chronorank in LlamaIndex: a node postprocessor and a retriever wrapper (no LLM needed).

    pip install "chronorank[llamaindex]"
    python examples/llama_index_example.py
"""

from __future__ import annotations

from _offline import NOW, QUERIES, RELEASES, hashing_embed
from llama_index.core import VectorStoreIndex
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.schema import TextNode

from chronorank.integrations.llama_index import TemporalPostprocessor, TemporalRetriever


class HashingEmbedding(BaseEmbedding):
    def _get_text_embedding(self, text: str) -> list[float]:
        return hashing_embed(text)

    def _get_query_embedding(self, query: str) -> list[float]:
        return hashing_embed(query)

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return hashing_embed(query)


nodes = [
    TextNode(text=text, id_=i, metadata={"date": day}, excluded_embed_metadata_keys=["date"])
    for i, text, day in RELEASES
]
index = VectorStoreIndex(nodes, embed_model=HashingEmbedding())

# 1. as a retriever: fetch 6 by similarity, keep the best 3 after reranking
retriever = TemporalRetriever.from_index(index, fetch_k=6, top_n=3, now=NOW)
for query in QUERIES:
    print(f"\n{query!r}")
    for n in retriever.retrieve(query):
        print(f"  {n.node.node_id:9s} score={n.score:.3f} {n.node.metadata['date']} "
              f"moved {n.node.metadata['chronorank_rank_delta']:+d}")

# 2. as a postprocessor in an existing pipeline (e.g. index.as_query_engine(...,
#    node_postprocessors=[post])); here applied to a plain retriever's nodes
post = TemporalPostprocessor.build(kernel="exponential(half_life_days=180)", top_n=1, now=NOW)
fetched = index.as_retriever(similarity_top_k=6).retrieve(QUERIES[0])
best = post.postprocess_nodes(fetched, query_str=QUERIES[0])[0]
print("\nexplain:", best.node.metadata["chronorank_explain"])
