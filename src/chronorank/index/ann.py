"""Optional approximate (faiss HNSW) candidate path with time-sliced lanes, for large corpora.

The exact index scores every document. For very large corpora this module narrows the pool
first, without letting the approximation cost freshness: the candidate rows are the union of

- ``ann``: the HNSW top-``ann_k`` by inner product (cosine on L2-normalised vectors);
- ``("newest", N)``: the N newest dated documents at or before the reference time
  (a slice of a precomputed time order, O(N));
- ``("days", D)`` / ``("days", D, k)``: the best ``k`` (default ``lane_k``) documents by
  similarity dated within the D days before the reference time.

The reference interval is ``[now, now]``, or the query's target ``(start, end)`` for as-of
and range queries; a days lane covers ``[start - D days, end]`` and the newest lane ends at
``end``. Time slices come from one time-sorted array and ``np.searchsorted``. A slice of at
most ``slice_cap`` rows (default 20,000) is scored *exactly* with one mat-vec over that
slice only; a larger slice is searched with HNSW restricted to the slice (the graph ids are
assigned in time order, so a slice is an id range: ``faiss.IDSelectorRange``), which is
approximate but still confined to the window. Lanes share one mat-vec: every window ends at
the same time, so a shorter window is a suffix of a longer one.

Undated rows (NaN time) are reached through the ``ann`` lane only. Documents dated after the
reference end are reached through the ``ann`` lane only.

``ann_search(index, query, ...)`` is the adapter over :class:`~chronorank.index.TemporalIndex`:
it builds (and caches per index snapshot) the lanes, adds a cheap exact BM25 lane when the
index fuses keywords, and calls ``index.search(..., candidates=ids)``.

faiss is optional: ``pip install "chronorank[ann]"`` (faiss-cpu).
"""

from __future__ import annotations

import math
import threading
import weakref
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from chronorank.errors import InvalidInput, require
from chronorank.index.embedders import embed_queries
from chronorank.index.snapshot import _as_matrix, _decay_times
from chronorank.index.text import analyze
from chronorank.temporal import TemporalPlan, check_query, prepare_query

if TYPE_CHECKING:
    from chronorank.index.core import TemporalIndex
    from chronorank.types import Intent, Ranking

__all__ = ["AnnLanes", "DEFAULT_LANES", "ann_candidates", "ann_search", "lanes_for"]

DAY = 86400.0
#: newest 100, best by similarity in the last 30 days, best in the last 180 days
DEFAULT_LANES: tuple[tuple[Any, ...], ...] = (("newest", 100), ("days", 30), ("days", 180))
LANE_KINDS = ("newest", "days")


def _faiss() -> Any:
    return require("faiss", extra="ann", package="faiss-cpu")


def _check_lanes(lanes: Sequence[Sequence[Any]], lane_k: int) -> list[tuple[str, float, int]]:
    """Normalise lane specs to (kind, size, k); raise on malformed ones."""
    if isinstance(lanes, (str, bytes)):
        raise InvalidInput(f"lanes={lanes!r}; give a sequence of tuples such as (('newest', 100), ('days', 30)).")
    out: list[tuple[str, float, int]] = []
    for lane in lanes:
        if not isinstance(lane, (tuple, list)) or len(lane) not in (2, 3) or lane[0] not in LANE_KINDS:
            raise InvalidInput(
                f"lane {lane!r}; expected ('newest', N), ('days', D) or ('days', D, k), e.g. ('days', 30)."
            )
        kind, size = lane[0], lane[1]
        k = lane[2] if len(lane) == 3 else (int(size) if kind == "newest" else lane_k)
        if not (isinstance(size, (int, float)) and not isinstance(size, bool) and size > 0 and math.isfinite(size)):
            raise InvalidInput(f"lane {lane!r}: size {size!r}; expected a positive number.")
        if kind == "newest" and int(size) != size:
            raise InvalidInput(f"lane {lane!r}: the newest lane takes a whole number of documents, e.g. 100.")
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
            raise InvalidInput(f"lane {lane!r}: k={k!r}; expected a positive integer such as 100.")
        out.append((kind, float(size), int(k)))
    return out


