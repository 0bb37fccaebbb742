"""From the engine's rows to a :class:`~chronorank.types.Ranking`: the candidates an engine
returned (:class:`Candidates`), client-side scoring over the pool (``fallback='client'``),
the hits with their explanations and the truncated-pool diagnostic (:func:`build_ranking`),
and the lanes' ranks of each hit."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from chronorank.ranking import rank
from chronorank.stores import compile as cx
from chronorank.stores.config import Lanes
from chronorank.stores.plan import QueryPlan
from chronorank.timeparse.textdates import INFERRED_KEY, date_note
from chronorank.types import Intent, Ranking, best_first, format_epoch, tied_at_cut

__all__ = [
    "Candidates",
    "build_ranking",
    "client_score",
    "empty_ranking",
    "merge_lane_ranks",
]


@dataclass
class Candidates:
    """What an engine returned for the best hits, aligned."""

    ids: list[str]
    records: list[dict[str, Any]]
    score: np.ndarray
    cos: np.ndarray  # NaN where unknown
    bm25: np.ndarray
    start: np.ndarray
    end: np.ndarray
    lane_ranks: list[dict[str, int]] = field(default_factory=list)  # per hit: lane -> 1-based rank
    lead: np.ndarray | None = None  # lead BM25 (None: no lead signal)
    # dense embeddings: one row per hit, or a lookup by positions (None: unknown)
    vectors: np.ndarray | Callable[[np.ndarray], np.ndarray | None] | None = None

    def sim_inputs(self) -> dict[str, np.ndarray]:
        lead = self.lead if self.lead is not None else np.zeros_like(self.bm25)
        return {"cos": self.cos, "bm25": self.bm25, "lead": lead}


def client_score(
    plan: QueryPlan, cand: Candidates, max_bm25: float, k: int, max_lead: float = 0.0
) -> tuple[np.ndarray, Candidates, Any]:
    """fallback='client': the ranking's stages over the pool (:func:`chronorank.ranking.rank`,
    the index's rules: flattening, title chains, time, topic first, the first hit's versions
    with the anchor's event page, the version across a before / after boundary, the version
    conflict, a before question's anchor page), reading the candidates' texts as the reranker does
    (:func:`chronorank.rerank.text_stages`) and their vectors when the engine returned them
    (``Candidates.vectors``: the version cosine test). Not here: the burst stage (it compares
    the best matches with the whole collection, which a pool does not hold)."""
    from chronorank.rerank import anchor_page_of, known_terms, text_facet_hits, text_stages

    sim = cx.evaluate(plan.sim_expr(max_bm25, max_lead), cand.sim_inputs())
    sim = np.broadcast_to(sim, cand.start.shape).astype(np.float64)
    signals = {"dense": np.nan_to_num(cand.cos, nan=0.0)} if plan.dense_w > 0 else {}
    if plan.keyword_w > 0:
        signals["bm25"] = cand.bm25
        if plan.lead_w > 0 and cand.lead is not None:
            signals["lead"] = cand.lead
    texts = [str(r.get("text") or "") if isinstance(r, Mapping) else "" for r in cand.records]
    conflicts, event = text_stages(plan.intent.query, plan.intent, texts, cand.start)
    ranked = rank(
        sim, cand.start, intent=plan.intent, now=plan.now, config=plan.config,
        rules=plan.rules,
        terms=known_terms(plan.intent, texts), signals=signals, valid_to=cand.end, ids=cand.ids, texts=texts,
        conflicts=conflicts, event=event, anchor_page=anchor_page_of(plan.intent, texts, cand.start),
        vectors=cand.vectors, facet_hits=text_facet_hits(plan.intent, texts),
    )
    res = ranked.res
    res.score = ranked.score
    keep = res.keep
    order = tied_at_cut(ranked.score, min(k, int(keep.sum())), cand.start, cand.ids)
    return order, cand, res


def build_ranking(
    plan: QueryPlan,
    cand: Candidates,
    *,
    query: str,
    max_bm25: float,
    lanes: Lanes,
    store: str,
    max_lead: float = 0.0,
    order: np.ndarray | None = None,
    client_res: Any = None,
    meta: Mapping[str, Any] | None = None,
) -> Ranking:
    """Hits with explanations from the engine's rows (already best-first unless ``order``)."""
    n = len(cand.ids)
    # the engine's rows in its order; equal scores reordered by TIE_RULE (the engine fetched
    # every row tied at its cut: QdrantStore asks again, pgvector's ORDER BY holds the rule)
    idx = best_first(cand.score, np.arange(n), cand.start, cand.ids) if order is None else np.asarray(order, np.int64)
    sim_all = cx.evaluate(plan.sim_expr(max_bm25, max_lead), cand.sim_inputs())
    sim_all = np.broadcast_to(sim_all, (n,)).astype(np.float64)
    if client_res is not None:
        decay = np.asarray(client_res.decay, dtype=np.float64)
        ages = np.asarray(client_res.age_days, dtype=np.float64)
        score = np.asarray(client_res.score, dtype=np.float64)
    else:
        decay = plan.weights(cand.start, cand.end)
        ages = plan.ages(cand.start, cand.end)
        score = cand.score
    limits = dict(lanes.named())
    # rank by similarity: the best similarity-lane rank (dense, then keyword)
    rank_before = np.zeros(idx.size, dtype=np.int64)
    notes: dict[int, tuple[str, ...]] = {}
    sim_order = np.argsort(-sim_all[idx], kind="stable")
    pos_by_sim = np.empty(idx.size, dtype=np.int64)
    pos_by_sim[sim_order] = np.arange(1, idx.size + 1)
    for p, i in enumerate(idx.tolist()):
        lr = cand.lane_ranks[i] if i < len(cand.lane_ranks) else {}
        sims = [lr[name] for name in ("dense", "keyword") if name in lr]
        rank_before[p] = min(sims) if sims else (int(pos_by_sim[p]) if not lr else lanes.dense + 1)
        out = [*_dated_note(cand.records[i]), *_time_notes(plan, cand, i, client_res)]
        edge = _edge_note(lr, limits, lanes.edge)
        if edge and rank_before[p] > p + 1:
            out.append(edge)
        if out:
            notes[p] = tuple(out)
    signals: dict[str, np.ndarray] = {}
    if plan.dense_w > 0:
        signals["dense"] = cand.cos[idx]
    if plan.keyword_w > 0:
        signals["bm25"] = cand.bm25[idx]
    if plan.lead_w > 0:
        signals["lead"] = cand.sim_inputs()["lead"][idx]
    kernel = plan.config.kernel
    return Ranking(
        ids=[cand.ids[i] for i in idx.tolist()],
        payloads=[cand.records[i] for i in idx.tolist()],
        order=np.arange(idx.size),
        score=np.asarray(score, dtype=np.float64)[idx],
        similarity=sim_all[idx],
        decay=decay[idx],
        age_days=ages[idx],
        time=cand.start[idx],
        rank_before=rank_before,
        signals=signals,
        notes=notes,
        query=query,
        meta={
            "store": store,
            "kernel": repr(kernel),
            "half_life_days": kernel.half_life(),
            "combine": plan.config.combine,
            "intent": plan.intent,
            "gate": plan.intent.time_sensitivity,
            "strength": plan.config.strength,
            "effective_strength": plan.strength,
            "now": plan.now,
            "reference_time": plan.ref,
            "lanes": lanes,
            "max_bm25": max_bm25,
            "max_lead": max_lead,
            "scoring": "client" if plan.client else "server",
            **dict(meta or {}),
        },
    )


