"""Fusion of similarity with time, and of several retrieval signals."""

from chronorank.fusion.rrf import DEFAULT_WEIGHTS, SignalWeights, weighted_rrf
from chronorank.fusion.strategies import STRATEGIES, combine, competition_rank, resolve_strategy

__all__ = [
    "DEFAULT_WEIGHTS",
    "STRATEGIES",
    "SignalWeights",
    "combine",
    "competition_rank",
    "resolve_strategy",
    "weighted_rrf",
]