def _top_rows(scores: np.ndarray, k: int) -> np.ndarray:
    """Positions of the k largest scores (unordered)."""
    n = scores.shape[0]
    if k >= n:
        return np.arange(n)
    return np.argpartition(-scores, k - 1)[:k]


class AnnLanes:
    """HNSW over a fixed set of vectors plus a time order, producing candidate row ids.

    Parameters
    ----------
    vectors:
        ``(n, dim)`` float32, L2-normalised (inner product = cosine). Row ``i`` is document ``i``.
    times:
        ``(n,)`` float64 epoch seconds, NaN = undated.
    m, ef_construction, ef_search:
        HNSW graph degree, build beam and default search beam (raised to ``ann_k`` per query
        when that is larger, since faiss returns at most ``efSearch`` results).
    slice_cap:
        A time slice with at most this many rows is scored exactly (one mat-vec over the
        slice); a larger one is searched with HNSW restricted to the slice.
    """

    def __init__(
        self,
        vectors: np.ndarray,
        times: np.ndarray,
        *,
        m: int = 32,
        ef_construction: int = 100,
        ef_search: int = 128,
        slice_cap: int = 20_000,
    ) -> None:
        faiss = _faiss()
        vecs = np.asarray(vectors)
        if vecs.ndim != 2 or vecs.shape[0] == 0 or vecs.shape[1] == 0:
            raise InvalidInput(f"vectors has shape {vecs.shape}; expected a non-empty (n, dim) array.")
        t = np.asarray(times, dtype=np.float64)
        if t.shape != (vecs.shape[0],):
            raise InvalidInput(f"times has shape {t.shape}; expected ({vecs.shape[0]},), one per vector row.")
        for name, v in (("m", m), ("ef_construction", ef_construction), ("ef_search", ef_search), ("slice_cap", slice_cap)):
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
                raise InvalidInput(f"{name}={v!r}; expected a positive integer.")
        self.dim = int(vecs.shape[1])
        self.m, self.ef_construction, self.ef_search = int(m), int(ef_construction), int(ef_search)
        self.slice_cap = int(slice_cap)
        dated = np.flatnonzero(~np.isnan(t))
        order = dated[np.argsort(t[dated], kind="stable")]
        undated = np.flatnonzero(np.isnan(t))
        #: graph id -> row; dated rows first, oldest to newest, then undated rows
        self.perm = np.concatenate([order, undated]).astype(np.int64)
        self.sorted_times = t[order]
        self.n_dated = int(order.shape[0])
        # vectors in graph-id (time) order: time slices are contiguous, mat-vecs need no gather
        self.vectors = np.ascontiguousarray(vecs[self.perm], dtype=np.float32)
        index = faiss.IndexHNSWFlat(self.dim, self.m, faiss.METRIC_INNER_PRODUCT)
        index.hnsw.efConstruction = self.ef_construction
        index.hnsw.efSearch = self.ef_search
        index.add(self.vectors)
        self.hnsw = index

    def __len__(self) -> int:
        return int(self.perm.shape[0])

    # -------------------------------------------------------------- lanes

    def _search(self, q: np.ndarray, k: int, lo: int = 0, hi: int | None = None) -> np.ndarray:
        """HNSW top-k graph ids, optionally restricted to ids in [lo, hi)."""
        faiss = _faiss()
        params = faiss.SearchParametersHNSW()
        params.efSearch = max(self.ef_search, k)
        sel = None
        if hi is not None:
            sel = faiss.IDSelectorRange(int(lo), int(hi))
            params.sel = sel
        _, ids = self.hnsw.search(q[None, :], int(k), params=params)
        del sel  # the selector must outlive the search call
        got = ids[0]
        return got[got >= 0].astype(np.int64)

    def ann(self, q: np.ndarray, k: int) -> np.ndarray:
        """Rows of the approximate top-k by inner product."""
        return self.perm[self._search(q, min(int(k), len(self)))]

    def newest(self, n: int, end: float) -> np.ndarray:
        """Rows of the n newest dated documents dated at or before ``end``."""
        b = int(np.searchsorted(self.sorted_times, end, side="right"))
        return self.perm[max(0, b - int(n)) : b]

    def best_within(self, q: np.ndarray, windows: Sequence[tuple[float, int]], end: float) -> list[np.ndarray]:
        """For each ``(start, k)``: rows of the best k by similarity dated in [start, end].

        All windows end at ``end``, so they are suffixes of the widest one: one mat-vec over
        the widest (capped) slice serves every window that fits under ``slice_cap``.
        """
        b = int(np.searchsorted(self.sorted_times, end, side="right"))
        starts = [int(np.searchsorted(self.sorted_times, s, side="left")) for s, _ in windows]
        exact_lo = min([a for a in starts if b - a <= self.slice_cap], default=b)
        sims = self.vectors[exact_lo:b] @ q if b > exact_lo else np.zeros(0, np.float32)
        out: list[np.ndarray] = []
        for a, (_, k) in zip(starts, windows):
            if a >= b:
                out.append(np.zeros(0, np.int64))
            elif b - a <= self.slice_cap:
                part = sims[a - exact_lo :]
                out.append(self.perm[a + _top_rows(part, k)])
            else:
                out.append(self.perm[self._search(q, min(k, b - a), a, b)])
        return out

    def candidates(
        self,
        query_vector: np.ndarray | Sequence[float],
        now: float,
        *,
        ann_k: int = 1000,
        lanes: Sequence[Sequence[Any]] = DEFAULT_LANES,
        lane_k: int = 100,
        target: tuple[float, float] | None = None,
    ) -> np.ndarray:
        """Sorted unique row ids: ANN top-``ann_k`` united with the time-sliced lanes.

        ``now`` is epoch seconds; ``target=(start, end)`` (epoch seconds, either side may be
        infinite) replaces ``[now, now]`` as the reference interval for as-of/range queries.
        """
        q = np.ascontiguousarray(np.asarray(query_vector, dtype=np.float32).reshape(-1))
        if q.shape[0] != self.dim or not np.isfinite(q).all():
            raise InvalidInput(f"query_vector has shape {q.shape}; expected a finite ({self.dim},) vector.")
        if isinstance(ann_k, bool) or not isinstance(ann_k, (int, np.integer)) or ann_k < 0:
            raise InvalidInput(f"ann_k={ann_k!r}; expected an integer >= 0 (0 = lanes only).")
        spec = _check_lanes(lanes, lane_k)
        now = float(now)
        if math.isnan(now):
            raise InvalidInput("now is NaN; give epoch seconds.")
        if target is None:
            start, end = now, now
        else:
            start, end = float(target[0]), float(target[1])
            if math.isnan(start) or math.isnan(end) or end < start:
                raise InvalidInput(f"target={target!r}; expected (start, end) epoch seconds with start <= end.")
        parts: list[np.ndarray] = []
        if ann_k > 0:
            parts.append(self.ann(q, ann_k))
        windows: list[tuple[float, int]] = []
        for kind, size, k in spec:
            if kind == "newest":
                parts.append(self.newest(int(size), end))
            else:
                windows.append((start - size * DAY, k))
        if windows:
            parts.extend(self.best_within(q, windows, end))
        if not parts:
            return np.zeros(0, np.int64)
        return np.unique(np.concatenate(parts))