def _dated_note(record: Mapping[str, Any]) -> tuple[str, ...]:
    # where an inferred date came from (stores.documents.prepare_docs keeps it in the metadata)
    meta = record.get("metadata") if isinstance(record, Mapping) else None
    info = meta.get(INFERRED_KEY) if isinstance(meta, Mapping) else None
    return (date_note(info),) if isinstance(info, Mapping) else ()


def _time_notes(plan: QueryPlan, cand: Candidates, i: int, client_res: Any) -> tuple[str, ...]:
    if client_res is not None:
        return tuple(client_res.note(i))

    s, e = float(cand.start[i]), float(cand.end[i])
    out: list[str] = []
    if math.isnan(s):
        md = plan.config.missing_date
        out.append(f"undated: store fill weight {plan.fill:.2f} (missing_date={md!r})")
    elif plan.is_future(s):
        out.append(f"not yet valid at {format_epoch(plan.ref)} (starts {format_epoch(s)})")
    if plan.mode not in ("range",) and not math.isnan(e) and e <= plan.ref and not math.isnan(s):
        out.append(f"expired on {format_epoch(e)}")
    return tuple(out)


def _edge_note(lane_ranks: Mapping[str, int], limits: Mapping[str, int], edge: float) -> str | None:
    """Truncated pool: every lane that brought this hit had it near its limit."""
    if not lane_ranks:
        return None
    fracs = {name: r / limits[name] for name, r in lane_ranks.items() if name in limits}
    if not fracs or min(fracs.values()) < edge:
        return None
    name = min(fracs, key=lambda n: fracs[n])
    lim = limits[name]
    field_name = "windows" if name.startswith("last_") else name
    return (
        f"truncated pool: promoted from rank {lane_ranks[name]} of {lim} in lane {name!r} (its edge); "
        f"documents just past the limit were never scored -- try a larger lane, e.g. Lanes({field_name}={2 * lim})"
        if field_name != "windows" else
        f"truncated pool: promoted from rank {lane_ranks[name]} of {lim} in lane {name!r} (its edge); "
        f"documents just past the limit were never scored -- try a larger window limit (e.g. {2 * lim})"
    )


def empty_ranking(query: str, intent: Intent, now: float, store: str) -> Ranking:
    z = np.zeros(0)
    return Ranking(
        ids=[], payloads=[], order=np.zeros(0, np.int64), score=z, similarity=z, decay=z,
        age_days=z, time=z, rank_before=np.zeros(0, np.int64), query=query,
        meta={"intent": intent, "now": now, "n_docs": 0, "store": store},
    )


def merge_lane_ranks(lists: Sequence[tuple[str, Sequence[str]]]) -> dict[str, dict[str, int]]:
    """id -> {lane: 1-based rank} from each lane's ranked ids."""
    out: dict[str, dict[str, int]] = {}
    for name, ids in lists:
        for r, d in enumerate(ids, start=1):
            out.setdefault(d, {}).setdefault(name, r)
    return out
