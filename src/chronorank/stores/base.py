"""The ``Store`` protocol and what every server-side adapter shares.

A store keeps documents in an engine (Qdrant, PostgreSQL + pgvector) and scores them
*there*: the query's intent, the kernel, validity and the fusion of similarity with decay
are compiled (:mod:`chronorank.stores.compile`) into one expression the engine evaluates
over a candidate pool built from several **lanes**:

- ``dense``: the nearest neighbours of the query vector;
- ``keyword``: the best BM25 matches (client-side analyzer, sparse vectors);
- ``windows``: the nearest neighbours *among documents from the last N days* before the
  reference time (one lane per window);
- ``newest``: the N newest documents valid at the reference time.

So a fresh document that sits at similarity rank 500 still reaches the scorer through a
time lane, which one similarity top-k would never give it.

Scoring, per candidate (``T`` = reference time, ``s`` = effective strength)::

    sim    = (w_d * clip(cos, 0, 1) + w_k * bm25 / max_bm25 + w_l * lead / max_lead)
             / (w_d + w_k + w_l)                                              # "blend"
    weight = kernel(age) ...  expired: x expired_factor;  not yet valid: 0;  undated: fill
    score  = sim * (1 - s + s * weight)                                       # gated_multiply

where ``lead`` is BM25 over each document's first sentence or line (``lead_tokens`` terms
at most), its query terms weighted by the body's idf as the index does, and a keyword or lead
signal that no candidate matches leaves the total (the index's ``_fuse``). That is what
:func:`chronorank.temporal.apply_temporal` computes for the same similarity (tests hold both
to 1e-6). Differences from the embedded index, all explicit:

- an undated document gets a *constant* weight: 1 for ``missing_date='keep'``, the kernel's
  floor for ``'penalise'``, and ``missing_weight`` (default 0.5) for ``'neutral'`` (the
  index uses the median over every document, which no engine can compute inside one
  expression); ``'drop'`` becomes a filter. ``fallback='client'`` reproduces the index exactly
  over the pool.
- ``relative_recency``, ``topical_margin`` and the ``linear``/``rrf`` combine strategies compare
  candidates with each other; they raise InvalidInput unless ``fallback='client'`` (a store
  built without naming the first two turns them off, unlike the index's defaults).
- version chains (``group_key``) are not derived by the stores: give ``valid_to`` explicitly.
- BM25 length statistics (``avgdl`` of the body and of the lead) are fixed when the table or
  collection is created, from the first batch; the index recomputes them after every write.
"""

from __future__ import annotations

import dataclasses
import math
import uuid
import zlib
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np

from chronorank.errors import InvalidInput
from chronorank.fusion.strategies import STRATEGIES
from chronorank.index.bm25 import BM25_B, BM25_K1
from chronorank.index.config import IndexConfig
from chronorank.index.lead import lead_lengths
from chronorank.index.records import check_storable
from chronorank.index.text import analyze_many, query_weights
from chronorank.intent import parse as parse_intent
from chronorank.stores import compile as cx
from chronorank.temporal import (
    BAND_AT_END_SPLIT,
    BAND_WEIGHTS,
    TemporalPlan,
    apply_temporal,
    without_undated_anchor,
)
from chronorank.temporal import check_query as check_query  # re-exported: it was defined here
from chronorank.timeparse import parse_times
from chronorank.types import DAY, Intent, Ranking, format_epoch

__all__ = [
    "Lanes",
    "QueryPlan",
    "Store",
    "StoreConfig",
    "plan_query",
    "prepare_docs",
]

FALLBACKS = ("error", "client")
#: the fusion strategies an engine can evaluate (they compare no candidates)
SERVER_COMBINES = tuple(name for name, strat in STRATEGIES.items() if strat.engine)


@runtime_checkable
class Store(Protocol):
    """The surface shared by :class:`~chronorank.index.TemporalIndex` and every store."""

    def add(self, docs: Iterable[Mapping[str, Any]], vectors: Any = None) -> int: ...

    def delete(self, ids: Iterable[str] | str) -> int: ...

    def search(self, query: str, k: int = 10, now: Any = None, **kwargs: Any) -> Ranking: ...

    def __len__(self) -> int: ...


# ---------------------------------------------------------------------- configuration


