"""Gated multiply, the default: ``sim x (1 - s + s x decay)``.

Old documents are demoted, never deleted: at most by the share s of the score.
"""

from __future__ import annotations

from chronorank import expr as ex
from chronorank.fusion.base import Strategy

__all__ = ["GATED_MULTIPLY", "gated_multiply"]

GATED_MULTIPLY = Strategy("gated_multiply", factor=lambda decay, s: ex.add(ex.sub(1.0, s), ex.mul(s, decay)))
gated_multiply = GATED_MULTIPLY
