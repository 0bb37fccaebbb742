"""One query's plan inside a store: the query's :class:`chronorank.temporal.TemporalPlan`
written as what the engine filters and evaluates (:func:`plan_query` -> :class:`QueryPlan`:
the decay weight as an expression over ``start`` and ``end``, the similarity blend, the
fusion strategy's score), and the intent a store applies (:func:`resolve_intent`)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from chronorank.errors import InvalidInput
from chronorank.fusion.strategies import STRATEGIES
from chronorank.intent import parse as parse_intent
from chronorank.ranking import Rules
from chronorank.stores import compile as cx
from chronorank.stores.config import StoreConfig
from chronorank.temporal import TemporalPlan, in_force_bands, kernel_age, without_undated_anchor
from chronorank.types import DAY, Intent

__all__ = [
    "SERVER_COMBINES",
    "QueryPlan",
    "combine_expr",
    "lead_share",
    "plan_query",
    "resolve_intent",
]

#: the fusion strategies an engine can evaluate (they compare no candidates)
SERVER_COMBINES = tuple(name for name, strat in STRATEGIES.items() if strat.engine)


@dataclass(frozen=True)
class QueryPlan:
    """One query's temporal setting, resolved: what the engine filters and scores.

    ``temporal`` is the query's :class:`chronorank.temporal.TemporalPlan`; ``now``, ``mode``,
    ``ref``, ``strength``, ``target``, ``half_open`` and ``config`` read from it."""

    intent: Intent
    temporal: TemporalPlan
    exclude_future: bool  # documents starting after T are filtered out
    drop_undated: bool
    fill: float  # weight of undated documents
    weight: cx.Expr  # inputs: start, end
    dense_w: float
    keyword_w: float
    client: bool  # fallback='client' scoring
    anchor: float = math.nan  # ages are counted from here (T)
    idf_power: float = 0.0  # query terms weigh count x idf**idf_power on top of BM25's idf
    lead_w: float = 0.0  # the lead's weight after the index's share rule (0: off)
    lead_tokens: int = 12  # the lead's length cap the stored values must have been built with
    rules: Rules = Rules()  # the ranking rules (client scoring: chronorank.ranking.rank over the pool)

    @property
    def now(self) -> float:
        return self.temporal.now

    @property
    def mode(self) -> str:
        return self.temporal.mode

    @property
    def ref(self) -> float:
        """The reference time T."""
        return self.temporal.reference_time

    @property
    def strength(self) -> float:
        """The effective strength."""
        return self.temporal.strength

    @property
    def target(self) -> tuple[float, float] | None:
        """A range intent's period, else None."""
        return self.temporal.range

    @property
    def half_open(self) -> bool:
        """An as-of target [start, end): a document starting at T is future too."""
        return self.temporal.half_open

    @property
    def config(self) -> Any:
        """The TemporalConfig."""
        return self.temporal.config

    def is_future(self, start: float) -> bool:
        return self.exclude_future and (start >= self.ref if self.half_open else start > self.ref)

    def window(self, days: float) -> tuple[float, float]:
        """The [lo, hi] epoch interval of a time lane: ``days`` before T, or the range target."""
        if self.mode == "range" and self.target is not None:
            lo, hi = self.target
            return (lo if math.isfinite(lo) else self.ref - days * DAY, hi if math.isfinite(hi) else self.ref)
        return self.ref - days * DAY, self.ref

    def newest_bound(self) -> float:
        """Newest-N lane: documents starting at or before this time."""
        if self.mode == "range" and self.target is not None and math.isfinite(self.target[1]):
            return self.target[1]
        return self.ref

    def score_expr(self, max_bm25: float, max_lead: float = 0.0, *, pooled: bool = False) -> cx.Expr:
        """The fused score over inputs ``cos``, ``bm25``, ``lead``, ``start``, ``end``."""
        sim = self.sim_expr(max_bm25, max_lead, pooled=pooled)
        # pooled: sim is >= 0 by construction (cos clipped to [0, 1], maxima-normalised BM25 and
        # lead, positive weights), so the negative branch is 0 and sim is written once
        return combine_expr(sim, self.weight, self.config.combine, self.strength, nonneg=pooled)

    def sim_weights(self, max_bm25: float, max_lead: float) -> tuple[float, float, float]:
        """(w_d, w_k, w_l) as the index's ``_fuse`` counts them: a keyword or lead signal that
        no candidate matches (its maximum is 0) leaves the total."""
        wk = self.keyword_w if self.keyword_w > 0 and max_bm25 > 0 else 0.0
        wl = self.lead_w if self.lead_w > 0 and max_lead > 0 else 0.0
        return self.dense_w, wk, wl

    def sim_expr(self, max_bm25: float, max_lead: float = 0.0, *, pooled: bool = False) -> cx.Expr:
        """``(w_d clip(cos, 0, 1) + w_k bm25 / max_bm25 + w_l lead / max_lead) / total``.

        ``pooled=True``: the engine normalises by its own pool maxima -- the inputs ``bm25``
        and ``lead`` arrive divided by them, ``bm25_on``/``lead_on`` are 1 where that maximum
        is above 0, and the total is summed from them in the expression.
        """
        cos = cx.clamp(cx.Var("cos", 0.0), 0.0, 1.0)
        if pooled:
            num: list[cx.Expr | float] = []
            den: list[cx.Expr | float] = []
            for w, x, on in ((self.dense_w, cos, None), (self.keyword_w, cx.Var("bm25", 0.0), "bm25_on"),
                             (self.lead_w, cx.Var("lead", 0.0), "lead_on")):
                if w > 0:
                    num.append(cx.mul(w, x))
                    den.append(w if on is None else cx.mul(w, cx.Var(on, 0.0)))
            if not num:
                return cx.Const(0.0)
            return cx.div(cx.add(*num), cx.maximum(cx.add(*den), 1e-12))
        wd, wk, wl = self.sim_weights(max_bm25, max_lead)
        total = wd + wk + wl
        parts: list[cx.Expr | float] = []
        if wd > 0:
            parts.append(cx.mul(wd / total, cos))
        if wk > 0:
            parts.append(cx.mul(wk / total / max_bm25, cx.Var("bm25", 0.0)))
        if wl > 0:
            parts.append(cx.mul(wl / total / max_lead, cx.Var("lead", 0.0)))
        if not parts:
            return cx.Const(0.0)
        return cx._e(parts[0]) if len(parts) == 1 else cx.add(*parts)

    def weights(self, start: np.ndarray, end: np.ndarray) -> np.ndarray:
        """The decay weight numpy evaluates from the same expression the engine runs."""
        w = cx.evaluate(cx.lower(self.weight), {"start": start, "end": end})
        return np.broadcast_to(w, start.shape).astype(np.float64)

    def ages(self, start: np.ndarray, end: np.ndarray) -> np.ndarray:
        """Ages shown in explanations: days before T (expired: since the end), as the index shows."""
        with np.errstate(invalid="ignore"):
            if self.mode == "range" and self.target is not None:
                return (self.ref - start) / DAY
            expired = ~np.isnan(end) & (end <= self.ref) & ~np.isnan(start)
            base = np.where(expired, end, start)
            return (self.ref - base) / DAY


