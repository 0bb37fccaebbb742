"""Chroma: query a collection with time-sliced lanes and rerank with chronorank.

``pip install "chronorank[chroma]"``. Store the date as a number (epoch seconds) in the
metadata so that Chroma's ``where`` filters can slice by time::

    collection.add(ids=[...], documents=[...], metadatas=[{"date": 1735689600.0}, ...])
    ranking = query_collection(collection, "what changed in the latest release",
                               TemporalReranker(), k=5, fetch_k=50)
    for hit in ranking:
        print(hit.id, hit.score, hit.payload["document"])

The collection object is used duck-typed (``query``, ``configuration``/``metadata``), so
this module does not import chromadb.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from chronorank.errors import InvalidInput
from chronorank.integrations._common import (
    DEFAULT_LANES_DAYS,
    METADATA_KEYS,
    hit_metadata,
    mongo_lane_filter,
    plan_lanes,
    rerank_candidates,
    union_pools,
)
from chronorank.timeparse import resolve_now

if TYPE_CHECKING:
    from chronorank.rerank import TemporalReranker
    from chronorank.types import Ranking

__all__ = [
    "METADATA_KEYS",
    "collection_space",
    "distance_to_similarity",
    "hit_metadata",
    "query_collection",
]


def collection_space(collection: Any) -> str:
    """The collection's distance function: ``"l2"`` (Chroma's default), ``"cosine"`` or ``"ip"``."""
    config = getattr(collection, "configuration", None) or getattr(
        collection, "configuration_json", None
    )
    if isinstance(config, Mapping):
        hnsw = config.get("hnsw") or {}
        space = hnsw.get("space") if isinstance(hnsw, Mapping) else None
        if space:
            return str(space)
    meta = getattr(collection, "metadata", None) or {}
    return str(meta.get("hnsw:space", "l2"))


def distance_to_similarity(distances: Any, space: str) -> np.ndarray:
    """Chroma distances as similarities (for unit vectors all three equal the cosine).

    ``cosine``: ``1 - d``; ``ip``: ``1 - d`` (Chroma stores ``1 - dot``); ``l2`` (squared):
    ``1 - d / 2``.
    """
    d = np.asarray(distances, dtype=np.float64)
    if space in ("cosine", "ip"):
        return 1.0 - d
    if space == "l2":
        return 1.0 - d / 2.0
    raise InvalidInput(f"unknown Chroma space {space!r}; expected 'l2', 'cosine' or 'ip'")


def _rows(result: Mapping[str, Any], space: str) -> list[tuple[dict[str, Any], float]]:
    ids = result["ids"][0]
    docs = (result.get("documents") or [[None] * len(ids)])[0]
    metas = (result.get("metadatas") or [[None] * len(ids)])[0]
    dists = result["distances"][0]
    sims = distance_to_similarity(dists, space)
    return [
        ({"id": i, "document": doc, "metadata": dict(m or {}), "distance": float(dist)}, float(s))
        for i, doc, m, dist, s in zip(ids, docs, metas, dists, sims)
    ]


def _and(where: Mapping[str, Any] | None, lane_where: dict[str, Any]) -> dict[str, Any]:
    if not where:
        return lane_where
    return {"$and": [dict(where), lane_where]}


def _string_dates(rows: Sequence[tuple[dict[str, Any], float]], field: str) -> bool:
    return any(isinstance(row["metadata"].get(field), str) for row, _ in rows)


def query_collection(
    collection: Any,
    query: str,
    reranker: TemporalReranker,
    *,
    k: int = 4,
    fetch_k: int = 40,
    date_field: str = "date",
    lanes: Sequence[float] = DEFAULT_LANES_DAYS,
    lane_k: int | None = None,
    where: Mapping[str, Any] | None = None,
    now: Any = None,
    query_embedding: Sequence[float] | None = None,
) -> Ranking:
    """Fetch ``fetch_k`` candidates (plus one filtered query per lane), rerank, keep ``k``.

    Hits' payloads are dicts ``{"id", "document", "metadata", "distance"}``; the metadata
    is the stored one. ``hit_metadata(hit)`` gives the ``chronorank_*`` keys. Lanes filter
    on ``date_field`` with ``$gte``/``$lt``, which needs epoch-number metadata.
    """
    if k < 1 or fetch_k < k:
        raise InvalidInput(f"need 1 <= k <= fetch_k, got k={k} fetch_k={fetch_k}")

    space = collection_space(collection)
    t_now = resolve_now(now)
    intent = reranker.intent(query, now=t_now)
    # the collection is searched with the topical query ("as of March 2021" only dilutes it)
    text = (getattr(intent, "topical_query", None) or "").strip() or query
    target: dict[str, Any] = (
        # plain floats: Chroma rejects a numpy vector (or a list of numpy scalars)
        {"query_embeddings": [np.asarray(query_embedding, dtype=np.float64).ravel().tolist()]}
        if query_embedding is not None
        else {"query_texts": [text]}
    )
    include = ["documents", "metadatas", "distances"]

    def run(n: int, w: Mapping[str, Any] | None) -> list[tuple[dict[str, Any], float]]:
        res = collection.query(n_results=n, where=dict(w) if w else None, include=include, **target)
        return _rows(res, space)

    pools = [run(fetch_k, where)]
    if lanes and _string_dates(pools[0], date_field):
        warnings.warn(
            f"chronorank: metadata {date_field!r} holds strings (e.g. ISO dates); Chroma's $gte/$lt compare "
            "numbers only, so no time lanes were searched and a fresh document outside the first fetch_k "
            "cannot be promoted. Store the date as epoch seconds (chronorank.timeparse.to_epoch), or pass "
            "lanes=() to silence this.",
            RuntimeWarning,
            stacklevel=2,
        )
        lanes = ()
    if lanes:
        per_lane = lane_k or max(k, fetch_k // 4)
        for lane in plan_lanes(intent, t_now, lanes):
            pools.append(run(per_lane, _and(where, mongo_lane_filter(date_field, lane))))
    merged = sorted(union_pools(pools, lambda row: row["id"]), key=lambda p: -p[1])
    return rerank_candidates(
        reranker,
        query,
        scores=[s for _, s in merged],
        metadatas=[row["metadata"] for row, _ in merged],
        ids=[row["id"] for row, _ in merged],
        payloads=[row for row, _ in merged],
        date_field=date_field,
        top_k=k,
        now=t_now,
    )

