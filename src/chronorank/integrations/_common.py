"""The one path every framework integration takes into the core.

An integration only translates: it pulls a similarity column and a date column out of
the framework's objects, calls :meth:`TemporalReranker.rerank_columns`, and writes the
result back as ``chronorank_*`` metadata. Because of that, a LangChain retriever, a
LlamaIndex postprocessor, a Haystack ranker and a Chroma query all return exactly what
the core returns for the same candidates.

This module imports no framework.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from chronorank.errors import InvalidInput
from chronorank.filters import and_filters, filter_mask, parse_filter
from chronorank.rerank import TemporalReranker
from chronorank.temporal import intent_strength
from chronorank.timeparse import parse_times

if TYPE_CHECKING:
    from chronorank.rerank import TemporalReranker
    from chronorank.types import Hit, Intent, Ranking

METADATA_PREFIX = "chronorank_"
"""Every key chronorank writes into a framework's metadata starts with this."""

METADATA_KEYS: tuple[str, ...] = (
    "chronorank_score",
    "chronorank_similarity",
    "chronorank_decay",
    "chronorank_age_days",
    "chronorank_rank_before",
    "chronorank_rank_delta",
    "chronorank_explain",
)

DAY = 86400.0
DEFAULT_LANES_DAYS: tuple[float, ...] = (30.0, 180.0)


def build_reranker(reranker: TemporalReranker | None = None, **kwargs: Any) -> TemporalReranker:
    """Return ``reranker`` as is, or build a ``TemporalReranker`` from keyword arguments.

    Passing both is ambiguous and raises ``InvalidInput``.
    """
    if reranker is not None:
        if kwargs:
            raise InvalidInput(
                f"got reranker={reranker!r} and reranker settings {sorted(kwargs)}; "
                "pass either a ready TemporalReranker or its settings, not both"
            )
        return reranker

    return TemporalReranker(**kwargs)


def similarity_column(scores: Sequence[float | None]) -> tuple[np.ndarray | list[Any], bool]:
    """The similarity column for ``scores`` and whether it was derived from input order.

    When *no* candidate carries a score (every one is ``None``), the input order stands in
    for similarity: ``s_i = 1 - i / n`` (best = 1). Otherwise the scores go to the core
    unchanged, whose ``bad_score`` policy decides about any missing or NaN one.
    """
    n = len(scores)
    if n and all(s is None for s in scores):
        return 1.0 - np.arange(n, dtype=np.float64) / n, True
    try:
        return np.asarray(scores, dtype=np.float64), False
    except (TypeError, ValueError):
        return list(scores), False


def time_column(values: Sequence[Any]) -> np.ndarray:
    """Epoch seconds (float64, NaN = missing) for raw metadata date values."""
    if len(values) == 0:
        return np.empty(0, dtype=np.float64)
    return np.asarray(parse_times(list(values)), dtype=np.float64)


def metadata_values(metadatas: Sequence[Mapping[str, Any] | None], field: str | None) -> list[Any]:
    """One value a candidate for ``field`` (None where absent)."""
    if field is None:
        return [None] * len(metadatas)
    return [None if m is None else m.get(field) for m in metadatas]


