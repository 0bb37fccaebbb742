"""chronorank with Chroma: a persistent collection, an offline embedding function, lanes.

    pip install "chronorank[chroma]"
    python examples/chroma_example.py [path]      # default: a temporary directory

Chroma's default embedding function downloads a model; this example uses an offline
hashing function instead. Dates are stored as epoch seconds so ``where`` filters work.
"""

from __future__ import annotations

import sys
import tempfile

import chromadb
import numpy as np
from _offline import NOW, QUERIES, RELEASES, epoch, hashing_embed
from chromadb import Documents, EmbeddingFunction, Embeddings

from chronorank import TemporalReranker
from chronorank.integrations.chroma import query_collection


class HashingEmbeddingFunction(EmbeddingFunction[Documents]):
    def __init__(self) -> None:
        pass

    def __call__(self, input: Documents) -> Embeddings:
        return [np.asarray(hashing_embed(t), dtype=np.float32) for t in input]

    @staticmethod
    def name() -> str:
        return "chronorank-example-hashing"

    def get_config(self) -> dict:
        return {}

    @staticmethod
    def build_from_config(config: dict) -> HashingEmbeddingFunction:
        return HashingEmbeddingFunction()


path = sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp(prefix="chronorank-chroma-")
client = chromadb.PersistentClient(path=path)
collection = client.get_or_create_collection(
    "releases", embedding_function=HashingEmbeddingFunction(), metadata={"hnsw:space": "cosine"}
)
collection.upsert(
    ids=[i for i, _, _ in RELEASES],
    documents=[text for _, text, _ in RELEASES],
    metadatas=[{"date": epoch(day)} for _, _, day in RELEASES],
)

reranker = TemporalReranker(kernel="exponential(half_life_days=180)")
for query in QUERIES:
    ranking = query_collection(collection, query, reranker, k=3, fetch_k=6, now=NOW)
    print(f"\n{query!r}")
    for hit in ranking:
        print(f"  {hit.id:9s} score={hit.score:.3f} sim={hit.similarity:.3f} "
              f"decay={hit.decay:.3f} moved {hit.rank_delta:+d}")
print(f"\n(collection stored in {path})")
