"""A seeded synthetic benchmark where similarity alone cannot win.

Each topic is restated once per era in near-identical wording (one template, a few
words changed), so lexical similarity barely separates the versions. For a "current"
query the current era's document is graded 3 and the previous era's 1. Timeless
control queries ask for the original statement of a topic: there the oldest document
is graded 3 (and the next one 1), so a method that always prefers fresh documents loses.

``synthetic_benchmark(seed)`` returns ``(corpus, queries)`` in docs/format.md shape. With
``similarity=True`` each query also carries ``candidates`` and a ``similarity`` list
(a noisy simulated score: high for the topic's documents, low for the rest).
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

import numpy as np

from chronorank.errors import InvalidInput

__all__ = ["synthetic_benchmark", "REFERENCE_DATE"]

REFERENCE_DATE = "2026-01-01T00:00:00Z"
_SUBJECTS = [
    "billing api", "login flow", "export format", "rate limits", "search ranking", "sync engine",
    "plugin loader", "cache policy", "audit log", "upload limits", "retry policy", "pricing page",
    "session timeout", "webhook payload", "backup schedule", "access roles", "query planner",
    "schema migration", "alert rules", "token refresh", "report builder", "mobile sync",
    "import wizard", "storage quota",
]
_VERBS = ["describes", "explains", "documents", "covers", "sets out", "details"]
_FILLER = ["settings", "defaults", "behaviour", "limits", "options", "steps", "rules", "notes"]
_CURRENT = "what is the current {subject} policy"
_TIMELESS = "how was the {subject} originally introduced"


def synthetic_benchmark(
    n_topics: int = 24,
    eras: int = 4,
    era_days: float = 365.0,
    *,
    seed: int = 0,
    timeless_share: float = 0.25,
    similarity: bool = False,
    reference_date: str = REFERENCE_DATE,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(corpus, queries): ``n_topics`` topics x ``eras`` versions; pinned reference date."""
    if not 1 <= n_topics <= len(_SUBJECTS) * 4:
        raise InvalidInput(f"n_topics={n_topics}; use 1..{len(_SUBJECTS) * 4}.")
    if eras < 2:
        raise InvalidInput(f"eras={eras}; at least 2 eras are needed for current/previous grades.")
    if not 0.0 <= timeless_share <= 1.0:
        raise InvalidInput(f"timeless_share={timeless_share}; use a share in [0, 1].")
    rng = np.random.default_rng(seed)
    ref = datetime.fromisoformat(reference_date.replace("Z", "+00:00")).astimezone(timezone.utc)
    corpus: list[dict[str, Any]] = []
    queries: list[dict[str, Any]] = []
    n_timeless = int(round(n_topics * timeless_share))
    timeless = set(rng.choice(n_topics, size=n_timeless, replace=False).tolist()) if n_timeless else set()
    for t in range(n_topics):
        subject = _SUBJECTS[t % len(_SUBJECTS)] + ("" if t < len(_SUBJECTS) else f" {t // len(_SUBJECTS) + 1}")
        verb = _VERBS[int(rng.integers(len(_VERBS)))]
        ids = []
        for e in range(eras):
            # era 0 is the oldest; the newest era ends shortly before the reference date
            age = (eras - 1 - e) * era_days + float(rng.uniform(5.0, era_days * 0.5))
            date = (ref - timedelta(days=age)).replace(microsecond=0)
            words = list(rng.choice(_FILLER, size=2, replace=False))
            text = (
                f"The {subject} policy {verb} the {words[0]} and {words[1]} for {subject}. "
                f"Revision {e + 1} of the {subject} policy."
            )
            doc_id = f"topic{t:02d}-v{e + 1}"
            ids.append(doc_id)
            corpus.append({
                "id": doc_id, "text": text, "date": date.isoformat().replace("+00:00", "Z"),
                "valid_from": None, "valid_to": None,
                "metadata": {"topic": f"topic{t:02d}", "era": e + 1},
            })
        q: dict[str, Any]
        if t in timeless:
            q = {"qid": f"timeless-{t:02d}", "query": _TIMELESS.format(subject=subject),
                 "relevance": {ids[0]: 3, ids[1]: 1}, "kind": "timeless"}
        else:
            q = {"qid": f"current-{t:02d}", "query": _CURRENT.format(subject=subject),
                 "relevance": {ids[-1]: 3, ids[-2]: 1}, "kind": "current"}
        q["reference_date"] = reference_date
        q["candidates"] = None
        queries.append(q)
    if similarity:
        topic_of = np.array([int(d["id"][5:7]) for d in corpus])
        for q in queries:
            t = int(str(q["qid"]).rsplit("-", 1)[1])
            base = np.where(topic_of == t, 0.8, 0.3)
            noise = rng.normal(0.0, 0.03, size=base.size)
            q["candidates"] = [d["id"] for d in corpus]
            q["similarity"] = np.round(base + noise, 6).tolist()
    return corpus, queries
