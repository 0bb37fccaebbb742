"""Linear: ``(1 - s) x norm(sim) + s x decay``.

``norm`` is min-max over the query's candidates (1 where they are all equal), so the score
depends on the other candidates and cannot run inside an engine.
"""

from __future__ import annotations

from chronorank import expr as ex
from chronorank.fusion.base import Strategy

__all__ = ["LINEAR", "linear"]


def _score(sim: ex.Expr, decay: ex.Expr, s: ex.Expr) -> ex.Expr:
    lo = ex.pool_min(sim)
    span = ex.sub(ex.pool_max(sim), lo)
    norm = ex.where(ex.gt(span, 0.0), ex.div(ex.sub(sim, lo), span), 1.0)
    return ex.add(ex.mul(ex.sub(1.0, s), norm), ex.mul(s, decay))


LINEAR = Strategy("linear", score=_score)
linear = LINEAR
