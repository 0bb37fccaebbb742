"""Bad input: each case gets a clear error (InvalidInput naming the value) or a documented policy."""

from __future__ import annotations

import math
from datetime import datetime, timezone

import numpy as np
import pytest
from reliability_support import NOW, measure_rerank_memory

from chronorank.errors import InvalidInput
from chronorank.index import TemporalIndex
from chronorank.rerank import TemporalReranker
from chronorank.timeparse import parse_time, parse_times

NOW_S = datetime(2026, 1, 1, tzinfo=timezone.utc).timestamp()


def docs(*scores, dates=None):
    dates = dates or ["2025-06-01"] * len(scores)
    return [{"id": f"d{i}", "score": s, "date": t} for i, (s, t) in enumerate(zip(scores, dates))]


# ------------------------------------------------------------------ scores

BAD_SCORES = [math.nan, math.inf, -math.inf, "abc", None, [1, 2], 1j, np.float32("nan")]


@pytest.mark.parametrize("bad", BAD_SCORES, ids=repr)
def test_bad_score_raise_names_candidate_and_fixes(bad):
    with pytest.raises(InvalidInput, match=r"candidate 'd0' has score=.*bad_score='drop'"):
        TemporalReranker(bad_score="raise").rerank("q", docs(bad, 0.5), now=NOW)


@pytest.mark.parametrize("bad", BAD_SCORES, ids=repr)
def test_bad_score_drop_and_zero_policies(bad):
    assert TemporalReranker(bad_score="drop").rerank("q", docs(bad, 0.5), now=NOW).ranked_ids == ["d1"]
    r = TemporalReranker(bad_score="zero").rerank("q", docs(bad, 0.5), now=NOW)
    assert r.ranked_ids == ["d1", "d0"] and r[1].similarity == 0.0


def test_negative_scores_are_valid_and_decay_only_demotes():
    # relative recency off: it compares similarities as ratios, which a negative score inverts
    r = TemporalReranker(gate=False, relative_recency=None).rerank(
        "q", docs(-0.5, -0.4, dates=["2025-12-01", "2000-01-01"]), now=NOW)
    assert [h.id for h in r] == ["d0", "d1"]  # the old one is pushed further down
    assert all(h.score <= h.similarity for h in r)


def test_numeric_string_scores_are_read_as_numbers():
    assert TemporalReranker().rerank("q", docs("0.9", 0.5), now=NOW).ranked_ids == ["d0", "d1"]


def test_invalid_policy_names_are_refused():
    with pytest.raises(InvalidInput, match="bad_score"):
        TemporalReranker(bad_score="ignore")
    with pytest.raises(InvalidInput, match="duplicates"):
        TemporalReranker(duplicates="merge")


# ------------------------------------------------------------------ dates

@pytest.mark.parametrize("value", ["0000-01-01", "10000-01-01", "February 30, 2024", "2024-02-30", -1e300, 1e300,
                                   math.inf, "99999999999999999999", "in 99999"], ids=repr)
def test_impossible_dates_are_missing_in_lenient_mode_and_errors_in_strict(value):
    assert parse_time(value) is None
    assert math.isnan(parse_times([value])[0])
    with pytest.raises(InvalidInput, match="could not parse"):
        parse_time(value, strict=True)
    r = TemporalReranker().rerank("q", [{"id": "a", "score": 0.5, "date": value}], now=NOW)
    assert "undated" in " ".join(r[0].notes)


@pytest.mark.parametrize("value,expected", [
    ("0001-01-01", datetime(1, 1, 1, tzinfo=timezone.utc)),
    ("9999-12-31T23:59:59Z", datetime(9999, 12, 31, 23, 59, 59, tzinfo=timezone.utc)),
    ("2016-12-31T23:59:60Z", datetime(2016, 12, 31, 23, 59, 59, tzinfo=timezone.utc)),  # leap second clamped
    ("1714521600", datetime(2024, 5, 1, tzinfo=timezone.utc)),  # >= 9 digits: unix seconds
    ("2024", datetime(2024, 1, 1, tzinfo=timezone.utc)),  # 4 digits: a year
    ("20240501", datetime(2024, 5, 1, tzinfo=timezone.utc)),  # 8 digits: basic ISO date
])
def test_edge_dates_follow_the_documented_policy(value, expected):
    assert parse_time(value) == expected


def test_short_numeric_strings_are_not_dates():
    assert parse_time("12") is None and parse_time("123456") is None


def test_naive_and_aware_values_mix_naive_read_in_tz():
    naive, aware = datetime(2024, 1, 1, 12), datetime(2024, 1, 1, 12, tzinfo=timezone.utc)
    out = parse_times([naive, aware, "2024-01-01T12:00", "2024-01-01T14:00+02:00"])
    assert np.all(out == out[0])
    berlin = parse_times([naive, aware], tz="Europe/Berlin")
    assert berlin[1] - berlin[0] == 3600.0  # naive noon in Berlin is 11:00 UTC
    r = TemporalReranker().rerank("q", [{"id": "n", "score": 0.5, "date": naive},
                                        {"id": "a", "score": 0.5, "date": aware}], now=NOW)
    assert r[0].time == r[1].time


def test_now_that_is_not_a_time_is_a_clear_error():
    for now in (math.inf, math.nan, "yesterday-ish", "10000-01-01"):
        with pytest.raises(InvalidInput, match="now=.*not a time"):
            TemporalReranker().rerank("q", docs(0.5), now=now)


