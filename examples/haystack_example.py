"""chronorank in Haystack 2: TemporalRanker after an InMemoryEmbeddingRetriever.

    pip install "chronorank[haystack]"
    python examples/haystack_example.py
"""

from __future__ import annotations

from _offline import NOW, QUERIES, RELEASES, epoch, hashing_embed
from haystack import Document, Pipeline
from haystack.components.retrievers.in_memory import InMemoryEmbeddingRetriever
from haystack.document_stores.in_memory import InMemoryDocumentStore

from chronorank.integrations.haystack import TemporalRanker

store = InMemoryDocumentStore(embedding_similarity_function="cosine")
store.write_documents(
    [Document(id=i, content=text, meta={"date": epoch(day)}, embedding=hashing_embed(text))
     for i, text, day in RELEASES]
)

pipe = Pipeline()
pipe.add_component("retriever", InMemoryEmbeddingRetriever(store, top_k=6))  # fetch_k
pipe.add_component("ranker", TemporalRanker(kernel="exponential(half_life_days=180)", top_k=3))
pipe.connect("retriever.documents", "ranker.documents")

for query in QUERIES:
    out = pipe.run({"retriever": {"query_embedding": hashing_embed(query)},
                    "ranker": {"query": query, "now": NOW}})
    print(f"\n{query!r}")
    for doc in out["ranker"]["documents"]:
        print(f"  {doc.id:9s} score={doc.score:.3f} sim={doc.meta['chronorank_similarity']:.3f} "
              f"moved {doc.meta['chronorank_rank_delta']:+d}")