def rerank_candidates(
    reranker: TemporalReranker,
    query: str,
    *,
    scores: Sequence[float | None],
    metadatas: Sequence[Mapping[str, Any] | None],
    ids: Sequence[Any] | None = None,
    payloads: Sequence[Any] | None = None,
    date_field: str = "date",
    valid_from_field: str | None = None,
    valid_to_field: str | None = None,
    top_k: int | None = None,
    now: Any = None,
    filter: Any = None,  # noqa: A002 - the name every vector store uses
    vectors: Sequence[Any] | None = None,
) -> Ranking:
    """Extract (similarity, date[, validity]) columns from framework metadata and rerank.

    This is the only place an integration reaches the core, which is what makes every
    integration's result identical to ``rerank_columns`` on the same candidates.
    ``valid_from_field``/``valid_to_field`` default to the reranker's; a validity column
    is passed only when some candidate has the field. ``filter`` (a :mod:`chronorank.filters`
    dict) keeps the candidates it matches, client-side over the fetched pool, with the
    meaning it has inside every engine. ``vectors``: each candidate's embedding or None (the
    framework document's own), passed on when every candidate has one (the versions stage's
    cosine test, as the index runs it).
    """
    if len(scores) != len(metadatas):
        raise InvalidInput(
            f"got {len(scores)} scores for {len(metadatas)} candidates; "
            "pass one score (or None) per candidate"
        )
    flt = parse_filter(filter)
    if flt is not None:
        keep = np.flatnonzero(filter_mask(flt, metadatas)).tolist()
        scores, metadatas = [scores[i] for i in keep], [metadatas[i] for i in keep]
        ids = [ids[i] for i in keep] if ids is not None else keep
        payloads = [payloads[i] for i in keep] if payloads is not None else None
        vectors = [vectors[i] for i in keep] if vectors is not None else None
    if top_k is not None and top_k < 0:
        raise InvalidInput(f"top_k must be >= 0 or None, got {top_k!r}")
    sims, _ = similarity_column(scores)
    times = time_column(metadata_values(metadatas, date_field))
    extra: dict[str, Any] = {}
    for key, field in (
        ("valid_from", valid_from_field or getattr(reranker, "valid_from_field", None)),
        ("valid_to", valid_to_field or getattr(reranker, "valid_to_field", None)),
    ):
        values = metadata_values(metadatas, field)
        if any(v is not None for v in values):  # only pass validity columns that exist
            extra[key] = time_column(values)
    return reranker.rerank_columns(
        query,
        sims,
        times,
        ids=list(ids) if ids is not None else list(range(len(scores))),
        payloads=list(payloads) if payloads is not None else None,
        top_k=top_k,
        now=now,
        vectors=vectors if vectors is not None and len(vectors) and all(v is not None for v in vectors) else None,
        **extra,
    )


def _num(x: float) -> float | None:
    x = float(x)
    return None if math.isnan(x) else x


def hit_metadata(hit: Hit) -> dict[str, Any]:
    """The ``chronorank_*`` metadata for one hit (NaN written as None, so it stays JSON-safe)."""
    return {
        "chronorank_score": _num(hit.score),
        "chronorank_similarity": _num(hit.similarity),
        "chronorank_decay": _num(hit.decay),
        "chronorank_age_days": _num(hit.age_days),
        "chronorank_rank_before": int(hit.rank_before),
        "chronorank_rank_delta": int(hit.rank_delta),
        "chronorank_explain": hit.explain(),
    }


def strip_metadata(metadata: Mapping[str, Any]) -> dict[str, Any]:
    """``metadata`` without keys chronorank wrote earlier (reranking twice must not stack)."""
    return {k: v for k, v in metadata.items() if not str(k).startswith(METADATA_PREFIX)}


# --- time-sliced lanes ----------------------------------------------------------------

@dataclass(frozen=True)
class Lane:
    """A window of document dates ``[start, end)`` in epoch seconds (either side may be infinite)."""

    start: float
    end: float

    def __contains__(self, t: object) -> bool:
        if not isinstance(t, (int, float)) or isinstance(t, bool) or math.isnan(t):
            return False
        return self.start <= t < self.end


def plan_lanes(intent: Intent, now: float, lane_days: Sequence[float]) -> list[Lane]:
    """The date windows worth an extra filtered search for this intent.

    - ``recent``: the last ``d`` days, for each ``d`` in ``lane_days``;
    - ``as_of``: everything dated before the target's end, and the last ``d`` days before it;
    - ``range``: the target interval;
    - ``specific`` / ``timeless`` (or zero sensitivity): none; similarity alone decides.
    """
    if intent_strength(intent) <= 0.0:
        return []
    if intent.mode == "recent":
        return [Lane(now - d * DAY, math.inf) for d in lane_days]
    target = intent.target
    if target is None:
        return []
    if intent.mode == "as_of":
        anchor = target.end if math.isfinite(target.end) else target.start
        if not math.isfinite(anchor):
            return []
        return [Lane(-math.inf, anchor), *(Lane(anchor - d * DAY, anchor) for d in lane_days)]
    if intent.mode == "range":
        if not (math.isfinite(target.start) or math.isfinite(target.end)):
            return []
        end = target.end if not target.is_point else target.end + DAY
        return [Lane(target.start, end)]
    return []


