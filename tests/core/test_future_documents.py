"""A search at a past reference time sees the world as it was then (issue 15, item 2).

Under the default ``future='auto'`` a document dated after a reference time in the past
(more than ``PAST_SKEW_S`` before the wall clock) did not exist yet: it never outranks an equally
similar document that existed, in the reranker and in the index alike. At the present
(``now`` = the wall clock) nothing changes: a future date is clamped to age 0.
"""

from __future__ import annotations

import time
from datetime import datetime, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chronorank import TemporalReranker
from chronorank.index import TemporalIndex
from chronorank.temporal import PAST_SKEW_S, excludes_future
from chronorank.types import DAY, Intent, Interval

REF = "2023-03-01T12:00:00Z"
REF_S = datetime(2023, 3, 1, 12, tzinfo=timezone.utc).timestamp()
MODES = ("recent", "as_of", "range", "specific", "timeless")


class FixedIntent:
    def __init__(self, mode: str, sensitivity: float) -> None:
        self.mode, self.sensitivity = mode, sensitivity

    def __call__(self, query: str) -> float:
        return self.sensitivity

    def intent(self, query: str, now: float) -> Intent:
        target = None
        if self.mode in ("as_of", "range"):
            target = Interval(now - 400 * DAY, now + 30 * DAY)  # a period that runs past now
        return Intent(query=query, time_sensitivity=self.sensitivity, mode=self.mode,
                      target=target, topical_query=query)


def iso(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, tz=timezone.utc).isoformat()


@settings(max_examples=60, deadline=None)
@given(
    mode=st.sampled_from(MODES),
    sensitivity=st.sampled_from([0.0, 0.3, 1.0]),
    strength=st.sampled_from([0.0, 0.5, 1.0]),
    past_days=st.lists(st.floats(0.0, 2000.0), min_size=1, max_size=6),
    future_days=st.lists(st.floats(0.01, 2000.0), min_size=1, max_size=6),
    sims=st.lists(st.sampled_from([0.2, 0.5, 0.9]), min_size=12, max_size=12),
)
def test_reranker_never_ranks_an_unborn_document_above_an_equally_similar_one(
    mode, sensitivity, strength, past_days, future_days, sims
):
    docs = [{"id": f"p{i}", "score": sims[i], "date": iso(REF_S - d * DAY)} for i, d in enumerate(past_days)]
    docs += [{"id": f"f{i}", "score": sims[6 + i], "date": iso(REF_S + d * DAY)} for i, d in enumerate(future_days)]
    r = TemporalReranker(strength=strength, gate=FixedIntent(mode, sensitivity))
    ranked = [h.id for h in r.rerank("q", docs, now=REF)]
    assert not any(i.startswith("f") for i in ranked)  # excluded: they did not exist yet
    assert sorted(ranked) == sorted(d["id"] for d in docs if d["id"].startswith("p"))


def test_index_never_ranks_an_unborn_document_above_an_equally_similar_one():
    text = "Pro plan pricing: the price per seat for the pro plan"
    idx = TemporalIndex(embedder=None)
    idx.add([
        {"id": "existed", "text": text, "date": "2023-02-01"},
        {"id": "unborn", "text": text, "date": "2023-03-05"},
        {"id": "older", "text": text, "date": "2021-05-01"},
    ])
    for query in ("pro plan pricing", "pro plan pricing today", "pro plan pricing in 2023",
                  "what was the pro plan price as of March 2023", "pro plan pricing history"):
        ids = idx.search(query, k=10, now=REF).ranked_ids
        assert "unborn" not in ids, (query, ids)
        assert "existed" in ids and "older" in ids
    # at a reference time after it, the same document exists and, being newest, comes first
    assert idx.search("pro plan pricing", k=3, now="2023-04-01").ranked_ids[0] == "unborn"


def test_clamp_keeps_the_old_behaviour_and_exclude_applies_even_live():
    docs = [{"id": "old", "score": 0.9, "date": "2023-01-01"}, {"id": "future", "score": 0.9, "date": "2023-06-01"}]
    clamp = TemporalReranker(gate=False, future="clamp").rerank("q", docs, now=REF)
    assert {h.id: h.decay for h in clamp}["future"] == 1.0
    live_future = iso(time.time() + 10 * DAY)
    live = [{"id": "old", "score": 0.9, "date": "2023-01-01"}, {"id": "future", "score": 0.9, "date": live_future}]
    assert "future" not in TemporalReranker(gate=False, future="exclude").rerank("q", live).ranked_ids


def test_live_use_is_unchanged_a_future_date_is_clamped():
    # now = the wall clock: a document dated ten days ahead (a scheduled post) is kept at age 0
    ahead = iso(time.time() + 10 * DAY)
    docs = [{"id": "old", "score": 0.9, "date": "2023-01-01"}, {"id": "scheduled", "score": 0.9, "date": ahead}]
    hits = {h.id: h for h in TemporalReranker(gate=False).rerank("q", docs)}
    assert hits["scheduled"].decay == 1.0
    idx = TemporalIndex(embedder=None)
    idx.add([{"id": "old", "text": "pricing page", "date": "2023-01-01"},
             {"id": "scheduled", "text": "pricing page", "date": ahead}])
    hits = {h.id: h for h in idx.search("latest pricing page", k=2)}
    assert set(hits) == {"scheduled", "old"} and hits["scheduled"].decay == 1.0


def test_clock_skew_tolerance():
    # at a past reference time the comparison is strict: one second later is the future
    docs = [{"id": "at", "score": 0.5, "date": iso(REF_S)}, {"id": "after", "score": 0.5, "date": iso(REF_S + 1)}]
    assert TemporalReranker(gate=False).rerank("q", docs, now=REF).ranked_ids == ["at"]
    # a reference time within the skew allowance of the wall clock is the present: kept
    now = time.time() - PAST_SKEW_S / 2
    docs = [{"id": "old", "score": 0.5, "date": "2023-01-01"}, {"id": "just", "score": 0.5, "date": iso(now + 5)}]
    assert sorted(TemporalReranker(gate=False).rerank("q", docs, now=now).ranked_ids) == ["just", "old"]


@pytest.mark.parametrize(("policy", "now", "wall", "expected"), [
    ("auto", 1000.0, 1000.0 + PAST_SKEW_S + 1, True),
    ("auto", 1000.0, 1000.0 + PAST_SKEW_S - 1, False),
    ("auto", 1000.0, 500.0, False),  # a reference time ahead of the clock: nothing is unborn
    ("exclude", 1000.0, 1000.0, True),
    ("clamp", 1000.0, 1e9, False),
    ("not_yet_valid", 1000.0, 1e9, False),
])
def test_excludes_future_policy(policy, now, wall, expected):
    assert excludes_future(policy, now, wall) is expected
