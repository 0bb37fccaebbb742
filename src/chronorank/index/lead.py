"""The lead field: each document's first sentence or line (a title, a release header).

The index scores it as a BM25 field of its own; the stores cut it the same way, so
:func:`lead_cut` and :func:`lead_lengths` are the one definition of where a lead ends.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from chronorank.index.text import analyze_many
from chronorank.ranking import lead_cut  # the one definition, in the ranking's stages

__all__ = ["lead_cut", "lead_lengths"]


def lead_lengths(texts: Iterable[str]) -> np.ndarray:
    """Number of index terms in each text's first sentence or line (its title, in effect)."""
    heads = [text[: lead_cut(text)] for text in texts]
    return np.fromiter((len(t) for t in analyze_many(heads, prefixes=True)), dtype=np.int64, count=len(heads))