def mongo_lane_filter(field: str, lane: Lane) -> dict[str, Any]:
    """A ``$gte``/``$lt`` filter dict (Chroma, PGVector, FAISS, Pinecone ... understand it)."""
    conds: list[dict[str, Any]] = []
    if math.isfinite(lane.start):
        conds.append({field: {"$gte": lane.start}})
    if math.isfinite(lane.end):
        conds.append({field: {"$lt": lane.end}})
    if not conds:
        raise InvalidInput(f"lane {lane} has no finite bound; nothing to filter on")
    return conds[0] if len(conds) == 1 else {"$and": conds}


def unique_key(doc_id: Any, content: str, metadata: Mapping[str, Any]) -> Any:
    """A key that identifies one stored document across lanes."""
    if doc_id not in (None, ""):
        return ("id", doc_id)
    return ("content", content, repr(sorted(metadata.items(), key=lambda kv: str(kv[0]))))


def union_pools(
    pools: Sequence[Sequence[tuple[Any, float]]], key: Callable[[Any], Any]
) -> list[tuple[Any, float]]:
    """Merge lanes' ``(item, score)`` lists: first occurrence kept, order of first appearance.

    Every lane is searched with the same query, so one document has one score in all of
    them; the max is kept in case a store rounds differently per call.
    """
    out: list[tuple[Any, float]] = []
    where: dict[Any, int] = {}
    for pool in pools:
        for item, score in pool:
            kk = key(item)
            if kk in where:
                i = where[kk]
                if score is not None and (out[i][1] is None or score > out[i][1]):
                    out[i] = (out[i][0], score)
                continue
            where[kk] = len(out)
            out.append((item, score))
    return out


def epoch_value(value: Any) -> float:
    """Epoch seconds for one metadata value (numbers as they are; else parsed; NaN if not)."""
    if isinstance(value, bool) or value is None:
        return math.nan
    if isinstance(value, (int, float, np.integer, np.floating)):
        return float(value)
    return float(time_column([value])[0])


# --- retrievers over chronorank's own engines -------------------------------------------

RECORD_DATE_FIELDS = ("date", "updated", "valid_from", "valid_to")


def engine_search(
    engine: Any, query: str, *, k: int, now: Any = None, filters: Sequence[Any] = (), **kwargs: Any
) -> Ranking:
    """One search on a ``TemporalIndex``, ``QdrantStore`` or ``PgVectorStore``.

    ``filters`` (the retriever's own and the call's) are ANDed: a call can narrow the
    retriever's filter (a tenant, an ACL) but never widen it.
    """
    if not callable(getattr(engine, "search", None)):
        raise InvalidInput(
            f"engine={engine!r} has no search(); give a TemporalIndex, QdrantStore or PgVectorStore."
        )
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise InvalidInput(f"k={k!r}; give a positive integer such as 4.")
    flt = and_filters(*filters)
    if flt is not None:
        kwargs["filter"] = flt
    ranking: Ranking = engine.search(query, k, now, **kwargs)
    return ranking


async def engine_asearch(
    engine: Any, query: str, *, k: int, now: Any = None, filters: Sequence[Any] = (), **kwargs: Any
) -> Ranking:
    """Async :func:`engine_search` (the engine's ``asearch`` when it has one)."""
    if not callable(getattr(engine, "asearch", None)):
        import asyncio

        return await asyncio.to_thread(engine_search, engine, query, k=k, now=now, filters=filters, **kwargs)
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise InvalidInput(f"k={k!r}; give a positive integer such as 4.")
    flt = and_filters(*filters)
    if flt is not None:
        kwargs["filter"] = flt
    ranking: Ranking = await engine.asearch(query, k, now, **kwargs)
    return ranking


def engine_hits(ranking: Ranking) -> list[tuple[str, str, dict[str, Any], float | None]]:
    """``(id, text, metadata, score)`` per hit: the stored metadata, the stored date fields
    that are set, then the ``chronorank_*`` keys (what the rerank adapters write)."""
    out = []
    for hit in ranking:
        rec = hit.payload if isinstance(hit.payload, Mapping) else {}
        meta: dict[str, Any] = dict(rec.get("metadata") or {})
        for name in RECORD_DATE_FIELDS:
            if rec.get(name) is not None:
                meta[name] = rec[name]
        extra = hit_metadata(hit)
        meta.update(extra)
        out.append((str(hit.id), str(rec.get("text", "")), meta, extra["chronorank_score"]))
    return out