@dataclass(frozen=True)
class Lanes:
    """Candidate lanes: how many documents each brings to the server-side scorer.

    ``windows`` are (days, limit) pairs: the ``limit`` nearest documents dated within
    ``days`` before the reference time. ``edge`` is the fraction of a lane's limit past which
    a hit counts as coming from the lane's edge (the truncated-pool diagnostic).
    """

    dense: int = 100
    keyword: int = 100
    windows: tuple[tuple[float, int], ...] = ((30.0, 50), (180.0, 50))
    newest: int = 50
    edge: float = 0.9

    def __post_init__(self) -> None:
        for name in ("dense", "keyword", "newest"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                raise InvalidInput(f"Lanes.{name}={v!r}; give a whole number >= 0 (0 turns the lane off), e.g. 100.")
        wins = []
        for w in self.windows:
            if not (isinstance(w, (tuple, list)) and len(w) == 2):
                raise InvalidInput(f"Lanes.windows item {w!r}; give (days, limit) pairs, e.g. ((30, 50), (180, 50)).")
            days, limit = float(w[0]), int(w[1])
            if not (days > 0 and math.isfinite(days)) or limit < 1:
                raise InvalidInput(f"Lanes.windows item {w!r}; days must be > 0 and limit >= 1, e.g. (30, 50).")
            wins.append((days, limit))
        object.__setattr__(self, "windows", tuple(wins))
        if not 0.0 < self.edge <= 1.0:
            raise InvalidInput(f"Lanes.edge={self.edge!r}; give a fraction in (0, 1], e.g. 0.9.")
        if self.dense == 0 and self.keyword == 0 and not self.windows and self.newest == 0:
            raise InvalidInput("every lane is off; set Lanes(dense=100) or another lane above 0.")

    @classmethod
    def plain(cls, limit: int = 100) -> Lanes:
        """One similarity top-``limit`` lane, no time lanes: the usual prefetch + decay."""
        return cls(dense=limit, keyword=0, windows=(), newest=0)

    def named(self) -> list[tuple[str, int]]:
        out = [("dense", self.dense), ("keyword", self.keyword)]
        out += [(f"last_{days:g}d", limit) for days, limit in self.windows]
        out.append(("newest", self.newest))
        return [(n, lim) for n, lim in out if lim > 0]

    def total(self) -> int:
        return sum(lim for _, lim in self.named())


@dataclass(frozen=True)
class StoreConfig:
    """Everything a store needs to score: the index configuration (fusion weights +
    temporal settings, see :class:`chronorank.index.IndexConfig`), the lanes, the undated
    fill weight and the fallback policy."""

    index: Any = None
    lanes: Lanes = field(default_factory=Lanes)
    missing_weight: float = 0.5
    fallback: str = "error"
    # whether the caller named lead_weight (a spec string or a per-query override) rather than
    # taking the default: an old collection without lead vectors then raises instead of
    # searching without the lead
    lead_named: bool = field(default=False, compare=False)

    def __post_init__(self) -> None:
        raw = self.index
        if isinstance(raw, str) and "lead_weight" in raw:
            object.__setattr__(self, "lead_named", True)
        idx = IndexConfig.from_spec(raw)
        if not isinstance(raw, IndexConfig):
            # the index's defaults for these compare candidates with each other (a competitive
            # anchor, a margin below the best similarity); no engine evaluates that inside one
            # expression, so the stores default them off unless the spec names them
            if "relative_recency" not in str(raw or ""):
                idx = idx.replace(relative_recency=None)
            if getattr(idx, "topical_margin", None) is not None and "topical_margin" not in str(raw or ""):
                idx = idx.replace(topical_margin=None)
        object.__setattr__(self, "index", idx)
        if self.fallback not in FALLBACKS:
            raise InvalidInput(f"fallback={self.fallback!r}; use 'error' (default) or 'client'.")
        if not (isinstance(self.missing_weight, (int, float)) and 0.0 <= self.missing_weight <= 1.0):
            raise InvalidInput(f"missing_weight={self.missing_weight!r}; give a weight in [0, 1], e.g. 0.5.")
        if not isinstance(self.lanes, Lanes):
            raise InvalidInput(f"lanes={self.lanes!r}; give a chronorank.stores.Lanes(...).")
        if getattr(self.index, "topical_margin", None) is not None and self.fallback != "client":
            raise InvalidInput(
                f"topical_margin={self.index.topical_margin:g} rescales similarity by the best candidate's "
                "and cannot run inside the engine yet; use topical_margin=None (the stores' default) or "
                "fallback='client'."
            )
        if getattr(self.index, "dense_scale", "raw") != "raw":
            raise InvalidInput(
                "dense_scale='max' is an embedded-index option that the engines do not compute yet; "
                "use dense_scale='raw' for a store."
            )
        if self.index.fusion != "blend" and self.fallback != "client":
            raise InvalidInput(
                f"fusion={self.index.fusion!r} ranks over the whole candidate set and cannot run inside "
                "the engine; use fusion='blend' or fallback='client'."
            )

    @classmethod
    def coerce(cls, config: Any, lanes: Lanes | None, missing_weight: float, fallback: str) -> StoreConfig:
        """A StoreConfig as given, or one built from an index config/spec and the store's options."""
        if isinstance(config, StoreConfig):
            return config
        return cls(index=config, lanes=lanes or Lanes(), missing_weight=missing_weight, fallback=fallback)

    def replace(self, **changes: Any) -> StoreConfig:
        own = {"lanes", "missing_weight", "fallback"}
        mine = {k: v for k, v in changes.items() if k in own}
        rest = {k: v for k, v in changes.items() if k not in own}
        idx = self.index.replace(**rest) if rest else self.index
        named = self.lead_named or "lead_weight" in rest
        return dataclasses.replace(self, index=idx, lead_named=named, **mine)


# ---------------------------------------------------------------------- documents


@dataclass
class PreparedDocs:
    """A batch of documents, validated and split into columns."""

    ids: list[str]
    texts: list[str]
    records: list[dict[str, Any]]
    start: np.ndarray  # epoch s, NaN = undated
    end: np.ndarray  # epoch s, NaN = open
    vectors: np.ndarray | None  # float32 (n, d), L2-normalised
    terms: list[Counter[int]]  # hashed BM25 term counts
    lengths: np.ndarray  # terms per document
    lead_terms: list[Counter[int]] = field(default_factory=list)  # the same over each lead
    lead_lengths: np.ndarray = field(default_factory=lambda: np.zeros(0))  # terms per lead


_RESERVED = ("id", "text", "date", "updated", "valid_from", "valid_to", "metadata", "vector")


def prepare_docs(
    docs: Iterable[Mapping[str, Any]],
    vectors: Any,
    *,
    embedder: Any,
    dim: int | None,
    bad_dates: str,
    need_terms: bool,
    lead_tokens: int = 12,
) -> PreparedDocs:
    """Validate a batch the way the embedded index does (ids, text, dates, vectors)."""
    docs = list(docs)
    records: list[dict[str, Any]] = []
    seen: dict[str, int] = {}
    for i, d in enumerate(docs):
        if not isinstance(d, Mapping):
            raise InvalidInput(f"docs[{i}] is a {type(d).__name__}; every document must be a dict with 'id' and 'text'.")
        did = d.get("id")
        if did is None or isinstance(did, bool) or not isinstance(did, (str, int)) or str(did) == "":
            raise InvalidInput(f"docs[{i}]: id={did!r}; every document needs a non-empty string id.")
        text = d.get("text")
        if not isinstance(text, str):
            raise InvalidInput(f"docs[{i}] (id={did!r}): text={text!r}; 'text' must be a string (an empty string is allowed).")
        sid = str(did)
        if sid in seen:
            raise InvalidInput(
                f"docs[{i}] repeats id={sid!r} (first at docs[{seen[sid]}]); one batch must not hold the "
                "same id twice -- keep the version you want, or call add() twice."
            )
        seen[sid] = i
        meta = {k: v for k, v in d.items() if k not in _RESERVED}
        nested = d.get("metadata")
        if nested is not None:
            if not isinstance(nested, Mapping):
                raise InvalidInput(f"docs[{i}] (id={did!r}): metadata={nested!r}; it must be a dict.")
            meta.update(nested)
        where = f"docs[{i}] (id={did!r})"
        for name, value in (("id", sid), ("text", text), ("metadata", meta)):  # as the index checks them
            check_storable(value, f"{where}: {name}", 0)
        rec: dict[str, Any] = {"id": sid, "text": text, "metadata": _jsonable(meta)}
        for name in ("date", "updated", "valid_from", "valid_to"):
            v: Any = d.get(name)
            rec[name] = v.isoformat() if hasattr(v, "isoformat") else v
            check_storable(rec[name], f"{where}: {name}", 0)
        records.append(rec)
    n = len(records)
    cols = {name: _parse_col(records, name, bad_dates) for name in ("date", "updated", "valid_from", "valid_to")}
    t = np.where(np.isnan(cols["date"]), cols["updated"], cols["date"])
    start = np.where(np.isnan(cols["valid_from"]), t, cols["valid_from"])
    end = cols["valid_to"]
    vecs = _vectors(docs, records, vectors, embedder, dim)
    terms: list[Counter[int]] = []
    lengths = np.zeros(n, dtype=np.float64)
    lead_terms: list[Counter[int]] = []
    lead_len = np.zeros(n, dtype=np.float64)
    if need_terms and n:
        terms, lengths, lead_terms, lead_len = analyze_docs([r["text"] for r in records], lead_tokens)
    return PreparedDocs(
        ids=[r["id"] for r in records], texts=[r["text"] for r in records], records=records,
        start=start, end=end, vectors=vecs, terms=terms, lengths=lengths,
        lead_terms=lead_terms, lead_lengths=lead_len,
    )


def analyze_docs(
    texts: Sequence[str], lead_tokens: int
) -> tuple[list[Counter[int]], np.ndarray, list[Counter[int]], np.ndarray]:
    """Hashed term counts and lengths of each text and of its lead, as the index cuts it: the
    first ``min(terms, terms in the first sentence or line, lead_tokens)`` terms."""
    n = len(texts)
    heads = lead_lengths(texts)
    terms: list[Counter[int]] = []
    lead_terms: list[Counter[int]] = []
    lengths = np.zeros(n, dtype=np.float64)
    lead_len = np.zeros(n, dtype=np.float64)
    for i, toks in enumerate(analyze_many(texts, prefixes=True)):
        ids = [term_id(tk) for tk in toks]
        keep = min(len(ids), int(heads[i]), int(lead_tokens))
        terms.append(Counter(ids))
        lead_terms.append(Counter(ids[:keep]))
        lengths[i], lead_len[i] = len(ids), keep
    return terms, lengths, lead_terms, lead_len


COLUMN_ROLES = ("id", "text", "date", "embedding", "metadata")


def column_roles(columns: Mapping[str, str] | None, required: Sequence[str], example: str) -> dict[str, str] | None:
    """A store's ``columns=`` mapping (a table or collection chronorank did not create), its
    roles checked: only known ones, the ``required`` ones present. Names are checked by the store."""
    if columns is None:
        return None
    if not isinstance(columns, Mapping):
        raise InvalidInput(f"columns={columns!r}; give a dict such as {example}.")
    unknown = [k for k in columns if k not in COLUMN_ROLES]
    if unknown:
        raise InvalidInput(f"columns= has unknown role(s) {unknown}; use {list(COLUMN_ROLES)}.")
    need = [k for k in required if k not in columns]
    if need:
        raise InvalidInput(f"columns= lacks {need}; {', '.join(required)} required, e.g. {example}.")
    return dict(columns)


def _jsonable(x: Any) -> Any:
    if isinstance(x, Mapping):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    if hasattr(x, "isoformat"):
        return str(x.isoformat())
    if isinstance(x, float) and not math.isfinite(x):
        return None
    if isinstance(x, np.generic):
        return x.item()
    return x


def _parse_col(records: list[dict[str, Any]], name: str, bad_dates: str) -> np.ndarray:
    raw = [r.get(name) for r in records]
    if not raw:
        return np.zeros(0)
    vals = np.asarray(parse_times(raw), dtype=np.float64)
    for i in np.flatnonzero(np.isnan(vals)).tolist():
        x = raw[i]
        present = x is not None and not (isinstance(x, float) and math.isnan(x)) and not (isinstance(x, str) and not x.strip())
        if present and bad_dates == "raise":
            raise InvalidInput(
                f"document id={records[i]['id']!r}: {name}={x!r} is not a date chronorank can read; fix it "
                "(e.g. '2024-08-27'), remove it, or pass bad_dates='missing' to store it as undated."
            )
    return vals


def _vectors(docs: list[Any], records: list[dict[str, Any]], vectors: Any, embedder: Any, dim: int | None) -> np.ndarray | None:
    n = len(records)
    if n == 0:
        return None
    given: dict[int, np.ndarray] = {}
    if vectors is not None:
        mat = as_matrix(vectors, dim, "vectors")
        if mat.shape[0] != n:
            raise InvalidInput(f"vectors has {mat.shape[0]} rows for {n} docs; pass one row per document, in order.")
        given = {i: mat[i] for i in range(n)}
        dim = mat.shape[1]
    for i, d in enumerate(docs):
        v = d.get("vector")
        if v is not None:
            if i in given:
                raise InvalidInput(f"docs[{i}] (id={records[i]['id']!r}) has a 'vector' key and a row in vectors=; give one.")
            given[i] = as_matrix(v, dim, f"docs[{i}].vector")[0]
            dim = given[i].shape[0]
    todo = [i for i in range(n) if i not in given]
    if todo and embedder is None:
        raise InvalidInput(
            f"docs[{todo[0]}] (id={records[todo[0]]['id']!r}) has no vector and the store has no embedder; "
            "give every document a 'vector' (or vectors=...), or create the store with embedder=..."
        )
    if todo:
        emb = np.asarray(embedder.embed([records[i]["text"] for i in todo]), dtype=np.float32)
        if dim is not None and emb.shape[1] != dim:
            raise InvalidInput(f"embedder {embedder.name!r} gives width {emb.shape[1]} but the store uses {dim}.")
        dim = emb.shape[1]
        for j, i in enumerate(todo):
            given[i] = emb[j]
    out = np.stack([given[i] for i in range(n)]).astype(np.float32)
    return as_matrix(out, dim, "vectors")


def as_matrix(v: Any, dim: int | None, name: str) -> np.ndarray:
    """Rows as contiguous float32, L2-normalised; InvalidInput on width, NaN or zero rows."""
    try:
        mat = np.asarray(v, dtype=np.float32)
    except (TypeError, ValueError):
        raise InvalidInput(f"{name} could not be read as numbers; give a float array.") from None
    if mat.ndim == 1:
        mat = mat[None, :]
    if mat.ndim != 2 or mat.shape[1] == 0:
        raise InvalidInput(f"{name} has shape {mat.shape}; expected (n, dim) or (dim,).")
    if dim is not None and mat.shape[1] != dim:
        raise InvalidInput(
            f"{name} has width {mat.shape[1]} but the store uses {dim}-dimensional vectors; "
            "embed with the same model or use a new collection/table."
        )
    if not np.isfinite(mat).all():
        raise InvalidInput(f"{name} holds NaN or inf; vectors must be finite.")
    norms = np.linalg.norm(mat, axis=1, keepdims=True)
    if (norms == 0).any():
        raise InvalidInput(f"{name} has an all-zero row; a zero vector has no direction for cosine similarity.")
    return np.ascontiguousarray(mat / norms, dtype=np.float32)


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


def lead_query_weights(terms: Mapping[int, float], df: Mapping[int, int], n_docs: int) -> dict[int, float]:
    """The lead field's query weights, BM25F-style as the index weighs them:
    ``count x idf_body / idf_lead`` on lead values that carry ``idf_lead``. The stores keep the
    lead's values tf-normalised only (``bm25_doc_values``), so ``idf_lead`` cancels and the
    weight is ``count x idf_body`` (no lead document frequencies needed). Terms no document
    holds are left out, as the index leaves out terms outside its vocabulary.
    """
    return {t: w * bm25_idf(n_docs, int(df[t])) for t, w in terms.items() if int(df.get(t, 0)) > 0}


def point_id(doc_id: str) -> str:
    """Qdrant point id for a chronorank id (UUID5, stable across runs)."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, "chronorank:" + doc_id))


# ---------------------------------------------------------------------- query planning


@dataclass(frozen=True)
class QueryPlan:
    """One query's temporal setting, resolved: what the engine filters and scores.

    ``temporal`` is the query's :class:`chronorank.temporal.TemporalPlan`; ``now``, ``mode``,
    ``ref``, ``strength``, ``target``, ``half_open`` and ``config`` read from it."""

    intent: Intent
    temporal: TemporalPlan
    exclude_future: bool  # documents starting after T are filtered out
    drop_undated: bool
    fill: float  # weight of undated documents
    weight: cx.Expr  # inputs: start, end
    dense_w: float
    keyword_w: float
    client: bool  # fallback='client' scoring
    anchor: float = math.nan  # ages are counted from here (T)
    margin: tuple[float | None, float] = (None, 0.0)  # topical_margin, tie_break (client scoring)
    idf_power: float = 0.0  # query terms weigh count x idf**idf_power on top of BM25's idf
    lead_w: float = 0.0  # the lead's weight after the index's share rule (0: off)
    lead_tokens: int = 12  # the lead's length cap the stored values must have been built with

    @property
    def now(self) -> float:
        return self.temporal.now

    @property
    def mode(self) -> str:
        return self.temporal.mode

    @property
    def ref(self) -> float:
        """The reference time T."""
        return self.temporal.reference_time

    @property
    def strength(self) -> float:
        """The effective strength."""
        return self.temporal.strength

    @property
    def target(self) -> tuple[float, float] | None:
        """A range intent's period, else None."""
        return self.temporal.range

    @property
    def half_open(self) -> bool:
        """An as-of target [start, end): a document starting at T is future too."""
        return self.temporal.half_open

    @property
    def config(self) -> Any:
        """The TemporalConfig."""
        return self.temporal.config

    def is_future(self, start: float) -> bool:
        return self.exclude_future and (start >= self.ref if self.half_open else start > self.ref)

    def window(self, days: float) -> tuple[float, float]:
        """The [lo, hi] epoch interval of a time lane: ``days`` before T, or the range target."""
        if self.mode == "range" and self.target is not None:
            lo, hi = self.target
            return (lo if math.isfinite(lo) else self.ref - days * DAY, hi if math.isfinite(hi) else self.ref)
        return self.ref - days * DAY, self.ref

    def newest_bound(self) -> float:
        """Newest-N lane: documents starting at or before this time."""
        if self.mode == "range" and self.target is not None and math.isfinite(self.target[1]):
            return self.target[1]
        return self.ref

    def score_expr(self, max_bm25: float, max_lead: float = 0.0, *, pooled: bool = False) -> cx.Expr:
        """The fused score over inputs ``cos``, ``bm25``, ``lead``, ``start``, ``end``."""
        sim = self.sim_expr(max_bm25, max_lead, pooled=pooled)
        # pooled: sim is >= 0 by construction (cos clipped to [0, 1], maxima-normalised BM25 and
        # lead, positive weights), so the negative branch is 0 and sim is written once
        return combine_expr(sim, self.weight, self.config.combine, self.strength, nonneg=pooled)

    def sim_weights(self, max_bm25: float, max_lead: float) -> tuple[float, float, float]:
        """(w_d, w_k, w_l) as the index's ``_fuse`` counts them: a keyword or lead signal that
        no candidate matches (its maximum is 0) leaves the total."""
        wk = self.keyword_w if self.keyword_w > 0 and max_bm25 > 0 else 0.0
        wl = self.lead_w if self.lead_w > 0 and max_lead > 0 else 0.0
        return self.dense_w, wk, wl

    def sim_expr(self, max_bm25: float, max_lead: float = 0.0, *, pooled: bool = False) -> cx.Expr:
        """``(w_d clip(cos, 0, 1) + w_k bm25 / max_bm25 + w_l lead / max_lead) / total``.

        ``pooled=True``: the engine normalises by its own pool maxima -- the inputs ``bm25``
        and ``lead`` arrive divided by them, ``bm25_on``/``lead_on`` are 1 where that maximum
        is above 0, and the total is summed from them in the expression.
        """
        cos = cx.clamp(cx.Var("cos", 0.0), 0.0, 1.0)
        if pooled:
            num: list[cx.Expr | float] = []
            den: list[cx.Expr | float] = []
            for w, x, on in ((self.dense_w, cos, None), (self.keyword_w, cx.Var("bm25", 0.0), "bm25_on"),
                             (self.lead_w, cx.Var("lead", 0.0), "lead_on")):
                if w > 0:
                    num.append(cx.mul(w, x))
                    den.append(w if on is None else cx.mul(w, cx.Var(on, 0.0)))
            if not num:
                return cx.Const(0.0)
            return cx.div(cx.add(*num), cx.maximum(cx.add(*den), 1e-12))
        wd, wk, wl = self.sim_weights(max_bm25, max_lead)
        total = wd + wk + wl
        parts: list[cx.Expr | float] = []
        if wd > 0:
            parts.append(cx.mul(wd / total, cos))
        if wk > 0:
            parts.append(cx.mul(wk / total / max_bm25, cx.Var("bm25", 0.0)))
        if wl > 0:
            parts.append(cx.mul(wl / total / max_lead, cx.Var("lead", 0.0)))
        if not parts:
            return cx.Const(0.0)
        return cx._e(parts[0]) if len(parts) == 1 else cx.add(*parts)

    def weights(self, start: np.ndarray, end: np.ndarray) -> np.ndarray:
        """The decay weight numpy evaluates from the same expression the engine runs."""
        w = cx.evaluate(cx.lower(self.weight), {"start": start, "end": end})
        return np.broadcast_to(w, start.shape).astype(np.float64)

    def ages(self, start: np.ndarray, end: np.ndarray) -> np.ndarray:
        """Ages shown in explanations: days before T (expired: since the end), as the index shows."""
        with np.errstate(invalid="ignore"):
            if self.mode == "range" and self.target is not None:
                return (self.ref - start) / DAY
            expired = ~np.isnan(end) & (end <= self.ref) & ~np.isnan(start)
            base = np.where(expired, end, start)
            return (self.ref - base) / DAY


def combine_expr(sim: cx.Expr, weight: cx.Expr, strategy: str, strength: float, nonneg: bool = False) -> cx.Expr:
    """The fusion strategy's own expression (:mod:`chronorank.fusion`) over the engine's
    similarity and weight: gated_multiply f = 1 - s + s*w, multiply f = w**s, negatives scaled by
    (2 - f). ``nonneg``: the caller guarantees sim >= 0, so the score is sim * f (the same numbers)."""
    strat = STRATEGIES.get(strategy)
    if strat is None or not strat.engine:
        raise InvalidInput(
            f"combine={strategy!r} needs statistics over every candidate and cannot run inside the "
            f"engine; use one of {list(SERVER_COMBINES)} or fallback='client'."
        )
    return strat.expr(sim, weight, strength, nonneg=nonneg)


def plan_query(intent: Intent, now: float, cfg: StoreConfig) -> QueryPlan:
    """Resolve intent + configuration into filters and the compiled weight expression: the
    query's :class:`chronorank.temporal.TemporalPlan` (reference time, target, strength,
    range scale, future handling, undated fill) written as what the engine evaluates."""
    tcfg = cfg.index.temporal_config()
    tp = TemporalPlan.of(intent, now, tcfg)
    client = cfg.fallback == "client"
    mode = tp.mode
    if not client:
        if tcfg.relative_recency is not None and mode in ("recent", "as_of"):
            raise InvalidInput(
                f"relative_recency={tcfg.relative_recency:g} compares every candidate with every other "
                "and cannot run inside the engine; set relative_recency=None (the stores' default) or "
                "pass fallback='client' to apply it to the lanes' pool."
            )
        if tcfg.combine not in SERVER_COMBINES:
            combine_expr(cx.Const(0.0), cx.Const(1.0), tcfg.combine, 1.0)  # raises the message
        if tcfg.missing_date == "raise":
            raise InvalidInput(
                "missing_date='raise' cannot be checked inside the engine; choose 'keep', 'neutral', "
                "'penalise' or 'drop', or pass fallback='client'."
            )
    kernel = tcfg.kernel
    if not client:
        cx.kernel_expr(kernel, cx.Const(0.0))  # raises InvalidInput for kernels without a closed form
    start, end = cx.Var("start", now), cx.Var("end", now)
    undated = cx.Cond("start", "empty")
    rng = tp.range
    exclude_future = False
    half_open = False
    anc = math.nan
    ref = tp.reference_time
    if rng is not None:
        lo = rng[0]
        # a bounded range rescales the kernel's half-life to range_scale x its length
        factor = 1.0 / DAY * tp.age_factor(kernel)
        dated = _in_force_expr(kernel, start, end, lo, ref, factor, float(tcfg.range_slope), client)
    else:
        half_open = tp.half_open
        symmetric = tp.symmetric
        anc = ref

        def age_of(t: cx.Expr) -> cx.Expr:
            raw = cx.mul(1.0 / DAY, cx.add(anc, cx.neg(t)))
            if symmetric:  # future documents: distance from T, as apply_temporal does
                fut = cx.Cond("start", "gt", ref)
                away = cx.mul(1.0 / DAY, cx.add(t, -ref))
                return cx.add(cx.mul(cx.one_minus(fut), cx.maximum(raw, 0.0)), cx.mul(fut, away))
            return cx.maximum(raw, 0.0)

        expired = cx.Cond("end", "le", ref)
        dated = cx.add(
            cx.mul(cx.one_minus(expired), _kernel(kernel, age_of(start), client)),
            cx.mul(expired, float(tcfg.expired_factor), _kernel(kernel, age_of(end), client)),
        )
        if tp.marks_not_yet_valid or tp.excludes_future:
            # future='auto' at a past reference time: what was written later did not exist yet
            exclude_future = True
            # an as-of target is half-open: a document starting at its end is not yet valid
            dated = cx.mul(cx.one_minus(cx.Cond("start", "ge" if half_open else "gt", ref)), dated)
    md = tcfg.missing_date
    fill = tp.undated_fill(neutral=cfg.missing_weight)
    weight = cx.add(cx.mul(cx.one_minus(undated), dated), cx.mul(fill, undated))
    return QueryPlan(
        intent=intent, temporal=tp,
        exclude_future=exclude_future, drop_undated=md == "drop", fill=fill, weight=weight,
        dense_w=float(cfg.index.dense_weight), keyword_w=float(cfg.index.keyword_weight),
        client=client, anchor=anc,
        margin=(getattr(cfg.index, "topical_margin", None), float(getattr(cfg.index, "tie_break", 0.0))),
        idf_power=float(getattr(cfg.index, "idf_power", 0.0)),
        lead_w=lead_share(cfg.index), lead_tokens=int(getattr(cfg.index, "lead_tokens", 12)),
    )


def _in_force_expr(
    kernel: Any, start: cx.Expr, end: cx.Expr, lo: float, ref: float, factor: float, slope: float, client: bool
) -> cx.Expr:
    """The four in-force bands of :func:`chronorank.temporal._in_force_range`, as one expression.

    Band weight = base + width x kernel(age x factor); for a bounded period the first band is
    split into pages published inside it (1 - slope x fraction) and pages carried in.
    """
    before = cx.Cond("start", "lt", ref)
    open_or_late = cx.add(cx.Cond("end", "empty"), cx.Cond("end", "ge", ref))
    at_end = cx.mul(before, open_or_late)
    after = cx.Cond("start", "ge", ref)
    bounded = math.isfinite(lo)
    ended_early = cx.Cond("end", "lt", ref)
    inside = cx.mul(before, cx.Cond("end", "gt", lo), ended_early) if bounded else cx.mul(before, ended_early)

    def band(i: int, age: cx.Expr, base: float | None = None, width: float | None = None) -> cx.Expr:
        b, w = BAND_WEIGHTS[i]
        b = b if base is None else base
        w = w if width is None else width
        return cx.add(b, cx.mul(w, _kernel(kernel, cx.mul(factor, cx.maximum(age, 0.0)), client)))

    since_start = cx.add(ref, cx.neg(start))
    parts = [
        cx.mul(inside, band(1, cx.add(ref, cx.neg(end)))),
        cx.mul(after, band(2, cx.add(start, -ref))),
    ]
    if bounded:
        new = cx.mul(at_end, cx.Cond("start", "ge", lo))
        # carried in from before the period: in force only when a validity end says so (the
        # engine has no relative recency); an open-ended one takes the lowest band
        carried = cx.mul(before, cx.Cond("end", "ge", ref), cx.Cond("start", "lt", lo))
        unknown = cx.mul(before, cx.Cond("end", "empty"), cx.Cond("start", "lt", lo))
        parts.append(cx.mul(unknown, band(3, cx.add(lo, cx.neg(start)))))
        frac = cx.clamp(cx.mul(1.0 / (ref - lo), since_start), 0.0, 1.0) if ref > lo else cx.Const(1.0)
        parts.append(cx.mul(new, cx.add(1.0, cx.mul(-slope, frac))))
        parts.append(cx.mul(carried, band(0, since_start, width=BAND_AT_END_SPLIT - BAND_WEIGHTS[0][0])))
        parts.append(cx.mul(before, cx.Cond("end", "le", lo), band(3, cx.add(lo, cx.neg(end)))))
    else:
        parts.append(cx.mul(at_end, band(0, since_start)))
    return cx.add(*parts)


def lead_share(index_cfg: Any) -> float:
    """The lead's weight as ``_fuse`` applies it: ``lead_weight x present / full``, where
    present counts the dense and keyword weights whose signal exists. A store always has both
    (every document has a vector; BM25 runs when keyword_weight > 0), so the share is the whole
    ``lead_weight``; without BM25 there is no lead either (the index computes it with BM25)."""
    lw = float(getattr(index_cfg, "lead_weight", 0.0))
    return lw if lw > 0 and float(index_cfg.keyword_weight) > 0 else 0.0


def _kernel(kernel: Any, age: cx.Expr, client: bool) -> cx.Expr:
    if client and not cx.compiles(kernel):
        return cx.Const(1.0)  # unused: client scoring calls the kernel itself
    return cx.kernel_expr(kernel, age)


def resolve_intent(query: str, now_s: float, intent: Intent | None) -> Intent:
    """The intent a store applies: ``intent``, or the parsed one; "before the v2 change" with
    no target has time off (:func:`chronorank.temporal.without_undated_anchor`: a store cannot
    date the anchor through the corpus in one query; the index and the reranker do). The
    stores' searches get it from :func:`chronorank.temporal.prepare_query`."""
    if intent is None:
        intent = parse_intent(query, now=now_s)
    return without_undated_anchor(intent)


# ---------------------------------------------------------------------- results


@dataclass
class Candidates:
    """What an engine returned for the best hits, aligned."""

    ids: list[str]
    records: list[dict[str, Any]]
    score: np.ndarray
    cos: np.ndarray  # NaN where unknown
    bm25: np.ndarray
    start: np.ndarray
    end: np.ndarray
    lane_ranks: list[dict[str, int]] = field(default_factory=list)  # per hit: lane -> 1-based rank
    lead: np.ndarray | None = None  # lead BM25 (None: no lead signal)

    def sim_inputs(self) -> dict[str, np.ndarray]:
        lead = self.lead if self.lead is not None else np.zeros_like(self.bm25)
        return {"cos": self.cos, "bm25": self.bm25, "lead": lead}


def client_score(
    plan: QueryPlan, cand: Candidates, max_bm25: float, k: int, max_lead: float = 0.0
) -> tuple[np.ndarray, Candidates, Any]:
    """fallback='client': apply_temporal over the pool, the index's exact semantics."""
    sim = cx.evaluate(plan.sim_expr(max_bm25, max_lead), cand.sim_inputs())
    sim = np.broadcast_to(sim, cand.start.shape).astype(np.float64)
    margin, tie = plan.margin
    top = float(sim.max()) if sim.size else 0.0
    if margin is not None and top > 0 and plan.mode in ("recent", "as_of", "range") and plan.strength > 0:
        rel = sim / top  # the index's topical margin, over the pool
        sim = (1.0 - tie) * np.minimum(1.0, rel / margin) + tie * rel
    res = apply_temporal(
        sim, cand.start, plan=plan.temporal,
        valid_to=cand.end, ids=cand.ids,
    )
    score = np.where(res.keep, res.score, -np.inf)
    order = np.lexsort((np.arange(score.size), -score))[: min(k, int(res.keep.sum()))]
    return order, cand, res


def build_ranking(
    plan: QueryPlan,
    cand: Candidates,
    *,
    query: str,
    max_bm25: float,
    lanes: Lanes,
    store: str,
    max_lead: float = 0.0,
    order: np.ndarray | None = None,
    client_res: Any = None,
    meta: Mapping[str, Any] | None = None,
) -> Ranking:
    """Hits with explanations from the engine's rows (already best-first unless ``order``)."""
    n = len(cand.ids)
    idx = np.arange(n) if order is None else np.asarray(order, dtype=np.int64)
    sim_all = cx.evaluate(plan.sim_expr(max_bm25, max_lead), cand.sim_inputs())
    sim_all = np.broadcast_to(sim_all, (n,)).astype(np.float64)
    if client_res is not None:
        decay = np.asarray(client_res.decay, dtype=np.float64)
        ages = np.asarray(client_res.age_days, dtype=np.float64)
        score = np.asarray(client_res.score, dtype=np.float64)
    else:
        decay = plan.weights(cand.start, cand.end)
        ages = plan.ages(cand.start, cand.end)
        score = cand.score
    limits = dict(lanes.named())
    # rank by similarity: the best similarity-lane rank (dense, then keyword)
    rank_before = np.zeros(idx.size, dtype=np.int64)
    notes: dict[int, tuple[str, ...]] = {}
    sim_order = np.argsort(-sim_all[idx], kind="stable")
    pos_by_sim = np.empty(idx.size, dtype=np.int64)
    pos_by_sim[sim_order] = np.arange(1, idx.size + 1)
    for p, i in enumerate(idx.tolist()):
        lr = cand.lane_ranks[i] if i < len(cand.lane_ranks) else {}
        sims = [lr[name] for name in ("dense", "keyword") if name in lr]
        rank_before[p] = min(sims) if sims else (int(pos_by_sim[p]) if not lr else lanes.dense + 1)
        out = list(_time_notes(plan, cand, i, client_res))
        edge = _edge_note(lr, limits, lanes.edge)
        if edge and rank_before[p] > p + 1:
            out.append(edge)
        if out:
            notes[p] = tuple(out)
    signals: dict[str, np.ndarray] = {}
    if plan.dense_w > 0:
        signals["dense"] = cand.cos[idx]
    if plan.keyword_w > 0:
        signals["bm25"] = cand.bm25[idx]
    if plan.lead_w > 0:
        signals["lead"] = cand.sim_inputs()["lead"][idx]
    kernel = plan.config.kernel
    return Ranking(
        ids=[cand.ids[i] for i in idx.tolist()],
        payloads=[cand.records[i] for i in idx.tolist()],
        order=np.arange(idx.size),
        score=np.asarray(score, dtype=np.float64)[idx],
        similarity=sim_all[idx],
        decay=decay[idx],
        age_days=ages[idx],
        time=cand.start[idx],
        rank_before=rank_before,
        signals=signals,
        notes=notes,
        query=query,
        meta={
            "store": store,
            "kernel": repr(kernel),
            "half_life_days": kernel.half_life(),
            "combine": plan.config.combine,
            "intent": plan.intent,
            "gate": plan.intent.time_sensitivity,
            "strength": plan.config.strength,
            "effective_strength": plan.strength,
            "now": plan.now,
            "reference_time": plan.ref,
            "lanes": lanes,
            "max_bm25": max_bm25,
            "max_lead": max_lead,
            "scoring": "client" if plan.client else "server",
            **dict(meta or {}),
        },
    )


def _time_notes(plan: QueryPlan, cand: Candidates, i: int, client_res: Any) -> tuple[str, ...]:
    if client_res is not None:
        return tuple(client_res.note(i))

    s, e = float(cand.start[i]), float(cand.end[i])
    out: list[str] = []
    if math.isnan(s):
        md = plan.config.missing_date
        out.append(f"undated: store fill weight {plan.fill:.2f} (missing_date={md!r})")
    elif plan.is_future(s):
        out.append(f"not yet valid at {format_epoch(plan.ref)} (starts {format_epoch(s)})")
    if plan.mode not in ("range",) and not math.isnan(e) and e <= plan.ref and not math.isnan(s):
        out.append(f"expired on {format_epoch(e)}")
    return tuple(out)


def _edge_note(lane_ranks: Mapping[str, int], limits: Mapping[str, int], edge: float) -> str | None:
    """Truncated pool: every lane that brought this hit had it near its limit."""
    if not lane_ranks:
        return None
    fracs = {name: r / limits[name] for name, r in lane_ranks.items() if name in limits}
    if not fracs or min(fracs.values()) < edge:
        return None
    name = min(fracs, key=lambda n: fracs[n])
    lim = limits[name]
    field_name = "windows" if name.startswith("last_") else name
    return (
        f"truncated pool: promoted from rank {lane_ranks[name]} of {lim} in lane {name!r} (its edge); "
        f"documents just past the limit were never scored -- try a larger lane, e.g. Lanes({field_name}={2 * lim})"
        if field_name != "windows" else
        f"truncated pool: promoted from rank {lane_ranks[name]} of {lim} in lane {name!r} (its edge); "
        f"documents just past the limit were never scored -- try a larger window limit (e.g. {2 * lim})"
    )


def empty_ranking(query: str, intent: Intent, now: float, store: str) -> Ranking:
    z = np.zeros(0)
    return Ranking(
        ids=[], payloads=[], order=np.zeros(0, np.int64), score=z, similarity=z, decay=z,
        age_days=z, time=z, rank_before=np.zeros(0, np.int64), query=query,
        meta={"intent": intent, "now": now, "n_docs": 0, "store": store},
    )


def merge_lane_ranks(lists: Sequence[tuple[str, Sequence[str]]]) -> dict[str, dict[str, int]]:
    """id -> {lane: 1-based rank} from each lane's ranked ids."""
    out: dict[str, dict[str, int]] = {}
    for name, ids in lists:
        for r, d in enumerate(ids, start=1):
            out.setdefault(d, {}).setdefault(name, r)
    return out
