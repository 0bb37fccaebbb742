"""Equal scores are ordered by one rule in every engine (``chronorank.types.TIE_RULE``): the
newer document first (undated last), then the smaller id -- never by an engine's own order.

Five documents with the same text score the same; their ids are given out of order."""

from __future__ import annotations

from typing import Any

import pytest
from store_cases import STORES  # (conftest.py puts tests/stores on sys.path)

from chronorank import TemporalReranker

TEXT = "tern backup bucket configuration guide"
DOCS = [  # inserted in this order, which is not the rule's
    {"id": "b", "text": TEXT, "date": "2024-01-01"},
    {"id": "u2", "text": TEXT},
    {"id": "new", "text": TEXT, "date": "2025-06-01"},
    {"id": "u1", "text": TEXT},
    {"id": "a", "text": TEXT, "date": "2024-01-01"},
]
RULE = ["new", "a", "b", "u1", "u2"]  # newer first, undated last, then the smaller id
NOW = "2026-01-01"


def test_the_reranker_orders_ties_by_the_rule() -> None:
    cands = [{"id": d["id"], "score": 0.5, "date": d.get("date")} for d in DOCS]
    for top_k in (None, 1, 2, 3, 4):
        ranking = TemporalReranker(strength=0).rerank("backup bucket", cands, now=NOW, top_k=top_k)
        assert [h.id for h in ranking] == RULE[:top_k], top_k
    # columns: numeric ids compare as numbers
    ranking = TemporalReranker(strength=0).rerank_columns("q", [1.0] * 3, [0.0, 0.0, 0.0], ids=[10, 9, 100])
    assert [h.id for h in ranking] == [9, 10, 100]


@pytest.mark.parametrize("factory", STORES, indirect=True)
@pytest.mark.parametrize("config", ["index(strength=0)", None])
def test_every_engine_orders_ties_by_the_rule(factory: Any, config: str | None) -> None:
    store = factory(**({"config": config} if config else {}))
    store.add(DOCS)
    for k in (1, 2, 3, 5):
        got = store.search("backup bucket configuration", k=k, now=NOW)
        scores = [h.score for h in got]
        assert len(set(scores)) == 1 or config is None, (factory.kind, scores)
        if len(set(scores)) == 1:
            assert [h.id for h in got] == RULE[:k], (factory.kind, k)
        else:  # time on: the undated pair and the dated pair of one day still tie
            ids = [h.id for h in got]
            for x, y in (("a", "b"), ("u1", "u2")):
                if x in ids and y in ids:
                    assert ids.index(x) < ids.index(y), (factory.kind, ids)
