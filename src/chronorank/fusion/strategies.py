"""Combining similarity with a decay weight, one strategy a function.

Every strategy takes ``strength`` s in [0, 1]; at s = 0 it returns the similarity
unchanged, so the temporal layer can be switched off per query without a second code path.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from chronorank.errors import InvalidInput

RRF_K = 60


def _demote(similarity: np.ndarray, factor: np.ndarray) -> np.ndarray:
    # A factor < 1 must push every score *down*: multiplying a negative similarity by it
    # would move it up, so negatives are scaled by (2 - factor) instead.
    if similarity.size and similarity.min() >= 0:  # the usual case: one product
        return similarity * factor
    return np.where(similarity >= 0, similarity * factor, similarity * (2.0 - factor))


def gated_multiply(similarity: np.ndarray, decay: np.ndarray, strength: float) -> np.ndarray:
    """sim x (1 - s + s x decay): old documents are demoted, never deleted (at most by s)."""
    return _demote(similarity, 1.0 - strength + strength * decay)


def multiply(similarity: np.ndarray, decay: np.ndarray, strength: float) -> np.ndarray:
    """sim x decay^s: aggressive; a weight near zero makes a document unreachable."""
    return _demote(similarity, np.power(decay, strength))


def linear(similarity: np.ndarray, decay: np.ndarray, strength: float) -> np.ndarray:
    """(1 - s) x norm(sim) + s x decay, with norm = min-max over the candidates (1 when all equal)."""
    lo = float(similarity.min()) if similarity.size else 0.0
    span = float(similarity.max()) - lo if similarity.size else 0.0
    norm = (similarity - lo) / span if span > 0 else np.ones_like(similarity)
    return (1.0 - strength) * norm + strength * decay


def rrf(similarity: np.ndarray, decay: np.ndarray, strength: float, k: int = RRF_K) -> np.ndarray:
    """1/(k + rank_sim) + s/(k + rank_decay), ranks 1-based, ties share the best rank."""
    return 1.0 / (k + competition_rank(similarity)) + strength / (k + competition_rank(decay))


def competition_rank(scores: np.ndarray) -> np.ndarray:
    """1-based descending rank where tied scores share the best rank ("1224" ranking)."""
    n = scores.shape[0]
    if n == 0:
        return np.zeros(0, dtype=np.float64)
    order = np.argsort(-scores, kind="stable")
    sorted_scores = scores[order]
    is_new = np.empty(n, dtype=bool)
    is_new[0] = True
    is_new[1:] = sorted_scores[1:] != sorted_scores[:-1]
    # rank of each sorted position = position of the first element of its tie block + 1
    first = np.maximum.accumulate(np.where(is_new, np.arange(n), 0)) + 1
    ranks = np.empty(n, dtype=np.float64)
    ranks[order] = first
    return ranks


STRATEGIES: dict[str, Callable[[np.ndarray, np.ndarray, float], np.ndarray]] = {
    "gated_multiply": gated_multiply,
    "multiply": multiply,
    "linear": linear,
    "rrf": rrf,
}
_ALIASES = {"gated": "gated_multiply", "mul": "multiply", "product": "multiply", "sum": "linear"}


def resolve_strategy(name: str) -> str:
    key = _ALIASES.get(name, name)
    if key not in STRATEGIES:
        raise InvalidInput(
            f"combine={name!r} is not a known strategy; use one of {sorted(STRATEGIES)}"
        )
    return key


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
    func = STRATEGIES[resolve_strategy(strategy)]
    sim = np.asarray(similarity, dtype=np.float64)
    if strength == 0.0:
        return sim.copy()
    return func(sim, np.asarray(decay, dtype=np.float64), strength)
