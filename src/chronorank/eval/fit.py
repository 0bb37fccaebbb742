"""Fitting kernel, parameters, combine strategy, strength, gate and fusion weights.

Every configuration of the search space is scored at once: per-query candidate arrays
are padded into ``(queries, candidates)`` matrices, each kernel-parameter setting turns
the age matrix into one weight matrix, and strengths x gate settings are broadcast on a
leading axis. Top-k comes from ``argpartition`` and nDCG from a dot product with the
discount vector. Python loops run over kernel settings, strategies (code paths) and
fusion-weight settings only -- never over trials or queries.

The strategies are :func:`chronorank.fusion.combine`'s own expressions, evaluated with the
strength broadcast on the leading axis (:func:`batched_combine`).
"""

from __future__ import annotations

import itertools
import math
import sys
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from chronorank.errors import InvalidInput
from chronorank.eval.datasets import epoch_seconds, to_epoch
from chronorank.eval.metrics import parse_metric
from chronorank.eval.plots import plot_strength
from chronorank.fusion.strategies import STRATEGIES
from chronorank.intent import LexicalGate, parse
from chronorank.kernels import get_kernel
from chronorank.rerank import TemporalReranker
from chronorank.spec import format_spec, parse_spec
from chronorank.temporal import (
    TemporalConfig,
    TemporalPlan,
    range_age_factor,
    temporal_geometry,
)
from chronorank.timeparse import parse_times
from chronorank.types import best_first

__all__ = [
    "FitResult",
    "FitQuery",
    "fit",
    "fit_strength",
    "suggest_half_life",
    "prepare_queries",
    "DEFAULT_SPACE",
    "PEER_EQUIVALENT_SPACE",
    "batched_combine",
]

DAY = 86400.0
RRF_K = 60
STRATEGY_NAMES = ("gated_multiply", "multiply", "linear", "rrf")

# The peer's default grid (46 kernel settings x 4 strengths x 2 strategies = 368 trials),
# expressed with chronorank's kernels.
PEER_EQUIVALENT_SPACE: dict[str, Any] = {
    "kernels": {
        "exponential": {"half_life_days": [7, 14, 30, 60, 120, 365]},
        "weibull": {"half_life_days": [7, 30, 90, 365], "shape": [0.6, 1.5, 3.0]},
        "power_law": {"half_life_days": [7, 30, 90, 365], "beta": [0.5, 1.0, 2.0]},
        "cliff": {"half_life_days": [14, 30, 90, 180, 365], "steepness": [4.0, 12.0]},
        "delayed_peak": {"peak_days": [2, 7, 21], "shape": [1.5, 3.0]},
    },
    "combine": ["multiply", "gated_multiply"],
    "strength": [0.25, 0.5, 0.75, 1.0],
    "gate": [False],
}

DEFAULT_SPACE: dict[str, Any] = {
    "kernels": {
        "exponential": {"half_life_days": [7, 30, 90, 180, 365, 730, 1460]},
        "weibull": {"half_life_days": [30, 90, 365, 730], "shape": [0.6, 1.5, 3.0]},
        "power_law": {"half_life_days": [30, 90, 365, 730], "beta": [0.5, 1.0, 2.0]},
        "cliff": {"half_life_days": [30, 90, 180, 365, 730], "steepness": [4.0, 12.0]},
        "gaussian": {"half_life_days": [90, 365, 730]},
    },
    "combine": list(STRATEGY_NAMES),
    "strength": [0.1, 0.25, 0.5, 0.75, 1.0],
    "gate": [False, True, "intent"],
    "relative_recency": [None, 0.5, 0.8],
}


# --------------------------------------------------------------------------- inputs


@dataclass
class FitQuery:
    """One labelled query with its candidates as columns.

    ``similarity``: score per candidate (higher is better); ``ages``: age in days at the
    query's reference time (NaN = undated); ``grades``: graded relevance per candidate;
    ``ideal``: all positive judged grades of the query (for the nDCG ideal, which may
    include documents outside the candidates); ``signals``: optional named score arrays
    (e.g. ``vector``, ``keyword``) fused by weighted RRF when the space has ``weights``;
    ``sensitivity``: the gate's time sensitivity for the query (None = parse lazily).
    """

    query: str
    similarity: np.ndarray
    ages: np.ndarray
    grades: np.ndarray
    ideal: np.ndarray
    ids: list[str] | None = None
    signals: dict[str, np.ndarray] | None = None
    sensitivity: float | None = None
    now: float = math.nan
    qid: str = ""