def test_extreme_now_values_work():
    for now in ("0001-01-01", "9999-12-31"):
        assert len(TemporalReranker(future="clamp").rerank("latest", docs(0.5, 0.4), now=now)) == 2
    # by default a past reference time leaves out what did not exist yet: in year 1, nothing
    assert len(TemporalReranker().rerank("latest", docs(0.5, 0.4), now="0001-01-01")) == 0
    assert len(TemporalReranker().rerank("latest", docs(0.5, 0.4), now="9999-12-31")) == 2


# ------------------------------------------------------------------ queries

@pytest.mark.parametrize("q", ["", "   ", "\t\n", "\x00\x01", "latest \x00 news\x1b[31m", "\ud800 latest",
                               "a" * 1_000_000, "latest news since 2024 " * 45_000], ids=lambda q: repr(q[:12]))
def test_reranker_accepts_any_query_text(q):
    r = TemporalReranker().rerank(q, docs(0.5, 0.4), now=NOW)
    assert sorted(r.ranked_ids) == ["d0", "d1"]


@pytest.mark.parametrize("q", ["", "   ", "\n\t"])
def test_index_search_refuses_blank_queries(q):
    idx = TemporalIndex(embedder=None)
    idx.add([{"id": "a", "text": "hello"}])
    with pytest.raises(InvalidInput, match="non-empty string"):
        idx.search(q, now=NOW)


def test_index_search_with_control_chars_and_1mb_query():
    idx = TemporalIndex(embedder=None)
    idx.add([{"id": "a", "text": "hello world"}, {"id": "b", "text": "other"}])
    assert idx.search("\x00 hello \x1b \ud800", now=NOW).ranked_ids[0] == "a"
    assert idx.search("hello " * 175_000, now=NOW).ranked_ids[0] == "a"


# ------------------------------------------------------------------ documents

def test_duplicate_ids_raise_or_keep():
    two = [{"id": "a", "score": 0.5}, {"id": "a", "score": 0.4}]
    with pytest.raises(InvalidInput, match="duplicate candidate ids.*duplicates='keep'"):
        TemporalReranker().rerank("q", two, now=NOW)
    assert TemporalReranker(duplicates="keep").rerank("q", two, now=NOW).ranked_ids == ["a", "a"]


def test_mixed_id_types_are_kept_as_given_by_the_reranker():
    rows = [{"id": 1, "score": 0.5}, {"id": "1", "score": 0.4}, {"id": (1, 2), "score": 0.3}]
    assert TemporalReranker().rerank("q", rows, now=NOW).ranked_ids == [1, "1", (1, 2)]


def test_index_ids_are_strings_int_and_str_collide():
    idx = TemporalIndex(embedder=None)
    with pytest.raises(InvalidInput, match="repeats id='1'"):
        idx.add([{"id": 1, "text": "x"}, {"id": "1", "text": "y"}])
    idx.add([{"id": 1, "text": "x"}])
    idx.add([{"id": "1", "text": "y"}])  # documented: ids are str(id), so this replaces doc 1
    assert idx.ids == ["1"] and idx.get(1)["text"] == "y"
    for bad in (1.5, (1, 2), None, "", True):
        with pytest.raises(InvalidInput, match="id="):
            idx.add([{"id": bad, "text": "x"}])


@pytest.mark.parametrize("doc", [{"id": "m"}, {"id": "m", "text": None}, {"id": "m", "text": b"bytes"}], ids=repr)
def test_index_document_without_text_is_refused(doc):
    with pytest.raises(InvalidInput, match="'text' must be a string"):
        TemporalIndex(embedder=None).add([doc])


def test_reranker_candidates_need_no_text():
    assert TemporalReranker().rerank("q", [{"id": "a", "score": 0.5}], now=NOW).ranked_ids == ["a"]


def test_index_bad_dates_policy():
    with pytest.raises(InvalidInput, match="date='February 30'.*bad_dates='missing'"):
        TemporalIndex(embedder=None).add([{"id": "a", "text": "x", "date": "February 30"}])
    idx = TemporalIndex(embedder=None, bad_dates="missing")
    idx.add([{"id": "a", "text": "x", "date": "February 30"}])
    assert len(idx) == 1


@pytest.mark.slow
def test_index_ten_megabyte_document(tmp_path):
    big = ("lorem ipsum dolor sit amet " * 400_000)[:10_000_000]
    idx = TemporalIndex(embedder=None)
    idx.add([{"id": "big", "text": big, "date": "2024-01-01"}, {"id": "small", "text": "dolor"}])
    assert set(idx.search("lorem dolor", now=NOW).ranked_ids) == {"big", "small"}
    idx.save(tmp_path / "i")
    again = TemporalIndex.load(tmp_path / "i")
    assert again.get("big")["text"] == big


# ------------------------------------------------------------------ size

def test_hundred_thousand_candidates_columns():
    n = 100_000
    rng = np.random.default_rng(1)
    s, t = rng.random(n), NOW_S - rng.random(n) * 3e8
    r = TemporalReranker().rerank_columns("latest", s, t, now=NOW, top_k=10)
    assert len(r) == 10 and len(set(r.ranked_ids)) == 10


@pytest.mark.slow
def test_one_million_candidates_memory_is_bounded():
    m = measure_rerank_memory(1_000_000)
    # inputs are 16 MiB; the temporal layer keeps a bounded number of float64 columns
    assert m["tracemalloc_peak_mib"] < 300, m
    assert len(m["top10"]) == 10
