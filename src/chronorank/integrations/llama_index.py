"""LlamaIndex: a retriever over chronorank's engines, a node postprocessor and a retriever wrapper.

``pip install "chronorank[llamaindex]"``::

    from chronorank.integrations.llama_index import TemporalPostprocessor, TemporalRetriever

    post = TemporalPostprocessor.build(kernel="exponential(half_life_days=180)", top_n=5)
    engine = index.as_query_engine(similarity_top_k=50, node_postprocessors=[post])

    retriever = TemporalRetriever.from_index(index, fetch_k=50, top_n=5)
    nodes = retriever.retrieve("what changed in the latest release")

    retriever = ChronorankRetriever(index_or_store, similarity_top_k=5, filters={"project": "flask"})
    engine = RetrieverQueryEngine.from_args(retriever, llm=llm)

``ChronorankRetriever`` lets the engine rank (its quality, filters inside the engine); the
other two rerank through ``TemporalReranker.rerank_columns``. Returned nodes are copies whose
metadata carries the ``chronorank_*`` keys (kept out of the LLM and embedding text) and
whose score is ``chronorank_score``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from chronorank.errors import InvalidInput, require
from chronorank.filters import parse_filter
from chronorank.integrations._common import (
    METADATA_KEYS,
    METADATA_PREFIX,
    engine_asearch,
    engine_hits,
    engine_search,
    hit_metadata,
    rerank_candidates,
    reranker_from_settings,
    reranker_settings,
    strip_metadata,
)
from chronorank.rerank import TemporalReranker

require("llama_index.core", extra="llamaindex", package="llama-index-core")

from llama_index.core.base.base_retriever import BaseRetriever  # noqa: E402
from llama_index.core.bridge.pydantic import Field, field_serializer, field_validator  # noqa: E402
from llama_index.core.postprocessor.types import BaseNodePostprocessor  # noqa: E402
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode  # noqa: E402

if TYPE_CHECKING:
    from chronorank.rerank import TemporalReranker
    from chronorank.types import Ranking

__all__ = [
    "METADATA_KEYS",
    "METADATA_PREFIX",
    "ChronorankRetriever",
    "TemporalPostprocessor",
    "TemporalRetriever",
    "from_llama_filters",
]


def _with_metadata(nws: NodeWithScore, extra: dict[str, Any]) -> NodeWithScore:
    node = nws.node
    keep = [k for k in node.excluded_llm_metadata_keys if not k.startswith(METADATA_PREFIX)]
    keep_e = [k for k in node.excluded_embed_metadata_keys if not k.startswith(METADATA_PREFIX)]
    copy = node.model_copy(
        update={
            "metadata": {**strip_metadata(node.metadata), **extra},
            "excluded_llm_metadata_keys": [*keep, *METADATA_KEYS],
            "excluded_embed_metadata_keys": [*keep_e, *METADATA_KEYS],
        }
    )
    return NodeWithScore(node=copy, score=extra["chronorank_score"])


def rerank_nodes(
    reranker: TemporalReranker,
    query: str,
    nodes: list[NodeWithScore],
    *,
    date_field: str = "date",
    valid_from_field: str | None = None,
    valid_to_field: str | None = None,
    top_n: int | None = None,
    now: Any = None,
) -> Ranking:
    """The core's ``Ranking`` for LlamaIndex nodes (payloads are the input ``NodeWithScore``s)."""
    return rerank_candidates(
        reranker,
        query,
        scores=[n.score for n in nodes],
        metadatas=[n.node.metadata for n in nodes],
        ids=[n.node.node_id for n in nodes],
        payloads=nodes,
        vectors=[n.node.embedding for n in nodes],
        date_field=date_field,
        valid_from_field=valid_from_field,
        valid_to_field=valid_to_field,
        top_k=top_n,
        now=now,
    )


def _to_nodes(ranking: Ranking) -> list[NodeWithScore]:
    return [_with_metadata(hit.payload, hit_metadata(hit)) for hit in ranking]