def _as_fit_query(q: Any, i: int) -> FitQuery:
    if isinstance(q, FitQuery):
        return q
    if not isinstance(q, Mapping):
        raise InvalidInput(f"queries[{i}] is {type(q).__name__}; pass FitQuery objects or dicts (see prepare_queries).")
    sim = q.get("similarity", q.get("scores"))
    if sim is None:
        raise InvalidInput(f"queries[{i}] has no 'similarity' (or 'scores') array; give one score per candidate.")
    sim = np.asarray(sim, dtype=np.float64)
    if "ages" in q:
        ages = np.asarray(q["ages"], dtype=np.float64)
        raw_now = q.get("now", q.get("reference_date"))
        if raw_now is None:
            now = math.nan
        elif isinstance(raw_now, (int, float)):
            now = float(raw_now)
        else:
            now = to_epoch(raw_now, field="reference_date")
    else:
        now = to_epoch(q.get("now", q.get("reference_date")), field="reference_date")
        if math.isnan(now):
            raise InvalidInput(f"queries[{i}] needs 'ages' (days) or 'times' plus 'now' (the reference date).")

        t = parse_times(list(q.get("times", [])), strict=True)
        ages = (now - t) / DAY
    rel = q.get("relevance", {})
    ids = q.get("ids")
    if isinstance(rel, Mapping):
        if ids is None:
            raise InvalidInput(f"queries[{i}]: relevance is a mapping, so 'ids' (one per candidate) is needed.")
        grades = np.array([float(rel.get(d, 0.0)) for d in ids], dtype=np.float64)
        ideal = np.array(sorted((float(g) for g in rel.values() if g > 0), reverse=True))
    else:
        grades = np.asarray(rel, dtype=np.float64)
        ideal = np.sort(grades[grades > 0])[::-1]
    if not (sim.shape == ages.shape == grades.shape):
        raise InvalidInput(
            f"queries[{i}]: similarity {sim.shape}, ages {ages.shape} and relevance {grades.shape} "
            "must have one entry per candidate."
        )
    signals = q.get("signals")
    return FitQuery(
        query=str(q.get("query", "")), similarity=sim, ages=ages, grades=grades, ideal=ideal,
        ids=list(ids) if ids is not None else None,
        signals={k: np.asarray(v, dtype=np.float64) for k, v in signals.items()} if signals else None,
        sensitivity=q.get("sensitivity"), now=now, qid=str(q.get("qid", i)),
    )


def prepare_queries(
    corpus: Sequence[Mapping[str, Any]],
    queries: Sequence[Mapping[str, Any]],
    retrieve: Any,
    *,
    date_field: str = "date",
) -> list[FitQuery]:
    """docs/format.md (corpus, queries) + a retriever -> FitQuery list.

    ``retrieve(query_record) -> (ids, scores)`` or ``-> (ids, scores, signals)`` supplies
    each query's candidates and similarity (see :mod:`chronorank.eval.benchmark`).
    """
    times = epoch_seconds(corpus, date_field)
    pos = {d["id"]: i for i, d in enumerate(corpus)}
    out = []
    for q in queries:
        got = retrieve(q)
        ids, scores = got[0], got[1]
        signals = got[2] if len(got) > 2 else None
        now = to_epoch(q.get("reference_date"), field="reference_date")
        idx = np.array([pos[d] for d in ids], dtype=np.int64)
        rel = q.get("relevance", {})
        out.append(
            FitQuery(
                query=q["query"], similarity=np.asarray(scores, dtype=np.float64),
                ages=(now - times[idx]) / DAY,
                grades=np.array([float(rel.get(d, 0)) for d in ids]),
                ideal=np.array(sorted((float(g) for g in rel.values() if g > 0), reverse=True)),
                ids=list(ids), signals=signals, now=now, qid=q.get("qid", ""),
            )
        )
    return out


