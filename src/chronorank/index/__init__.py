"""Embedded hybrid temporal index: dense vectors + BM25 + time, exact over every document.

``TemporalIndex`` is the entry point; embedders, the BM25 matrix, persistence and the
optional faiss path live in submodules. Optional dependencies (onnxruntime, tokenizers,
PyStemmer, bm25s, faiss) load only when a feature needs them.
"""

from chronorank.index.config import IndexConfig
from chronorank.index.core import TemporalIndex
from chronorank.index.embedders import (
    Embedder,
    FastEmbedEmbedder,
    HashingEmbedder,
    MiniLMOnnxEmbedder,
    SentenceTransformerEmbedder,
    get_embedder,
)

__all__ = [
    "Embedder",
    "FastEmbedEmbedder",
    "HashingEmbedder",
    "IndexConfig",
    "MiniLMOnnxEmbedder",
    "SentenceTransformerEmbedder",
    "TemporalIndex",
    "get_embedder",
]
