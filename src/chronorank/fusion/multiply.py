"""Multiply: ``sim x decay ** s``.

Aggressive: a weight near zero makes a document unreachable.
"""

from __future__ import annotations

from chronorank import expr as ex
from chronorank.fusion.base import Strategy

__all__ = ["MULTIPLY", "multiply"]

MULTIPLY = Strategy("multiply", factor=lambda decay, s: ex.power(decay, s))
multiply = MULTIPLY