# --------------------------------------------------------------------------- batched maths


def _ordinal_rank_rows(x: np.ndarray) -> np.ndarray:
    """1-based descending rank along the last axis, ties by position, NaN/-inf last."""
    order = np.argsort(np.where(np.isnan(x), np.inf, -x), axis=-1, kind="stable")
    ranks = np.empty(x.shape, dtype=np.float64)
    np.put_along_axis(ranks, order, np.broadcast_to(np.arange(1, x.shape[-1] + 1, dtype=np.float64), x.shape).copy(), axis=-1)
    return ranks


def batched_combine(
    sim: np.ndarray, decay: np.ndarray, strategy: str, strength: np.ndarray, valid: np.ndarray | None = None
) -> np.ndarray:
    """``combine`` over rows: ``sim``/``decay`` broadcast to ``(..., N, M)``, ``strength`` to ``(..., N, 1)``.

    The strategy's one expression (:mod:`chronorank.fusion`) evaluated with ``s`` broadcast over
    the configurations: gated_multiply ``sim*(1-s+s*decay)``; multiply ``sim*decay**s``; linear
    ``(1-s)*minmax_row(sim)+s*decay``; rrf ``1/(60+rank(sim)) + s/(60+rank(decay))``.
    ``valid`` masks padded candidates out of min-max and rank computations.
    """
    strat = STRATEGIES.get(strategy)
    if strat is None:
        raise InvalidInput(f"combine={strategy!r} is not a known strategy; use one of {list(STRATEGY_NAMES)}")
    return strat(sim, decay, np.asarray(strength, dtype=np.float64), valid)


def _topk_metric(
    scores: np.ndarray, gains: np.ndarray, valid: np.ndarray, ideal_dcg: np.ndarray, n_rel: np.ndarray,
    metric: str, k: int,
) -> np.ndarray:
    """Per-query metric for every configuration: scores ``(C, N, M)`` -> ``(C, N)``."""
    scores = np.where(valid, scores, -np.inf)
    m = scores.shape[-1]
    kk = min(k, m)
    if kk < m:
        # the kk-th best score per row, then ties at that boundary filled by position, so the
        # top k equals a stable sort by (score desc, candidate position)
        part = np.argpartition(-scores, kk - 1, axis=-1)[..., kk - 1 : kk]
        kth = np.take_along_axis(scores, part, axis=-1)
        above = scores > kth
        tied = scores == kth
        need = kk - above.sum(axis=-1, keepdims=True)
        chosen = above | (tied & (np.cumsum(tied, axis=-1) <= need))
        pos = np.nonzero(chosen)[-1].reshape(scores.shape[:-1] + (kk,))
        top_scores = np.take_along_axis(scores, pos, axis=-1)
        order = np.argsort(-top_scores, axis=-1, kind="stable")
        idx = np.take_along_axis(pos, order, axis=-1)
    else:
        idx = np.argsort(-scores, axis=-1, kind="stable")
    g = np.take_along_axis(np.broadcast_to(gains, scores.shape), idx, axis=-1)
    g = np.where(np.take_along_axis(np.broadcast_to(valid, scores.shape), idx, axis=-1), g, 0.0)
    rel = g >= 1.0
    if metric == "ndcg":
        disc = 1.0 / np.log2(np.arange(2, kk + 2, dtype=np.float64))
        dcg = g @ disc
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(ideal_dcg > 0, dcg / np.where(ideal_dcg > 0, ideal_dcg, 1.0), 0.0)
    if metric == "hit_rate":
        return np.asarray(rel.any(axis=-1), dtype=np.float64)
    if metric == "recall":
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(n_rel > 0, rel.sum(axis=-1) / np.where(n_rel > 0, n_rel, 1), 0.0)
    if metric == "precision":
        return np.asarray(rel.sum(axis=-1) / float(k), dtype=np.float64)
    if metric == "mrr":
        first = np.argmax(rel, axis=-1)
        return np.where(rel.any(axis=-1), 1.0 / (first + 1.0), 0.0)
    raise InvalidInput(f"metric={metric!r} cannot be fitted; use ndcg@k, recall@k, precision@k, hit_rate@k or mrr@k.")