# ------------------------------------------------------------------ the TemporalIndex adapter

_CACHE: weakref.WeakKeyDictionary[Any, tuple[Any, tuple[Any, ...], AnnLanes]] = weakref.WeakKeyDictionary()
_CACHE_LOCK = threading.Lock()


def lanes_for(index: TemporalIndex, snap: Any = None, **params: Any) -> AnnLanes:
    """The :class:`AnnLanes` of an index snapshot, built once and cached.

    The cache holds one entry per index and rebuilds when the snapshot changes (any add or
    delete makes a new snapshot), or when ``time_field`` or the HNSW ``params`` change.
    ``snap`` defaults to the index's current snapshot; pass the one a search already read.
    """
    snap = index._snap if snap is None else snap
    if snap.vectors is None or len(snap) == 0:
        raise InvalidInput(
            "the ANN path needs document vectors; this index holds none (keywords only) or is empty. "
            "Create it with an embedder or add vectors=..., or use index.search() directly."
        )
    key = (index.config.time_field, tuple(sorted(params.items())))
    with _CACHE_LOCK:
        hit = _CACHE.get(index)
        if hit is not None and hit[0] is snap and hit[1] == key:
            return hit[2]
        lanes = AnnLanes(snap.vectors, _decay_times(snap.times, index.config.time_field), **params)
        _CACHE[index] = (snap, key, lanes)
        return lanes


