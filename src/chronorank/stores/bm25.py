"""BM25 as the stores keep it: analyzed terms hashed to sparse dimensions (:func:`term_id`),
tf-normalised document values the engine multiplies by idf, Lucene's idf, the query's term
weights and the lead field's (BM25F-style, as the embedded index weighs them)."""

from __future__ import annotations

import math
import zlib
from collections import Counter
from collections.abc import Collection, Mapping

from chronorank.errors import InvalidInput
from chronorank.index.bm25 import BM25_B, BM25_K1
from chronorank.index.text import query_weights

__all__ = [
    "bm25_doc_values",
    "bm25_idf",
    "bm25_params",
    "lead_query_weights",
    "query_terms",
    "term_id",
]


def term_id(term: str) -> int:
    """A stable sparse dimension for an analyzed term (crc32 folded below 10**9, pgvector's limit)."""
    return zlib.crc32(term.encode("utf-8")) % 999_999_937


def query_terms(text: str) -> dict[int, float]:
    """Sparse query weights (:func:`chronorank.index.text.query_weights`) by term id."""
    out: dict[int, float] = {}
    for t, w in query_weights(text).items():
        i = term_id(t)
        out[i] = out.get(i, 0.0) + w  # (two terms can share a folded id)
    return out


def bm25_doc_values(counts: Counter[int], length: float, avgdl: float, k1: float, b: float) -> dict[int, float]:
    """Per-term ``tf / (tf + k1 * (1 - b + b * |d| / avgdl))``; the engine multiplies by idf."""
    norm = k1 * (1.0 - b + b * length / max(avgdl, 1e-9))
    return {t: tf / (tf + norm) for t, tf in counts.items()}


def bm25_params(k1: float | None, b: float | None) -> tuple[float, float]:
    """BM25's k1 and b; None follows the embedded index's defaults so both rank alike."""
    k1 = BM25_K1 if k1 is None else k1
    b = BM25_B if b is None else b
    if not (isinstance(k1, (int, float)) and k1 >= 0 and isinstance(b, (int, float)) and 0 <= b <= 1):
        raise InvalidInput(f"BM25 needs k1 >= 0 and 0 <= b <= 1, got k1={k1!r} b={b!r}; e.g. k1=1.2, b=0.75.")
    return float(k1), float(b)


def bm25_idf(n_docs: int, df: int) -> float:
    """Lucene idf ``ln(1 + (N - df + 0.5) / (df + 0.5))`` (also Qdrant's IDF modifier)."""
    return math.log(1.0 + (n_docs - df + 0.5) / (df + 0.5))


def lead_query_weights(
    terms: Mapping[int, float], df: Mapping[int, int], n_docs: int, only: Collection[int] | None = None,
) -> dict[int, float]:
    """The lead field's query weights, BM25F-style as the index weighs them:
    ``count x idf_body / idf_lead`` on lead values that carry ``idf_lead``. The stores keep the
    lead's values tf-normalised only (``bm25_doc_values``), so ``idf_lead`` cancels and the
    weight is ``count x idf_body`` (no lead document frequencies needed). Terms no document
    holds are left out, as the index leaves out terms outside its vocabulary. ``only``: the
    terms the lead lane asks for (the query's lead keywords,
    :func:`chronorank.intent.rules.name_numbers`), None for all.
    """
    return {t: w * bm25_idf(n_docs, int(df[t])) for t, w in terms.items()
            if int(df.get(t, 0)) > 0 and (only is None or t in only)}
