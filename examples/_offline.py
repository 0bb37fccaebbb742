"""Shared by the integration examples: a small dated corpus and an offline embedding.

``hashing_embed`` hashes words into 256 buckets. It needs no download and no model, which
keeps the examples runnable anywhere; swap in a real embedding model for real use.
"""

from __future__ import annotations

import hashlib
import re
from datetime import datetime, timezone

import numpy as np

NOW = datetime(2026, 8, 20, tzinfo=timezone.utc)  # fixed so the output is reproducible
DIM = 256


def epoch(day: str) -> float:
    """'2024-05-01' -> epoch seconds (UTC). Stores filter on numbers, so dates are stored so."""
    return datetime.fromisoformat(day).replace(tzinfo=timezone.utc).timestamp()


# id, text, release date
RELEASES: list[tuple[str, str, str]] = [
    ("acme-1.4", "acme 1.4 release notes: changed the cache layout and the plugin loader", "2021-06-10"),
    ("acme-2.0", "acme 2.0 release notes: changed the cache eviction and the plugin loader", "2022-02-20"),
    ("acme-2.1", "acme 2.1 release notes: changed the config file format", "2022-09-01"),
    ("acme-3.0", "acme 3.0 release notes: dropped python 3.8, faster startup", "2024-03-15"),
    ("acme-4.0", "acme 4.0 release notes: a new sync engine", "2026-07-30"),
    ("guide", "how the acme cache works: keys, eviction and layout", "2019-03-01"),
]

QUERIES = [
    "what changed in the latest acme release notes",  # recent: 4.0 should win
    "what changed in acme release notes as of March 2022",  # as-of: 2.0 should win
    "explain how the acme cache works",  # timeless: similarity order is kept
]

_TOKEN = re.compile(r"[a-z0-9]+")


def hashing_embed(text: str) -> list[float]:
    v = np.zeros(DIM, dtype=np.float64)
    for tok in _TOKEN.findall(text.lower()):
        h = int.from_bytes(hashlib.blake2b(tok.encode(), digest_size=8).digest(), "little")
        v[h % DIM] += 1.0
    n = np.linalg.norm(v)
    return (v / n if n else v).tolist()