def _query_vector(index: TemporalIndex, topical: str, vector: Any) -> np.ndarray:
    if vector is not None:
        return _as_matrix(vector, index.dim, "vector")[0]
    if index.embedder is None:
        raise InvalidInput(
            "the ANN path needs a query vector: this index has no embedder; pass vector=... ."
        )

    q = np.asarray(embed_queries(index.embedder, [topical])[0], dtype=np.float32)
    return q / max(float(np.linalg.norm(q)), 1e-12)


def ann_candidates(
    index: TemporalIndex,
    query: str,
    now: Any = None,
    *,
    vector: np.ndarray | Sequence[float] | None = None,
    intent: Intent | None = None,
    ann_k: int = 1000,
    lanes: Sequence[Sequence[Any]] = DEFAULT_LANES,
    lane_k: int = 100,
    keyword_k: int = 100,
    target: tuple[float, float] | None = None,
    snap: Any = None,
    hnsw: dict[str, Any] | None = None,
) -> tuple[np.ndarray, np.ndarray, Intent, float]:
    """Candidate rows of ``snap`` (default: the current snapshot) for ``query``.

    Returns ``(rows, query_vector, intent, now_s)``. The target of an as-of/range intent
    becomes the lanes' reference interval unless ``target`` is given. When the index fuses
    keywords (``keyword_weight > 0``) the exact BM25 top-``keyword_k`` is added too (BM25
    over the whole corpus is cheap: sparse postings of the query terms only).
    """
    snap = index._snap if snap is None else snap
    pq = prepare_query(query, None, now, intent, index.config)
    cfg, now_s, intent, topical = pq.config, pq.now, pq.intent, pq.topical
    lanes_obj = lanes_for(index, snap, **(hnsw or {}))
    q = _query_vector(index, topical, vector)
    stated = TemporalPlan.of(intent, now_s, cfg.temporal_config()).target
    if target is None and stated is not None:
        target = (stated.start, stated.end)
    rows = lanes_obj.candidates(q, now_s, ann_k=ann_k, lanes=lanes, lane_k=lane_k, target=target)
    if keyword_k > 0 and cfg.keyword_weight > 0:
        q_ids = [t for t in (index._vocab.get(w) for w in analyze(topical)) if t is not None and t < snap.n_terms]
        if q_ids:
            bm = snap.bm25(index.k1, index.b).scores(q_ids, idf_power=cfg.idf_power)
            top = _top_rows(bm, keyword_k)
            rows = np.union1d(rows, top[bm[top] > 0])
    return rows, q, intent, now_s


def ann_search(
    index: TemporalIndex,
    query: str,
    k: int = 10,
    now: Any = None,
    *,
    ann_k: int = 1000,
    lanes: Sequence[Sequence[Any]] = DEFAULT_LANES,
    lane_k: int = 100,
    keyword_k: int = 100,
    vector: np.ndarray | Sequence[float] | None = None,
    intent: Intent | None = None,
    target: tuple[float, float] | None = None,
    hnsw: dict[str, Any] | None = None,
    **search_kwargs: Any,
) -> Ranking:
    """``index.search`` over the ANN + lanes candidate pool instead of every document.

    ``hnsw`` passes :class:`AnnLanes` parameters (``m``, ``ef_construction``, ``ef_search``,
    ``slice_cap``). Other keywords go to :meth:`TemporalIndex.search` (``config``, overrides).
    The first call after an add/delete rebuilds the HNSW graph (see
    ``benchmarks/results/ann_recall.json`` for the build time).
    """
    check_query(query)
    snap = index._snap
    rows, q, intent, now_s = ann_candidates(
        index, query, now, vector=vector, intent=intent, ann_k=ann_k, lanes=lanes, lane_k=lane_k,
        keyword_k=keyword_k, target=target, snap=snap, hnsw=hnsw,
    )
    ids = [snap.ids[int(i)] for i in rows]
    return index.search(query, k, now_s, vector=q, intent=intent, candidates=ids, **search_kwargs)