class TemporalPostprocessor(BaseNodePostprocessor):
    """Rerank retrieved nodes by similarity and document age, honouring the query's intent.

    The similarity is the node's score; when a node has none, the input order stands in
    (``1 - i/n``). The date is read from ``node.metadata[date_field]``.
    """

    reranker: Any = Field(description="a chronorank.TemporalReranker (its settings dict in JSON)")
    date_field: str = "date"
    valid_from_field: str | None = None
    valid_to_field: str | None = None
    top_n: int | None = None
    now: Any = None

    @classmethod
    def class_name(cls) -> str:
        return "ChronorankTemporalPostprocessor"

    @field_validator("reranker", mode="before")
    @classmethod
    def _reranker_from_json(cls, value: Any) -> Any:
        return reranker_from_settings(value) if isinstance(value, dict) else value

    @field_serializer("reranker")
    def _reranker_to_json(self, value: Any) -> Any:
        return reranker_settings(value)  # to_json / from_json round-trip through the settings

    def model_post_init(self, __context: Any) -> None:
        if "date_field" not in self.model_fields_set and getattr(self.reranker, "date_field", None):
            self.date_field = self.reranker.date_field  # a passed reranker's field is honoured

    @classmethod
    def build(
        cls,
        *,
        kernel: Any = "exponential(half_life_days=180)",
        date_field: str = "date",
        top_n: int | None = None,
        now: Any = None,
        valid_from_field: str | None = None,
        valid_to_field: str | None = None,
        **reranker_kwargs: Any,
    ) -> TemporalPostprocessor:
        """Build the postprocessor and its ``TemporalReranker`` in one call."""
        reranker = TemporalReranker(kernel=kernel, date_field=date_field, **reranker_kwargs)
        return cls(
            reranker=reranker,
            date_field=date_field,
            top_n=top_n,
            now=now,
            valid_from_field=valid_from_field,
            valid_to_field=valid_to_field,
        )

    def rerank(self, nodes: list[NodeWithScore], query: str, now: Any = None) -> Ranking:
        return rerank_nodes(
            self.reranker,
            query,
            nodes,
            date_field=self.date_field,
            valid_from_field=self.valid_from_field,
            valid_to_field=self.valid_to_field,
            top_n=self.top_n,
            now=self.now if now is None else now,
        )

    def _postprocess_nodes(
        self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None = None
    ) -> list[NodeWithScore]:
        if query_bundle is None:
            raise InvalidInput(
                "TemporalPostprocessor needs the query to read its temporal intent; "
                "call postprocess_nodes(nodes, query_str=...) or pass a QueryBundle"
            )
        return _to_nodes(self.rerank(nodes, query_bundle.query_str))


