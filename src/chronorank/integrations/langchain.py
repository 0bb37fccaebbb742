"""LangChain: a time-aware retriever over any ``VectorStore`` and a document compressor.

``pip install "chronorank[langchain]"``::

    from chronorank.integrations.langchain import TemporalRetriever

    retriever = TemporalRetriever.from_vectorstore(
        store, kernel="exponential(half_life_days=180)", date_field="date", k=5, fetch_k=50
    )
    docs = retriever.invoke("what changed in the latest release")
    docs[0].metadata["chronorank_explain"]

Both classes rerank through ``TemporalReranker.rerank_columns``; returned documents are
copies carrying ``chronorank_*`` metadata (see ``METADATA_KEYS``).
"""

from __future__ import annotations

import asyncio
import math
import warnings
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Literal

from chronorank.errors import InvalidInput, require
from chronorank.filters import parse_filter
from chronorank.index.embedders import get_embedder
from chronorank.integrations._common import (
    DEFAULT_LANES_DAYS,
    METADATA_KEYS,
    METADATA_PREFIX,
    Lane,
    engine_asearch,
    engine_hits,
    engine_search,
    epoch_value,
    hit_metadata,
    mongo_lane_filter,
    plan_lanes,
    rerank_candidates,
    strip_metadata,
    union_pools,
    unique_key,
)
from chronorank.rerank import TemporalReranker
from chronorank.timeparse import resolve_now

require("langchain_core", extra="langchain", package="langchain-core")

from langchain_core.callbacks import (  # noqa: E402
    AsyncCallbackManagerForRetrieverRun,
    CallbackManagerForRetrieverRun,
    Callbacks,
)
from langchain_core.documents import BaseDocumentCompressor, Document  # noqa: E402
from langchain_core.embeddings import Embeddings  # noqa: E402
from langchain_core.retrievers import BaseRetriever  # noqa: E402
from langchain_core.vectorstores import InMemoryVectorStore, VectorStore  # noqa: E402
from pydantic import ConfigDict, Field, PrivateAttr  # noqa: E402

if TYPE_CHECKING:
    from chronorank.rerank import TemporalReranker
    from chronorank.types import Ranking

__all__ = [
    "METADATA_KEYS",
    "METADATA_PREFIX",
    "ChronorankEmbeddings",
    "ChronorankRetriever",
    "TemporalCompressor",
    "TemporalRetriever",
]

ScoreMode = Literal["auto", "relevance", "similarity", "distance"]

# Stores whose ``filter=`` takes Mongo-style operator dicts with ``$gte`` / ``$lt`` / ``$and``.
_MONGO_FILTER_STORES = frozenset(
    {"Chroma", "PGVector", "FAISS", "Pinecone", "PineconeVectorStore", "LanceDB"}
)


def _callable_lane_filter(field: str, lane: Lane) -> Callable[[Document], bool]:
    def keep(doc: Document) -> bool:
        return epoch_value(doc.metadata.get(field)) in lane

    return keep


def detect_lane_filter(store: VectorStore) -> Callable[[str, Lane], Any] | None:
    """How to express a date window as ``store``'s ``filter=`` argument, or None if unknown.

    ``InMemoryVectorStore`` takes a predicate over documents; the Mongo-style stores take
    ``{"$and": [{field: {"$gte": start}}, {field: {"$lt": end}}]}``. Other stores get no
    lanes unless you pass ``lane_filter=`` yourself.
    """
    if isinstance(store, InMemoryVectorStore):
        return _callable_lane_filter
    for cls in type(store).__mro__:
        if cls.__name__ in _MONGO_FILTER_STORES:
            return mongo_lane_filter
    return None


def _doc_key(doc: Document) -> Any:
    return unique_key(getattr(doc, "id", None), doc.page_content, doc.metadata)


def _with_metadata(doc: Document, extra: dict[str, Any]) -> Document:
    return Document(
        page_content=doc.page_content,
        metadata={**strip_metadata(doc.metadata), **extra},
        id=getattr(doc, "id", None),
    )


def _scored(hit: Any) -> dict[str, Any]:
    meta = hit_metadata(hit)
    meta["relevance_score"] = meta["chronorank_score"]  # LangChain's reranker convention
    return meta


