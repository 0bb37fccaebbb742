"""BM25 (Lucene variant) over every document, stored as a bm25s-style CSC score matrix.

The matrix holds, for each term t and document d containing it, the precomputed
contribution ``idf(t) * tf / (tf + k1 * (1 - b + b * |d| / avgdl))`` with
``idf(t) = ln(1 + (N - df + 0.5) / (df + 0.5))`` (bm25s ``method="lucene"``). A query's
score for every document is the sum of its terms' columns.

Documents are kept as flat term-id arrays (``term_ids`` + ``term_ptr``; an optional
``tf`` gives each entry's count, so that a very long document is kept as its distinct terms
and their counts, see ``text.encode_for_index``; None = every entry counts once), so after any
upsert or delete the statistics (N, df, avgdl) are recomputed from the current
documents: nothing stale survives. Two builders give the same matrix: ``"numpy"``
(vectorised, the default) and ``"bm25s"`` (bm25s's own builder; a test checks they agree).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from chronorank.errors import InvalidInput, require

__all__ = ["BM25_B", "BM25_K1", "Bm25Matrix", "build_matrix", "doc_lengths", "encode_terms"]

#: The embedded index's BM25 parameters (``TemporalIndex(k1=, b=)``), which the stores
#: follow when given none so that both rank alike: weak length normalisation (see
#: ``TemporalIndex``'s docstring for why).
BM25_K1 = 1.2
BM25_B = 0.3


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
        if weights is not None and bool((q[1:] > q[:-1]).all()):
            uniq = q  # already sorted and unique (what np.unique would return), as the index passes them
            w = np.asarray(weights, dtype=np.float64)
        else:
            uniq, counts = np.unique(q, return_counts=True)
            w = counts.astype(np.float64) if weights is None else np.asarray(weights, dtype=np.float64)
        if idf_power:
            w = w * np.power(self.idf(uniq), idf_power)
        starts, ends = self.indptr[uniq].tolist(), self.indptr[uniq + 1].tolist()
        for a, b, c in zip(starts, ends, w.tolist()):
            if a == b:
                continue
            rows = self.indices[a:b]
            # rows are unique within one column, so a fancy-indexed add is exact
            if c == 1.0:
                out[rows] += self.data[a:b]
            else:
                out[rows] += c * self.data[a:b]
        return out

    def holds(self, term_ids: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """Per term (a row each) and per document of ``rows``: its column scores the document
        above 0 -- ``scores([t])[rows] > 0`` for each term ``t``, read from the term's postings
        at ``rows`` alone (a binary search in its ascending rows) instead of a score per document
        of the corpus."""
        rows = np.asarray(rows, dtype=np.int64)
        out = np.zeros((len(term_ids), rows.shape[0]), dtype=bool)
        for j, t in enumerate(np.asarray(term_ids, dtype=np.int64).tolist()):
            if not 0 <= t < self.n_terms:
                continue
            a, b = int(self.indptr[t]), int(self.indptr[t + 1])
            if a == b:
                continue
            col = self.indices[a:b]
            at = _find(col, rows)
            out[j] = (col[at] == rows) & (self.data[a:b][at] > 0)
        return out


def _find(col: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Where each of ``rows`` is or would go in a posting column's ascending rows, clipped to
    its last entry (searched with keys of the column's dtype: no conversion of the column)."""
    return np.minimum(np.searchsorted(col, rows.astype(col.dtype)), col.shape[0] - 1)


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
    tf: np.ndarray | None = None,
) -> Bm25Matrix:
    """The BM25 score matrix of the documents ``term_ids[term_ptr[i]:term_ptr[i+1]]``
    (each entry counted ``tf`` times, once when None)."""
    if k1 < 0 or not 0 <= b <= 1:
        raise InvalidInput(f"BM25 needs k1 >= 0 and 0 <= b <= 1, got k1={k1!r} b={b!r}; the usual values are 1.5 and 0.75.")
    n_docs = int(term_ptr.shape[0] - 1)
    if builder == "bm25s":
        if tf is not None:  # bm25s counts repeats: each entry written out tf times
            term_ids, term_ptr = np.repeat(term_ids, tf), _repeat_ptr(term_ptr, tf)
        return _build_bm25s(term_ids, term_ptr, n_terms, k1=k1, b=b)
    if builder != "numpy":
        raise InvalidInput(f"builder={builder!r}; expected 'numpy' or 'bm25s'.")
    doc_len = doc_lengths(term_ptr, tf).astype(np.float64)
    if n_docs == 0 or term_ids.size == 0:
        return Bm25Matrix(
            np.zeros(0, np.float32), np.zeros(0, np.int32), np.zeros(n_terms + 1, np.int64), n_docs
        )
    avgdl = float(doc_len.mean())
    rows = np.repeat(np.arange(n_docs, dtype=np.int64), np.diff(term_ptr))
    # (term, doc) pairs sorted term-major, then counted: tf per (term, doc)
    key = term_ids.astype(np.int64) * n_docs + rows
    uniq, tf = _count_pairs(key, tf)
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


