"""Combining similarity with a decay weight: the strategies by name, and :func:`combine`.

One strategy a file (:mod:`~chronorank.fusion.gated_multiply`, :mod:`~chronorank.fusion.multiply`,
:mod:`~chronorank.fusion.linear`, :mod:`~chronorank.fusion.rrf`), each written once as an
expression (:class:`~chronorank.fusion.base.Strategy`). Every strategy takes ``strength`` s in
[0, 1]; at s = 0 it returns the similarity unchanged, so the temporal layer can be switched
off per query without a second code path.
"""

from __future__ import annotations

import numpy as np

from chronorank.errors import InvalidInput
from chronorank.fusion.base import Strategy
from chronorank.fusion.gated_multiply import GATED_MULTIPLY, gated_multiply
from chronorank.fusion.linear import LINEAR, linear
from chronorank.fusion.multiply import MULTIPLY, multiply
from chronorank.fusion.rrf import RRF, RRF_K, competition_rank, rrf

__all__ = [
    "RRF_K",
    "STRATEGIES",
    "combine",
    "competition_rank",
    "gated_multiply",
    "get_strategy",
    "linear",
    "multiply",
    "resolve_strategy",
    "rrf",
]

STRATEGIES: dict[str, Strategy] = {s.name: s for s in (GATED_MULTIPLY, MULTIPLY, LINEAR, RRF)}
_ALIASES = {"gated": "gated_multiply", "mul": "multiply", "product": "multiply", "sum": "linear"}


def resolve_strategy(name: str) -> str:
    key = _ALIASES.get(name, name)
    if key not in STRATEGIES:
        raise InvalidInput(
            f"combine={name!r} is not a known strategy; use one of {sorted(STRATEGIES)}"
        )
    return key


def get_strategy(name: str) -> Strategy:
    """The strategy named ``name`` (or an alias); InvalidInput listing the known ones."""
    return STRATEGIES[resolve_strategy(name)]


def combine(
    similarity: np.ndarray,
    decay: np.ndarray,
    strategy: str = "gated_multiply",
    strength: float = 1.0,
) -> np.ndarray:
    """Fuse similarity with decay weights in [0, 1] by the named strategy at strength s.

    At s = 0 every strategy returns the similarity unchanged.
    """
    if not 0.0 <= strength <= 1.0:
        raise InvalidInput(f"strength must lie in [0, 1], got {strength!r}; e.g. strength=0.5")
    return get_strategy(strategy)(similarity, np.asarray(decay, dtype=np.float64), strength)
