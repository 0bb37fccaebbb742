"""chronorank in LangChain: a time-aware retriever over an InMemoryVectorStore.

    pip install "chronorank[langchain]"
    python examples/langchain_example.py
"""

from __future__ import annotations

from _offline import NOW, QUERIES, RELEASES, epoch, hashing_embed
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from langchain_core.vectorstores import InMemoryVectorStore

from chronorank.integrations.langchain import TemporalRetriever


class HashingEmbeddings(Embeddings):
    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [hashing_embed(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return hashing_embed(text)


store = InMemoryVectorStore(HashingEmbeddings())
store.add_documents(
    [Document(page_content=text, metadata={"date": epoch(day)}, id=i) for i, text, day in RELEASES]
)

retriever = TemporalRetriever.from_vectorstore(
    store,
    kernel="exponential(half_life_days=180)",
    date_field="date",  # epoch seconds, so the 30/180-day lanes can filter on it
    k=3,
    fetch_k=6,
    now=NOW,  # omit in production: the wall clock is used
)

for query in QUERIES:
    print(f"\n{query!r}")
    for doc in retriever.invoke(query):
        m = doc.metadata
        print(
            f"  {doc.id:9s} score={m['chronorank_score']:.3f} sim={m['chronorank_similarity']:.3f} "
            f"decay={m['chronorank_decay']:.3f} moved {m['chronorank_rank_delta']:+d}"
        )
print("\nexplain:", retriever.invoke(QUERIES[0])[0].metadata["chronorank_explain"])