def combine_expr(sim: cx.Expr, weight: cx.Expr, strategy: str, strength: float, nonneg: bool = False) -> cx.Expr:
    """The fusion strategy's own expression (:mod:`chronorank.fusion`) over the engine's
    similarity and weight: gated_multiply f = 1 - s + s*w, multiply f = w**s, negatives scaled by
    (2 - f). ``nonneg``: the caller guarantees sim >= 0, so the score is sim * f (the same numbers)."""
    strat = STRATEGIES.get(strategy)
    if strat is None or not strat.engine:
        raise InvalidInput(
            f"combine={strategy!r} needs statistics over every candidate and cannot run inside the "
            f"engine; use one of {list(SERVER_COMBINES)} or fallback='client'."
        )
    return strat.expr(sim, weight, strength, nonneg=nonneg)


def plan_query(intent: Intent, now: float, cfg: StoreConfig) -> QueryPlan:
    """Resolve intent + configuration into filters and the compiled weight expression: the
    query's :class:`chronorank.temporal.TemporalPlan` (reference time, target, strength,
    range scale, future handling, undated fill) written as what the engine evaluates."""
    tcfg = cfg.index.temporal_config()
    tp = TemporalPlan.of(intent, now, tcfg)
    client = cfg.fallback == "client"
    mode = tp.mode
    if not client:
        if tcfg.relative_recency is not None and mode in ("recent", "as_of"):
            raise InvalidInput(
                f"relative_recency={tcfg.relative_recency:g} compares every candidate with every other "
                "and cannot run inside the engine; set relative_recency=None (the stores' default) or "
                "pass fallback='client' to apply it to the lanes' pool."
            )
        if tcfg.combine not in SERVER_COMBINES:
            combine_expr(cx.Const(0.0), cx.Const(1.0), tcfg.combine, 1.0)  # raises the message
        if tcfg.missing_date == "raise":
            raise InvalidInput(
                "missing_date='raise' cannot be checked inside the engine; choose 'keep', 'neutral', "
                "'penalise' or 'drop', or pass fallback='client'."
            )
    kernel = tcfg.kernel
    if not client:
        cx.kernel_expr(kernel, cx.Const(0.0))  # raises InvalidInput for kernels without a closed form
    start, end = cx.Var("start", now), cx.Var("end", now)
    undated = cx.Cond("start", "empty")
    rng = tp.range
    exclude_future = False
    half_open = False
    anc = math.nan
    ref = tp.reference_time
    if rng is not None:
        lo = rng[0]
        # a bounded range rescales the kernel's half-life to range_scale x its length
        dated = _in_force_expr(kernel, lo, ref, now, tp.age_factor(kernel), float(tcfg.range_slope), client)
    else:
        half_open = tp.half_open
        symmetric = tp.symmetric
        anc = ref

        def age_of(t: cx.Expr) -> cx.Expr:
            raw = cx.mul(1.0 / DAY, cx.add(anc, cx.neg(t)))
            if symmetric:  # future documents: distance from T, as apply_temporal does
                fut = cx.Cond("start", "gt", ref)
                away = cx.mul(1.0 / DAY, cx.add(t, -ref))
                return cx.add(cx.mul(cx.one_minus(fut), cx.maximum(raw, 0.0)), cx.mul(fut, away))
            return cx.maximum(raw, 0.0)

        expired = cx.Cond("end", "le", ref)
        dated = cx.add(
            cx.mul(cx.one_minus(expired), _kernel(kernel, age_of(start), client)),
            cx.mul(expired, float(tcfg.expired_factor), _kernel(kernel, age_of(end), client)),
        )
        if tp.marks_not_yet_valid or tp.excludes_future:
            # future='auto' at a past reference time: what was written later did not exist yet.
            # A client-side pool keeps them: apply_temporal drops what starts after now, and
            # the index lists an as-of question's later versions after the one then in force
            exclude_future = not client
            # an as-of target is half-open: a document starting at its end is not yet valid
            dated = cx.mul(cx.one_minus(cx.Cond("start", "ge" if half_open else "gt", ref)), dated)
    md = tcfg.missing_date
    fill = tp.undated_fill(neutral=cfg.missing_weight)
    weight = cx.add(cx.mul(cx.one_minus(undated), dated), cx.mul(fill, undated))
    return QueryPlan(
        intent=intent, temporal=tp,
        exclude_future=exclude_future, drop_undated=md == "drop", fill=fill, weight=weight,
        dense_w=float(cfg.index.dense_weight), keyword_w=float(cfg.index.keyword_weight),
        client=client, anchor=anc,
        idf_power=float(getattr(cfg.index, "idf_power", 0.0)),
        lead_w=lead_share(cfg.index), lead_tokens=int(getattr(cfg.index, "lead_tokens", 12)),
        # the burst stage compares the best matches with the whole collection's ages, which a
        # pool does not hold: index only
        rules=Rules.of(cfg.index, burst_ratio=None),
    )


