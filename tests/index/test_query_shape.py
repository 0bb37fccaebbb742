"""The index's query-shape fade and temporal-burst test (issue 15)."""

from __future__ import annotations

import numpy as np
import pytest

from chronorank.errors import InvalidInput
from chronorank.index import IndexConfig, TemporalIndex
from chronorank.ranking import BURST_MIN_HALF_LIFE
from chronorank.ranking import burst_scale as _burst_scale
from chronorank.ranking import current_event as _current_event
from chronorank.ranking import cut_margin as _cut_margin
from chronorank.ranking import may_be_current as _may_be_current
from chronorank.ranking import shaped as _shaped

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


def test_the_topic_cut_fades_towards_no_cut_where_the_flattening_fades_towards_none():
    cfg = IndexConfig(short_query_terms=6, topical_margin=0.5, topic_floor=0.75, topic_lead_floor=0.5)
    assert _cut_margin(cfg, 6) == 0.5  # short queries keep the cut as it was
    half = _shaped(cfg, 9)  # f = (12 - 9) / 6
    assert _cut_margin(cfg, 9) == pytest.approx(0.5 * 0.5)  # looser, while the flattening margin is 0.75
    assert (half.topic_floor, half.topic_lead_floor) == (pytest.approx(0.75 * 0.5), pytest.approx(0.5 * 0.5))
    assert _cut_margin(cfg, 11) < _cut_margin(cfg, 10) < _cut_margin(cfg, 7)  # monotone, no cliff before off
    assert _cut_margin(cfg, 12) is None and _shaped(cfg, 12).topic_floor is None
    assert _cut_margin(cfg.replace(topical_margin=None), 3) is None


def test_a_long_question_keeps_a_less_closely_matching_fresh_report_on_topic():
    # a long news-style question: the fresh report shares fewer of its words than a stale
    # background piece, so the old cut at 10 known terms (0.83 x the best fused score) put it
    # off topic, where time can never lift it; the faded cut (0.5 x 1/3) keeps it on topic
    filler = [{"id": f"f{i}", "text": f"market prices weather sport item {i}", "date": f"20{10 + i % 12}-01-1{i % 9}"}
              for i in range(60)]
    docs = filler + [
        {"id": "background", "date": "2021-03-01",
         "text": "The city council approved the riverside stadium budget after a long public debate on taxes"},
        {"id": "fresh", "date": "2023-02-27", "text": "Council approves stadium budget; construction starts in spring"},
    ]
    idx = TemporalIndex(embedder=None)
    idx.add(docs)
    q = "The city council approved which riverside stadium budget after a long public debate on taxes this week?"
    assert idx._query_terms(q) == 10

    def on_topic(**kw):
        hits = idx.search(q, k=3, now="2023-03-01", **kw)
        return dict(zip(hits.ranked_ids, hits.meta["on_topic"].tolist()))

    faded = on_topic()
    filler_hits = [on for i, on in faded.items() if i not in ("fresh", "background")]
    assert faded["fresh"] and faded["background"] and filler_hits and not any(filler_hits)
    assert not on_topic(short_query_terms=None)["fresh"]  # the cut at its full 0.5 x the best


def test_burst_when_the_best_matches_crowd_the_recent_past():
    now = 1000 * DAY
    ages = np.linspace(1, 1000, 100)  # one document every ~10 days
    times = now - ages * DAY
    sim = np.zeros(100)
    sim[:3] = 1.0  # this week's three reports ...
    sim[50:57] = 0.9  # ... among older background stories on the subject
    assert _burst_scale(sim, times, now, 0.1, past_only=True) == pytest.approx(np.median(ages[[0, 1, 2, *range(50, 57)]]))
    spread = np.zeros(100)
    spread[::10] = 1.0  # the best matches spread like the collection
    assert _burst_scale(spread, times, now, 0.1, past_only=True) is None
    two = np.zeros(100)
    two[:2] = 1.0
    two[50:58] = 0.9  # only two recent matches: the third-newest is old
    assert _burst_scale(two, times, now, 0.1, past_only=True) is None


def test_burst_ignores_documents_after_a_past_reference_time():
    now = 1000 * DAY
    past = now - np.linspace(1, 1000, 100) * DAY
    future = now + np.linspace(1, 50, 20) * DAY
    times = np.concatenate([past, future])
    spread = np.zeros(100)
    spread[::10] = 0.5  # what existed matches across the years; the unborn match best
    sim = np.concatenate([spread, np.ones(20)])
    assert _burst_scale(sim, times, now, 0.1, past_only=False) is not None
    assert _burst_scale(sim, times, now, 0.1, past_only=True) is None


def test_a_small_collection_is_never_a_burst():
    times = np.array([0.0, DAY, 2 * DAY])
    assert _burst_scale(np.array([1.0, 1.0, 1.0]), times, 3 * DAY, 0.1, past_only=True) is None


def _intent(mode, target=None, sensitivity=0.3, spans=()):
    from chronorank.types import Intent

    return Intent(query="q", mode=mode, target=target, time_sensitivity=sensitivity, spans=spans)


def test_which_intents_the_burst_test_may_change():
    from chronorank.types import Interval

    now = 1000 * DAY
    assert _may_be_current(_intent("timeless"), now)
    assert _may_be_current(_intent("recent"), now)
    this_week = Interval(now - 3 * DAY, now + 4 * DAY)
    assert _may_be_current(_intent("range", this_week), now)
    assert not _may_be_current(_intent("range", Interval(now - 400 * DAY, now - 35 * DAY)), now)  # "in 2021"
    assert not _may_be_current(_intent("specific"), now)
    assert not _may_be_current(_intent("as_of", Interval(now - 40 * DAY, now - 39 * DAY)), now)


def test_a_current_event_is_recent_at_full_sensitivity_on_the_bursts_time_scale():
    from chronorank.kernels import get_kernel
    from chronorank.temporal import TemporalConfig
    from chronorank.types import Interval

    tcfg = TemporalConfig(kernel=get_kernel("exponential(half_life_days=180)"), relative_recency=0.85)
    intent, cfg = _current_event(_intent("range", Interval(0.0, 7 * DAY)), tcfg, scale=60.0)
    assert (intent.mode, intent.target, intent.time_sensitivity) == ("recent", None, 1.0)
    assert cfg.kernel.half_life() == pytest.approx(0.5 * 60.0) and cfg.relative_recency is None
    _, tight = _current_event(_intent("timeless"), tcfg, scale=2.0)
    assert tight.kernel.half_life() == pytest.approx(BURST_MIN_HALF_LIFE)
    _, wide = _current_event(_intent("timeless"), tcfg, scale=1000.0)
    assert wide.kernel.half_life() == pytest.approx(180.0)  # never lengthened


def test_a_timeless_question_about_a_recent_event_gets_recency():
    # 60 old documents on other things, and three on the event: one stale, three this week
    docs = [{"id": f"old{i}", "text": f"archive note {i} about gardening and soup", "date": f"20{10 + i % 12}-03-0{1 + i % 8}"}
            for i in range(60)]
    docs += [
        {"id": "stale", "text": "The harbour bridge reopened to traffic after repairs", "date": "2015-05-01"},
        {"id": "fresh", "text": "The harbour bridge reopened to traffic after repairs", "date": "2023-02-27"},
        {"id": "fresh2", "text": "Harbour bridge reopened to traffic after repairs", "date": "2023-02-26"},
        {"id": "fresh3", "text": "Traffic back on the harbour bridge, reopened after repairs", "date": "2023-02-25"},
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