# --------------------------------------------------------------------------- the search


@dataclass
class FitResult:
    """The best configuration, its score on all queries and its cross-validated score."""

    kernel: str
    combine: str
    strength: float
    gate: bool | str
    weights: dict[str, float] | None
    metric: str
    score: float
    heldout: float
    heldout_std: float
    folds: int
    n_trials: int
    seconds: float
    trials: dict[str, Any] = field(repr=False, default_factory=dict)
    fold_choices: list[str] = field(repr=False, default_factory=list)
    relative_recency: float | None = None
    ties: int = 1  # configurations sharing the best fitted score (the gentlest is chosen)
    best_index: int | None = None  # the chosen row of ``trials``

    @property
    def spec(self) -> str:
        """The configuration in the one spec grammar, e.g. ``reranker(kernel="...", ...)``."""
        params: dict[str, Any] = {
            "kernel": self.kernel, "combine": self.combine, "strength": self.strength, "gate": self.gate,
        }
        if self.relative_recency is not None:
            params["relative_recency"] = self.relative_recency
        if self.weights:
            params["weights"] = [[k, v] for k, v in self.weights.items()]
        return format_spec("reranker", params)

    def build(self, **overrides: Any) -> Any:
        """A ready :class:`chronorank.TemporalReranker` with the fitted settings."""
        kwargs: dict[str, Any] = {
            "kernel": self.kernel, "strength": self.strength, "combine": self.combine,
            "gate": _reranker_gate(self.gate),
            "relative_recency": self.relative_recency,
            # the fit grid scores without these index rules (TemporalConfig's range_slope, no
            # topical margin): the built reranker ranks as the fit measured
            "range_slope": 0.0, "topical_margin": None,
        }
        kwargs.update(overrides)
        return TemporalReranker(**kwargs)

    def table(self, top: int = 10) -> str:
        """The best ``top`` trials as a markdown table."""
        t = self.trials
        order = np.argsort(-np.asarray(t["score"]), kind="stable")
        if self.best_index is not None:  # the chosen configuration heads its tie
            order = np.concatenate([[self.best_index], order[order != self.best_index]])
        order = order[:top]
        lines = [f"| kernel | combine | strength | gate | relative recency | {self.metric} |",
                 "|---|---|---:|---|---:|---:|"]
        rr = t.get("relative_recency") or [None] * len(t["kernel"])
        for i in order:
            lines.append(
                f"| {t['kernel'][i]} | {t['combine'][i]} | {t['strength'][i]:g} | {t['gate'][i]} | "
                f"{'-' if rr[i] is None else rr[i]} | {t['score'][i]:.4f} |"
            )
        return "\n".join(lines)

    def __str__(self) -> str:
        text = (
            f"{self.spec}  {self.metric}={self.score:.4f} (fitted), {self.heldout:.4f} +/- "
            f"{self.heldout_std:.4f} ({self.folds}-fold held-out); {self.n_trials} trials in {self.seconds:.2f}s"
        )
        if self.ties > 1:
            text += (f"\n{self.ties} configurations tie at the best score; chosen by the tie rule: {TIE_RULE}")
        return text


def _reranker_gate(gate: bool | str) -> Any:
    """The reranker gate that reproduces a fitted gate setting.

    "intent" rows were scored with the full parsed intent, which is the reranker's
    ``gate=True``; ``True`` rows used only the lexical sensitivity (recent mode).
    """
    if gate == "intent":
        return True
    if gate is True:
        lexical = LexicalGate()
        return lambda query: float(lexical(query))
    return False


def _parse_metric(metric: str) -> tuple[str, int]:
    m = parse_metric(metric)
    if m.name in ("stale", "age"):
        raise InvalidInput(f"metric={metric!r} cannot be maximised; fit on ndcg@k, recall@k, hit_rate@k or mrr@k.")
    return m.name, (m.k if m.k is not None else 10**9)


