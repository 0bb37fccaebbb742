"""The shared integration helper: lanes, score fallback, lazy framework imports."""

from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest
from itest_corpus import NOW_S, epoch

from chronorank.errors import MissingDependency
from chronorank.integrations._common import (
    DAY,
    Lane,
    mongo_lane_filter,
    plan_lanes,
    similarity_column,
    union_pools,
)
from chronorank.types import Intent, Interval


def test_importing_integrations_loads_no_framework():
    code = (
        "import sys, chronorank, chronorank.integrations, chronorank.integrations._common, "
        "chronorank.integrations.chroma\n"
        "bad = [m for m in sys.modules if m.split('.')[0] in "
        "('langchain_core', 'llama_index', 'haystack', 'chromadb')]\n"
        "assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize(
    ("module", "blocked", "extra"),
    [
        ("chronorank.integrations.langchain", "langchain_core", "langchain"),
        ("chronorank.integrations.llama_index", "llama_index.core", "llamaindex"),
        ("chronorank.integrations.haystack", "haystack", "haystack"),
    ],
)
def test_missing_framework_names_the_extra(monkeypatch, module, blocked, extra):
    monkeypatch.setitem(sys.modules, blocked, None)  # import of it now fails
    monkeypatch.delitem(sys.modules, module, raising=False)
    import importlib

    with pytest.raises(MissingDependency, match=rf'pip install "chronorank\[{extra}\]"'):
        importlib.import_module(module)


def test_lanes_per_intent_mode():
    def intent(mode, target=None, s=1.0):
        return Intent(query="q", time_sensitivity=s, mode=mode, target=target)

    assert plan_lanes(intent("recent"), NOW_S, (30, 180)) == [
        Lane(NOW_S - 30 * DAY, math.inf),
        Lane(NOW_S - 180 * DAY, math.inf),
    ]
    march = Interval(epoch(2022, 3, 1), epoch(2022, 4, 1))
    assert plan_lanes(intent("as_of", march), NOW_S, (30,)) == [
        Lane(-math.inf, march.end),
        Lane(march.end - 30 * DAY, march.end),
    ]
    y2021 = Interval(epoch(2021, 1, 1), epoch(2022, 1, 1))
    assert plan_lanes(intent("range", y2021), NOW_S, (30,)) == [Lane(y2021.start, y2021.end)]
    assert plan_lanes(intent("timeless", s=0.0), NOW_S, (30,)) == []
    assert plan_lanes(intent("specific", s=0.5), NOW_S, (30,)) == []
    assert plan_lanes(intent("recent", s=0.0), NOW_S, (30,)) == []


def test_mongo_filter_shapes():
    assert mongo_lane_filter("date", Lane(1.0, math.inf)) == {"date": {"$gte": 1.0}}
    assert mongo_lane_filter("date", Lane(-math.inf, 2.0)) == {"date": {"$lt": 2.0}}
    assert mongo_lane_filter("date", Lane(1.0, 2.0)) == {
        "$and": [{"date": {"$gte": 1.0}}, {"date": {"$lt": 2.0}}]
    }


def test_lane_membership_ignores_missing_and_non_numbers():
    lane = Lane(0.0, 10.0)
    assert 5.0 in lane and 10.0 not in lane
    assert math.nan not in lane and None not in lane and True not in lane


def test_similarity_fallback_only_when_no_scores():
    col, derived = similarity_column([None, None, None, None])
    assert derived and col.tolist() == [1 - 0 / 4, 1 - 1 / 4, 1 - 2 / 4, 1 - 3 / 4]
    col, derived = similarity_column([0.5, None])  # partial: the core's bad_score decides
    assert not derived and np.isnan(col[1])


def test_union_keeps_first_occurrence_and_best_score():
    pools = [[("a", 0.9), ("b", 0.5)], [("b", 0.6), ("c", 0.1)]]
    assert union_pools(pools, key=lambda x: x) == [("a", 0.9), ("b", 0.6), ("c", 0.1)]