def doc_lengths(term_ptr: np.ndarray, tf: np.ndarray | None = None) -> np.ndarray:
    """Terms in each document (int64): its entries, each counted ``tf`` times."""
    lengths = np.diff(term_ptr).astype(np.int64)
    if tf is None:
        return lengths
    out = np.zeros(lengths.shape[0], dtype=np.int64)
    held = lengths > 0
    if held.any():
        out[held] = np.add.reduceat(tf, term_ptr[:-1][held], dtype=np.int64)
    return out


def _repeat_ptr(term_ptr: np.ndarray, tf: np.ndarray) -> np.ndarray:
    ptr = np.zeros(term_ptr.shape[0], dtype=np.int64)
    np.cumsum(doc_lengths(term_ptr, tf), out=ptr[1:])
    return ptr


def _count_pairs(key: np.ndarray, tf: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """The distinct keys, ascending, and each one's count: its occurrences, or the sum of
    their ``tf``. Sorts ``key`` in place."""
    if tf is None:
        key.sort()
        return np.unique(key, return_counts=True) if key.size else (key, key)
    order = np.argsort(key, kind="stable")
    key = key[order]
    uniq, first = np.unique(key, return_index=True)
    if not key.size:
        return uniq, np.zeros(0, dtype=np.int64)
    return uniq, np.add.reduceat(np.asarray(tf)[order], first, dtype=np.int64)


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


@dataclass(frozen=True)
class _Segment:
    """Postings of a run of consecutive documents, term-major: ``terms`` ascending, then
    ``rows`` ascending within a term; ``tf`` each (term, document) pair's count."""

    terms: np.ndarray  # int32
    rows: np.ndarray  # int32
    tf: np.ndarray  # int32

    @property
    def nnz(self) -> int:
        return int(self.terms.shape[0])

    def column(self, t: int) -> tuple[np.ndarray, np.ndarray]:
        # keys of the array's own dtype: mixed dtypes would make numpy convert all of ``terms``
        a, b = np.searchsorted(self.terms, np.array([t, t + 1], dtype=self.terms.dtype))
        return self.rows[a:b], self.tf[a:b]


def _segment(term_ids: np.ndarray, term_ptr: np.ndarray, row0: int, tf: np.ndarray | None = None) -> _Segment:
    """The postings of documents ``row0 ...`` given as flat term ids + offsets (one sort)."""
    n = int(term_ptr.shape[0] - 1)
    rows = np.repeat(np.arange(row0, row0 + n, dtype=np.int64), np.diff(term_ptr))
    width = max(n, 1)
    key = term_ids.astype(np.int64) * width + (rows - row0)
    uniq, count = _count_pairs(key, tf)
    t = uniq // width
    return _Segment(t.astype(np.int32), (uniq - t * width + row0).astype(np.int32), count.astype(np.int32))


def _merge(a: _Segment, b: _Segment) -> _Segment:
    """Two segments as one; every row of ``b`` follows every row of ``a``, so within a term
    ``a``'s postings come first: a stable merge by term, no sort."""
    pos_b = np.arange(b.nnz, dtype=np.int64) + np.searchsorted(a.terms, b.terms, side="right")
    pos_a = np.arange(a.nnz, dtype=np.int64) + np.searchsorted(b.terms, a.terms, side="left")
    parts = []
    for name in ("terms", "rows", "tf"):
        out = np.empty(a.nnz + b.nnz, dtype=np.int32)
        out[pos_a] = getattr(a, name)
        out[pos_b] = getattr(b, name)
        parts.append(out)
    return _Segment(*parts)


class Bm25Postings:
    """The BM25 of :func:`build_matrix`, kept as postings (term, document, tf) so that
    appending documents costs their own postings, not a rebuild.

    The postings sit in a few segments of consecutive documents, merged as they grow (sizes
    at least halve from one segment to the next, so there are O(log n) and each posting is
    merged O(log n) times). Statistics (N, df, avgdl) are the current ones; a query term's
    column is computed when asked for, by the same float64 expression as
    :func:`build_matrix`, so :meth:`scores` and :meth:`idf` equal those of the matrix built
    from scratch over the same documents to the bit (a test checks it). ``data``,
    ``indices`` and ``indptr`` materialise that matrix (for saving).
    """

    def __init__(
        self, segments: tuple[_Segment, ...], doc_len: np.ndarray, total: int, n_terms: int, k1: float, b: float
    ) -> None:
        self.segments = segments
        self.doc_len = doc_len  # int64 terms per document
        self.total = int(total)  # their sum: avgdl = total / N exactly as doc_len.mean()
        self.num_docs = int(doc_len.shape[0])
        self._n_terms = int(n_terms)
        self.k1 = float(k1)
        self.b = float(b)
        self._matrix: Bm25Matrix | None = None
        self._norm: np.ndarray | None = None  # k1 * (1 - b + b * |d| / avgdl) per document
        self._lock = threading.Lock()

    @classmethod
    def build(
        cls, term_ids: np.ndarray, term_ptr: np.ndarray, n_terms: int, *, k1: float, b: float,
        tf: np.ndarray | None = None,
    ) -> Bm25Postings:
        doc_len = doc_lengths(term_ptr, tf)
        seg = _segment(term_ids, term_ptr, 0, tf)
        return cls((seg,) if seg.nnz else (), doc_len, int(doc_len.sum()), n_terms, k1, b)

    @classmethod
    def from_matrix(cls, m: Bm25Matrix, doc_len: np.ndarray, *, k1: float, b: float) -> Bm25Postings | None:
        """The postings behind a score matrix built (or loaded) with these ``k1``, ``b`` over
        documents of these lengths, without re-reading the documents: each tf solved from its
        score, ``tf = norm * s / (idf - s)``, rounded, and kept only if every recomputed score
        equals the stored one to the bit and every tf is at most 1000 (where neighbouring tfs'
        float32 scores are many ulps apart, so an equal score means the true tf). None when
        that fails (k1 = 0, a very long document): the caller counts the terms instead."""
        doc_len = np.asarray(doc_len, dtype=np.int64)
        if k1 <= 0 or m.num_docs != doc_len.shape[0]:
            return None
        total = int(doc_len.sum())
        n_terms = m.n_terms
        counts = np.diff(m.indptr)
        terms = np.repeat(np.arange(n_terms, dtype=np.int32), counts)
        post = cls((), doc_len, total, n_terms, k1, b)
        if terms.shape[0]:
            if total == 0:
                return None
            idf = np.log1p((m.num_docs - counts.astype(np.float64) + 0.5) / (counts.astype(np.float64) + 0.5))[terms]
            rows = np.asarray(m.indices, dtype=np.int32)
            norm = post._doc_norm()[rows]
            score = np.asarray(m.data, dtype=np.float64)
            with np.errstate(divide="ignore", invalid="ignore"):
                tf = np.rint(norm * score / (idf - score))
            if not (np.isfinite(tf).all() and (tf >= 1).all() and (tf <= 1000).all()):
                return None
            tf_i = tf.astype(np.int32)
            if not np.array_equal(post._column(rows, tf_i, idf), m.data):
                return None
            post.segments = (_Segment(terms, rows, tf_i),)
        return post

    def append(
        self, term_ids: np.ndarray, term_ptr: np.ndarray, n_terms: int, tf: np.ndarray | None = None
    ) -> Bm25Postings:
        """A new object with documents ``num_docs ...`` added (this one is unchanged)."""
        doc_len = doc_lengths(term_ptr, tf)
        segs = list(self.segments)
        seg = _segment(term_ids, term_ptr, self.num_docs, tf)
        if seg.nnz:
            segs.append(seg)
        while len(segs) > 1 and segs[-2].nnz <= 2 * segs[-1].nnz:
            last = segs.pop()
            segs[-1] = _merge(segs[-1], last)
        return Bm25Postings(
            tuple(segs), np.concatenate([self.doc_len, doc_len]), self.total + int(doc_len.sum()),
            max(n_terms, self._n_terms), self.k1, self.b,
        )

    @property
    def n_terms(self) -> int:
        return self._n_terms

    def _df(self, term_ids: np.ndarray) -> np.ndarray:
        df = np.zeros(term_ids.shape[0], dtype=np.int64)
        lo = term_ids.astype(np.int32)
        hi = (term_ids + 1).astype(np.int32)
        for s in self.segments:
            df += np.searchsorted(s.terms, hi) - np.searchsorted(s.terms, lo)
        return df

    def idf(self, term_ids: np.ndarray) -> np.ndarray:
        """Lucene idf of the given terms under the current statistics (as Bm25Matrix.idf)."""
        df = self._df(np.asarray(term_ids, dtype=np.int64)).astype(np.float64)
        return np.log1p((self.num_docs - df + 0.5) / (df + 0.5))

    def _doc_norm(self) -> np.ndarray:
        norm = self._norm
        if norm is None:
            k1, b = self.k1, self.b
            avgdl = self.total / self.num_docs  # == doc_len.astype(float64).mean(), exactly
            # the expression of build_matrix, per document instead of per posting
            norm = self._norm = k1 * (1.0 - b + b * self.doc_len.astype(np.float64) / avgdl)
        return norm

    def _column(self, rows: np.ndarray, tf: np.ndarray, idf: Any) -> np.ndarray:
        tf_f = tf.astype(np.float64)
        return (idf * tf_f / (tf_f + self._doc_norm()[rows])).astype(np.float32)

    def scores(
        self, term_ids: Sequence[int] | np.ndarray, weights: np.ndarray | None = None, *, idf_power: float = 0.0
    ) -> np.ndarray:
        """As :meth:`Bm25Matrix.scores` (the same additions in the same order)."""
        out = np.zeros(self.num_docs, dtype=np.float32)
        q = np.asarray(term_ids, dtype=np.int64)
        q = q[(q >= 0) & (q < self.n_terms)]
        if q.size == 0 or self.total == 0:
            return out
        m = self._matrix
        if m is not None:
            return m.scores(q, weights, idf_power=idf_power)
        uniq, counts = np.unique(q, return_counts=True)
        w = counts.astype(np.float64) if weights is None else np.asarray(weights, dtype=np.float64)
        idf = self.idf(uniq)
        if idf_power:
            w = w * np.power(idf, idf_power)
        for t, c, i in zip(uniq.tolist(), w.tolist(), idf.tolist()):
            for s in self.segments:
                rows, tf = s.column(t)
                if rows.shape[0] == 0:
                    continue
                data = self._column(rows, tf, i)
                if c == 1.0:
                    out[rows] += data
                else:
                    out[rows] += c * data
        return out

    def holds(self, term_ids: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """As :meth:`Bm25Matrix.holds` (a document's postings sit in one segment)."""
        m = self._matrix
        if m is not None:
            return m.holds(term_ids, rows)
        rows = np.asarray(rows, dtype=np.int64)
        ids = np.asarray(term_ids, dtype=np.int64)
        out = np.zeros((ids.shape[0], rows.shape[0]), dtype=bool)
        if self.total == 0:
            return out
        for j, t in enumerate(ids.tolist()):
            if not 0 <= t < self.n_terms:
                continue
            i = float(self.idf(np.array([t], dtype=np.int64))[0])
            for seg in self.segments:
                col, tf = seg.column(t)
                if col.shape[0] == 0:
                    continue
                at = _find(col, rows)
                found = np.flatnonzero(col[at] == rows)
                out[j, found] |= self._column(col[at[found]], tf[at[found]], i) > 0
        return out

    def matrix(self) -> Bm25Matrix:
        """The score matrix :func:`build_matrix` would give (built once, then kept)."""
        with self._lock:
            return self._build_matrix()

    def _build_matrix(self) -> Bm25Matrix:
        m = self._matrix
        if m is None:
            seg = self.segments[0] if len(self.segments) == 1 else None
            for s in self.segments[1:] if seg is not None else self.segments:
                seg = s if seg is None else _merge(seg, s)
            if seg is None or self.total == 0:
                m = Bm25Matrix(np.zeros(0, np.float32), np.zeros(0, np.int32), np.zeros(self.n_terms + 1, np.int64),
                               self.num_docs)
            else:
                t = seg.terms.astype(np.int64)
                df = np.bincount(t, minlength=self.n_terms).astype(np.float64)
                idf = np.log1p((self.num_docs - df + 0.5) / (df + 0.5))
                data = self._column(seg.rows, seg.tf, idf[t])
                indptr = np.zeros(self.n_terms + 1, dtype=np.int64)
                np.cumsum(np.bincount(t, minlength=self.n_terms), out=indptr[1:])
                m = Bm25Matrix(data, seg.rows, indptr, self.num_docs)
            self._matrix = m
        return m

    @property
    def data(self) -> np.ndarray:
        return self.matrix().data

    @property
    def indices(self) -> np.ndarray:
        return self.matrix().indices

    @property
    def indptr(self) -> np.ndarray:
        return self.matrix().indptr
