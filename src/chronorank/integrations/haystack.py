"""Haystack: a retriever component over chronorank's engines and a ranker component.

``pip install "chronorank[haystack]"``::

    from chronorank.integrations.haystack import TemporalRanker

    pipe.add_component("retriever", InMemoryEmbeddingRetriever(store, top_k=50))
    pipe.add_component("ranker", TemporalRanker(kernel="exponential(half_life_days=180)", top_k=5))
    pipe.connect("retriever.documents", "ranker.documents")

The ranker reranks through ``TemporalReranker.rerank_columns``; output documents are
copies with ``score = chronorank_score`` and the ``chronorank_*`` keys in ``meta``.

``ChronorankRetriever`` searches a ``TemporalIndex``, ``QdrantStore`` or ``PgVectorStore``
itself (the engine's own quality, with metadata ``filters`` applied inside it)::

    pipe.add_component("retriever", ChronorankRetriever(engine_config={"kind": "index", "path": "docs.idx"}))
    pipe.run({"retriever": {"query": "what changed in the latest release", "filters": {...}}})

Both components are registered under ``haystack_integrations.components.chronorank`` (the
namespace Haystack trusts by default), so ``Pipeline.loads(pipe.dumps())`` works without
``allowed_modules``.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from chronorank.errors import InvalidInput, require
from chronorank.filters import parse_filter
from chronorank.integrations._common import (
    METADATA_KEYS,
    METADATA_PREFIX,
    engine_hits,
    engine_search,
    hit_metadata,
    open_engine,
    rerank_candidates,
    strip_metadata,
)
from chronorank.rerank import TemporalReranker

require("haystack", extra="haystack", package="haystack-ai")

from haystack import Document, component, default_from_dict, default_to_dict  # noqa: E402

if TYPE_CHECKING:
    from chronorank.types import Ranking

__all__ = ["METADATA_KEYS", "METADATA_PREFIX", "ChronorankRetriever", "TemporalRanker", "from_haystack_filters"]

# the module Haystack's registry and pipeline files name; it re-exports these classes
_HAYSTACK_MODULE = "haystack_integrations.components.chronorank"


@component
class TemporalRanker:
    """Rerank documents by their score and age, honouring the query's temporal intent.

    The similarity is ``document.score`` (the retriever's); when a document has none, the
    input order stands in (``1 - i/n``). The date is read from ``document.meta[date_field]``.
    Every argument besides ``date_field``, ``top_k`` and the validity fields goes to
    ``TemporalReranker``; ``to_dict`` stores them, so the component serialises with its
    pipeline.
    """

    __module__ = _HAYSTACK_MODULE

    def __init__(
        self,
        kernel: str = "exponential(half_life_days=180)",
        date_field: str = "date",
        top_k: int | None = None,
        valid_from_field: str | None = None,
        valid_to_field: str | None = None,
        filters: dict[str, Any] | None = None,
        **reranker_kwargs: Any,
    ) -> None:
        if top_k is not None and top_k < 0:
            raise InvalidInput(f"top_k must be >= 0 or None, got {top_k!r}")
        # Haystack's syntax or chronorank's, kept client-side over the documents given
        self.filters = filters
        self._filter = parse_filter(from_haystack_filters(filters))

        self.kernel = kernel if isinstance(kernel, str) else repr(kernel)
        self.date_field = date_field
        self.top_k = top_k
        self.valid_from_field = valid_from_field
        self.valid_to_field = valid_to_field
        self.reranker_kwargs = dict(reranker_kwargs)
        self.reranker = TemporalReranker(kernel=kernel, date_field=date_field, **reranker_kwargs)

    def to_dict(self) -> dict[str, Any]:
        return default_to_dict(  # type: ignore[no-any-return]
            self,
            kernel=self.kernel,
            date_field=self.date_field,
            top_k=self.top_k,
            valid_from_field=self.valid_from_field,
            valid_to_field=self.valid_to_field,
            filters=self.filters,
            **self.reranker_kwargs,
        )

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TemporalRanker:
        if data.get("type") == f"{__name__}.TemporalRanker":  # saved before the move (see below)
            data = {**data, "type": f"{_HAYSTACK_MODULE}.TemporalRanker"}
        return default_from_dict(cls, data)  # type: ignore[no-any-return]

    def rank(
        self, query: str, documents: list[Document], top_k: int | None = None, now: Any = None
    ) -> Ranking:
        """The core's ``Ranking`` for these documents (payloads are the input documents)."""
        return rerank_candidates(
            self.reranker,
            query,
            scores=[d.score for d in documents],
            metadatas=[d.meta for d in documents],
            ids=[d.id for d in documents],
            payloads=documents,
            vectors=[d.embedding for d in documents],
            date_field=self.date_field,
            valid_from_field=self.valid_from_field,
            valid_to_field=self.valid_to_field,
            top_k=self.top_k if top_k is None else top_k,
            now=now,
            filter=self._filter,
        )

    @component.output_types(documents=list[Document])
    def run(
        self,
        query: str,
        documents: list[Document],
        top_k: int | None = None,
        now: Any = None,
    ) -> dict[str, list[Document]]:
        """Rerank ``documents`` for ``query``; ``now`` fixes the reference time (None = clock)."""
        ranking = self.rank(query, documents, top_k=top_k, now=now)
        out = []
        for hit in ranking:
            meta = hit_metadata(hit)
            doc: Document = hit.payload
            out.append(
                dataclasses.replace(
                    doc, score=meta["chronorank_score"], meta={**strip_metadata(doc.meta), **meta}
                )
            )
        return {"documents": out}


_OPS = {"==": "$eq", "!=": "$ne", ">": "$gt", ">=": "$gte", "<": "$lt", "<=": "$lte", "in": "$in", "not in": "$nin"}


def from_haystack_filters(filters: Any) -> dict[str, Any] | None:
    """Haystack's filter syntax (``{"field": "meta.project", "operator": "==", "value": ...}``,
    ``{"operator": "AND" | "OR", "conditions": [...]}``) as a :mod:`chronorank.filters` dict;
    a chronorank filter dict passes through unchanged."""
    if filters is None or filters == {}:
        return None
    if not isinstance(filters, dict):
        raise InvalidInput(f"filters={filters!r}; give a Haystack filter dict or a chronorank filter dict.")
    if "operator" not in filters:
        return filters  # already chronorank's (Mongo-style) language
    op = filters["operator"]
    if "conditions" in filters:
        if op not in ("AND", "OR", "NOT"):
            raise InvalidInput(f"Haystack filter operator {op!r}; chronorank supports AND, OR and NOT.")
        parts = [p for p in (from_haystack_filters(c) for c in filters["conditions"]) if p is not None]
        if op == "NOT":  # Haystack: the conditions do not all hold
            return {"$not": parts[0] if len(parts) == 1 else {"$and": parts}}
        return {"$and" if op == "AND" else "$or": parts}
    field = str(filters.get("field", ""))
    if not field.startswith("meta."):
        raise InvalidInput(
            f"Haystack filter field {field!r}; chronorank filters metadata, name it as 'meta.<key>'."
        )
    if op not in _OPS:
        raise InvalidInput(f"Haystack filter operator {op!r}; use one of {list(_OPS)} (or AND, OR, NOT).")
    if filters.get("value") is None:
        raise InvalidInput(
            f"Haystack filter {field} {op} None; chronorank compares values, and a missing field is not a "
            f"value it can match the same way on every engine. Supported operators: {list(_OPS)} with a "
            "string, number or bool (or a list for 'in' / 'not in')."
        )
    return {field[5:]: {_OPS[op]: filters.get("value")}}


@component
class ChronorankRetriever:
    """Retrieve from a chronorank engine (``TemporalIndex``, ``QdrantStore``, ``PgVectorStore``).

    ``engine``: a live engine; ``engine_config``: how to open one
    (:func:`chronorank.integrations._common.open_engine`, e.g. ``{"kind": "index", "path":
    "docs.idx"}``), which is what ``to_dict`` writes. The engine opens in ``warm_up`` (Haystack
    calls it before the first run; ``run`` does too when it was not called), so a pipeline loads
    while its database is unreachable. A retriever over a live engine serialises too; the
    engine itself is not in the file, and the loaded retriever's ``warm_up`` says to give
    ``engine_config``. ``filters`` (Haystack's syntax or chronorank's) are applied
    inside the engine and ANDed with the ``filters`` given to ``run``. Output documents carry
    the stored metadata, the date fields and the ``chronorank_*`` keys in ``meta``, and
    ``score = chronorank_score``.
    """

    __module__ = _HAYSTACK_MODULE

    def __init__(
        self,
        engine: Any = None,
        engine_config: dict[str, Any] | None = None,
        top_k: int = 10,
        filters: dict[str, Any] | None = None,
        now: Any = None,
        search_kwargs: dict[str, Any] | None = None,
        live_engine: str | None = None,
    ) -> None:
        if engine is None and engine_config is None and live_engine is None:
            raise InvalidInput("give engine= (a TemporalIndex or store) or engine_config= (how to open one).")
        if isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1:
            raise InvalidInput(f"top_k={top_k!r}; give a positive integer such as 10.")
        self.engine_config = None if engine_config is None else dict(engine_config)
        self.top_k = top_k
        self.filters = filters
        parse_filter(from_haystack_filters(filters))
        self.now = now
        self.search_kwargs = dict(search_kwargs or {})
        # the class name of the live engine a saved retriever was built over (no engine_config)
        self.live_engine = live_engine if engine is None else type(engine).__name__
        self.engine = engine  # opened by warm_up when None

    def warm_up(self) -> None:
        """Open the engine from ``engine_config`` (once); Haystack calls this before running."""
        if self.engine is not None:
            return
        if self.engine_config is None:
            raise InvalidInput(
                f"this ChronorankRetriever was saved from one over a live {self.live_engine}, which no file "
                "carries; give it engine_config= (e.g. {'kind': 'index', 'path': 'docs.idx'} after "
                "index.save('docs.idx')) before saving, or set retriever.engine before running."
            )
        self.engine = open_engine(self.engine_config)

    def to_dict(self) -> dict[str, Any]:
        extra = {} if self.engine_config is not None else {"live_engine": self.live_engine}
        return default_to_dict(  # type: ignore[no-any-return]
            self, engine_config=self.engine_config, top_k=self.top_k, filters=self.filters,
            now=self.now, search_kwargs=self.search_kwargs, **extra,
        )

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ChronorankRetriever:
        return default_from_dict(cls, data)  # type: ignore[no-any-return]

    @component.output_types(documents=list[Document])
    def run(
        self,
        query: str,
        top_k: int | None = None,
        filters: dict[str, Any] | None = None,
        now: Any = None,
    ) -> dict[str, list[Document]]:
        """The best ``top_k`` documents for ``query``; ``now`` fixes the reference time."""
        self.warm_up()
        ranking = engine_search(
            self.engine, query, k=top_k or self.top_k, now=self.now if now is None else now,
            filters=(from_haystack_filters(self.filters), from_haystack_filters(filters)), **self.search_kwargs,
        )
        docs = [Document(id=i, content=text, meta=meta, score=score) for i, text, meta, score in engine_hits(ranking)]
        return {"documents": docs}


# pipelines saved before the components moved under haystack_integrations name this module
component.registry.setdefault(f"{__name__}.TemporalRanker", TemporalRanker)
