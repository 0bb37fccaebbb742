"""The index's query-shape fade and temporal-burst test (issue 15)."""

from __future__ import annotations

import numpy as np
import pytest

from chronorank.errors import InvalidInput
from chronorank.index import IndexConfig, TemporalIndex
from chronorank.index.core import _is_burst, _shaped

DAY = 86400.0


def test_short_queries_keep_the_name_lookup_mechanisms():
    cfg = IndexConfig()
    assert _shaped(cfg, cfg.short_query_terms) is cfg
    assert _shaped(cfg.replace(short_query_terms=None), 40) == cfg.replace(short_query_terms=None)


def test_long_questions_fade_them_linearly_to_off_at_twice_the_length():
    cfg = IndexConfig(short_query_terms=6, lead_weight=0.5, idf_power=3.0, topical_margin=0.5)
    half = _shaped(cfg, 9)  # f = (12 - 9) / 6
    assert half.lead_weight == pytest.approx(0.5 * 0.5)
    assert half.idf_power == pytest.approx(3.0 * 0.5)
    assert half.topical_margin == pytest.approx(1 - 0.5 * (1 - 0.5))
    off = _shaped(cfg, 12)
    assert (off.lead_weight, off.idf_power, off.topical_margin) == (0.0, 0.0, None)


def test_burst_when_the_best_matches_crowd_the_recent_past():
    now = 1000 * DAY
    times = now - np.linspace(1, 1000, 100) * DAY  # one document every ~10 days
    sim = np.zeros(100)
    sim[:10] = 1.0  # the ten newest match best
    assert _is_burst(sim, times, now, 0.5, past_only=True)
    spread = np.zeros(100)
    spread[::10] = 1.0  # the best matches spread like the collection
    assert not _is_burst(spread, times, now, 0.5, past_only=True)


def test_burst_ignores_documents_after_a_past_reference_time():
    now = 1000 * DAY
    past = now - np.linspace(1, 1000, 100) * DAY
    future = now + np.linspace(1, 50, 20) * DAY
    times = np.concatenate([past, future])
    spread = np.zeros(100)
    spread[::10] = 0.5  # what existed matches across the years; the unborn match best
    sim = np.concatenate([spread, np.ones(20)])
    assert _is_burst(sim, times, now, 0.5, past_only=False)
    assert not _is_burst(sim, times, now, 0.5, past_only=True)


def test_a_small_collection_is_never_a_burst():
    times = np.array([0.0, DAY, 2 * DAY])
    assert not _is_burst(np.array([1.0, 0.0, 0.0]), times, 3 * DAY, 0.5, past_only=True)


def test_a_timeless_question_about_a_recent_event_gets_recency():
    # 60 old documents on other things, and three on the event: one stale, two this week
    docs = [{"id": f"old{i}", "text": f"archive note {i} about gardening and soup", "date": f"20{10 + i % 12}-03-0{1 + i % 8}"}
            for i in range(60)]
    docs += [
        {"id": "stale", "text": "The harbour bridge reopened to traffic after repairs", "date": "2015-05-01"},
        {"id": "fresh", "text": "The harbour bridge reopened to traffic after repairs", "date": "2023-02-27"},
        {"id": "fresh2", "text": "Harbour bridge reopened to traffic after repairs", "date": "2023-02-26"},
    ]
    idx = TemporalIndex(embedder=None)
    idx.add(docs)
    q = "Which bridge reopened to traffic after repairs?"
    hits = idx.search(q, k=3, now="2023-03-01")
    assert hits.meta["intent"].mode == "recent" and hits.ranked_ids[0] == "fresh"
    plain = idx.search(q, k=3, now="2023-03-01", burst_ratio=None)
    assert plain.meta["intent"].mode == "timeless"


@pytest.mark.parametrize(("key", "value"), [("short_query_terms", 0), ("short_query_terms", 2.5),
                                            ("burst_ratio", 0.0), ("burst_ratio", 1.0)])
def test_bad_settings_are_refused(key, value):
    with pytest.raises(InvalidInput, match=key):
        IndexConfig().replace(**{key: value}).__post_init__()