class TemporalRetriever(BaseRetriever):
    """Wrap any LlamaIndex retriever: fetch its candidates, rerank them with chronorank.

    Give the inner retriever a generous pool (``similarity_top_k`` about 10 x ``top_n``):
    the reranker can only promote a document that was fetched.
    """

    def __init__(
        self,
        retriever: BaseRetriever,
        postprocessor: TemporalPostprocessor,
        **kwargs: Any,
    ) -> None:
        self.retriever = retriever
        self.postprocessor = postprocessor
        super().__init__(**kwargs)

    @classmethod
    def from_index(
        cls,
        index: Any,
        *,
        fetch_k: int = 40,
        top_n: int | None = 4,
        kernel: Any = "exponential(half_life_days=180)",
        date_field: str | None = None,
        now: Any = None,
        reranker: TemporalReranker | None = None,
        filters: Any = None,
        **reranker_kwargs: Any,
    ) -> TemporalRetriever:
        """Retrieve ``fetch_k`` nodes from ``index.as_retriever`` and keep the best ``top_n``.

        ``filters`` (``MetadataFilters`` or a :mod:`chronorank.filters` dict) go to
        ``as_retriever(filters=...)``, LlamaIndex's own prefilter, as ``MetadataFilters``."""
        if top_n is not None and top_n > fetch_k:
            raise InvalidInput(f"need top_n <= fetch_k, got top_n={top_n} fetch_k={fetch_k}")
        date_field = date_field or getattr(reranker, "date_field", None) or "date"
        if reranker is None:
            post = TemporalPostprocessor.build(
                kernel=kernel, date_field=date_field, top_n=top_n, now=now, **reranker_kwargs
            )
        else:
            if reranker_kwargs:
                raise InvalidInput(
                    f"got reranker= and reranker settings {sorted(reranker_kwargs)}; pass one"
                )
            post = TemporalPostprocessor(
                reranker=reranker, date_field=date_field, top_n=top_n, now=now
            )
        extra = {} if filters is None else {"filters": to_llama_filters(filters)}
        return cls(index.as_retriever(similarity_top_k=fetch_k, **extra), post)

    def search_bundle(self, query_bundle: QueryBundle) -> QueryBundle:
        """What the inner retriever is asked: the intent's topical query ("as of March 2021" and
        the like only dilute similarity), unless the bundle brings its own embedding."""
        if query_bundle.embedding is not None:
            return query_bundle
        post = self.postprocessor
        intent = post.reranker.intent(query_bundle.query_str, now=post.now)
        topical = (getattr(intent, "topical_query", None) or "").strip()
        return QueryBundle(topical) if topical and topical != query_bundle.query_str else query_bundle

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        nodes = self.retriever.retrieve(self.search_bundle(query_bundle))
        return self.postprocessor.postprocess_nodes(nodes, query_bundle=query_bundle)

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        nodes = await self.retriever.aretrieve(self.search_bundle(query_bundle))
        return self.postprocessor.postprocess_nodes(nodes, query_bundle=query_bundle)


_LLAMA_OPS = {
    "==": "$eq", "!=": "$ne", ">": "$gt", ">=": "$gte", "<": "$lt", "<=": "$lte", "in": "$in", "nin": "$nin",
}


#: operators on a list value: ``contains`` (the list holds the value), ``any`` (one of them),
#: ``all`` (every one) -- chronorank's scalar conditions match a list by element
_LLAMA_LIST_OPS = ("contains", "any", "all")
_LLAMA_SUPPORTED = [*_LLAMA_OPS, *_LLAMA_LIST_OPS]


def from_llama_filters(filters: Any) -> dict[str, Any] | None:
    """LlamaIndex ``MetadataFilters`` as a :mod:`chronorank.filters` dict (a dict passes through).

    Conditions ``and`` / ``or`` / ``not`` (none of the filters holds); operators
    ``== != > >= < <= in nin`` and, on list values, ``contains`` / ``any`` / ``all``.
    ``is_empty``, ``text_match`` and ``text_match_insensitive`` are refused: no engine filters
    on them the same way."""
    if filters is None or isinstance(filters, dict):
        return filters or None
    from llama_index.core.vector_stores.types import MetadataFilter, MetadataFilters

    if isinstance(filters, MetadataFilter):
        op = getattr(filters.operator, "value", filters.operator)
        if op == "contains":
            return {filters.key: filters.value}
        if op in ("any", "all"):
            values: Any = filters.value
            if not isinstance(values, (list, tuple)) or not values:
                raise InvalidInput(f"LlamaIndex filter {filters.key!r} {op} {values!r}; give a non-empty list.")
            if op == "any":
                return {filters.key: {"$in": list(values)}}
            return {"$and": [{filters.key: v} for v in values]}
        if op not in _LLAMA_OPS:
            raise InvalidInput(
                f"LlamaIndex filter operator {op!r} on {filters.key!r}; chronorank supports {_LLAMA_SUPPORTED} "
                "(and the conditions and / or / not)."
            )
        return {filters.key: {_LLAMA_OPS[op]: filters.value}}
    if isinstance(filters, MetadataFilters):
        cond = str(getattr(filters.condition, "value", filters.condition) or "and").lower()
        if cond not in ("and", "or", "not"):
            raise InvalidInput(f"LlamaIndex filter condition {cond!r}; chronorank supports 'and', 'or' and 'not'.")
        parts = [from_llama_filters(f) for f in filters.filters]
        kept = [p for p in parts if p]
        if not kept:
            return None
        if cond == "not":  # LlamaIndex: none of the filters holds
            return {"$not": kept[0] if len(kept) == 1 else {"$or": kept}}
        return kept[0] if len(kept) == 1 else {f"${cond}": kept}
    raise InvalidInput(f"filters={filters!r}; give MetadataFilters or a chronorank filter dict.")


