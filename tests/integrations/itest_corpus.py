"""Shared corpus, queries and an offline hashing embedding for the integration tests.

The corpus is built so that similarity alone ranks the *wrong* document first for the
temporal queries: the old release notes share more words with the queries than the
fresh one does.
"""

from __future__ import annotations

import hashlib
import re
from datetime import datetime, timezone

import numpy as np

NOW = datetime(2026, 8, 20, tzinfo=timezone.utc)
NOW_S = NOW.timestamp()
DIM = 256


def epoch(y: int, m: int, d: int) -> float:
    return datetime(y, m, d, tzinfo=timezone.utc).timestamp()


# (id, text, date as epoch seconds)
CORPUS: list[tuple[str, str, float]] = [
    ("acme-2021", "acme release notes: changed the cache layout and the plugin loader", epoch(2021, 6, 10)),
    ("acme-2022", "acme release notes: changed the cache eviction and the plugin loader", epoch(2022, 2, 20)),
    ("acme-2026", "acme release notes: a new sync engine", epoch(2026, 7, 30)),
    ("bakery", "the bakery opens at seven on sunday", epoch(2026, 8, 1)),
    ("garden", "how the garden irrigation works in summer", epoch(2020, 5, 5)),
    ("cache-guide", "how the acme cache works: keys, eviction and layout", epoch(2019, 3, 1)),
]
IDS = [c[0] for c in CORPUS]

LATEST = "what changed in the latest acme release notes"
AS_OF = "what changed in acme release notes as of March 2022"
IN_2021 = "what changed in acme release notes in 2021"
TIMELESS = "explain how the acme cache works"

# Old near-duplicates that crowd the fresh document out of a small fetch (lanes test).
CROWD: list[tuple[str, str, float]] = [
    (f"acme-old-{i}", f"acme release notes: changed the cache and the plugin loader, patch {i}",
     epoch(2015 + i % 5, 1 + i % 12, 1 + i))
    for i in range(12)
]

_DATES = {c[0]: c[2] for c in CORPUS + CROWD}


def similarity_then_tie_rule(pairs) -> list[str]:
    """Ids of ``[(id, similarity)]``, most similar first, equal similarities by chronorank's tie
    rule (``chronorank.types.TIE_RULE``: the newer document first, then the smaller id)."""
    return [i for i, _ in sorted(pairs, key=lambda p: (-p[1], -_DATES[p[0]], p[0]))]

# The plain similarity x decay (the index's relative recency, range slope and topical margin
# off): with this bag-of-words embedding the fresh acme-2026 is far less similar than acme-2022
# (0.40 against 0.59), so relative recency rightly counts acme-2022 as its project's current
# page; the adapter tests that need "the fresh page wins" rank with the plain settings.
PLAIN: dict = {"relative_recency": None, "range_slope": 0.0, "topical_margin": None}


_TOKEN = re.compile(r"[a-z0-9]+")


def hashing_embed(text: str) -> list[float]:
    """Bag of words hashed into DIM buckets, L2-normalised: offline and deterministic."""
    v = np.zeros(DIM, dtype=np.float64)
    for tok in _TOKEN.findall(text.lower()):
        h = int.from_bytes(hashlib.blake2b(tok.encode(), digest_size=8).digest(), "little")
        v[h % DIM] += 1.0
    n = np.linalg.norm(v)
    return (v / n if n else v).tolist()


def core_ranking(query: str, scores, times, ids, top_k=None, **reranker_kwargs):
    """The reference: the core reranker on bare columns, no integration code involved."""
    from chronorank import TemporalReranker

    r = TemporalReranker(**reranker_kwargs)
    return r.rerank_columns(
        query, np.asarray(scores, dtype=np.float64), np.asarray(times, dtype=np.float64),
        ids=list(ids), top_k=top_k, now=NOW_S,
    )


def assert_same_as_core(results, ranking):
    """``results``: [(id, chronorank_score)] from an integration; ``ranking``: core's."""
    assert [r[0] for r in results] == ranking.ranked_ids
    assert [r[1] for r in results] == [float(h.score) for h in ranking]