def _kernel_settings(space: Mapping[str, Any]) -> list[str]:
    kernels = space.get("kernels")
    if not kernels:
        raise InvalidInput("space['kernels'] is empty; give e.g. {'exponential': {'half_life_days': [30, 90]}}.")
    specs = []
    for name, axes in kernels.items():
        keys = list(axes or {})
        for values in itertools.product(*(list(axes[k]) for k in keys)):
            specs.append(format_spec(name, dict(zip(keys, values))))
    return specs


def _pad(fq: list[FitQuery]) -> dict[str, Any]:
    n = len(fq)
    m = max(1, max(q.similarity.size for q in fq))
    sim = np.full((n, m), -np.inf)
    ages = np.full((n, m), np.nan)
    gains = np.zeros((n, m))
    valid = np.zeros((n, m), dtype=bool)
    names = sorted({k for q in fq for k in (q.signals or {})})
    signals = {k: np.full((n, m), np.nan) for k in names}
    for i, q in enumerate(fq):
        c = q.similarity.size
        # candidates laid out in TIE_RULE order (newer first, undated last, then the smaller id),
        # so that the grid's stable sorts break equal scores as every engine does
        o = best_first(np.zeros(c), np.arange(c), -q.ages, q.ids if q.ids is not None else range(c))
        sim[i, :c], ages[i, :c], gains[i, :c], valid[i, :c] = q.similarity[o], q.ages[o], q.grades[o], True
        for k in names:
            if q.signals and k in q.signals:
                signals[k][i, :c] = np.asarray(q.signals[k])[o]
    return {"sim": sim, "ages": ages, "gains": gains, "valid": valid, "signals": signals, "m": m}


def _ideal(fq: list[FitQuery], k: int) -> tuple[np.ndarray, np.ndarray]:
    kk = min(k, max((q.ideal.size for q in fq), default=0))
    disc = 1.0 / np.log2(np.arange(2, kk + 2, dtype=np.float64))
    idcg = np.array([float(np.sum(q.ideal[:kk] * disc[: min(kk, q.ideal.size)])) for q in fq])
    n_rel = np.array([float(np.sum(q.ideal >= 1)) for q in fq])
    return idcg, n_rel


def _sensitivities(fq: list[FitQuery]) -> np.ndarray:
    need = [q for q in fq if q.sensitivity is None]
    if need:
        lexical = LexicalGate()  # the gate FitResult.build gives the reranker for gate=True
        for q in need:
            q.sensitivity = float(lexical(q.query))
    return np.array([float(q.sensitivity or 0.0) for q in fq])


def _progress(total: int, enabled: bool) -> Any:
    if enabled and sys.stderr.isatty():
        try:
            from tqdm import tqdm

            return tqdm(total=total, desc="fit", unit="trial", leave=False)
        except ImportError:
            pass
    return None


def _fused_similarity(padded: dict[str, Any], weights: Mapping[str, float] | None) -> np.ndarray:
    if not weights:
        return padded["sim"]
    fused = np.zeros_like(padded["sim"])
    for name, w in weights.items():
        if name not in padded["signals"]:
            raise InvalidInput(
                f"weights name signal {name!r} but the queries carry {sorted(padded['signals'])}; "
                "give every query a 'signals' mapping with that key."
            )
        if w:
            fused += w / (RRF_K + _ordinal_rank_rows(np.where(padded["valid"], padded["signals"][name], np.nan)))
    return np.where(padded["valid"], fused, -np.inf)


