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
from chronorank.integrations._common import (
    DEFAULT_LANES_DAYS,
    METADATA_KEYS,
    METADATA_PREFIX,
    Lane,
    epoch_value,
    hit_metadata,
    mongo_lane_filter,
    plan_lanes,
    rerank_candidates,
    strip_metadata,
    union_pools,
    unique_key,
)

require("langchain_core", extra="langchain", package="langchain-core")

from langchain_core.callbacks import (  # noqa: E402
    AsyncCallbackManagerForRetrieverRun,
    CallbackManagerForRetrieverRun,
    Callbacks,
)
from langchain_core.documents import BaseDocumentCompressor, Document  # noqa: E402
from langchain_core.retrievers import BaseRetriever  # noqa: E402
from langchain_core.vectorstores import InMemoryVectorStore, VectorStore  # noqa: E402
from pydantic import ConfigDict, Field  # noqa: E402

if TYPE_CHECKING:
    from chronorank.rerank import TemporalReranker
    from chronorank.types import Ranking

__all__ = ["METADATA_KEYS", "METADATA_PREFIX", "TemporalCompressor", "TemporalRetriever"]

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


def _to_documents(ranking: Ranking) -> list[Document]:
    return [_with_metadata(hit.payload, hit_metadata(hit)) for hit in ranking]


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

    @classmethod
    def from_vectorstore(
        cls,
        store: VectorStore,
        *,
        kernel: Any = "exponential(half_life_days=180)",
        date_field: str = "date",
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
        **reranker_kwargs: Any,
    ) -> TemporalRetriever:
        """Wrap ``store``; ``kernel`` and ``reranker_kwargs`` build the ``TemporalReranker``."""
        _check_sizes(k, fetch_k, lane_k)
        if reranker is None:
            from chronorank.rerank import TemporalReranker

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
        )

    def model_post_init(self, __context: Any) -> None:
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
            return detect_lane_filter(self.vectorstore)
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
        from chronorank.timeparse import resolve_now

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
        for lane in self.lane_plan(query, now):
            kw = dict(self.search_kwargs)
            kw["filter"] = builder(field, lane)
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

    def candidates(self, query: str, *, now: Any = None) -> list[tuple[Document, float]]:
        """The merged candidate pool ``(document, similarity)``, best similarity first."""
        pools = []
        for k, kw, lane in self._calls(query, now):
            if lane is None:
                pools.append(self._search(query, k, kw))
                continue
            try:
                pools.append(self._search(query, k, kw))
            except Exception as exc:  # a store that rejects the filter must not break retrieval
                self._lane_failed(lane, exc)
        return self._merge(pools)

    async def acandidates(self, query: str, *, now: Any = None) -> list[tuple[Document, float]]:
        """Async :meth:`candidates`; lanes are searched concurrently."""
        calls = self._calls(query, now)
        results = await asyncio.gather(
            *(self._asearch(query, k, kw) for k, kw, _ in calls), return_exceptions=True
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
        from chronorank.rerank import TemporalReranker

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