def _in_force_expr(kernel: Any, lo: float, ref: float, now: float, factor: float, slope: float, client: bool) -> cx.Expr:
    """The in-force bands of a period ``[lo, ref)`` as one expression: the formula
    :func:`chronorank.temporal._in_force_range` evaluates with numpy
    (:func:`chronorank.temporal.in_force_bands`), weight = base + width x kernel(age x factor).

    The engine has no relative recency: a page carried in from before a bounded period is in
    force only when a validity end says so; an open-ended one takes the lowest band.
    """
    terms = []
    for band in in_force_bands(lo, ref, slope, default=now):
        weight = cx._e(band.base)
        if band.width:
            decay = cx.mul(band.width, _kernel(kernel, cx.mul(kernel_age(band.age), factor), client))
            weight = decay if band.base == 0.0 else cx.add(band.base, decay)
        terms.append(cx.mul(band.test, weight))
    return cx.add(*terms)


def lead_share(index_cfg: Any) -> float:
    """The lead's weight as ``_fuse`` applies it: ``lead_weight x present / full``, where
    present counts the dense and keyword weights whose signal exists. A store always has both
    (every document has a vector; BM25 runs when keyword_weight > 0), so the share is the whole
    ``lead_weight``; without BM25 there is no lead either (the index computes it with BM25)."""
    lw = float(getattr(index_cfg, "lead_weight", 0.0))
    return lw if lw > 0 and float(index_cfg.keyword_weight) > 0 else 0.0


def _kernel(kernel: Any, age: cx.Expr, client: bool) -> cx.Expr:
    if client and not cx.compiles(kernel):
        return cx.Const(1.0)  # unused: client scoring calls the kernel itself
    return cx.kernel_expr(kernel, age)


def resolve_intent(query: str, now_s: float, intent: Intent | None) -> Intent:
    """The intent a server-side store search applies: ``intent``, or the parsed one; "before
    the v2 change" with no target has time off (:func:`chronorank.temporal.without_undated_anchor`:
    one engine query cannot date the anchor through the corpus; with ``fallback='client'``
    :func:`chronorank.stores.prepare.store_query` dates it in extra keyword requests)."""
    if intent is None:
        intent = parse_intent(query, now=now_s)
    return without_undated_anchor(intent)