ENGINE_KINDS = ("index", "qdrant", "pgvector")


def open_engine(config: Mapping[str, Any]) -> Any:
    """An engine from a JSON-safe description (what a serialised pipeline stores).

    - ``{"kind": "index", "path": "...", "embedder": "auto"}``: ``TemporalIndex.load``;
    - ``{"kind": "qdrant", "collection": "docs", "path" | "url": "...", "embedder": "default"}``;
    - ``{"kind": "pgvector", "table": "docs", "dsn_env": "DATABASE_URL", "embedder": "default"}``
      (the connection string is read from that environment variable, so no password is
      written into the pipeline file; ``"dsn"`` is accepted too).
    Other keys go to the engine's constructor (``config``, ``lanes`` are not: use a spec string).
    """
    if not isinstance(config, Mapping) or config.get("kind") not in ENGINE_KINDS:
        raise InvalidInput(
            f"engine_config={config!r}; give a dict with kind in {list(ENGINE_KINDS)}, e.g. "
            "{'kind': 'index', 'path': 'my.idx'}."
        )
    cfg = dict(config)
    kind = cfg.pop("kind")
    if kind == "index":
        from chronorank.index import TemporalIndex

        if "path" not in cfg:
            raise InvalidInput("engine_config kind='index' needs 'path' (a directory written by TemporalIndex.save).")
        return TemporalIndex.load(cfg.pop("path"), embedder=cfg.pop("embedder", "auto"), **cfg)
    if kind == "qdrant":
        from chronorank.stores import QdrantStore

        return QdrantStore(cfg.pop("collection", "chronorank"), **cfg)
    from chronorank.stores import PgVectorStore

    env = cfg.pop("dsn_env", None)
    dsn = cfg.pop("dsn", None)
    if env is not None:
        dsn = os.environ.get(env)
        if not dsn:
            raise InvalidInput(f"engine_config dsn_env={env!r}, but that environment variable is not set.")
    if not dsn:
        raise InvalidInput("engine_config kind='pgvector' needs 'dsn_env' (an environment variable) or 'dsn'.")
    return PgVectorStore(dsn, cfg.pop("table", "chronorank_docs"), **cfg)


_CONFIG_SETTINGS = (
    "strength", "combine", "missing_date", "future", "not_yet_valid", "expired_factor",
    "relative_recency", "range_slope", "range_scale", "max_age_days", "use_temporal_filter",
)
_RERANKER_SETTINGS = (
    "date_field", "score_field", "id_field", "valid_from_field", "valid_to_field", "group_key",
    "bad_score", "duplicates", "tz", "topical_margin", "text_field",
)


def reranker_settings(reranker: Any) -> dict[str, Any]:
    """A JSON-safe dict that :func:`reranker_from_settings` turns back into an equal reranker
    (the kernel as its spec string). A callable gate or group key has no JSON form: refused."""
    cfg = reranker.config
    out: dict[str, Any] = {"kernel": repr(cfg.kernel)}
    out.update({name: getattr(cfg, name) for name in _CONFIG_SETTINGS})
    gate = reranker.gate
    if not (gate is None or isinstance(gate, (bool, int, float))):
        raise InvalidInput(
            f"gate={gate!r} is an object and cannot be written to JSON; use gate=True (the lexical "
            "parser) or a fixed float, or rebuild the component in code instead of loading it."
        )
    out["gate"] = gate
    for name in _RERANKER_SETTINGS:
        value = getattr(reranker, name)
        if callable(value):
            raise InvalidInput(f"{name}={value!r} is a callable and cannot be written to JSON; give a field name.")
        out[name] = value
    return out


def reranker_from_settings(settings: Mapping[str, Any]) -> TemporalReranker:
    """The ``TemporalReranker`` that :func:`reranker_settings` described."""
    return TemporalReranker(**dict(settings))
