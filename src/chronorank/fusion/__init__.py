"""Fusion of similarity with time, and of several retrieval signals.

One strategy a file (``gated_multiply``, ``multiply``, ``linear``, ``rrf``), each a
:class:`~chronorank.fusion.base.Strategy` holding its formula once as an expression.
"""

from chronorank.fusion.base import Strategy
from chronorank.fusion.rrf import DEFAULT_WEIGHTS, SignalWeights, weighted_rrf
from chronorank.fusion.strategies import (
    STRATEGIES,
    combine,
    competition_rank,
    get_strategy,
    resolve_strategy,
)

__all__ = [
    "DEFAULT_WEIGHTS",
    "STRATEGIES",
    "SignalWeights",
    "Strategy",
    "combine",
    "competition_rank",
    "get_strategy",
    "resolve_strategy",
    "weighted_rrf",
]