def to_llama_filters(filters: Any) -> Any:
    """``MetadataFilters`` as given, or a flat chronorank dict of equalities / ranges as
    ``MetadataFilters`` (what ``as_retriever(filters=)`` takes); anything else is refused."""
    from llama_index.core.vector_stores.types import FilterOperator, MetadataFilter, MetadataFilters

    if isinstance(filters, MetadataFilters):
        return filters
    back = {v: k for k, v in _LLAMA_OPS.items()}
    out: list[Any] = []
    for key, value in (filters or {}).items() if isinstance(filters, dict) else []:
        ops = value.items() if isinstance(value, dict) else [("$eq", value)]
        for op, v in ops:
            if key.startswith("$") or op not in back:
                raise InvalidInput(
                    f"filters={filters!r}: from_index hands filters to LlamaIndex, which takes "
                    f"{sorted(back)} on plain keys; give MetadataFilters for more."
                )
            out.append(MetadataFilter(key=key, value=v, operator=FilterOperator(back[op])))
    if not out:
        raise InvalidInput(f"filters={filters!r}; give MetadataFilters or a dict such as {{'project': 'flask'}}.")
    return MetadataFilters(filters=out)


class ChronorankRetriever(BaseRetriever):
    """A LlamaIndex retriever over a ``TemporalIndex``, ``QdrantStore`` or ``PgVectorStore``.

    The engine ranks (whole corpus or lanes, its own quality); ``filters`` (``MetadataFilters``
    or a :mod:`chronorank.filters` dict) are applied inside it, ANDed with every lane. Nodes
    are ``TextNode``s whose id is the chronorank id, whose metadata holds the stored metadata,
    the date fields and the ``chronorank_*`` keys (kept out of the LLM and embedding text),
    and whose score is ``chronorank_score``.
    """

    def __init__(
        self,
        engine: Any,
        similarity_top_k: int = 4,
        filters: Any = None,
        now: Any = None,
        search_kwargs: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        if not callable(getattr(engine, "search", None)):
            raise InvalidInput(f"engine={engine!r} has no search(); give a TemporalIndex, QdrantStore or PgVectorStore.")
        if isinstance(similarity_top_k, bool) or not isinstance(similarity_top_k, int) or similarity_top_k < 1:
            raise InvalidInput(f"similarity_top_k={similarity_top_k!r}; give a positive integer such as 4.")
        self.engine = engine
        self.similarity_top_k = similarity_top_k
        self.filters = parse_filter(from_llama_filters(filters))
        self.now = now
        self.search_kwargs = dict(search_kwargs or {})
        super().__init__(**kwargs)

    @staticmethod
    def _nodes(ranking: Ranking) -> list[NodeWithScore]:
        out = []
        for doc_id, text, meta, score in engine_hits(ranking):
            node = TextNode(
                id_=doc_id, text=text, metadata=meta,
                excluded_llm_metadata_keys=list(METADATA_KEYS), excluded_embed_metadata_keys=list(METADATA_KEYS),
            )
            out.append(NodeWithScore(node=node, score=score))
        return out

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return self._nodes(engine_search(
            self.engine, query_bundle.query_str, k=self.similarity_top_k, now=self.now,
            filters=(self.filters,), **self.search_kwargs,
        ))

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return self._nodes(await engine_asearch(
            self.engine, query_bundle.query_str, k=self.similarity_top_k, now=self.now,
            filters=(self.filters,), **self.search_kwargs,
        ))
