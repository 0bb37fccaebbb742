"""LlamaIndex: a node postprocessor and a retriever wrapper.

``pip install "chronorank[llamaindex]"``::

    from chronorank.integrations.llama_index import TemporalPostprocessor, TemporalRetriever

    post = TemporalPostprocessor.build(kernel="exponential(half_life_days=180)", top_n=5)
    engine = index.as_query_engine(similarity_top_k=50, node_postprocessors=[post])

    retriever = TemporalRetriever.from_index(index, fetch_k=50, top_n=5)
    nodes = retriever.retrieve("what changed in the latest release")

Both rerank through ``TemporalReranker.rerank_columns``. Returned nodes are copies whose
metadata carries the ``chronorank_*`` keys (kept out of the LLM and embedding text) and
whose score is ``chronorank_score``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from chronorank.errors import InvalidInput, require
from chronorank.integrations._common import (
    METADATA_KEYS,
    METADATA_PREFIX,
    hit_metadata,
    rerank_candidates,
    strip_metadata,
)

require("llama_index.core", extra="llamaindex", package="llama-index-core")

from llama_index.core.base.base_retriever import BaseRetriever  # noqa: E402
from llama_index.core.bridge.pydantic import Field  # noqa: E402
from llama_index.core.postprocessor.types import BaseNodePostprocessor  # noqa: E402
from llama_index.core.schema import NodeWithScore, QueryBundle  # noqa: E402

if TYPE_CHECKING:
    from chronorank.rerank import TemporalReranker
    from chronorank.types import Ranking

__all__ = ["METADATA_KEYS", "METADATA_PREFIX", "TemporalPostprocessor", "TemporalRetriever"]


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

    reranker: Any = Field(description="a chronorank.TemporalReranker")
    date_field: str = "date"
    valid_from_field: str | None = None
    valid_to_field: str | None = None
    top_n: int | None = None
    now: Any = None

    @classmethod
    def class_name(cls) -> str:
        return "ChronorankTemporalPostprocessor"

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
        from chronorank.rerank import TemporalReranker

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
        date_field: str = "date",
        now: Any = None,
        reranker: TemporalReranker | None = None,
        **reranker_kwargs: Any,
    ) -> TemporalRetriever:
        """Retrieve ``fetch_k`` nodes from ``index.as_retriever`` and keep the best ``top_n``."""
        if top_n is not None and top_n > fetch_k:
            raise InvalidInput(f"need top_n <= fetch_k, got top_n={top_n} fetch_k={fetch_k}")
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
        return cls(index.as_retriever(similarity_top_k=fetch_k), post)

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        nodes = self.retriever.retrieve(query_bundle)
        return self.postprocessor.postprocess_nodes(nodes, query_bundle=query_bundle)

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        nodes = await self.retriever.aretrieve(query_bundle)
        return self.postprocessor.postprocess_nodes(nodes, query_bundle=query_bundle)
