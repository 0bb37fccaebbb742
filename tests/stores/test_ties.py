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


# ---------------------------------------------------------------- a lane's cut among equal scores

LANE_DOCS = [  # one text: every lane's score ties; dates tie too (the newest lane's key)
    {"id": "c", "text": TEXT, "date": "2024-01-01"},
    {"id": "old", "text": TEXT, "date": "2023-01-01"},
    {"id": "u1", "text": TEXT},
    {"id": "new", "text": TEXT, "date": "2025-06-01"},
    {"id": "b", "text": TEXT, "date": "2024-01-01"},
    {"id": "u2", "text": TEXT},
    {"id": "a", "text": TEXT, "date": "2024-01-01"},
    {"id": "x", "text": "unrelated changelog of another tool entirely", "date": "2022-03-01"},
]


class _OtherCpu:
    """numpy as Qdrant local mode sees it, but ``argsort`` puts equal keys in row order
    (``later=False``) or the other way (``later=True``): the order among equal keys that numpy's
    SIMD quicksort gives differs from one CPU to another, and local mode's lanes are argsorts."""

    def __init__(self, later: bool) -> None:
        self.later = later

    def __getattr__(self, name: str) -> Any:
        import numpy as np

        return getattr(np, name)

    def argsort(self, a: Any, *args: Any, **kwargs: Any) -> Any:
        import numpy as np

        a = np.asarray(a)
        if a.ndim != 1 or args or kwargs:
            return np.argsort(a, *args, **kwargs)
        if not self.later:
            return np.argsort(a, kind="stable")
        return a.shape[0] - 1 - np.argsort(a[::-1], kind="stable")


@pytest.mark.parametrize("later", [False, True])
@pytest.mark.parametrize("inserted", ["forward", "backward"])
def test_a_lane_cut_among_equal_scores_takes_the_rule_s_rows(
        monkeypatch: pytest.MonkeyPatch, later: bool, inserted: str) -> None:
    """The engine's own scoring (fallback='error') over lanes whose limits fall inside a tie: the
    pool -- and so the ranking -- is the rule's rows whatever order the engine gives equal
    scores (two argsort orders, as on two CPUs; two insertion orders, which is local mode's
    order among equal dates)."""
    pytest.importorskip("qdrant_client")
    from qdrant_client.local import local_collection

    from chronorank.index import HashingEmbedder
    from chronorank.stores import Lanes, QdrantStore

    monkeypatch.setattr(local_collection, "np", _OtherCpu(later))
    docs = LANE_DOCS if inserted == "forward" else LANE_DOCS[::-1]
    # each lane's limit cuts its tie: dense and keyword keep 3 of the 7 equal texts, the
    # newest lane 2 of the dates (2025-06-01, then one of the three on 2024-01-01)
    lanes = Lanes(dense=3, keyword=3, windows=(), newest=2)
    with QdrantStore("lane_ties", embedder=HashingEmbedder(64), config="index(strength=0)", lanes=lanes,
                     fallback="error") as store:
        store.add(docs)
        got = store.search("backup bucket configuration", k=10, now=NOW)
    # the pool is the rule's rows of each lane: newer first, undated last, then the smaller id
    assert list(got.ids) == ["new", "a", "b"]
    assert len(set(got.score)) == 1
