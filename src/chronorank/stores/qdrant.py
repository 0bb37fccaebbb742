"""``QdrantStore``: the index's ranking over a pool Qdrant builds (``fallback='client'``, the
default: the probe and every pool member's cosine, BM25 and lead in one batched request, then
:func:`chronorank.stores.results.client_score`), or temporal scoring inside Qdrant with a
formula query over prefetch lanes (``fallback='error'``).

The engine's scoring is two requests::

    1. lanes = dense top-N | bm25 top-N | dense top-N within the last 30/180 days | newest N
       (batched, each one row past its limit: a lane cut among equal scores takes its rows by
       TIE_RULE -- the newer first, undated last, then the smaller id -- never the engine's order)
    2. prefetch = [ rescore-by-dense( pool ), rescore-by-bm25( pool ), rescore-by-lead( pool ) ]
       query    = FormulaQuery( score(sim($score[0], $score[1], $score[2]), decay(_start, _end)) )

where ``pool`` is the lanes' members by id. Every lane carries the validity filter itself. The
first request also yields the BM25 maximum that normalises the keyword signal (from the keyword
lane, else a one-row BM25 query) and, with the lead on, the lead's maximum; with
``diagnose=True`` (default) explanations flag hits that came from a lane's edge.

Vectors per point: ``dense`` (cosine), ``bm25`` (sparse, IDF modifier: the engine applies the
body idf) and, from schema 2, ``lead`` (sparse, no modifier: BM25 over the first sentence or
line, tf-normalised; the query carries count x body idf, the index's BM25F-style weight).
Qdrant cannot add a named vector to an existing collection, so a schema-1 collection is
searched without the lead under the default weight (with a warning naming the fix: re-create
it) and raises a clear error when ``lead_weight`` is named.

Payload per point: ``_id`` (the chronorank id), ``text``, ``metadata``, the raw date fields,
``_start``/``_end`` (epoch seconds, float-indexed: the formula and lane filters read them)
and ``start_at``/``end_at`` (RFC 3339, datetime-indexed, for your own filters).
The same code runs on ``":memory:"``, a local ``path`` or a server ``url`` (see deploy/), and on
Qdrant's own engine in process with ``edge_path`` (qdrant-edge-py, :mod:`chronorank.stores.qdrant_edge`:
the same requests, translated, scored by the Rust engine instead of local mode's emulation).
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from chronorank.errors import ChronorankError, InvalidInput, require
from chronorank.filters import filter_qdrant
from chronorank.fusion.strategies import STRATEGIES
from chronorank.index.embedders import embed_queries, get_embedder
from chronorank.stores import compile as cx
from chronorank.stores.bm25 import (
    bm25_doc_values,
    bm25_idf,
    bm25_params,
    lead_query_weights,
    query_terms,
)
from chronorank.stores.config import Lanes, StoreConfig
from chronorank.stores.documents import as_matrix, column_roles, point_id, prepare_docs
from chronorank.stores.plan import QueryPlan, plan_query
from chronorank.stores.prepare import (
    Found,
    KeywordRequest,
    Request,
    plain_intent,
    plain_overrides,
    store_query,
)
from chronorank.stores.qdrant_edge import EdgeClient
from chronorank.stores.results import (
    Candidates,
    build_ranking,
    client_score,
    empty_ranking,
    merge_lane_ranks,
)
from chronorank.temporal import prepare_query
from chronorank.types import Intent, Ranking, best_first, epoch_to_datetime

__all__ = ["QdrantStore", "SCHEMA_VERSION"]

SCHEMA_VERSION = 2
#: the most distinct terms the statistics request reads (a term past it counts as unseen)
_VOCABULARY_MAX = 10_000_000
DENSE = "dense"
SPARSE = "bm25"
LEAD = "lead"


def _models() -> Any:
    return require("qdrant_client.models", extra="qdrant", package="qdrant-client")


def _check_collection_name(collection: str) -> None:
    """Qdrant's rule for a collection name (server, local and edge alike; each is a directory
    name there): 1..255 bytes, not ``.`` or ``..``, none of ``<>:"/\\|?*`` or control characters."""
    if collection in (".", ".."):
        raise InvalidInput(f"collection={collection!r} names a directory, not a collection; use e.g. 'docs'.")
    bad = sorted({c for c in collection if c in '<>:"/\\|?*' or ord(c) < 32 or ord(c) == 127
                  or 0xD800 <= ord(c) <= 0xDFFF})  # a lone surrogate is no UTF-8 name
    size = len(collection.encode("utf-8", "surrogatepass"))
    if bad or size > 255:
        raise InvalidInput(
            f"collection={collection!r}: Qdrant names are at most 255 bytes, without control "
            f"characters or any of <>:\"/\\|?* (found {bad or f'{size} bytes'}); use e.g. 'docs'."
        )


