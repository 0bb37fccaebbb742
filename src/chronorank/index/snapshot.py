"""The index's arrays: one immutable state (``_Snapshot``) and the helpers that build it.

A snapshot holds the columns every search reads (records, float32 unit vectors, the
``(4, n)`` epoch-second time columns, the documents' term ids, the lazily built BM25
matrices of the body and of the lead field) and grows by appending into spare capacity
(``_Buffer``). ``core`` (the index), ``storage`` (save/load) and ``ann`` (the faiss
lanes) import it; it imports none of them, which is what keeps the index package free
of an import loop.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np

from chronorank.errors import InvalidInput
from chronorank.index.bm25 import Bm25Matrix, Bm25Postings, build_matrix, doc_lengths
from chronorank.index.lead import lead_lengths
from chronorank.index.records import Records


class VectorsPending(InvalidInput):
    """An operation that needs every vector met documents still waiting for theirs
    (``_Snapshot.pending``; raised by ``save`` and ``wait``, :mod:`chronorank.index.background`)."""


class _Snapshot:
    """One immutable state of the index (the BM25 matrix is built lazily, once)."""

    __slots__ = (
        "records", "ids", "row_of", "vectors", "times", "term_ids", "term_ptr", "term_tf", "n_terms",
        "groups", "_bm25", "_lead", "_lock", "lead_len", "acronyms", "titles", "filter_cols", "bufs",
        "title_sums", "pending", "derived", "series_keys", "lead_memo", "title_index",
    )

    def __init__(
        self,
        records: Records | list[dict[str, Any]],
        vectors: np.ndarray | None,
        times: np.ndarray,
        term_ids: np.ndarray,
        term_ptr: np.ndarray,
        n_terms: int,
        groups: np.ndarray | None,
        bm25: Bm25Matrix | Bm25Postings | None = None,
        ids: list[str] | None = None,
        lead_len: np.ndarray | None = None,
        pending: np.ndarray | None = None,
        row_of: Mapping[str, int] | None = None,
        term_tf: np.ndarray | None = None,
    ) -> None:
        self.records = Records.from_dicts(records)  # columns, not a dict per document
        # int32 (n,): the background batch each document's vector waits for (0 = it has
        # one); None = every vector is in (index/background.py)
        self.pending = pending
        self.lead_len = lead_len  # terms in each document's first sentence (lazy)
        self.ids = ids if ids is not None else self.records.ids
        self.row_of = row_of if row_of is not None else {d: i for i, d in enumerate(self.ids)}
        self.vectors = vectors
        self.times = times  # (4, n) float64: date, updated, valid_from, valid_to
        self.term_ids = term_ids
        self.term_ptr = term_ptr
        # int32 count of each term_ids entry; None: every entry counts once (a document longer
        # than text.LONG_TEXT_CHARS is kept as its lead + distinct terms, text.encode_for_index)
        self.term_tf = term_tf
        self.n_terms = n_terms
        self.groups = groups
        self._bm25 = bm25
        self._lead: dict[int, Bm25Matrix | Bm25Postings] = {}
        self._lock = threading.Lock()
        self.acronyms: dict[str, str | None] = {}  # acronym -> the corpus's phrase (lazy)
        self.titles: np.ndarray | None = None  # code of each document's lead terms (lazy)
        self.title_sums: tuple[np.ndarray, np.ndarray] | None = None  # their hashes (_lead_sums)
        # the distinct lead hashes, sorted, and their codes in ``titles`` (title_codes)
        self.title_index: tuple[np.ndarray, np.ndarray] | None = None
        self.filter_cols: dict[str, Any] = {}  # metadata field -> filters.FieldColumn (lazy)
        self.derived: dict[Any, Any] = {}  # per-state arrays the search derives from times (lazy)
        self.bufs: dict[str, _Buffer] = {}  # room to append to the arrays (add())
        self.series_keys: dict[int, str] = {}  # row -> _series_key of its text (memo, lazy)
        # language -> version_conflict.LeadMemo, shared with the snapshots appended to this one
        self.lead_memo: dict[str, Any] = {}

    def __len__(self) -> int:
        return len(self.ids)

    def time_column(self, field: str) -> np.ndarray:
        """The time each document decays from under ``time_field=field`` (read-only, cached)."""
        t = self.derived.get(("time", field))
        if t is None:
            t = _decay_times(self.times, field)
            t.flags.writeable = False  # shared by every search of this state
            self.derived[("time", field)] = t
        return t

    def has_column(self, c: int) -> bool:
        """Whether any document has a value in time column ``c`` (2: valid_from, 3: valid_to)."""
        v = self.derived.get(("has", c))
        if v is None:
            v = self.derived[("has", c)] = bool(self.times.shape[1]) and not bool(np.isnan(self.times[c]).all())
        return v

    def bm25(self, k1: float, b: float) -> Bm25Matrix | Bm25Postings:
        m = self._bm25
        if m is None:
            with self._lock:
                if self._bm25 is None:
                    self._bm25 = build_matrix(self.term_ids, self.term_ptr, self.n_terms, k1=k1, b=b, tf=self.term_tf)
                m = self._bm25
        return m

    def lead_bm25(self, k1: float, b: float, tokens: int) -> Bm25Matrix | Bm25Postings:
        """BM25 over each document's lead: its first sentence or line (a title, a release
        header), at most ``tokens`` terms."""
        m = self._lead.get(tokens)
        if m is None:
            with self._lock:
                m = self._lead.get(tokens)
                if m is None:
                    if self.lead_len is None:
                        self.lead_len = lead_lengths(self.records.texts)
                    ids, ptr = _lead_terms(self.term_ids, self.term_ptr, self.lead_len, tokens)
                    m = build_matrix(ids, ptr, self.n_terms, k1=k1, b=b)
                    self._lead[tokens] = m
        return m

    def appended(
        self, records: list[dict[str, Any]], vectors: np.ndarray | None, times: np.ndarray,
        t_ids: np.ndarray, t_ptr: np.ndarray, n_terms: int, lead_len: np.ndarray | None, k1: float, b: float,
        t_tf: np.ndarray | None = None,
    ) -> _Snapshot:
        """This snapshot with new documents at the end, at the cost of the new documents
        (amortised): the arrays grow into spare capacity (doubling, shared with this
        snapshot, which keeps seeing only its own rows), and the BM25 statistics of the
        body and lead that a search has built are carried over as postings with the new
        documents' postings appended (:class:`~chronorank.index.bm25.Bm25Postings`, the
        scores of a rebuild to the bit), so the next search rebuilds nothing."""
        n = len(self)
        bufs = dict(self.bufs)
        new_ids = [r["id"] for r in records]
        row_of = RowOf.appended(self.row_of, new_ids, n)
        vecs = _concat_vectors(self.vectors, vectors, n, None if vectors is None else vectors.shape[1], bufs)
        snap = _Snapshot(
            records=self.records + records,
            vectors=vecs,
            times=_extend(bufs, "times", self.times, times, axis=1),
            term_ids=_extend(bufs, "term_ids", self.term_ids, t_ids),
            term_ptr=_extend(bufs, "term_ptr", self.term_ptr, self.term_ptr[-1] + t_ptr[1:]),
            term_tf=None if self.term_tf is None and t_tf is None else _extend(
                bufs, "term_tf", _counts(self.term_tf, self.term_ids), _counts(t_tf, t_ids)),
            n_terms=n_terms,
            groups=None,
            row_of=row_of,
            lead_len=None if lead_len is None or self.lead_len is None else _extend(bufs, "lead_len", self.lead_len, lead_len),
        )
        snap.bufs = bufs
        snap.lead_memo = self.lead_memo  # old rows keep their numbers: their leads are read
        titles = self.title_sums
        if titles is not None and lead_len is not None:
            sums, has = _lead_sums(t_ids, t_ptr, lead_len)
            snap.title_sums = (np.concatenate([titles[0], sums]), np.concatenate([titles[1], has]))
            if self.titles is not None and self.title_index is not None:
                # the new leads' codes only, not np.unique over every lead (~7 ms at 100k)
                codes, snap.title_index = _more_title_codes(self.title_index, sums, has)
                snap.titles = np.concatenate([self.titles, codes])
        body = self._bm25
        if body is not None:
            post = body if isinstance(body, Bm25Postings) and (body.k1, body.b) == (k1, b) else None
            if post is None:  # first append since a build or a load: postings of the old rows, once
                post = _postings(body, self.term_ids, self.term_ptr, self.n_terms, k1, b, self.term_tf)
            snap._bm25 = post.append(t_ids, t_ptr, n_terms, t_tf)
        if lead_len is not None and self.lead_len is not None:
            for tokens, lead in list(self._lead.items()):  # a search may add one meanwhile
                ids, ptr = _lead_terms(t_ids, t_ptr, lead_len, tokens)
                if not (isinstance(lead, Bm25Postings) and (lead.k1, lead.b) == (k1, b)):
                    base_ids, base_ptr = _lead_terms(self.term_ids, self.term_ptr, self.lead_len, tokens)
                    lead = _postings(lead, base_ids, base_ptr, self.n_terms, k1, b)
                snap._lead[tokens] = lead.append(ids, ptr, n_terms)
        return snap


class RowOf(Mapping[str, int]):
    """id -> row: a base dict shared with older snapshots (never changed) and the ids
    appended since, so that adding one document copies the recent ids, not all of them
    (a 100k-entry dict copy was ~1.5 ms of each one-document ``add``)."""

    __slots__ = ("base", "more")
    #: appended ids kept apart from the base at most; then one copy folds them in
    MORE = 4096

    def __init__(self, base: Mapping[str, int], more: dict[str, int]) -> None:
        self.base = base
        self.more = more

    @classmethod
    def appended(cls, row_of: Mapping[str, int], new_ids: list[str], n: int) -> RowOf:
        """``row_of`` with ``new_ids`` at rows ``n, n + 1, ...`` (ids not in it yet)."""
        base, more = (row_of.base, row_of.more) if isinstance(row_of, RowOf) else (row_of, {})
        if len(more) + len(new_ids) > cls.MORE:
            base, more = {**base, **more}, {}
        more = {**more, **dict(zip(new_ids, range(n, n + len(new_ids))))}
        return cls(base, more)

    def __getitem__(self, key: str) -> int:
        got = self.more.get(key)
        return self.base[key] if got is None else got

    def get(self, key: str, default: Any = None) -> Any:
        got = self.more.get(key)
        return self.base.get(key, default) if got is None else got

    def __contains__(self, key: object) -> bool:
        return key in self.more or key in self.base

    def __len__(self) -> int:
        return len(self.base) + len(self.more)

    def __iter__(self) -> Iterator[str]:
        yield from self.base
        yield from self.more


def _empty_snapshot() -> _Snapshot:
    return _Snapshot(
        [], None, np.zeros((4, 0)), np.zeros(0, np.int32), np.zeros(1, np.int64), 0, None
    )


def _as_matrix(v: Any, dim: int | None, field: str) -> np.ndarray:
    try:
        mat = np.asarray(v, dtype=np.float32)
    except (TypeError, ValueError):
        raise InvalidInput(f"{field} could not be read as numbers; give a float array.") from None
    if mat.ndim == 1:
        mat = mat[None, :]
    if mat.ndim != 2 or mat.shape[1] == 0:
        raise InvalidInput(f"{field} has shape {mat.shape}; expected (n, dim) or (dim,).")
    if dim is not None and mat.shape[1] != dim:
        raise InvalidInput(
            f"{field} has width {mat.shape[1]} but the index uses {dim}-dimensional vectors; "
            "embed with the same model or build a new index."
        )
    if not np.isfinite(mat).all():
        row = int(np.flatnonzero(~np.isfinite(mat).all(axis=1))[0])
        raise InvalidInput(f"{field} row {row} holds NaN or inf; vectors must be finite.")
    norms = np.linalg.norm(mat, axis=1, keepdims=True)
    if (norms == 0).any():
        row = int(np.flatnonzero(norms[:, 0] == 0)[0])
        raise InvalidInput(f"{field} row {row} is all zeros; a zero vector has no direction for cosine similarity.")
    return np.ascontiguousarray(mat / norms, dtype=np.float32)


def _concat_vectors(
    base: np.ndarray | None, new: np.ndarray | None, n_base: int, dim: int | None,
    bufs: dict[str, _Buffer] | None = None,
) -> np.ndarray | None:
    if new is None:
        return base
    if base is None:
        if n_base:
            raise InvalidInput("the index holds documents without vectors; vectors must be given for all or none.")
        return np.ascontiguousarray(new)
    if bufs is not None:
        return _extend(bufs, "vectors", base, new)
    return np.ascontiguousarray(np.concatenate([base, new], axis=0))


class _Buffer:
    """Spare capacity behind one array of the newest snapshot: the snapshot's array is
    ``array[:used]`` (along the growth axis); the rows after it are free."""

    __slots__ = ("array", "used")

    def __init__(self, array: np.ndarray, used: int) -> None:
        self.array = array
        self.used = used


def _extend(bufs: dict[str, _Buffer], name: str, base: np.ndarray, new: np.ndarray, axis: int = 0) -> np.ndarray:
    """``np.concatenate([base, new], axis)`` in amortised O(len(new)): written into the
    spare room of ``bufs[name]`` when ``base`` is the newest view of that buffer, else
    copied once into a buffer of twice the size. ``base`` itself never changes (an older
    snapshot's view ends where it ended), so readers of older snapshots are unaffected."""
    n, k = base.shape[axis], new.shape[axis]
    buf = bufs.get(name)
    sl: list[slice] = [slice(None)] * base.ndim
    if (
        buf is None or buf.used != n or buf.array.shape[axis] < n + k or buf.array.dtype != base.dtype
        or base.ctypes.data != buf.array.ctypes.data
    ):
        shape = list(base.shape)
        shape[axis] = max(2 * (n + k), 16)
        arr = np.empty(shape, dtype=base.dtype)
        sl[axis] = slice(0, n)
        arr[tuple(sl)] = base
        buf = _Buffer(arr, n)
    sl[axis] = slice(n, n + k)
    buf.array[tuple(sl)] = new
    buf.used = n + k
    bufs[name] = buf
    sl[axis] = slice(0, n + k)
    return buf.array[tuple(sl)]


def _postings(
    m: Bm25Matrix | Bm25Postings, term_ids: np.ndarray, term_ptr: np.ndarray, n_terms: int, k1: float, b: float,
    tf: np.ndarray | None = None,
) -> Bm25Postings:
    """Postings for a snapshot's built matrix: solved from its scores when that is exact
    (no pass over the documents), else counted from the term ids (one sort)."""
    if isinstance(m, Bm25Matrix):
        post = Bm25Postings.from_matrix(m, doc_lengths(term_ptr, tf), k1=k1, b=b)
        if post is not None:
            return post
    return Bm25Postings.build(term_ids, term_ptr, n_terms, k1=k1, b=b, tf=tf)


def _counts(tf: np.ndarray | None, term_ids: np.ndarray) -> np.ndarray:
    """``tf``, or the all-ones counts it stands for."""
    return np.ones(term_ids.shape[0], dtype=np.int32) if tf is None else np.asarray(tf, dtype=np.int32)


def _lead_terms(term_ids: np.ndarray, term_ptr: np.ndarray, lead_len: np.ndarray, tokens: int) -> tuple[np.ndarray, np.ndarray]:
    """Each document's lead as flat term ids + offsets: its first ``min(len, lead_len, tokens)`` terms."""
    keep = np.minimum(np.minimum(np.diff(term_ptr), lead_len), tokens)
    ptr = np.zeros(keep.shape[0] + 1, dtype=np.int64)
    np.cumsum(keep, out=ptr[1:])
    pos = np.arange(int(ptr[-1]), dtype=np.int64) - np.repeat(ptr[:-1], keep)
    return term_ids[np.repeat(term_ptr[:-1], keep) + pos], ptr


def title_codes(sums: np.ndarray, has: np.ndarray) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray]]:
    """A code per document, equal for documents whose leads are equal (-1: no lead), and the
    index ``(distinct hashes sorted, their codes)`` that :func:`_more_title_codes` extends."""
    out = np.full(sums.shape[0], -1, dtype=np.int64)
    uniq = np.zeros(0, dtype=sums.dtype)
    if has.any():
        uniq, codes = np.unique(sums[has], return_inverse=True)
        out[has] = codes.reshape(-1)
    return out, (uniq, np.arange(uniq.shape[0], dtype=np.int64))