def _intent_geometry(
    fq: list[FitQuery], padded: dict[str, Any], sim: np.ndarray, relative_recency: float | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per-query temporal geometry under the parsed intent, padded: the same ages, validity
    and strength factors :func:`chronorank.temporal.apply_temporal` uses, kernel-free.

    Returns ``(kernel_age, range_scale, range_span_days, multiplier, not_yet_valid,
    sensitivity, offset)`` (the period per query, NaN without one)
    (weight = kernel(age) x multiplier + offset: the in-force bands of a period question).
    One Python pass over queries (not over trials): each kernel then scores all at once.
    """
    n, m = sim.shape
    kage = np.full((n, m), np.nan)
    mult = np.ones((n, m))
    off = np.zeros((n, m))
    nyv = np.zeros((n, m), dtype=bool)
    scale, days = np.full(n, np.nan), np.full(n, np.nan)
    sens = np.zeros(n)
    cfg = TemporalConfig(relative_recency=relative_recency)
    for i, q in enumerate(fq):
        if math.isnan(q.now):
            raise InvalidInput(
                f"query {q.qid!r} has no reference time; intent-aware fitting needs 'now' (or build the "
                "queries with prepare_queries)"
            )
        c = q.similarity.size
        plan = TemporalPlan.of(parse(q.query, now=q.now), q.now, cfg)
        times = q.now - padded["ages"][i, :c] * DAY  # the padded (TIE_RULE) order, as sim
        geo = temporal_geometry(sim[i, :c], times, plan=plan)
        kage[i, :c] = geo.kernel_age
        mult[i, :c] = geo.multiplier
        off[i, :c] = geo.offset
        nyv[i, :c] = geo.not_yet_valid
        sens[i] = plan.sensitivity
        if plan.range_span_days is not None and plan.range_scale is not None:
            scale[i], days[i] = plan.range_scale, plan.range_span_days
    return kage, scale, days, mult, nyv, sens, off


TIE_RULE = "the gentlest setting -- lowest strength, then longest half-life, then first in the grid"


def _best(mean: np.ndarray, table: Mapping[str, Any]) -> tuple[int, int]:
    """(index, ties): the best mean, ties broken by :data:`TIE_RULE`.

    Scores within 1e-9 of the best count as tied (they differ only by float rounding). The
    gentlest setting changes the ranking least, so the data gives no reason for more.
    """
    tied = np.flatnonzero(mean >= np.nanmax(mean) - 1e-9)
    if tied.size == 1:
        return int(tied[0]), 1
    half_lives: dict[str, float] = {}
    for i in tied:
        spec = table["kernel"][i]
        if spec not in half_lives:
            hl = get_kernel(spec).half_life()
            half_lives[spec] = math.inf if hl is None or not math.isfinite(hl) else float(hl)
    strength = np.array([float(table["strength"][i]) for i in tied])
    half_life = np.array([half_lives[table["kernel"][i]] for i in tied])
    order = np.lexsort((tied, -half_life, strength))  # the last key sorts first
    return int(tied[order[0]]), int(tied.size)


def score_space(
    queries: Sequence[Any],
    space: Mapping[str, Any] | None = None,
    metric: str = "ndcg@10",
    *,
    missing_date: str = "neutral",
    progress: bool = False,
) -> tuple[dict[str, Any], np.ndarray]:
    """Score every configuration on every query: ``(trials table, (configs, queries) matrix)``.

    ``gate`` values: ``False`` (full strength, ages from the reference date), ``True`` (the
    lexical gate scales strength) and ``"intent"`` (the full intent: as-of and range queries
    re-centre time, specific/timeless ones get strength 0, exactly as the reranker does),
    crossed with ``relative_recency`` values for the intent rows.
    """
    fq = [_as_fit_query(q, i) for i, q in enumerate(queries)]
    if not fq:
        raise InvalidInput("queries is empty; fitting needs at least one labelled query.")
    space = dict(DEFAULT_SPACE if space is None else space)
    name, k = _parse_metric(metric)

    padded = _pad(fq)
    idcg, n_rel = _ideal(fq, k)
    specs = _kernel_settings(space)
    kernels = [get_kernel(spec) for spec in specs]
    strategies = [str(s) for s in space.get("combine", ["gated_multiply"])]
    strengths = np.asarray(space.get("strength", [1.0]), dtype=np.float64)
    if strengths.size == 0 or np.any((strengths < 0) | (strengths > 1)):
        raise InvalidInput(f"space['strength']={strengths.tolist()}; strengths lie in [0, 1].")
    gates: list[bool | str] = []
    for g in space.get("gate", [False]):
        if g == "intent":
            gates.append("intent")
        elif isinstance(g, bool):
            gates.append(g)
        else:
            raise InvalidInput(f"space['gate'] holds {g!r}; use False, True or 'intent'.")
    rrs = [None if r is None else float(r) for r in space.get("relative_recency", [None])]
    weight_sets: list[dict[str, float] | None] = list(space.get("weights") or [None])
    n_q = len(fq)
    valid = padded["valid"]
    plain_age = np.maximum(padded["ages"], 0.0)  # future dates clamp to age 0
    gains = padded["gains"]
    per_query: list[np.ndarray] = []
    cols: dict[str, list[Any]] = {
        "weights": [], "kernel": [], "combine": [], "strength": [], "gate": [], "relative_recency": [],
    }
    n_sources = sum(len(rrs) if g == "intent" else 1 for g in gates)
    bar = _progress(len(weight_sets) * n_sources * len(specs) * len(strategies) * strengths.size, progress)
    no_span = np.full(n_q, np.nan)
    for weights in weight_sets:
        sim = _fused_similarity(padded, weights)
        sources: list[tuple[bool | str, float | None, tuple[np.ndarray, ...]]] = []
        for g in gates:
            if g == "intent":
                for rr in rrs:
                    sources.append(("intent", rr, _intent_geometry(fq, padded, np.where(valid, sim, 0.0), rr)))
            else:
                sens = _sensitivities(fq) if g else np.ones(n_q)
                sources.append((g, None, (plain_age, no_span, no_span, np.ones_like(plain_age),
                                          np.zeros(plain_age.shape, dtype=bool), sens, np.zeros_like(plain_age))))
        for g, rr, (kage, scale, days, mult, nyv, sens, off) in sources:
            eff = strengths[:, None, None] * sens[None, :, None]  # (strengths, queries, 1)
            for spec, kernel in zip(specs, kernels):
                factor = range_age_factor(kernel, scale, days)
                with np.errstate(invalid="ignore"):
                    w = np.asarray(kernel(kage * factor[:, None]), dtype=np.float64) * mult + off
                w = np.where(nyv, 0.0, w)
                dated = ~np.isnan(w) & valid
                if missing_date == "keep":
                    fill = np.ones(n_q)
                elif missing_date in ("penalise", "penalize"):
                    fill = np.where(dated.any(1), np.nanmin(np.where(dated, w, np.inf), axis=1), 1.0)
                else:  # neutral: median weight of the query's dated candidates
                    with np.errstate(all="ignore"):
                        fill = np.nanmedian(np.where(dated, w, np.nan), axis=1) if dated.any() else np.ones(n_q)
                    fill = np.where(np.isnan(fill), 1.0, fill)
                w = np.where(np.isnan(w), fill[:, None], w)
                for strategy in strategies:
                    scores = batched_combine(sim[None], w[None], strategy, eff, valid[None])
                    per_query.append(_topk_metric(scores, gains[None], valid[None], idcg, n_rel, name, k))
                    for st in strengths:
                        cols["weights"].append(dict(weights) if weights else None)
                        cols["kernel"].append(spec)
                        cols["combine"].append(strategy)
                        cols["strength"].append(float(st))
                        cols["gate"].append(g)
                        cols["relative_recency"].append(rr)
                    if bar is not None:
                        bar.update(strengths.size)
    if bar is not None:
        bar.close()
    matrix = np.concatenate(per_query, axis=0)
    table: dict[str, Any] = {key: val for key, val in cols.items()}
    table["score"] = matrix.mean(axis=1)
    return table, matrix


def fit(
    queries: Sequence[Any],
    space: Mapping[str, Any] | None = None,
    metric: str = "ndcg@10",
    folds: int = 5,
    progress: bool = True,
    *,
    seed: int = 0,
    missing_date: str = "neutral",
) -> FitResult:
    """Search ``space`` (kernels x parameters x combine x strength x gate [x fusion weights]).

    ``space`` keys: ``kernels`` ``{name: {param: [values]}}``, ``combine`` list,
    ``strength`` list in [0, 1], ``gate`` list of bools, optional ``weights`` list of
    ``{signal: weight}`` (queries must then carry ``signals``). The fitted score is the
    best mean over all queries; the held-out score is k-fold cross-validation over
    queries (choose on k-1 folds, score the left-out fold), seeded by ``seed``.
    Ties are reported (``ties``) and broken by :data:`TIE_RULE`.
    """
    t0 = time.perf_counter()
    table, matrix = score_space(queries, space, metric, missing_date=missing_date, progress=progress)
    n_q = matrix.shape[1]
    mean = matrix.mean(axis=1)
    best, ties = _best(mean, table)
    folds_used = max(2, min(int(folds), n_q)) if n_q >= 2 else 0
    held: list[float] = []
    choices: list[str] = []
    if folds_used:
        perm = np.random.default_rng(seed).permutation(n_q)
        fold_of = np.empty(n_q, dtype=np.int64)
        fold_of[perm] = np.arange(n_q) % folds_used
        scores_per_q = np.empty(n_q)
        for f in range(folds_used):
            train = fold_of != f
            pick, _ = _best(matrix[:, train].mean(axis=1), table)
            scores_per_q[~train] = matrix[pick, ~train]
            held.append(float(matrix[pick, ~train].mean()))
            choices.append(table["kernel"][pick])
        heldout = float(scores_per_q.mean())
    else:
        heldout = math.nan
    return FitResult(
        kernel=table["kernel"][best], combine=table["combine"][best], strength=table["strength"][best],
        gate=table["gate"][best], weights=table["weights"][best], metric=metric, score=float(mean[best]),
        relative_recency=table["relative_recency"][best],
        heldout=heldout, heldout_std=float(np.std(held)) if held else math.nan, folds=folds_used,
        n_trials=int(matrix.shape[0]), seconds=time.perf_counter() - t0, trials=table, fold_choices=choices,
        ties=ties, best_index=best,
    )


def fit_strength(
    queries: Sequence[Any],
    kernel: str = "exponential(half_life_days=180)",
    combine: str = "gated_multiply",
    metric: str = "ndcg@10",
    *,
    resolution: int = 21,
    gate: bool | str = False,
    relative_recency: float | None = None,
    plot: str | None = None,
) -> dict[float, float]:
    """Metric as a function of strength in ``linspace(0, 1, resolution)``; optional PNG plot."""
    strengths = np.round(np.linspace(0.0, 1.0, int(resolution)), 6)

    spec = repr(get_kernel(kernel))  # kernels' repr() is their spec string

    kname, kparams = parse_spec(spec)
    space = {"kernels": {kname: {p: [v] for p, v in kparams.items()}}, "combine": [combine],
             "strength": strengths.tolist(), "gate": [gate], "relative_recency": [relative_recency]}
    table, _ = score_space(queries, space, metric)
    curve = {float(s): float(v) for s, v in zip(table["strength"], table["score"])}
    if plot:
        plot_strength(curve, plot, title=f"{spec} via {combine}", metric=metric)
    return curve


def suggest_half_life(
    dates: Iterable[Any], now: Any = None, *, percentile: float = 25.0, bounds: tuple[float, float] = (1.0, 3650.0)
) -> float:
    """A half-life from the corpus age distribution.

    Rule: the ``percentile``-th percentile (default 25th) of the documents' ages at
    ``now`` (default: the newest date in ``dates``, so the answer does not move with the
    wall clock), clipped to ``bounds`` and rounded to two significant figures. With it,
    the freshest quarter of the corpus keeps a decay weight of at least 0.5 under an
    exponential kernel and the rest is demoted progressively -- a starting point for
    :func:`fit`, which tries multiples of it, not an optimum. Undated entries are ignored;
    with no dated entry the answer is 180 days.
    """
    t = np.array([to_epoch(d) if not isinstance(d, (int, float)) else float(d) for d in dates], dtype=np.float64)
    t = t[~np.isnan(t)]
    if t.size == 0:
        return 180.0
    ref = float(np.max(t)) if now is None else to_epoch(now, field="now")
    ages = np.maximum(ref - t, 0.0) / DAY
    value = float(np.clip(np.percentile(ages, percentile), *bounds))
    digits = 1 - int(math.floor(math.log10(value)))
    return float(round(value, digits))