def _to_documents(ranking: Ranking) -> list[Document]:
    return [_with_metadata(hit.payload, _scored(hit)) for hit in ranking]


def _and_store_filter(user: Any, lane: Any) -> Any:
    """The user's own ``filter=`` and a lane's, both at once (a lane never replaces a tenant
    or ACL filter): predicates are chained, Mongo-style dicts joined under ``$and``."""
    if user is None:
        return lane
    if callable(lane):
        if not callable(user):
            raise InvalidInput(
                f"search_kwargs['filter']={user!r} is not a predicate, but this store filters with "
                "callables (doc -> bool); pass a callable filter."
            )

        def both(doc: Document) -> bool:
            return bool(user(doc)) and bool(lane(doc))

        return both
    if isinstance(user, dict) and isinstance(lane, dict):
        return {"$and": [user, lane]}
    raise InvalidInput(
        f"cannot combine search_kwargs['filter']={user!r} with the time lanes' filter {lane!r}; "
        "give the filter as a Mongo-style dict, or pass lanes=() to search without lanes."
    )


def _check_sizes(k: int, fetch_k: int, lane_k: int | None) -> None:
    if k < 1 or fetch_k < k:
        raise InvalidInput(
            f"need 1 <= k <= fetch_k, got k={k} fetch_k={fetch_k}; "
            "raise fetch_k (about 10 x k is a good start, see docs/integrations.md)"
        )
    if lane_k is not None and lane_k < 1:
        raise InvalidInput(f"lane_k must be >= 1 or None, got {lane_k!r}")


