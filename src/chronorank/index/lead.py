"""The lead field: each document's first sentence or line (a title, a release header).

The index scores it as a BM25 field of its own; the stores cut it the same way, so
:func:`lead_cut` and :func:`lead_lengths` are the one definition of where a lead ends.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import numpy as np

from chronorank.index.text import analyze_many

__all__ = ["lead_cut", "lead_lengths"]


_SENTENCE_END = re.compile(r"[.!?](?=\s|$)|\n")


def lead_cut(text: str, scan: int = 400) -> int:
    """Where a text's lead ends: its first sentence or line, at most ``scan`` characters."""
    m = _SENTENCE_END.search(text, 0, scan)
    return m.start() if m else min(len(text), scan)


def lead_lengths(texts: Iterable[str]) -> np.ndarray:
    """Number of index terms in each text's first sentence or line (its title, in effect)."""
    heads = [text[: lead_cut(text)] for text in texts]
    return np.fromiter((len(t) for t in analyze_many(heads, prefixes=True)), dtype=np.int64, count=len(heads))
