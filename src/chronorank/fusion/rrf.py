"""Reciprocal rank fusion (Cormack, Clarke & Buettcher 2009), k = 60.

- the ``rrf`` strategy, similarity with decay at strength s:
  ``1 / (k + rank(sim)) + s / (k + rank(decay))``, ranks 1-based, ties sharing the best rank;
- :func:`weighted_rrf` over named signals: ``score(d) = sum over signals s of w_s / (k + rank_s(d))``.
  Defaults follow the design record: vector 1.0, keyword 1.0, recency 0.5. An unset weight
  (``None`` or absent) means its default; an explicit 0 turns that signal off.

Ranks compare the candidates with each other, so neither runs inside an engine.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from chronorank import expr as ex
from chronorank.errors import InvalidInput
from chronorank.fusion.base import Strategy

DEFAULT_WEIGHTS: dict[str, float] = {"vector": 1.0, "keyword": 1.0, "recency": 0.5}
RRF_K = 60


def rrf_score(sim: ex.Expr, decay: ex.Expr, s: ex.Expr, k: int = RRF_K) -> ex.Expr:
    """``1 / (k + rank(sim)) + s / (k + rank(decay))``."""
    return ex.add(ex.div(1.0, ex.add(float(k), ex.pool_rank(sim))), ex.div(s, ex.add(float(k), ex.pool_rank(decay))))


RRF = Strategy("rrf", score=rrf_score)


def rrf(similarity: np.ndarray, decay: np.ndarray, strength: float, k: int = RRF_K) -> np.ndarray:
    """The ``rrf`` strategy over one query's arrays (``k`` other than 60 for experiments)."""
    if k == RRF_K:
        return RRF(similarity, decay, strength)
    return Strategy(f"rrf(k={k})", score=lambda a, b, c: rrf_score(a, b, c, k))(similarity, decay, strength)


def competition_rank(scores: np.ndarray) -> np.ndarray:
    """1-based descending rank where tied scores share the best rank ("1224" ranking)."""
    return ex.evaluate(ex.pool_rank(ex.Var("x", None)), {"x": np.asarray(scores, dtype=np.float64)})


@dataclass(frozen=True)
class SignalWeights:
    """Per-signal weights where ``None`` means "use the default" and 0 means "off"."""

    vector: float | None = None
    keyword: float | None = None
    recency: float | None = None
    extra: Mapping[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for name, w in self.items_set().items():
            if not (isinstance(w, (int, float)) and math.isfinite(w) and w >= 0):
                raise InvalidInput(
                    f"weight for signal {name!r} must be a finite number >= 0, got {w!r}; "
                    "use 0 to turn a signal off or leave it unset for its default"
                )

    def items_set(self) -> dict[str, float]:
        """Only the weights the caller set explicitly (0 included)."""
        out = {k: v for k, v in (("vector", self.vector), ("keyword", self.keyword),
                                 ("recency", self.recency)) if v is not None}
        out.update(self.extra)
        return out

    def resolve(self, names: list[str] | tuple[str, ...]) -> dict[str, float]:
        """The weight used for each signal name: explicit value, else default, else 1.0."""
        explicit = self.items_set()
        return {n: float(explicit.get(n, DEFAULT_WEIGHTS.get(n, 1.0))) for n in names}


def _ordinal_rank(scores: np.ndarray) -> np.ndarray:
    """1-based descending rank; ties broken by input position; NaN ranks last (inf)."""
    n = scores.shape[0]
    valid = ~np.isnan(scores)
    order = np.argsort(np.where(valid, -scores, np.inf), kind="stable")
    ranks = np.empty(n, dtype=np.float64)
    ranks[order] = np.arange(1, n + 1, dtype=np.float64)
    ranks[~valid] = np.inf
    return ranks


def weighted_rrf(
    signals: Mapping[str, np.ndarray],
    weights: SignalWeights | Mapping[str, float | None] | None = None,
    k: int = RRF_K,
) -> np.ndarray:
    """Fuse score arrays (higher is better, NaN = absent) by weighted RRF.

    With a single signal switched on, the fused order is exactly that signal's order, so
    recency-only weights reproduce a sliding window of the newest documents.
    """
    if not signals:
        raise InvalidInput("weighted_rrf needs at least one signal, got none")
    if isinstance(weights, SignalWeights):
        sw = weights
    else:
        given = dict(weights or {})
        known = {n: given.pop(n) for n in ("vector", "keyword", "recency") if n in given}
        extra = {n: float(v) for n, v in given.items() if v is not None}
        sw = SignalWeights(**known, extra=extra)
    arrays = {name: np.asarray(v, dtype=np.float64) for name, v in signals.items()}
    sizes = {a.shape for a in arrays.values()}
    if len(sizes) != 1 or len(next(iter(sizes))) != 1:
        raise InvalidInput(
            "all signals must be 1-D arrays of the same length, got shapes "
            + ", ".join(f"{n}={a.shape}" for n, a in arrays.items())
        )
    resolved = sw.resolve(tuple(arrays))
    fused = np.zeros(next(iter(sizes)), dtype=np.float64)
    for name, scores in arrays.items():
        w = resolved[name]
        if w == 0.0:
            continue
        fused += w / (k + _ordinal_rank(scores))
    return fused
