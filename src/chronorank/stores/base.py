"""The ``Store`` protocol and what every server-side adapter shares.

A store keeps documents in an engine (Qdrant, PostgreSQL + pgvector). The engine builds a
candidate pool from several **lanes** (below), with each candidate's cosine, BM25 and lead.
By default (``fallback='client'``) the index's ranking (:func:`chronorank.ranking.rank`, the
index's defaults) runs over that pool in this process, so a store ranks as the index does.
With ``fallback='error'`` the engine scores alone: the query's intent, the kernel, validity
and the fusion of similarity with decay are compiled (:mod:`chronorank.stores.compile`) into
one expression the engine evaluates over the pool. The lanes:

- ``dense``: the nearest neighbours of the query vector;
- ``keyword``: the best BM25 matches (client-side analyzer, sparse vectors);
- ``windows``: the nearest neighbours *among documents from the last N days* before the
  reference time (one lane per window);
- ``newest``: the N newest documents valid at the reference time.

So a fresh document that sits at similarity rank 500 still reaches the scorer through a
time lane, which one similarity top-k would never give it.

The engine's scoring (``fallback='error'``), per candidate (``T`` = reference time, ``s`` =
effective strength)::

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
  candidates with each other; under ``fallback='error'`` they raise InvalidInput (a store
  built without naming the first two turns them off there).
- version chains (``group_key``) are not derived by the stores: give ``valid_to`` explicitly.
- BM25 length statistics (``avgdl`` of the body and of the lead) are fixed when the table or
  collection is created, from the first batch; the index recomputes them after every write.

Where it lives: :mod:`~chronorank.stores.config` (``Lanes``, ``StoreConfig``),
:mod:`~chronorank.stores.documents` (a batch validated and split into columns),
:mod:`~chronorank.stores.bm25` (term ids, BM25 values and weights),
:mod:`~chronorank.stores.plan` (``plan_query`` -> ``QueryPlan``: what the engine filters and
evaluates) and :mod:`~chronorank.stores.results` (the engine's rows as a ``Ranking``). This
module keeps the :class:`Store` protocol and re-exports their names.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Protocol, runtime_checkable

# the names below were defined here before the split; they stay importable from this module
from chronorank.stores.bm25 import bm25_doc_values as bm25_doc_values
from chronorank.stores.bm25 import bm25_idf as bm25_idf
from chronorank.stores.bm25 import bm25_params as bm25_params
from chronorank.stores.bm25 import lead_query_weights as lead_query_weights
from chronorank.stores.bm25 import query_terms as query_terms
from chronorank.stores.bm25 import term_id as term_id
from chronorank.stores.config import FALLBACKS as FALLBACKS
from chronorank.stores.config import Lanes, StoreConfig
from chronorank.stores.documents import _RESERVED as _RESERVED
from chronorank.stores.documents import COLUMN_ROLES as COLUMN_ROLES
from chronorank.stores.documents import PreparedDocs as PreparedDocs
from chronorank.stores.documents import _jsonable as _jsonable
from chronorank.stores.documents import _parse_col as _parse_col
from chronorank.stores.documents import _vectors as _vectors
from chronorank.stores.documents import analyze_docs as analyze_docs
from chronorank.stores.documents import as_matrix as as_matrix
from chronorank.stores.documents import column_roles as column_roles
from chronorank.stores.documents import point_id as point_id
from chronorank.stores.documents import prepare_docs
from chronorank.stores.plan import SERVER_COMBINES as SERVER_COMBINES
from chronorank.stores.plan import QueryPlan, plan_query
from chronorank.stores.plan import _in_force_expr as _in_force_expr
from chronorank.stores.plan import _kernel as _kernel
from chronorank.stores.plan import combine_expr as combine_expr
from chronorank.stores.plan import lead_share as lead_share
from chronorank.stores.plan import resolve_intent as resolve_intent
from chronorank.stores.results import Candidates as Candidates
from chronorank.stores.results import _edge_note as _edge_note
from chronorank.stores.results import _time_notes as _time_notes
from chronorank.stores.results import build_ranking as build_ranking
from chronorank.stores.results import client_score as client_score
from chronorank.stores.results import empty_ranking as empty_ranking
from chronorank.stores.results import merge_lane_ranks as merge_lane_ranks
from chronorank.temporal import check_query as check_query  # re-exported: it was defined here
from chronorank.types import Ranking

__all__ = [
    "Lanes",
    "QueryPlan",
    "Store",
    "StoreConfig",
    "plan_query",
    "prepare_docs",
]


@runtime_checkable
class Store(Protocol):
    """The surface shared by :class:`~chronorank.index.TemporalIndex` and every store."""

    def add(self, docs: Iterable[Mapping[str, Any]], vectors: Any = None) -> int: ...

    def delete(self, ids: Iterable[str] | str) -> int: ...

    def search(self, query: str, k: int = 10, now: Any = None, **kwargs: Any) -> Ranking: ...

    def __len__(self) -> int: ...
