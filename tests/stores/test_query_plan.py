"""The stores' query plan is the query's TemporalPlan written for an engine (issue 21, item 2).

No engine is needed: ``plan_query`` is pure. The reranker, the index and a store must agree on
every query's reference time and effective strength, since they read them from one plan.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from chronorank import TemporalReranker
from chronorank.index import TemporalIndex
from chronorank.stores.base import StoreConfig, plan_query
from chronorank.temporal import plan
from chronorank.types import DAY, Intent, Interval

NOW = 1_700_000_000.0


def _it(mode: str, target: Interval | None = None) -> Intent:
    return Intent(query="widget release", time_sensitivity=0.6, mode=mode, target=target, topical_query="widget release")


INTENTS = [
    _it("recent"),
    _it("as_of", Interval(NOW - 300 * DAY, NOW - 299 * DAY)),
    _it("as_of", Interval(NOW - DAY, NOW + DAY)),
    _it("range", Interval(NOW - 700 * DAY, NOW - 335 * DAY)),
    _it("range", Interval(NOW - 60 * DAY, math.inf)),
    _it("range", Interval(-math.inf, NOW - 60 * DAY)),
    _it("specific"),
    _it("timeless"),
]


@pytest.mark.parametrize("intent", INTENTS, ids=lambda i: f"{i.mode}-{i.target}")
@pytest.mark.parametrize("spec", [None, "index(missing_date='keep', future='symmetric')",
                                  "index(missing_date='penalise', future='not_yet_valid')",
                                  "index(missing_date='drop', future='clamp')"])
def test_plan_query_reads_the_temporal_plan(intent: Intent, spec: str | None) -> None:
    cfg = StoreConfig(index=spec, missing_weight=0.4, fallback="error")  # the engine's own filters
    qp = plan_query(intent, NOW, cfg)
    tp = plan(intent, NOW, cfg.index.temporal)
    assert qp.temporal == tp
    assert (qp.ref, qp.strength, qp.mode, qp.target, qp.half_open) == (
        tp.reference_time, tp.strength, tp.mode, tp.range, tp.half_open)
    assert qp.fill == tp.undated_fill(neutral=0.4)
    assert qp.exclude_future == (tp.range is None and (tp.marks_not_yet_valid or tp.excludes_future))


def test_the_reranker_the_index_and_a_store_agree_on_each_querys_reference_time() -> None:
    docs = [{"id": str(i), "text": f"widget release {i}", "date": NOW - (40 * i + 5) * DAY} for i in range(25)]
    idx = TemporalIndex(embedder=None, config="index(relative_recency=none, burst_ratio=none)")
    idx.add(docs)
    cfg = StoreConfig(index="index(relative_recency=none)")
    for intent in INTENTS:
        rr = TemporalReranker(gate=_Fixed(intent), relative_recency=None)
        ranked = rr.rerank_columns("widget release", np.linspace(1, 0.5, 25), [d["date"] for d in docs], now=NOW)
        hits = idx.search("widget release", k=5, now=NOW, intent=intent)
        qp = plan_query(intent, NOW, cfg)
        assert ranked.meta["now"] == hits.meta["reference_time"] == qp.ref, intent
        assert ranked.meta["effective_strength"] == hits.meta["effective_strength"] == qp.strength, intent


class _Fixed:
    def __init__(self, intent: Intent) -> None:
        self._intent = intent

    def __call__(self, query: str) -> float:
        return self._intent.time_sensitivity

    def intent(self, query: str, now: float) -> Intent:
        return self._intent