class QdrantStore:
    """A Qdrant collection ranked as the index ranks (``fallback='client'``, the default) or
    scored server-side alone (``fallback='error'``).

    Parameters
    ----------
    collection: collection name (created on the first ``add``).
    url / path / location / client: where Qdrant is: a server URL (``http://host:6333``), a
        local-mode directory, ``":memory:"`` (default), or a ready ``QdrantClient``.
    edge_path: a directory for Qdrant Edge shards (``pip install "chronorank[qdrant-edge]"``):
        Qdrant's Rust engine in this process, one shard per collection; no server, and the
        real engine's speed instead of local mode's pure-Python emulation.
    embedder: as for ``TemporalIndex`` (``"default"``, ``None`` for your own vectors, an object).
    config: an ``IndexConfig`` or its spec (fusion weights + temporal settings), or a
        :class:`~chronorank.stores.StoreConfig`.
    lanes: a :class:`~chronorank.stores.Lanes` (candidate lanes and their limits).
    fallback: ``"client"`` (default): Qdrant builds the lanes' pool with each candidate's cosine,
        BM25 and lead, and the index's ranking (:func:`chronorank.ranking.rank`, the index's
        defaults) runs over it client-side -- the same ranking as ``TemporalIndex``;
        ``"error"``: Qdrant scores alone with the compiled formula (the index's defaults it
        cannot evaluate are off; naming one raises InvalidInput).
    """

    def __init__(
        self,
        collection: str = "chronorank",
        *,
        url: str | None = None,
        path: str | None = None,
        location: str | None = None,
        edge_path: Any = None,
        client: Any = None,
        api_key: str | None = None,
        embedder: Any = "default",
        config: Any = None,
        lanes: Lanes | None = None,
        missing_weight: float = 0.5,
        fallback: str = "client",
        bad_dates: str = "raise",
        infer_dates: bool = True,
        k1: float | None = None,
        b: float | None = None,
        timeout: int | None = None,
        columns: Mapping[str, str] | None = None,
    ) -> None:
        if not isinstance(collection, str) or not collection:
            raise InvalidInput(f"collection={collection!r}; give a non-empty name such as 'docs'.")
        _check_collection_name(collection)
        if bad_dates not in ("raise", "missing"):
            raise InvalidInput(f"bad_dates={bad_dates!r}; use 'raise' or 'missing'.")
        qc = require("qdrant_client", extra="qdrant", package="qdrant-client")
        if edge_path is not None and (client, url, path, location) != (None, None, None, None):
            raise InvalidInput("edge_path= runs Qdrant in this process; pass it without url/path/location/client.")
        if client is None:
            if edge_path is not None:
                client = EdgeClient(edge_path)
            elif url is not None:
                client = qc.QdrantClient(url=url, api_key=api_key, timeout=timeout)
            elif path is not None:
                client = qc.QdrantClient(path=str(path))
            else:
                client = qc.QdrantClient(location=location or ":memory:")
        self.client = client
        self.collection = collection
        self._secrets = _url_secrets(url, api_key)  # masked in every message (see _call)

        self.embedder = get_embedder(embedder)
        self.config = StoreConfig.coerce(config, lanes, missing_weight, fallback)
        self.bad_dates = bad_dates
        self.infer_dates = bool(infer_dates)
        self.last_inferred: dict[str, int] = {}  # the last add()'s inferred dates by source
        self.k1, self.b = bm25_params(k1, b)
        self.dim: int | None = None
        self.avgdl: float | None = None
        self.lead_avgdl: float | None = None
        self.lead_tokens = int(self.config.index.lead_tokens)
        self.has_lead = True  # False for a schema-1 collection (no lead vectors)
        self._present = False  # the collection exists (cached: a search never asks)
        # BM25 statistics for the query weights (idf_power, the lead): the points and each term's
        # document frequency, approximate, read once (one facet request) and again after a write
        self._stats: tuple[int, dict[int, int]] | None = None
        self._warned_no_lead = False
        self._lay = _Layout()
        self._mapped = _check_columns(columns)
        try:
            self._load_meta()
        except BaseException:
            if edge_path is not None:  # release the shard's lock: this store will not be used
                client.close()
            raise

    # ------------------------------------------------------------------ schema

    def _exists(self) -> bool:
        """Whether the collection exists: asked of the server until it does, then remembered
        (a search makes no existence check once the collection is there)."""
        if not self._present:
            self._present = bool(self._call(self.client.collection_exists, self.collection))
        return self._present

    def _load_meta(self) -> None:
        if not self._exists():
            return
        info = self._call(self.client.get_collection, self.collection)
        meta = dict(getattr(info.config, "metadata", None) or {})
        version = meta.get("chronorank_schema")
        if version is None:
            self._open_foreign(info)
            return
        if self._mapped is not None:
            raise InvalidInput(
                f"collection {self.collection!r} was created by chronorank; open it without columns= "
                "(that maps collections chronorank did not create)."
            )
        if int(version) > SCHEMA_VERSION:
            raise InvalidInput(
                f"collection {self.collection!r} has chronorank schema {version}, newer than this "
                f"version understands ({SCHEMA_VERSION}); upgrade chronorank."
            )
        self.dim = int(meta["dim"]) if meta.get("dim") else None
        self.avgdl = float(meta["avgdl"]) if meta.get("avgdl") else None
        self.has_lead = int(version) >= 2
        if self.has_lead:
            self.lead_avgdl = float(meta.get("lead_avgdl") or 1.0)
            self.lead_tokens = int(meta.get("lead_tokens") or self.lead_tokens)

    def _open_foreign(self, info: Any) -> None:
        """A collection chronorank did not create: read it through ``columns=``, or refuse it now,
        naming what it lacks, instead of failing inside the first search or add."""
        vectors = info.config.params.vectors
        named = dict(vectors) if isinstance(vectors, Mapping) else {"": vectors}
        c = self._mapped
        if c is None:
            lacks = [f"vector {v!r}" for v in (DENSE,) if v not in named] + [
                f"sparse vector {v!r}" for v in (SPARSE, LEAD) if v not in (info.config.params.sparse_vectors or {})]
            raise InvalidInput(
                f"collection {self.collection!r} exists but was not created by chronorank (no chronorank_schema "
                f"in its metadata" + (f"; it lacks {', '.join(lacks)}" if lacks else "") + "); nothing was changed. "
                f"To search it read-only, map its payload: QdrantStore({self.collection!r}, columns={{'text': "
                "'page_content', 'date': 'metadata.date', 'metadata': 'metadata', 'embedding': ''}}) ('' = the "
                "unnamed vector; the date as epoch seconds), or pick another collection name."
            )
        name = c.get("embedding", "")
        if name not in named:
            have = [k or "(unnamed)" for k in named]
            raise InvalidInput(f"collection {self.collection!r} has no vector {name or '(unnamed)'!r} (it has {have}); fix columns['embedding'].")
        self.dim = int(named[name].size)
        pts = self._call(self.client.scroll, self.collection, limit=1, with_payload=True)[0]
        if pts and "date" in c:
            v = _get(pts[0].payload or {}, c["date"])
            if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float))):
                raise InvalidInput(
                    f"payload {c['date']!r} of collection {self.collection!r} holds {v!r}; the engine's formula and "
                    "time lanes need the date as epoch seconds (a number). Store it so, or map another field."
                )
        # Qdrant's order_by (the newest lane) needs a range index on the date; local mode does not
        # check, the engine (server, edge) refuses the query: without one, search without that lane
        date_key = c.get("date")
        kind = getattr((getattr(info, "payload_schema", None) or {}).get(date_key), "data_type", None)
        newest = date_key is not None and (_is_local(self.client) or getattr(kind, "value", kind) in (
            "float", "integer", "datetime"))
        if date_key is not None and not newest:
            warnings.warn(
                f"collection {self.collection!r} has no range index on {date_key!r}: searching without the "
                f"newest-documents lane (Qdrant's order_by needs one). Add it to keep that lane: "
                f"client.create_payload_index({self.collection!r}, {date_key!r}, 'float').",
                stacklevel=3,
            )
        self._lay = _Layout(id_key=c.get("id"), text_key=c["text"], start_key=c.get("date", "_no_date"),
                            end_key="_no_end", meta_key=c.get("metadata"), dense=name or None, own=False,
                            newest=newest)
        # no sparse vectors in a collection chronorank did not write: dense similarity and time only
        self.config = self.config.replace(keyword_weight=0.0, lead_weight=0.0)
        self.has_lead = False

    def _writable(self) -> None:
        if self._mapped is not None:
            raise InvalidInput(
                f"collection {self.collection!r} is read through columns= (chronorank did not create it); write "
                "to it with your own tools, or add() the documents to a collection chronorank creates."
            )

    def create_collection(
        self, docs: Iterable[Mapping[str, Any]], vectors: Any = None, **cluster: Any,
    ) -> None:
        """Create the collection at the current schema before the first ``add`` -- on a cluster,
        with its ``shard_number``, ``replication_factor`` or ``write_consistency_factor`` (the
        keywords of ``QdrantClient.create_collection``; deploy/qdrant_collection.py). The BM25
        length statistics come from ``docs`` (a sample of the corpus) as the first ``add`` would
        take them; nothing is written. An existing collection is refused."""
        self._writable()
        unknown = sorted(set(cluster) - {"shard_number", "replication_factor", "write_consistency_factor"})
        if unknown:
            raise InvalidInput(f"create_collection got {unknown}; cluster settings are shard_number, "
                               "replication_factor and write_consistency_factor.")
        if self._exists():
            raise InvalidInput(f"collection {self.collection!r} exists already; add() to it, or delete it first.")
        prep = prepare_docs(docs, vectors, embedder=self.embedder, dim=self.dim, bad_dates=self.bad_dates,
                            need_terms=True, lead_tokens=self.lead_tokens, infer_dates=self.infer_dates)
        if not prep.ids or prep.vectors is None:
            raise InvalidInput("create_collection needs a sample of documents (their vectors give the dimension).")
        self._create(int(prep.vectors.shape[1]), *_length_stats(prep), **cluster)

    def _create(self, dim: int, avgdl: float, lead_avgdl: float, **cluster: Any) -> None:
        m = _models()
        self._call(
            self.client.create_collection,
            self.collection,
            vectors_config={DENSE: m.VectorParams(size=dim, distance=m.Distance.COSINE)},
            sparse_vectors_config={SPARSE: m.SparseVectorParams(modifier=m.Modifier.IDF), LEAD: m.SparseVectorParams()},
            metadata={"chronorank_schema": SCHEMA_VERSION, "dim": dim, "avgdl": avgdl, "k1": self.k1, "b": self.b,
                      "lead_avgdl": lead_avgdl, "lead_tokens": self.lead_tokens},
            **cluster,
        )
        for key, kind in (
            ("_start", m.PayloadSchemaType.FLOAT), ("_end", m.PayloadSchemaType.FLOAT),
            ("start_at", m.PayloadSchemaType.DATETIME), ("end_at", m.PayloadSchemaType.DATETIME),
            ("_id", m.PayloadSchemaType.KEYWORD), ("_terms", m.PayloadSchemaType.INTEGER),
        ):
            with warnings.catch_warnings():  # local mode warns that payload indexes are no-ops there
                warnings.simplefilter("ignore", UserWarning)
                self.client.create_payload_index(self.collection, field_name=key, field_schema=kind)
        self.dim, self.avgdl, self.lead_avgdl, self.has_lead = dim, avgdl, lead_avgdl, True
        self._present = True

    # ------------------------------------------------------------------ writing

    def add(self, docs: Iterable[Mapping[str, Any]], vectors: Any = None) -> int:
        """Insert or replace documents by ``id`` (FORMAT.md corpus dicts); returns how many."""
        self._writable()
        prep = prepare_docs(docs, vectors, embedder=self.embedder, dim=self.dim, bad_dates=self.bad_dates,
                            need_terms=True, lead_tokens=self.lead_tokens, infer_dates=self.infer_dates)
        self.last_inferred = prep.inferred
        n = len(prep.ids)
        if n == 0:
            return 0
        assert prep.vectors is not None
        if not self._exists():
            self._create(int(prep.vectors.shape[1]), *_length_stats(prep))
        m = _models()
        avgdl = float(self.avgdl or 1.0)
        lead_avgdl = float(self.lead_avgdl or 1.0)
        points = []
        for i in range(n):
            rec = prep.records[i]
            payload: dict[str, Any] = {
                "_id": rec["id"], "text": rec["text"], "metadata": rec["metadata"],
                **{f: rec[f] for f in ("date", "updated", "valid_from", "valid_to") if rec.get(f) is not None},
            }
            s, e = float(prep.start[i]), float(prep.end[i])
            if not math.isnan(s):
                payload["_start"] = s
                dt = epoch_to_datetime(s)
                if dt is not None:
                    payload["start_at"] = dt.isoformat()
            if not math.isnan(e):
                payload["_end"] = e
                dt = epoch_to_datetime(e)
                if dt is not None:
                    payload["end_at"] = dt.isoformat()
            vec: dict[str, Any] = {DENSE: prep.vectors[i].tolist()}
            vals = bm25_doc_values(prep.terms[i], prep.lengths[i], avgdl, self.k1, self.b)
            if vals:
                idx = sorted(vals)
                payload["_terms"] = idx  # document frequencies for idf_power (count by term)
                vec[SPARSE] = m.SparseVector(indices=idx, values=[vals[t] for t in idx])
            lvals = bm25_doc_values(prep.lead_terms[i], prep.lead_lengths[i], lead_avgdl, self.k1, self.b)
            if lvals and self.has_lead:
                lidx = sorted(lvals)
                vec[LEAD] = m.SparseVector(indices=lidx, values=[lvals[t] for t in lidx])
            points.append(m.PointStruct(id=point_id(rec["id"]), vector=vec, payload=payload))
        self._stats = None  # the frequencies change: read again by the next search that needs them
        try:
            for lo in range(0, n, 512):
                self._call(self.client.upsert, self.collection, points=points[lo:lo + 512], wait=True)
        except _Gone:  # deleted behind our back: create it again and write this batch there
            self._present = False
            self._create(int(prep.vectors.shape[1]), avgdl, lead_avgdl)
            for lo in range(0, n, 512):
                self._call(self.client.upsert, self.collection, points=points[lo:lo + 512], wait=True)
        return n

    def delete(self, ids: Iterable[str] | str) -> int:
        """Remove documents by id; returns how many existed (absent ids are skipped)."""
        self._writable()
        if isinstance(ids, str):
            ids = [ids]
        wanted = [str(i) for i in ids]
        if not wanted or not self._exists():
            return 0
        m = _models()
        pids = [point_id(i) for i in wanted]
        found = self._call(self.client.retrieve, self.collection, ids=pids, with_payload=False, with_vectors=False)
        if found:
            self._stats = None
            self._call(
                self.client.delete, self.collection,
                points_selector=m.PointIdsList(points=[p.id for p in found]), wait=True,
            )
        return len(found)

    def __len__(self) -> int:
        if not self._exists():
            return 0
        return int(self._call(self.client.count, self.collection, exact=True).count)

    def _frequencies(self, terms: Iterable[int]) -> tuple[int, dict[int, int]]:
        """The number of points and the document frequency of ``terms``, approximate (Qdrant's
        own counts): the whole vocabulary in one facet request over ``_terms``, kept until this
        store writes (another writer's documents are counted after ``refresh()``). Where the
        client has no facet (Qdrant Edge, in process), one count per term not seen yet."""
        if self._stats is None:
            n = int(self._call(self.client.count, self.collection, exact=False).count)
            df: dict[int, int] = {}
            if hasattr(self.client, "facet"):
                hits = self._call(self.client.facet, self.collection, key="_terms", limit=_VOCABULARY_MAX,
                                  exact=False).hits
                df = {int(h.value): int(h.count) for h in hits}
            self._stats = (n, df)
        n, df = self._stats
        if not hasattr(self.client, "facet"):
            m = _models()
            for t in terms:
                if t not in df:
                    df[t] = int(self._call(self.client.count, self.collection, exact=False, count_filter=m.Filter(
                        must=[m.FieldCondition(key="_terms", match=m.MatchValue(value=t))])).count)
        return n, df

    def refresh(self) -> None:
        """Read the collection's statistics again at the next search (after another process wrote)."""
        self._stats = None

    def close(self) -> None:
        self.client.close()

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def asearch(self, query: str, k: int = 10, now: Any = None, **kwargs: Any) -> Ranking:
        """:meth:`search` in a worker thread."""
        import asyncio

        return await asyncio.to_thread(self.search, query, k, now, **kwargs)

    async def aadd(self, docs: Iterable[Mapping[str, Any]], vectors: Any = None) -> int:
        """:meth:`add` in a worker thread."""
        import asyncio

        return await asyncio.to_thread(self.add, list(docs), vectors)

    # ------------------------------------------------------------------ search

    def search(self, query: str, k: int = 10, now: Any = None, **kwargs: Any) -> Ranking:
        """The best ``k`` documents for ``query`` at ``now``, scored inside Qdrant.

        ``overrides`` change this call's settings (``strength=0``, ``kernel=...``,
        ``fallback='client'``, ``lanes=...``). ``filter`` is a metadata filter
        (:mod:`chronorank.filters`) ANDed into every lane, the maxima probes and the scorer.
        A search is at most two requests, plus the collection's BM25 statistics once after a
        write (see ``_frequencies``). ``fallback='client'`` (default): the probe and the pool,
        batched, in one request; a question that needs the corpus first (an undated anchor, an
        acronym, a glued name: :mod:`chronorank.stores.prepare`) one batched request before it,
        and its pool then carries the vectors; otherwise the version cosine test, where it runs,
        fetches its few vectors in a second. ``fallback='error'``: the lanes' probe, batched,
        and the scoring query (a third only where equal scores straddle the cut).
        """
        try:
            return self._search(query, k, now, **kwargs)
        except _Gone:  # deleted behind our back: nothing to find; the next add() re-creates it
            self._present, self._stats = False, None
            return self._search(query, k, now, **kwargs)

    def _search(
        self,
        query: str,
        k: int = 10,
        now: Any = None,
        *,
        vector: Any = None,
        intent: Intent | None = None,
        lanes: Lanes | None = None,
        diagnose: bool = True,
        filter: Mapping[str, Any] | None = None,  # noqa: A002 - the name every vector store uses
        raw: bool = False,
        **overrides: Any,
    ) -> Ranking:
        pq = prepare_query(query, k, now, intent, self.config, overrides)
        asked: list[int] = []  # the preparation's requests (at most one batch)

        def fetch(reqs: Sequence[Request]) -> list[Found]:
            asked.append(len(reqs))
            return self._prepare(reqs, pq.now, pq.config)

        sq = store_query(pq, fetch, lanes or pq.config.lanes, raw=raw, vector=vector)

        user_filter = filter_qdrant(filter, prefix=f"{self._lay.meta_key or 'metadata'}.",
                                    time_keys={"start": self._lay.start_key, "end": self._lay.end_key})
        cfg, now_s, intent, topical = pq.config, pq.now, sq.intent, sq.topical
        lanes = lanes or cfg.lanes
        plan = plan_query(intent, now_s, cfg)
        meta: dict[str, Any] = {"anchor": sq.anchor_line} if sq.anchor_line else {}
        if not self._exists():  # asked of the server only until the collection is there
            return empty_ranking(query, intent, now_s, "qdrant")
        m = _models()
        if plan.lead_w > 0 and not self.has_lead and not cfg.lead_named:
            # an older collection and the default lead weight: search as before, say how to upgrade
            if not self._warned_no_lead:
                self._warned_no_lead = True
                warnings.warn(
                    f"collection {self.collection!r} was created by an older chronorank (schema 1) without "
                    "lead vectors: searching it without the lead field. Re-create it (delete the collection "
                    "and add() the documents again) to rank releases by their first line as the index does.",
                    stacklevel=2,
                )
            plan = dataclasses.replace(plan, lead_w=0.0)
        self._check_lead(plan)
        qvec = self._query_vector(topical, vector, plan, lanes)
        terms = query_terms(sq.keywords) if (plan.keyword_w > 0 or qvec is None) else {}
        only = set(query_terms(sq.lead_keywords)) if sq.lead_keywords else None
        svec, lvec = self._query_sparse(terms, plan, only) if terms else (None, None)
        base = self._base_filter(plan, user_filter)
        named = self._lanes(plan, lanes, qvec, svec, base)
        if not named:
            return empty_ranking(query, intent, now_s, "qdrant")
        prefetch = [p for _, p in named]
        pool = sum(int(p.limit) for p in prefetch)
        if plan.client:
            probe, probed = self._probe_requests(named, svec, base, diagnose, plan, lvec)
            # one batched request: the probe and the pool with every signal (and, after a
            # preparation request, the pool's vectors: the search stays at two requests)
            cand, max_bm25, max_lead, lane_ids = self._pool(
                probe, probed, plan, prefetch, pool, base, qvec, svec, lvec, vectors=bool(asked))
            cand.lane_ranks = [lane_ids.get(d, {}) for d in cand.ids]
            order, cand, res = client_score(plan, cand, max_bm25, int(k), max_lead)
            return build_ranking(plan, cand, query=query, max_bm25=max_bm25, lanes=lanes, store="qdrant",
                                 order=order, client_res=res, meta={"pool": pool, **meta}, max_lead=max_lead)
        # request 1 (batched): every lane's members, cut by TIE_RULE, and the BM25 and lead maxima
        members, max_bm25, max_lead, lane_ids, rounds = self._settle_lanes(named, svec, base, plan, lvec)
        if rounds > 1:  # a lane's cut fell among equal scores: its tied rows asked for
            meta["lane_tie_rounds"] = rounds - 1
        if not members:
            return empty_ranking(query, intent, now_s, "qdrant")
        # the scorers read the pool by id: the lanes are not run again inside the engine (where
        # a lane's cut would fall among equal scores in the engine's own order)
        in_pool = m.Filter(must=[m.HasIdCondition(has_id=members)])
        rescorers: list[tuple[str, Any]] = []
        slots: dict[str, str] = {}
        for name, q, using, on in (
            ("cos", qvec, self._lay.dense, True),
            ("bm25", svec, SPARSE, plan.keyword_w > 0 and max_bm25 > 0),
            ("lead", lvec, LEAD, plan.lead_w > 0 and max_lead > 0),
        ):
            if q is not None and on:
                slots[name] = f"$score[{len(rescorers)}]"
                rescorers.append((name, m.Prefetch(query=q, using=using, filter=in_pool, limit=len(members))))
        if "lead" not in slots:
            lvec, max_lead = None, 0.0
        formula, defaults = self.formula(plan, max_bm25, slots, max_lead, lay=self._lay)
        dense = self._lay.dense
        # the engine orders equal scores its own way: ask for one row past k, and again for
        # twice as many while the last row ties the k-th, so every row tied at the cut is here
        # and TIE_RULE picks among them (build_ranking)
        want = limit = int(k)
        while True:
            res_pts = self._call(
                self.client.query_points, self.collection, prefetch=[p for _, p in rescorers],
                query=m.FormulaQuery(formula=formula, defaults=defaults), limit=limit + 1, with_payload=True,
                with_vectors=([dense] + ([LEAD] if lvec is not None else [])) if dense is not None else True,
            ).points
            if want == 0 or len(res_pts) <= limit or res_pts[-1].score != res_pts[want - 1].score:
                break
            limit *= 2
        cand = self._candidates(res_pts, qvec, plan, max_bm25, lvec, max_lead)
        cand.lane_ranks = [lane_ids.get(d, {}) if diagnose else {} for d in cand.ids]
        order = best_first(cand.score, np.arange(len(cand.ids)), cand.start, cand.ids)[:want]
        return build_ranking(plan, cand, query=query, max_bm25=max_bm25, lanes=lanes, store="qdrant",
                             order=order, meta={"pool": pool, **meta}, max_lead=max_lead)

    # ------------------------------------------------------------------ pieces

    def _check_lead(self, plan: QueryPlan) -> None:
        if plan.lead_w <= 0:
            return
        if not self.has_lead:
            raise InvalidInput(
                f"collection {self.collection!r} was created by an older chronorank (schema 1) without lead "
                f"vectors, and Qdrant cannot add a named vector to an existing collection; re-create it "
                f"(delete the collection and add() the documents again) to get the lead field, or pass "
                f"lead_weight=0 (config='index(lead_weight=0, ...)') to search it as before."
            )
        if plan.lead_tokens != self.lead_tokens:
            raise InvalidInput(
                f"lead_tokens={plan.lead_tokens} but collection {self.collection!r} stores leads of at most "
                f"{self.lead_tokens} terms; use lead_tokens={self.lead_tokens}, or add the documents to a new "
                "collection built with the lead_tokens you want."
            )

    @staticmethod
    def formula(
        plan: QueryPlan, max_bm25: float, slots: Mapping[str, str], max_lead: float = 0.0, lay: Any = None,
    ) -> tuple[Any, dict[str, Any]]:
        """The compiled score as a Qdrant expression plus its ``defaults``."""
        lay = lay or _Layout()
        fields = {"start": lay.start_key, "end": lay.end_key}
        fields.update({name: slots.get(name, "$score[9]") for name in ("cos", "bm25", "lead")})
        expr = plan.score_expr(max_bm25 if "bm25" in slots else 0.0, max_lead if "lead" in slots else 0.0)
        defaults: dict[str, Any] = {lay.start_key: plan.now, lay.end_key: plan.now}
        for s in slots.values():
            defaults[s] = 0.0
        return cx.to_qdrant(expr, fields), defaults

    def _query_vector(self, topical: str, vector: Any, plan: QueryPlan, lanes: Lanes) -> list[float] | None:
        if vector is not None:
            return as_matrix(vector, self.dim, "vector")[0].astype(np.float64).tolist()
        if self.embedder is None:
            if plan.dense_w > 0:
                raise InvalidInput(
                    "this store has no embedder to embed the query; pass vector=... to search(), an "
                    "embedder to QdrantStore(...), or dense_weight=0 for keywords only."
                )
            return None
        if plan.dense_w == 0 and not lanes.windows and lanes.dense == 0:
            return None
        q = np.asarray(embed_queries(self.embedder, [topical]), dtype=np.float32)  # e5: the "query: " side
        return as_matrix(q, self.dim, "query embedding")[0].astype(np.float64).tolist()

    def _query_sparse(
        self, terms: Mapping[int, float], plan: QueryPlan, only: Collection[int] | None = None,
    ) -> tuple[Any, Any]:
        """Query term weights for the body: the count (a version series counts SERIES_WEIGHT),
        times idf**idf_power (Qdrant's IDF modifier adds idf); for the lead: count x body idf
        (:func:`~chronorank.stores.bm25.lead_query_weights`). Document frequencies come from the
        ``_terms`` payload, one count per query term, only when either needs them."""
        m = _models()
        ids = sorted(terms)
        vals = [float(terms[t]) for t in ids]
        lead = None
        if plan.idf_power or plan.lead_w > 0:
            n_docs, known = self._frequencies(ids)
            df = {t: known.get(t, 0) for t in ids}
            if plan.idf_power:
                keep = [(t, v * bm25_idf(n_docs, df[t]) ** plan.idf_power) for t, v in zip(ids, vals) if df[t]]
                ids, vals = [t for t, _ in keep], [v for _, v in keep]
            if plan.lead_w > 0:
                lw = lead_query_weights(terms, df, n_docs, only)
                lidx = sorted(lw)
                lead = m.SparseVector(indices=lidx, values=[lw[t] for t in lidx]) if lidx else None
        return (m.SparseVector(indices=ids, values=vals) if ids else None), lead

    def _base_filter(self, plan: QueryPlan, user: Any = None) -> Any:
        m = _models()
        must: list[Any] = [] if user is None else [user]
        must_not: list[Any] = []
        if plan.exclude_future:
            must.append(m.Filter(should=[
                m.FieldCondition(key=self._lay.start_key, range=m.Range(lt=plan.ref) if plan.half_open else m.Range(lte=plan.ref)),
                m.IsEmptyCondition(is_empty=m.PayloadField(key=self._lay.start_key)),
            ]))
        if plan.drop_undated:
            must_not.append(m.IsEmptyCondition(is_empty=m.PayloadField(key=self._lay.start_key)))
        if not must and not must_not:
            return None
        return m.Filter(must=must or None, must_not=must_not or None)

    def _lanes(self, plan: QueryPlan, lanes: Lanes, qvec: Any, svec: Any, base: Any) -> list[tuple[str, Any]]:
        m = _models()

        def with_range(lo: float, hi: float) -> Any:
            cond = m.FieldCondition(key=self._lay.start_key, range=m.Range(gte=lo, lte=hi))
            must = [cond] + ([base] if base is not None else [])
            return m.Filter(must=must)

        out: list[tuple[str, Any]] = []
        if lanes.dense and qvec is not None and plan.dense_w > 0:
            out.append(("dense", m.Prefetch(query=qvec, using=self._lay.dense, filter=base, limit=lanes.dense)))
        if lanes.keyword and svec is not None and plan.keyword_w > 0:
            out.append(("keyword", m.Prefetch(query=svec, using=SPARSE, filter=base, limit=lanes.keyword)))
        seen = set()
        for days, limit in lanes.windows:
            lo, hi = plan.window(days)
            if (lo, hi) in seen:
                continue
            seen.add((lo, hi))
            q, using = (qvec, self._lay.dense) if qvec is not None else (svec, SPARSE)
            if q is None:
                continue
            out.append((f"last_{days:g}d", m.Prefetch(query=q, using=using, filter=with_range(lo, hi), limit=limit)))
        if lanes.newest and self._lay.newest:
            hi = plan.newest_bound()
            key = self._lay.start_key
            flt = m.Filter(must=[m.FieldCondition(key=key, range=m.Range(lte=hi))] + ([base] if base is not None else []))
            order = m.OrderByQuery(order_by=m.OrderBy(key=key, direction=m.Direction.DESC))
            out.append(("newest", m.Prefetch(query=order, filter=flt, limit=lanes.newest)))
        return out

    def _probe_requests(
        self, named: list[tuple[str, Any]], svec: Any, base: Any, diagnose: bool, plan: QueryPlan, lvec: Any = None,
    ) -> tuple[list[Any], list[str]]:
        """The probe: each lane's ids (``diagnose``), the BM25 maximum and the lead's maximum."""
        m = _models()
        reqs, names = [], []
        if diagnose:
            for name, p in named:
                reqs.append(m.QueryRequest(query=p.query, using=p.using, filter=p.filter, limit=p.limit,
                                           with_payload=self._lay.id_payload()))
                names.append(name)
        need_max = svec is not None and plan.keyword_w > 0
        if need_max and "keyword" not in names:
            reqs.append(m.QueryRequest(query=svec, using=SPARSE, filter=base, limit=1, with_payload=self._lay.id_payload()))
            names.append("_max")
        if lvec is not None and plan.lead_w > 0:
            # the lead's maximum over the filtered collection (the body's comes from its lane)
            reqs.append(m.QueryRequest(query=lvec, using=LEAD, filter=base, limit=1, with_payload=self._lay.id_payload()))
            names.append("_lead")
        return reqs, names

    def _settle_lanes(
        self, named: list[tuple[str, Any]], svec: Any, base: Any, plan: QueryPlan, lvec: Any = None,
    ) -> tuple[list[Any], float, float, dict[str, dict[str, int]], int]:
        """Every lane's members, as :data:`chronorank.types.TIE_RULE` cuts the lane, and the BM25
        and lead maxima: (the pool's point ids, max_bm25, max_lead, id -> {lane: rank}, requests).

        A lane's limit can fall among equal scores (equal dates, for the newest lane), and the
        engine orders those its own way -- local mode sorts with numpy's unstable sort, whose
        order among equal keys differs from one CPU to another -- so which documents entered the
        pool depended on the machine. Each lane asks for one row past its limit, and again for
        twice as many while the last row ties the limit-th, so every row tied at the cut comes
        back; the members are the lane's best rows by its key (the score; the date for the
        newest lane), equal keys by TIE_RULE (:func:`chronorank.types.best_first`: the newer
        first, undated last, then the smaller id) -- the order PgVectorStore's lanes state in
        SQL. One batched request, and one more a round only where a lane's cut is tied."""
        m = _models()
        keys = [k for k in (self._lay.id_key, self._lay.start_key) if k]
        extra: list[tuple[str, Any]] = []
        if svec is not None and plan.keyword_w > 0 and "keyword" not in dict(named):
            extra.append(("_max", m.QueryRequest(query=svec, using=SPARSE, filter=base, limit=1, with_payload=keys)))
        if lvec is not None and plan.lead_w > 0:
            # the lead's maximum over the filtered collection (the body's comes from its lane)
            extra.append(("_lead", m.QueryRequest(query=lvec, using=LEAD, filter=base, limit=1, with_payload=keys)))
        ask = {name: int(p.limit) + 1 for name, p in named}
        got: dict[str, list[Any]] = {}
        pending = [name for name, _ in named]
        maxima: dict[str, float] = {}
        rounds = 0
        while pending or extra:
            rounds += 1
            lanes = dict(named)
            reqs = [m.QueryRequest(query=lanes[n].query, using=lanes[n].using, filter=lanes[n].filter, limit=ask[n],
                                   with_payload=keys) for n in pending]
            res = self._call(self.client.query_batch_points, self.collection, requests=reqs + [r for _, r in extra])
            for (name, _), r in zip(extra, res[len(reqs):]):
                maxima[name] = float(r.points[0].score) if r.points else 0.0
            extra = []
            again = []
            for name, r in zip(pending, res):
                got[name] = list(r.points)
                lim = int(lanes[name].limit)
                key = self._lane_key(name, got[name])
                if len(got[name]) >= ask[name] and key[-1] == key[lim - 1]:  # the tie may go on past the last row
                    ask[name] *= 2
                    again.append(name)
            pending = again
        members: dict[Any, None] = {}
        lists = []
        for name, p in named:
            pts = got[name]
            ids = [self._lay.doc_id(x) for x in pts]
            start = np.array([self._lay.times(x.payload or {})[0] for x in pts], dtype=np.float64)
            order = best_first(self._lane_key(name, pts), np.arange(len(pts)), start, ids)[:int(p.limit)].tolist()
            members.update(dict.fromkeys(pts[i].id for i in order))
            lists.append((name, [ids[i] for i in order]))
            if name == "keyword" and pts:
                maxima["_max"] = float(pts[0].score)
        return list(members), maxima.get("_max", 0.0), maxima.get("_lead", 0.0), merge_lane_ranks(lists), rounds

    def _lane_key(self, name: str, pts: list[Any]) -> np.ndarray:
        """What a lane ranks by: the score, or for the newest lane the date (NaN-free: it reads dated rows)."""
        if name == "newest":
            return np.array([self._lay.times(x.payload or {})[0] for x in pts], dtype=np.float64)
        return np.array([float(x.score) for x in pts], dtype=np.float64)

    def _read_probe(self, names: list[str], results: list[Any]) -> tuple[float, float, dict[str, dict[str, int]]]:
        max_bm25 = max_lead = 0.0
        lists = []
        for name, res in zip(names, results):
            pts = res.points
            if name in ("keyword", "_max") and pts:
                max_bm25 = float(pts[0].score)
            if name == "_lead" and pts:
                max_lead = float(pts[0].score)
            if name not in ("_max", "_lead"):
                lists.append((name, [self._lay.doc_id(p) for p in pts]))
        return max_bm25, max_lead, merge_lane_ranks(lists)

    def _candidates(
        self, pts: list[Any], qvec: Any, plan: QueryPlan, max_bm25: float, lvec: Any = None, max_lead: float = 0.0,
    ) -> Candidates:
        n = len(pts)
        ids, recs = [], []
        start, end, cos, score = np.full(n, np.nan), np.full(n, np.nan), np.full(n, np.nan), np.zeros(n)
        lead = np.zeros(n)
        lq = {} if lvec is None else dict(zip(lvec.indices, lvec.values))
        q = None if qvec is None else np.asarray(qvec, dtype=np.float64)
        for i, p in enumerate(pts):
            pl = p.payload or {}
            # a point written by another tool has no "_id": fall back to the point's own id
            ids.append(self._lay.doc_id(p))
            recs.append(self._lay.record(p))
            start[i], end[i] = self._lay.times(pl)
            score[i] = p.score
            vecs = p.vector if isinstance(p.vector, dict) else {self._lay.dense: p.vector}
            vec = vecs.get(self._lay.dense) if self._lay.dense is not None else vecs.get(None, vecs.get(""))
            if q is not None and vec is not None:
                cos[i] = float(np.dot(np.asarray(vec, dtype=np.float64), q))
            lv = vecs.get(LEAD)
            if lq and lv is not None:  # the lead's dot product: no modifier, exact on the client
                lead[i] = sum(lq.get(t, 0.0) * v for t, v in zip(lv.indices, lv.values))
        # the engine reports one number; the BM25 part of similarity is recovered from it
        bm25 = np.zeros(n)
        wd, wk, wl = plan.sim_weights(max_bm25, max_lead if lq else 0.0)
        if wk > 0:
            # the strategy's factor, as the engine multiplied the similarity by it
            fx = STRATEGIES[plan.config.combine].factor_expr(cx.Var("w", None), plan.strength)
            f = cx.evaluate(fx if fx is not None else cx.Const(1.0), {"w": plan.weights(start, end)})
            total = wd + wk + wl
            known = wd / total * np.clip(np.nan_to_num(cos), 0, 1)
            if wl > 0:
                known = known + wl / total * lead / max_lead
            with np.errstate(divide="ignore", invalid="ignore"):
                sim = np.where(f > 0, score / f, np.nan)
                bm25 = np.maximum((sim - known) * total * max_bm25 / wk, 0.0)
        return Candidates(ids=ids, records=recs, score=score, cos=cos, bm25=bm25, start=start, end=end,
                          lead=lead if lq else None)

    def _pool(
        self, probe: list[Any], probed: list[str], plan: QueryPlan, prefetch: list[Any], pool: int, base: Any,
        qvec: Any, svec: Any, lvec: Any, vectors: bool,
    ) -> tuple[Candidates, float, float, dict[str, dict[str, int]]]:
        """fallback='client': the probe and every pool member with its exact cosine, BM25 and
        lead, in one batched request; the pool's texts come with the first signal's rows, the
        embeddings (``vectors``) with the cosine's -- else fetched by one ``retrieve`` only when
        the version cosine test runs (``_vector_lookup``)."""
        m = _models()
        dense = self._lay.dense
        cols = [(name, q, using) for name, q, using, on in (
            ("cos", qvec, dense, True),
            ("bm25", svec, SPARSE, plan.keyword_w > 0),
            ("lead", lvec, LEAD, plan.lead_w > 0),
        ) if q is not None and on]
        with_cos = bool(cols) and cols[0][0] == "cos"
        reqs = list(probe)
        for i, (name, q, using) in enumerate(cols):
            full = i == 0 or not with_cos  # the cosine's rows hold every pool member
            want = ([dense] if dense is not None else True) if (vectors and name == "cos") else False
            reqs.append(m.QueryRequest(prefetch=prefetch, query=q, using=using, filter=base, limit=pool,
                                       with_payload=True if full else self._lay.id_payload(), with_vector=want))
        results = self._call(self.client.query_batch_points, self.collection, requests=reqs) if reqs else []
        max_bm25, max_lead, lane_ids = self._read_probe(probed, results[:len(probe)])
        scores: dict[str, dict[str, float]] = {}
        points: dict[str, Any] = {}  # id -> the point with its payload
        for (name, _, _), res in zip(cols, results[len(probe):]):
            scores[name] = {self._lay.doc_id(p): float(p.score) for p in res.points}
            for p in res.points:
                points.setdefault(self._lay.doc_id(p), p)
        if max_bm25 <= 0:
            scores.pop("bm25", None)
        if max_lead <= 0:
            scores.pop("lead", None)
            max_lead = 0.0
        ids = list(points)
        n = len(ids)
        times = np.array([self._lay.times(points[d].payload or {}) for d in ids], dtype=np.float64).reshape(n, 2)
        emb: Any = None
        if "cos" in scores:
            emb = (_dense_rows([points[d] for d in ids], dense) if vectors
                   else self._vector_lookup([points[d].id for d in ids]))
        cand = Candidates(
            ids=ids, records=[self._lay.record(points[d]) for d in ids], score=np.zeros(n),
            cos=np.array([scores.get("cos", {}).get(d, 0.0) for d in ids], dtype=np.float64),
            bm25=np.array([scores.get("bm25", {}).get(d, 0.0) for d in ids], dtype=np.float64),
            lead=np.array([scores["lead"].get(d, 0.0) for d in ids], dtype=np.float64) if "lead" in scores else None,
            start=times[:, 0], end=times[:, 1], vectors=emb,
        )
        return cand, max_bm25, max_lead, lane_ids

    def _prepare(self, reqs: Sequence[Request], now: float, cfg: StoreConfig) -> list[Found]:
        """The preparation's requests (:func:`chronorank.stores.prepare.store_query`) as one
        batched request: a keyword request is the engine's BM25 (its texts, dates and, with the
        lead on, lead vectors), a pool request its dense and keyword lanes' texts."""
        m = _models()
        none = Found(ids=[], bm25=np.zeros(0), start=np.zeros(0), texts=[])
        if not self._exists():
            return [none for _ in reqs]
        batch: list[Any] = []
        parts: list[tuple[Request, list[int], Any]] = []  # request, its rows in the batch, its lead query
        for r in reqs:
            rows: list[int] = []
            lvec = None
            if isinstance(r, KeywordRequest):
                lead_w = r.lead_weight if self.has_lead else 0.0
                plan = plan_query(plain_intent(r.words), now, cfg.replace(**plain_overrides(lead_w)))
                terms = query_terms(r.words)
                svec, lvec = self._query_sparse(terms, plan) if terms else (None, None)
                if svec is not None:
                    rows.append(len(batch))
                    batch.append(m.QueryRequest(query=svec, using=SPARSE, filter=self._base_filter(plan), limit=r.n,
                                                with_payload=True, with_vector=[LEAD] if lvec is not None else False))
            else:
                plan = plan_query(plain_intent(r.text), now, cfg.replace(**plain_overrides()))
                base = self._base_filter(plan)
                qvec = self._query_vector(r.text, r.vector, plan, r.lanes)
                terms = query_terms(r.text) if (plan.keyword_w > 0 or qvec is None) else {}
                svec = self._query_sparse(terms, plan)[0] if terms else None
                for q, using, limit, on in ((qvec, self._lay.dense, r.lanes.dense, plan.dense_w > 0),
                                            (svec, SPARSE, r.lanes.keyword, plan.keyword_w > 0)):
                    if q is not None and limit and on:
                        rows.append(len(batch))
                        batch.append(m.QueryRequest(query=q, using=using, filter=base, limit=limit, with_payload=True))
            parts.append((r, rows, lvec))
        results = self._call(self.client.query_batch_points, self.collection, requests=batch) if batch else []
        out = []
        for r, rows, lvec in parts:
            pts: dict[str, Any] = {}
            for j in rows:
                for p in results[j].points:
                    pts.setdefault(self._lay.doc_id(p), p)
            ids = list(pts)
            n = len(ids)
            score = np.array([float(pts[d].score) for d in ids], dtype=np.float64)
            start = np.array([self._lay.times(pts[d].payload or {})[0] for d in ids], dtype=np.float64).reshape(n)
            lead = None
            if lvec is not None:
                lq = dict(zip(lvec.indices, lvec.values))
                lead = np.zeros(n)
                for i, d in enumerate(ids):
                    vec = pts[d].vector
                    lv = vec.get(LEAD) if isinstance(vec, dict) else None
                    if lv is not None:
                        lead[i] = sum(lq.get(t, 0.0) * v for t, v in zip(lv.indices, lv.values))
            order = best_first(score, np.arange(n), start, ids) if isinstance(r, KeywordRequest) else np.arange(n)
            out.append(Found(
                ids=[ids[i] for i in order.tolist()], bm25=score[order], start=start[order],
                texts=[str(self._lay.record(pts[ids[i]]).get("text") or "") for i in order.tolist()],
                lead=None if lead is None else lead[order]))
        return out

    def _vector_lookup(self, pids: list[Any]) -> Callable[[np.ndarray], np.ndarray | None]:
        """The pool's embeddings by position, for the version cosine test: fetched only when
        that test runs (the first hit and its off-topic same-series pages, one ``retrieve``),
        not with every pool member (pool x dim floats a search)."""
        dense = self._lay.dense

        def vectors(pos: np.ndarray) -> np.ndarray | None:
            want = [pids[i] for i in np.asarray(pos, dtype=np.int64).tolist()]
            pts = self._call(self.client.retrieve, self.collection, ids=want, with_payload=False,
                             with_vectors=[dense] if dense is not None else True)
            got = {}
            for p in pts:
                vecs = p.vector if isinstance(p.vector, dict) else {dense: p.vector}
                got[str(p.id)] = vecs.get(dense) if dense is not None else vecs.get(None, vecs.get(""))
            rows = [got.get(str(i)) for i in want]
            return None if any(r is None for r in rows) else np.asarray(rows, dtype=np.float64)

        return vectors

    def _call(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except InvalidInput as exc:
            if self._present and "does not exist" in str(exc):  # Qdrant Edge: deleted behind our back
                raise _Gone() from exc
            raise
        except ChronorankError:
            raise
        except Exception as exc:  # transport errors differ by client mode (httpx, grpc, local)
            name = type(exc).__name__
            if self._present and (getattr(exc, "status_code", None) == 404 or (
                    isinstance(exc, ValueError) and "not found" in str(exc))):
                raise _Gone() from exc  # the collection was deleted behind our back
            text = self._scrub(exc)
            if name in ("ResponseHandlingException", "ConnectError", "ConnectTimeout", "RpcError", "_InactiveRpcError"):
                err = ChronorankError(
                    f"Qdrant at collection {self.collection!r} is unreachable ({name}: {text}); check that "
                    "the server is up (deploy/README.md) and retry -- the client reconnects on the next call."
                )
            elif text != str(exc):  # the client's own message quotes a secret: re-raised masked
                err = ChronorankError(f"Qdrant call on collection {self.collection!r} failed ({name}: {text}).")
            else:
                raise
            # from None when the cause quotes a secret (a traceback would print it)
            raise err from (None if text != str(exc) else exc)

    def _scrub(self, text: Any) -> str:
        out = str(text)
        for secret in sorted(self._secrets, key=len, reverse=True):
            out = out.replace(secret, "***")
        return out

    def __repr__(self) -> str:
        return f"QdrantStore(collection={self.collection!r}, config={self.config.index.spec()!r})"


def _dense_rows(points: list[Any], dense: str | None) -> Callable[[np.ndarray], np.ndarray | None]:
    """The points' dense embeddings by position (returned with them)."""
    rows = []
    for p in points:
        vecs = p.vector if isinstance(p.vector, dict) else {dense: p.vector}
        rows.append(vecs.get(dense) if dense is not None else vecs.get(None, vecs.get("")))

    def vectors(pos: np.ndarray) -> np.ndarray | None:
        got = [rows[i] for i in np.asarray(pos, dtype=np.int64).tolist()]
        return None if any(r is None for r in got) else np.asarray(got, dtype=np.float64)

    return vectors


def _length_stats(prep: Any) -> tuple[float, float]:
    """The body's and the lead's average length over a first batch (1.0 where empty)."""
    body, lead = prep.lengths, prep.lead_lengths
    return (float(body.mean()) if body.size and body.mean() > 0 else 1.0,
            float(lead.mean()) if lead.size and lead.mean() > 0 else 1.0)


class _Gone(Exception):
    """The collection was there and is not any more (deleted by another client)."""


def _url_secrets(url: str | None, api_key: str | None) -> set[str]:
    """The secrets a server URL and API key hold (as written and URL-decoded): the password of
    ``http://user:PW@host``, ``?api_key=`` / ``?password=`` parameters and the key itself."""
    from urllib.parse import parse_qsl, unquote, urlsplit

    found: set[str] = set()
    if api_key:
        found.add(str(api_key))
    if url:
        parts = urlsplit(str(url))
        netloc = parts.netloc.rpartition("@")[0]  # the user info, to the last '@'
        if ":" in netloc:
            pw = netloc.split(":", 1)[1]
            found |= {pw, unquote(pw)}
        for key, value in parse_qsl(parts.query, keep_blank_values=True):
            if "key" in key.lower() or "password" in key.lower() or "token" in key.lower():
                found |= {value, unquote(value)}
    # a very short secret would blank out ordinary words
    return {v for v in found if len(v) >= 4}


def _is_local(client: Any) -> bool:
    """qdrant-client's local mode (the Python emulation), which ignores payload indexes."""
    return type(getattr(client, "_client", None)).__name__ == "QdrantLocal"


def _get(payload: Mapping[str, Any], key: str | None) -> Any:
    """A payload value by dotted key (``metadata.date``), None where absent."""
    if not key:
        return None
    cur: Any = payload
    for part in key.split("."):
        if not isinstance(cur, Mapping) or part not in cur:
            return None
        cur = cur[part]
    return cur


@dataclasses.dataclass(frozen=True)
class _Layout:
    """Where a collection keeps each field: chronorank's own payload, or a mapped one."""

    id_key: str | None = "_id"  # None: the point id is the document id
    text_key: str = "text"
    start_key: str = "_start"
    end_key: str = "_end"
    meta_key: str | None = "metadata"
    dense: str | None = DENSE  # None: the collection's unnamed vector
    own: bool = True
    newest: bool = True  # False: the date has no range index, so no order_by lane

    def id_payload(self) -> Any:
        return [self.id_key] if self.id_key else False

    def doc_id(self, point: Any) -> str:
        v = _get(point.payload or {}, self.id_key)
        return str(point.id if v is None else v)

    def times(self, pl: Mapping[str, Any]) -> tuple[float, float]:
        out = []
        for key in (self.start_key, self.end_key):
            v = _get(pl, key)
            out.append(float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else np.nan)
        return out[0], out[1]

    def record(self, point: Any) -> dict[str, Any]:
        pl = point.payload or {}
        if self.own and self.id_key == "_id":
            rec = {"id": str(pl.get("_id", point.id)), "text": pl.get("text", "")}
            for f in ("date", "updated", "valid_from", "valid_to"):
                rec[f] = pl.get(f)
            rec["metadata"] = pl.get("metadata", {})
            return rec
        meta = _get(pl, self.meta_key)
        return {"id": self.doc_id(point), "text": str(_get(pl, self.text_key) or ""), "date": _get(pl, self.start_key),
                "metadata": dict(meta) if isinstance(meta, Mapping) else {}}


def _check_columns(columns: Mapping[str, str] | None) -> dict[str, str] | None:
    out = column_roles(columns, ("text",), "{'text': 'page_content', 'date': 'metadata.date'}")
    for role, name in (out or {}).items():
        if not isinstance(name, str) or (role != "embedding" and not name):
            raise InvalidInput(f"columns[{role!r}]={name!r}; give a payload key (dotted for nested, e.g. 'metadata.date').")
    return out
