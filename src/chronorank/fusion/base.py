"""A fusion strategy: similarity and a decay weight fused at strength s, written once.

A :class:`Strategy` holds its formula as an expression (:mod:`chronorank.expr`) over the
inputs ``sim``, ``decay`` and ``s``. numpy evaluates it for :func:`chronorank.fusion.combine`
(one query) and for the fitting grid (``s`` broadcast over configurations, rows over queries),
and the stores render it into the engine's score (``stores.plan.combine_expr``). At s = 0
every strategy returns the similarity unchanged, here, once, for all of them.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from chronorank import expr as ex

__all__ = ["DECAY", "SIM", "STRENGTH", "Strategy", "demote"]

SIM = ex.Var("sim", None)
DECAY = ex.Var("decay", None)
STRENGTH = ex.Var("s", None)


def demote(sim: ex.Expr, factor: ex.Expr, nonneg: bool = False) -> ex.Expr:
    """``sim x factor``; a factor < 1 must push every score *down*, so a negative similarity is
    scaled by ``(2 - factor)`` instead. ``nonneg``: the caller knows sim >= 0 (one product)."""
    if nonneg:
        return ex.mul(sim, factor)
    return ex.add(
        ex.mul(ex.maximum(sim, 0.0), factor),
        ex.mul(ex.minimum(sim, 0.0), ex.add(2.0, ex.neg(factor))),
    )


@dataclass(frozen=True)
class Strategy:
    """A fusion strategy: either ``factor(decay, s)`` (the score is ``demote(sim, factor)``) or
    ``score(sim, decay, s)``. Strategies whose score compares candidates (``pool_*``
    operations) cannot run inside an engine (:attr:`engine`)."""

    name: str
    factor: Callable[[ex.Expr, ex.Expr], ex.Expr] | None = None
    score: Callable[[ex.Expr, ex.Expr, ex.Expr], ex.Expr] | None = None

    def expr(self, sim: ex.Expr, decay: ex.Expr, strength: float | ex.Expr, *, nonneg: bool = False) -> ex.Expr:
        """The fused score of ``sim`` and ``decay`` (expressions) at ``strength`` (a number or an
        expression); constants folded, so a number gives the engines the plain formula."""
        return ex.substitute(self._tree(strength, nonneg), {SIM.name: sim, DECAY.name: decay})

    @functools.lru_cache(maxsize=256)  # noqa: B019 (frozen, few instances: the cache is bounded)
    def _tree(self, strength: float | ex.Expr, nonneg: bool) -> ex.Expr:
        s = ex.Const(float(strength)) if isinstance(strength, (int, float)) else strength
        if self.factor is not None:
            body = demote(SIM, self.factor(DECAY, STRENGTH), nonneg)
        elif self.score is not None:
            body = self.score(SIM, DECAY, STRENGTH)
        else:  # pragma: no cover - a declaration error
            raise TypeError(f"strategy {self.name!r} defines neither factor nor score")
        return ex.fold(ex.substitute(ex.where(ex.eq(STRENGTH, 0.0), SIM, body), {STRENGTH.name: s}))

    def factor_expr(self, decay: ex.Expr, strength: float) -> ex.Expr | None:
        """The factor the similarity is multiplied by (None for a strategy without one)."""
        if self.factor is None:
            return None
        f = ex.fold(ex.substitute(self.factor(DECAY, STRENGTH), {STRENGTH.name: ex.Const(float(strength))}))
        return ex.substitute(f, {DECAY.name: decay})

    @property
    def engine(self) -> bool:
        """Whether an engine can evaluate the score (it compares no candidates)."""
        return not (ex.ops(self._tree(STRENGTH, False)) & set(ex.POOL))

    def __call__(self, similarity: Any, decay: Any, strength: Any, valid: Any = None) -> np.ndarray:
        """numpy over arrays that broadcast; the candidates lie along the last axis (``valid``
        marks the real ones for strategies that compare them). ``strength`` is a number or an
        array broadcasting to the rest."""
        sim = np.asarray(similarity, dtype=np.float64)
        s: float | ex.Expr = float(strength) if np.ndim(strength) == 0 else STRENGTH
        nonneg = bool(sim.size) and bool(sim.min() >= 0)
        out = ex.evaluate(self._tree(s, nonneg), {"sim": sim, "decay": decay, "s": strength}, mask=valid)
        shape = np.broadcast_shapes(out.shape, sim.shape)
        if out.shape != shape:
            return np.broadcast_to(out, shape).copy()
        # a new array the caller may write to, never one of the inputs
        return out.copy() if out is sim or out is decay else out