def _more_title_codes(
    index: tuple[np.ndarray, np.ndarray], sums: np.ndarray, has: np.ndarray,
) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray]]:
    """The codes of appended documents' leads (an existing lead keeps its code, a new one
    takes the next free code) and the index extended with the new leads."""
    uniq, ucodes = index
    out = np.full(sums.shape[0], -1, dtype=np.int64)
    if not has.any():
        return out, index
    s = sums[has]
    pos = np.searchsorted(uniq, s)
    found = np.zeros(s.shape[0], dtype=bool)
    if uniq.size:
        found = uniq[np.minimum(pos, uniq.size - 1)] == s
    got = np.full(s.shape[0], -1, dtype=np.int64)
    got[found] = ucodes[pos[found]]
    if not found.all():
        new, inv = np.unique(s[~found], return_inverse=True)
        start = int(ucodes.max()) + 1 if ucodes.size else 0
        got[~found] = start + inv.reshape(-1)
        at = np.searchsorted(uniq, new)
        uniq = np.insert(uniq, at, new)
        ucodes = np.insert(ucodes, at, start + np.arange(new.shape[0], dtype=np.int64))
    out[has] = got
    return out, (uniq, ucodes)


def _lead_sums(term_ids: np.ndarray, term_ptr: np.ndarray, lead_len: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each document's lead hash (uint64) and whether it has a lead; a document's hash
    depends on its own terms only, so an append hashes the new documents alone."""
    n = term_ptr.shape[0] - 1
    keep = np.minimum(np.diff(term_ptr), lead_len).astype(np.int64)
    out = np.zeros(n, dtype=np.uint64)
    if n == 0 or not keep.any():
        return out, keep > 0
    ptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(keep, out=ptr[1:])
    pos = np.arange(int(ptr[-1]), dtype=np.int64) - np.repeat(ptr[:-1], keep)
    ids = term_ids[np.repeat(term_ptr[:-1], keep) + pos].astype(np.uint64)
    mult = np.random.default_rng(16).integers(1, 2**63, size=int(keep.max()), dtype=np.uint64) | np.uint64(1)
    with np.errstate(over="ignore"):
        h = (ids + np.uint64(1)) * mult[pos]
        sums = np.add.reduceat(h, ptr[:-1][keep > 0]) + keep[keep > 0].astype(np.uint64)
    has = keep > 0
    out[has] = sums
    return out, has


def _decay_times(times: np.ndarray, field: str) -> np.ndarray:
    date, updated, valid_from = times[0], times[1], times[2]
    if field == "date":
        return date
    if field == "updated":
        return np.where(np.isnan(updated), date, updated)
    if field == "valid_from":
        return np.where(np.isnan(valid_from), date, valid_from)
    return np.where(np.isnan(date), updated, date)  # auto; apply_temporal prefers valid_from
