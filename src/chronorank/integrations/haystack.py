"""Haystack 2: a ranker component.

``pip install "chronorank[haystack]"``::

    from chronorank.integrations.haystack import TemporalRanker

    pipe.add_component("retriever", InMemoryEmbeddingRetriever(store, top_k=50))
    pipe.add_component("ranker", TemporalRanker(kernel="exponential(half_life_days=180)", top_k=5))
    pipe.connect("retriever.documents", "ranker.documents")

The ranker reranks through ``TemporalReranker.rerank_columns``; output documents are
copies with ``score = chronorank_score`` and the ``chronorank_*`` keys in ``meta``.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from chronorank.errors import InvalidInput, require
from chronorank.integrations._common import (
    METADATA_KEYS,
    METADATA_PREFIX,
    hit_metadata,
    rerank_candidates,
    strip_metadata,
)

require("haystack", extra="haystack", package="haystack-ai")

from haystack import Document, component, default_from_dict, default_to_dict  # noqa: E402

if TYPE_CHECKING:
    from chronorank.types import Ranking

__all__ = ["METADATA_KEYS", "METADATA_PREFIX", "TemporalRanker"]


@component
class TemporalRanker:
    """Rerank documents by their score and age, honouring the query's temporal intent.

    The similarity is ``document.score`` (the retriever's); when a document has none, the
    input order stands in (``1 - i/n``). The date is read from ``document.meta[date_field]``.
    Every argument besides ``date_field``, ``top_k`` and the validity fields goes to
    ``TemporalReranker``; ``to_dict`` stores them, so the component serialises with its
    pipeline.
    """

    def __init__(
        self,
        kernel: str = "exponential(half_life_days=180)",
        date_field: str = "date",
        top_k: int | None = None,
        valid_from_field: str | None = None,
        valid_to_field: str | None = None,
        **reranker_kwargs: Any,
    ) -> None:
        if top_k is not None and top_k < 0:
            raise InvalidInput(f"top_k must be >= 0 or None, got {top_k!r}")
        from chronorank.rerank import TemporalReranker

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
            **self.reranker_kwargs,
        )

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TemporalRanker:
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
            date_field=self.date_field,
            valid_from_field=self.valid_from_field,
            valid_to_field=self.valid_to_field,
            top_k=self.top_k if top_k is None else top_k,
            now=now,
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