class TemporalRetriever(BaseRetriever):
    """Retrieve ``fetch_k`` candidates from a vector store, add time-sliced lanes, rerank.

    The base search asks the store for the ``fetch_k`` most similar documents. When the
    query has temporal intent and the store understands metadata filters, one more search
    per date window ("lane") fetches ``lane_k`` documents from that window, so the fresh
    (or, for as-of queries, the period-correct) document reaches the reranker even when it
    sits far down the similarity list. Lanes need the date stored as a *number* (epoch
    seconds) in ``lane_field`` (default: ``date_field``); range filters on strings do not
    work in most stores.

    Candidates from all lanes are merged (each document once), sorted by similarity and
    reranked by ``reranker.rerank_columns``; the top ``k`` come back with ``chronorank_*``
    metadata.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    vectorstore: VectorStore
    reranker: Any
    date_field: str = "date"
    valid_from_field: str | None = None
    valid_to_field: str | None = None
    k: int = 4
    fetch_k: int = 40
    lanes: tuple[float, ...] = DEFAULT_LANES_DAYS
    """Lane widths in days (last 30 / 180 days for recent queries); ``()`` turns lanes off."""
    lane_k: int | None = None
    """Documents fetched per lane; default ``max(k, fetch_k // 4)``."""
    lane_field: str | None = None
    lane_filter: Any = "auto"
    """``"auto"``, None (no lanes), or ``callable(field, Lane) -> store filter``."""
    score: ScoreMode = "auto"
    """``relevance``: ``similarity_search_with_relevance_scores``; ``similarity``/``distance``:
    ``similarity_search_with_score`` (distances are negated); ``auto``: relevance, else raw score."""
    search_kwargs: dict[str, Any] = Field(default_factory=dict)
    now: Any = None
    """Fixed "now" for every call (None = wall clock); ``invoke(q, now=...)`` overrides it."""
    filter: Any = None
    """A :mod:`chronorank.filters` dict kept client-side over the fetched pool (the same meaning
    as inside the engines); a store-side prefilter in the store's own syntax goes in
    ``search_kwargs={"filter": ...}``."""

    @classmethod
    def from_vectorstore(
        cls,
        store: VectorStore,
        *,
        kernel: Any = "exponential(half_life_days=180)",
        date_field: str | None = None,
        k: int = 4,
        fetch_k: int = 40,
        reranker: TemporalReranker | None = None,
        lanes: Sequence[float] = DEFAULT_LANES_DAYS,
        lane_k: int | None = None,
        lane_field: str | None = None,
        lane_filter: Any = "auto",
        score: ScoreMode = "auto",
        search_kwargs: dict[str, Any] | None = None,
        valid_from_field: str | None = None,
        valid_to_field: str | None = None,
        now: Any = None,
        filter: Any = None,  # noqa: A002 - LangChain's name
        **reranker_kwargs: Any,
    ) -> TemporalRetriever:
        """Wrap ``store``; ``kernel`` and ``reranker_kwargs`` build the ``TemporalReranker``.

        ``date_field`` defaults to a passed reranker's own ``date_field`` (else ``"date"``).
        """
        date_field = date_field or getattr(reranker, "date_field", None) or "date"
        sk = search_kwargs or {}
        if "k" not in sk:
            _check_sizes(k, int(sk.get("fetch_k", fetch_k)), lane_k)
        if reranker is None:
            reranker = TemporalReranker(kernel=kernel, date_field=date_field, **reranker_kwargs)
        elif reranker_kwargs:
            raise InvalidInput(
                f"got reranker= and reranker settings {sorted(reranker_kwargs)}; pass one of them"
            )
        return cls(
            vectorstore=store,
            reranker=reranker,
            date_field=date_field,
            k=k,
            fetch_k=fetch_k,
            lanes=tuple(float(d) for d in lanes),
            lane_k=lane_k,
            lane_field=lane_field,
            lane_filter=lane_filter,
            score=score,
            search_kwargs=dict(search_kwargs or {}),
            valid_from_field=valid_from_field,
            valid_to_field=valid_to_field,
            now=now,
            filter=parse_filter(filter),
        )

    _warned_lanes: bool = PrivateAttr(default=False)

    def model_post_init(self, __context: Any) -> None:
        # LangChain's convention: as_retriever(search_kwargs={"k": 10}) sets how many come back
        kw = dict(self.search_kwargs)
        if "k" in kw:
            self.k = int(kw.pop("k"))
            self.fetch_k = max(self.fetch_k, self.k)
        if "fetch_k" in kw:
            self.fetch_k = int(kw.pop("fetch_k"))
        self.search_kwargs = kw
        if "date_field" not in self.model_fields_set and getattr(self.reranker, "date_field", None):
            self.date_field = self.reranker.date_field  # a passed reranker's field is honoured
        _check_sizes(self.k, self.fetch_k, self.lane_k)
        if not (self.lane_filter in ("auto", None) or callable(self.lane_filter)):
            raise InvalidInput(
                f"lane_filter must be 'auto', None or a callable(field, Lane), got {self.lane_filter!r}"
            )

    # --- planning ----------------------------------------------------------------

    def _filter_builder(self) -> Callable[[str, Lane], Any] | None:
        if not self.lanes or self.lane_filter is None:
            return None
        if self.lane_filter == "auto":
            found = detect_lane_filter(self.vectorstore)
            if found is None and not self._warned_lanes:
                self._warned_lanes = True
                warnings.warn(
                    f"chronorank: {type(self.vectorstore).__name__} is not a store whose filter= chronorank "
                    "knows how to write, so no time lanes are searched (only the base search of fetch_k "
                    "documents): a fresh document outside it cannot be promoted. Pass "
                    "lane_filter=callable(field, Lane) -> that store's filter, or lanes=() to silence this.",
                    RuntimeWarning,
                    stacklevel=4,
                )
            return found
        if self.search_kwargs.get("filter") is not None:
            raise InvalidInput(
                "search_kwargs['filter'] is set and lane_filter is your own callable: chronorank cannot "
                "AND the two, and a lane must never drop your filter. Make lane_filter return the "
                "combined filter and leave search_kwargs['filter'] unset, or pass lanes=()."
            )
        return self.lane_filter  # type: ignore[no-any-return]

    def lane_plan(self, query: str, now: Any = None) -> list[Lane]:
        """The date windows this query would search besides the base search."""
        if self._filter_builder() is None:
            return []
        t_now = self._resolve(now)
        intent = self.reranker.intent(query, now=t_now)
        return plan_lanes(intent, t_now, self.lanes)

    def _now(self, now: Any) -> Any:
        return self.now if now is None else now

    def _resolve(self, now: Any) -> float:
        """One reference time per call, shared by lane planning and reranking."""
        return float(resolve_now(self._now(now)))

    def _calls(self, query: str, now: Any) -> list[tuple[int, dict[str, Any], Lane | None]]:
        calls: list[tuple[int, dict[str, Any], Lane | None]] = [
            (self.fetch_k, dict(self.search_kwargs), None)
        ]
        builder = self._filter_builder()
        if builder is None:
            return calls
        lane_k = self.lane_k or max(self.k, self.fetch_k // 4)
        field = self.lane_field or self.date_field
        user = self.search_kwargs.get("filter")
        for lane in self.lane_plan(query, now):
            kw = dict(self.search_kwargs)
            kw["filter"] = _and_store_filter(user, builder(field, lane))
            calls.append((lane_k, kw, lane))
        return calls

    # --- searching ---------------------------------------------------------------

    def _search(self, query: str, k: int, kwargs: dict[str, Any]) -> list[tuple[Document, float]]:
        store = self.vectorstore
        if self.score in ("auto", "relevance"):
            try:
                return store.similarity_search_with_relevance_scores(query, k=k, **kwargs)
            except NotImplementedError:
                if self.score == "relevance":
                    raise
        pairs = store.similarity_search_with_score(query, k=k, **kwargs)
        return self._orient(pairs)

    async def _asearch(
        self, query: str, k: int, kwargs: dict[str, Any]
    ) -> list[tuple[Document, float]]:
        store = self.vectorstore
        if self.score in ("auto", "relevance"):
            try:
                return await store.asimilarity_search_with_relevance_scores(query, k=k, **kwargs)
            except NotImplementedError:
                if self.score == "relevance":
                    raise
        pairs = await store.asimilarity_search_with_score(query, k=k, **kwargs)
        return self._orient(pairs)

    def _orient(self, pairs: list[tuple[Document, float]]) -> list[tuple[Document, float]]:
        if self.score == "distance":
            return [(d, -float(s)) for d, s in pairs]
        return [(d, float(s)) for d, s in pairs]

    @staticmethod
    def _lane_failed(lane: Lane, exc: BaseException) -> None:
        warnings.warn(
            f"chronorank: the filtered search for lane {lane} failed ({exc!r}); continuing "
            "without it. Lanes need the date as a number (epoch seconds) in lane_field and a "
            "store that accepts the filter; pass lanes=() to silence this.",
            RuntimeWarning,
            stacklevel=3,
        )

    def search_query(self, query: str, now: Any = None) -> str:
        """What the store is searched with: the intent's topical query ("as of March 2021"
        and the like removed; they only dilute similarity), else the query itself."""
        intent = self.reranker.intent(query, now=self._resolve(now))
        return (getattr(intent, "topical_query", None) or "").strip() or query

    def candidates(self, query: str, *, now: Any = None) -> list[tuple[Document, float]]:
        """The merged candidate pool ``(document, similarity)``, best similarity first."""
        pools = []
        text = self.search_query(query, now)
        for k, kw, lane in self._calls(query, now):
            if lane is None:
                pools.append(self._search(text, k, kw))
                continue
            try:
                pools.append(self._search(text, k, kw))
            except Exception as exc:  # a store that rejects the filter must not break retrieval
                self._lane_failed(lane, exc)
        return self._merge(pools)

    async def acandidates(self, query: str, *, now: Any = None) -> list[tuple[Document, float]]:
        """Async :meth:`candidates`; lanes are searched concurrently."""
        calls = self._calls(query, now)
        text = self.search_query(query, now)
        results = await asyncio.gather(
            *(self._asearch(text, k, kw) for k, kw, _ in calls), return_exceptions=True
        )
        pools = []
        for (_, _, lane), res in zip(calls, results):
            if isinstance(res, BaseException):
                if lane is None or not isinstance(res, Exception):
                    raise res
                self._lane_failed(lane, res)
                continue
            pools.append(res)
        return self._merge(pools)

    @staticmethod
    def _merge(pools: list[list[tuple[Document, float]]]) -> list[tuple[Document, float]]:
        merged = union_pools(pools, _doc_key)
        # stable sort by similarity: rank_before is the similarity rank over the whole pool
        return sorted(merged, key=lambda p: -p[1] if not math.isnan(p[1]) else math.inf)

    def rerank_pool(
        self, query: str, pool: Sequence[tuple[Document, float]], *, k: int | None, now: Any
    ) -> Ranking:
        """Rerank an already fetched pool with the core; the ``Ranking`` keeps all columns."""
        docs = [d for d, _ in pool]
        return rerank_candidates(
            self.reranker,
            query,
            scores=[s for _, s in pool],
            metadatas=[d.metadata for d in docs],
            ids=[getattr(d, "id", None) or i for i, d in enumerate(docs)],
            payloads=docs,
            date_field=self.date_field,
            valid_from_field=self.valid_from_field,
            valid_to_field=self.valid_to_field,
            top_k=k,
            now=self._now(now),
            filter=self.filter,
        )

    def _get_relevant_documents(
        self,
        query: str,
        *,
        run_manager: CallbackManagerForRetrieverRun,
        now: Any = None,
        k: int | None = None,
    ) -> list[Document]:
        t_now = self._resolve(now)
        pool = self.candidates(query, now=t_now)
        return _to_documents(self.rerank_pool(query, pool, k=k or self.k, now=t_now))

    async def _aget_relevant_documents(
        self,
        query: str,
        *,
        run_manager: AsyncCallbackManagerForRetrieverRun,
        now: Any = None,
        k: int | None = None,
    ) -> list[Document]:
        t_now = self._resolve(now)
        pool = await self.acandidates(query, now=t_now)
        return _to_documents(self.rerank_pool(query, pool, k=k or self.k, now=t_now))


class TemporalCompressor(BaseDocumentCompressor):
    """Rerank the documents an existing pipeline retrieved (``ContextualCompressionRetriever``).

    The similarity of each document is read from ``metadata[score_field]``; when any
    document lacks it, the input order stands in for similarity (``1 - i/n``).
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    reranker: Any
    date_field: str = "date"
    score_field: str | None = "relevance_score"
    valid_from_field: str | None = None
    valid_to_field: str | None = None
    top_k: int | None = None
    now: Any = None

    def model_post_init(self, __context: Any) -> None:
        if "date_field" not in self.model_fields_set and getattr(self.reranker, "date_field", None):
            self.date_field = self.reranker.date_field  # a passed reranker's field is honoured

    @classmethod
    def build(
        cls,
        *,
        kernel: Any = "exponential(half_life_days=180)",
        date_field: str = "date",
        score_field: str | None = "relevance_score",
        top_k: int | None = None,
        now: Any = None,
        **reranker_kwargs: Any,
    ) -> TemporalCompressor:
        """Build the compressor and its ``TemporalReranker`` in one call."""
        reranker = TemporalReranker(kernel=kernel, date_field=date_field, **reranker_kwargs)
        return cls(
            reranker=reranker, date_field=date_field, score_field=score_field, top_k=top_k, now=now
        )

    def rerank(self, documents: Sequence[Document], query: str, now: Any = None) -> Ranking:
        docs = list(documents)
        field = self.score_field
        scores = [None if field is None else d.metadata.get(field) for d in docs]
        return rerank_candidates(
            self.reranker,
            query,
            scores=scores,
            metadatas=[d.metadata for d in docs],
            ids=[getattr(d, "id", None) or i for i, d in enumerate(docs)],
            payloads=docs,
            date_field=self.date_field,
            valid_from_field=self.valid_from_field,
            valid_to_field=self.valid_to_field,
            top_k=self.top_k,
            now=self.now if now is None else now,
        )

    def compress_documents(
        self, documents: Sequence[Document], query: str, callbacks: Callbacks | None = None
    ) -> Sequence[Document]:
        return _to_documents(self.rerank(documents, query))

    async def acompress_documents(
        self, documents: Sequence[Document], query: str, callbacks: Callbacks | None = None
    ) -> Sequence[Document]:
        return self.compress_documents(documents, query, callbacks)


# --- retriever over chronorank's own engines --------------------------------------------


class ChronorankRetriever(BaseRetriever):
    """A LangChain retriever over a ``TemporalIndex``, ``QdrantStore`` or ``PgVectorStore``.

    The engine ranks the whole corpus (or its lanes) itself, so a LangChain user gets the
    engine's quality, not a rerank of a similarity top-k::

        retriever = ChronorankRetriever(engine=index, k=5, filter={"project": "flask"})
        chain = retriever | format_docs | prompt | llm
        retriever.invoke("what changed in the latest flask release", now="2025-01-01")

    ``filter`` (:mod:`chronorank.filters`) is applied inside the engine, ANDed with every
    lane; ``invoke(q, filter=...)`` narrows it further, never widens it. ``search_kwargs``
    go to ``engine.search`` (``k`` there sets how many come back, LangChain's convention).
    Documents carry the stored metadata, the date fields and the ``chronorank_*`` keys, plus
    ``relevance_score``; ``id`` is the chronorank id.

    Serialisation: LangChain's ``dumps`` writes a "not_implemented" stub for this class, and
    ``loads`` would refuse it anyway: it holds a live engine (an index in memory, a database
    connection) that no JSON can carry. Save the engine (``index.save(path)``) and build the
    retriever again around ``TemporalIndex.load(path)``.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    engine: Any
    k: int = 4
    filter: dict[str, Any] | None = None
    now: Any = None
    search_kwargs: dict[str, Any] = Field(default_factory=dict)

    def model_post_init(self, __context: Any) -> None:
        kw = dict(self.search_kwargs)
        if "k" in kw:
            self.k = int(kw.pop("k"))
        if "filter" in kw:
            raise InvalidInput("give the metadata filter as ChronorankRetriever(filter=...), not in search_kwargs.")
        self.search_kwargs = kw
        if isinstance(self.k, bool) or self.k < 1:
            raise InvalidInput(f"k={self.k!r}; give a positive integer such as 4.")
        parse_filter(self.filter)  # fail at construction, not at the first query
        if not callable(getattr(self.engine, "search", None)):
            raise InvalidInput(
                f"engine={self.engine!r} has no search(); give a TemporalIndex, QdrantStore or PgVectorStore."
            )

    def _call_args(self, now: Any, k: int | None, flt: Any) -> dict[str, Any]:
        """The engine call for ``invoke(q, now=, k=, filter=)``: the call's filter ANDed with ours."""
        return {"k": k or self.k, "now": self.now if now is None else now, "filters": (self.filter, flt),
                **self.search_kwargs}

    def _documents(self, ranking: Ranking) -> list[Document]:
        out = []
        for doc_id, text, meta, score in engine_hits(ranking):
            meta["relevance_score"] = score
            out.append(Document(page_content=text, metadata=meta, id=doc_id))
        return out

    def _get_relevant_documents(
        self,
        query: str,
        *,
        run_manager: CallbackManagerForRetrieverRun,
        now: Any = None,
        k: int | None = None,
        filter: dict[str, Any] | None = None,  # noqa: A002
    ) -> list[Document]:
        return self._documents(engine_search(self.engine, query, **self._call_args(now, k, filter)))

    async def _aget_relevant_documents(
        self,
        query: str,
        *,
        run_manager: AsyncCallbackManagerForRetrieverRun,
        now: Any = None,
        k: int | None = None,
        filter: dict[str, Any] | None = None,  # noqa: A002
    ) -> list[Document]:
        return self._documents(await engine_asearch(self.engine, query, **self._call_args(now, k, filter)))


class ChronorankEmbeddings(Embeddings):
    """chronorank's embedders as LangChain ``Embeddings`` (``"default"``: the bundled MiniLM
    ONNX model, offline; ``"hashing"``; or any chronorank ``Embedder``), so a LangChain vector
    store and a chronorank index embed alike."""

    def __init__(self, embedder: Any = "default") -> None:
        emb = get_embedder(embedder)
        if emb is None:
            raise InvalidInput("embedder=None has no vectors; give 'default', 'hashing' or an Embedder.")
        self.embedder = emb

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        return [list(map(float, row)) for row in self.embedder.embed(list(texts))]

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]
