"""Each intent mode, parsed from the query text by the real parser, moves the ranking
the way the issue asks -- through the reranker and through the index."""

import pytest

from chronorank import TemporalReranker
from chronorank.index import TemporalIndex

NOW = "2026-08-01"
DOCS = [
    {"id": "pro-2021", "score": 0.84, "date": "2021-03-11", "text": "Pricing guide: the Pro plan costs 12 dollars per seat."},
    {"id": "pro-2023", "score": 0.82, "date": "2023-08-02", "text": "Pricing guide: the Pro plan costs 18 dollars per seat."},
    {"id": "pro-2026", "score": 0.79, "date": "2026-05-14", "text": "Pricing guide: the Pro plan costs 25 dollars per seat."},
]


@pytest.fixture(scope="module")
def reranker():
    return TemporalReranker("exponential(half_life_days=180)")


def test_recent_counts_decay_from_now_at_the_parsed_sensitivity(reranker):
    r = reranker.rerank("what does the pro plan cost right now", DOCS, now=NOW)
    assert r.meta["intent"].mode == "recent"
    assert r.ranked_ids[0] == "pro-2026"
    assert r.meta["effective_strength"] == pytest.approx(r.meta["intent"].time_sensitivity)


def test_as_of_measures_from_the_target_and_later_documents_are_not_yet_valid(reranker):
    r = reranker.rerank("what did the pro plan cost as of January 1, 2024", DOCS, now=NOW)
    assert r.meta["intent"].mode == "as_of"
    assert r.ranked_ids[0] == "pro-2023"
    later = next(h for h in r if h.id == "pro-2026")
    assert later.decay == 0.0 and any("not yet valid" in n for n in later.notes)


def test_range_prefers_documents_inside_it(reranker):
    r = reranker.rerank("pro plan price in 2021", DOCS, now=NOW)
    assert r.meta["intent"].mode == "range"
    # inside the period the newest weighs most (range_slope), and every page outside it less
    assert r.ranked_ids[0] == "pro-2021" and r[0].decay > max(h.decay for h in r[1:])


@pytest.mark.parametrize(("query", "mode"), [("pro plan pricing version 2.3", "specific"),
                                              ("explain how per-seat pricing works", "timeless")])
def test_specific_and_timeless_apply_no_recency_pressure(reranker, query, mode):
    r = reranker.rerank(query, DOCS, now=NOW)
    assert r.meta["intent"].mode == mode
    assert r.meta["effective_strength"] == 0.0
    assert r.ranked_ids == ["pro-2021", "pro-2023", "pro-2026"]  # similarity order


def test_the_index_applies_each_mode_too():
    idx = TemporalIndex(embedder=None)
    idx.add([
        {"id": "api-v1", "text": "API login: POST /api/v1/login with username and password", "date": "2024-02-01",
         "valid_to": "2026-04-15"},
        {"id": "api-v2", "text": "API login: POST /api/v2/sessions with an API token", "date": "2026-04-15"},
        {"id": "cosine", "text": "cosine similarity explained: the angle between two vectors", "date": "2011-05-01"},
    ])
    assert idx.search("how do I log in to the API", k=1, now=NOW)[0].id == "api-v2"
    assert idx.search("API login as of June 2025", k=1, now=NOW)[0].id == "api-v1"
    assert idx.search("API login v1", k=1, now=NOW)[0].id == "api-v1"
    hits = idx.search("explain cosine similarity", k=1, now=NOW)
    assert hits[0].id == "cosine" and hits.meta["effective_strength"] == 0.0
