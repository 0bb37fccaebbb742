"""BM25 (Lucene variant) over every document, stored as a bm25s-style CSC score matrix.

The matrix holds, for each term t and document d containing it, the precomputed
contribution ``idf(t) * tf / (tf + k1 * (1 - b + b * |d| / avgdl))`` with
``idf(t) = ln(1 + (N - df + 0.5) / (df + 0.5))`` (bm25s ``method="lucene"``). A query's
score for every document is the sum of its terms' columns.

Documents are kept as flat term-id arrays (``term_ids`` + ``term_ptr``), so after any
upsert or delete the statistics (N, df, avgdl) are recomputed from the current
documents: nothing stale survives. Two builders give the same matrix: ``"numpy"``
(vectorised, the default) and ``"bm25s"`` (bm25s's own builder; a test checks they agree).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from chronorank.errors import InvalidInput, require

__all__ = ["Bm25Matrix", "build_matrix", "encode_terms"]


@dataclass(frozen=True)
class Bm25Matrix:
    """CSC score matrix: column ``t`` is ``data[indptr[t]:indptr[t+1]]`` at rows ``indices[...]``."""

    data: np.ndarray  # float32
    indices: np.ndarray  # int32 document rows, ascending within a column
    indptr: np.ndarray  # int64, n_terms + 1
    num_docs: int

    @property
    def n_terms(self) -> int:
        return int(self.indptr.shape[0] - 1)

    def idf(self, term_ids: np.ndarray) -> np.ndarray:
        """Lucene idf of the given terms under the current statistics."""
        df = (self.indptr[term_ids + 1] - self.indptr[term_ids]).astype(np.float64)
        return np.log1p((self.num_docs - df + 0.5) / (df + 0.5))

    def scores(
        self, term_ids: Sequence[int] | np.ndarray, weights: np.ndarray | None = None, *, idf_power: float = 0.0
    ) -> np.ndarray:
        """BM25 of every document for a query given as term ids (repeats count), float32.

        ``idf_power = p`` weights each query term's column by ``idf^p`` in addition (p = 0 is
        plain BM25; p = 1 lets rare terms such as names outweigh common ones more strongly).
        """
        out = np.zeros(self.num_docs, dtype=np.float32)
        q = np.asarray(term_ids, dtype=np.int64)
        q = q[(q >= 0) & (q < self.n_terms)]
        if q.size == 0:
            return out
        uniq, counts = np.unique(q, return_counts=True)
        w = counts.astype(np.float64) if weights is None else np.asarray(weights, dtype=np.float64)
        if idf_power:
            w = w * np.power(self.idf(uniq), idf_power)
        for t, c in zip(uniq.tolist(), w.tolist()):
            a, b = int(self.indptr[t]), int(self.indptr[t + 1])
            if a == b:
                continue
            rows = self.indices[a:b]
            # rows are unique within one column, so a fancy-indexed add is exact
            if c == 1.0:
                out[rows] += self.data[a:b]
            else:
                out[rows] += c * self.data[a:b]
        return out


def encode_terms(
    docs_terms: Sequence[Sequence[str]], vocab: dict[str, int]
) -> tuple[np.ndarray, np.ndarray]:
    """Term lists -> (flat int32 ids, int64 offsets); unseen terms are appended to ``vocab``."""
    lengths = np.fromiter((len(t) for t in docs_terms), dtype=np.int64, count=len(docs_terms))
    ptr = np.zeros(len(docs_terms) + 1, dtype=np.int64)
    np.cumsum(lengths, out=ptr[1:])
    flat = np.empty(int(ptr[-1]), dtype=np.int32)
    pos = 0
    get = vocab.get
    for terms in docs_terms:
        for term in terms:
            tid = get(term)
            if tid is None:
                tid = len(vocab)
                vocab[term] = tid
            flat[pos] = tid
            pos += 1
    return flat, ptr


def build_matrix(
    term_ids: np.ndarray,
    term_ptr: np.ndarray,
    n_terms: int,
    *,
    k1: float = 1.5,
    b: float = 0.75,
    builder: str = "numpy",
) -> Bm25Matrix:
    """The BM25 score matrix of the documents ``term_ids[term_ptr[i]:term_ptr[i+1]]``."""
    if k1 < 0 or not 0 <= b <= 1:
        raise InvalidInput(f"BM25 needs k1 >= 0 and 0 <= b <= 1, got k1={k1!r} b={b!r}; the usual values are 1.5 and 0.75.")
    n_docs = int(term_ptr.shape[0] - 1)
    if builder == "bm25s":
        return _build_bm25s(term_ids, term_ptr, n_terms, k1=k1, b=b)
    if builder != "numpy":
        raise InvalidInput(f"builder={builder!r}; expected 'numpy' or 'bm25s'.")
    doc_len = np.diff(term_ptr).astype(np.float64)
    if n_docs == 0 or term_ids.size == 0:
        return Bm25Matrix(
            np.zeros(0, np.float32), np.zeros(0, np.int32), np.zeros(n_terms + 1, np.int64), n_docs
        )
    avgdl = float(doc_len.mean())
    rows = np.repeat(np.arange(n_docs, dtype=np.int64), np.diff(term_ptr))
    # (term, doc) pairs sorted term-major, then counted: tf per (term, doc)
    key = term_ids.astype(np.int64) * n_docs + rows
    key.sort(kind="stable")
    uniq, tf = np.unique(key, return_counts=True) if key.size else (key, key)
    t = uniq // n_docs
    d = uniq - t * n_docs
    df = np.bincount(t, minlength=n_terms).astype(np.float64)
    idf = np.log1p((n_docs - df + 0.5) / (df + 0.5))
    tf_f = tf.astype(np.float64)
    norm = k1 * (1.0 - b + b * doc_len[d] / avgdl)
    data = (idf[t] * tf_f / (tf_f + norm)).astype(np.float32)
    indptr = np.zeros(n_terms + 1, dtype=np.int64)
    np.cumsum(np.bincount(t, minlength=n_terms), out=indptr[1:])
    return Bm25Matrix(data, d.astype(np.int32), indptr, n_docs)


def _build_bm25s(term_ids: np.ndarray, term_ptr: np.ndarray, n_terms: int, *, k1: float, b: float) -> Bm25Matrix:
    bm25s = require("bm25s", extra="index")
    model = bm25s.BM25(k1=k1, b=b, method="lucene")
    corpus = [term_ids[term_ptr[i] : term_ptr[i + 1]].tolist() for i in range(term_ptr.shape[0] - 1)]
    scores: Mapping[str, np.ndarray] = model.build_index_from_ids(
        unique_token_ids=list(range(n_terms)), corpus_token_ids=corpus, show_progress=False
    )
    return Bm25Matrix(
        np.asarray(scores["data"], dtype=np.float32),
        np.asarray(scores["indices"], dtype=np.int32),
        np.asarray(scores["indptr"], dtype=np.int64),
        int(scores["num_docs"]),
    )
