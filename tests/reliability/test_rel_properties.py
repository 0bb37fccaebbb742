"""Property tests over the public API: time parsing, intent, kernels, fusion, the reranker."""

from __future__ import annotations

import math
from datetime import datetime, timedelta, timezone

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from reliability_support import (
    ADVERSARIAL_DATES,
    NOW,
    QUERY_TEMPLATES,
    check_intent_query,
    check_time_value,
)

from chronorank.errors import InvalidInput
from chronorank.fusion import combine, weighted_rrf
from chronorank.kernels import get_kernel
from chronorank.rerank import TemporalReranker
from chronorank.timeparse import parse_time, parse_times, to_epoch

FAST = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# ------------------------------------------------------------------ strategies

_date_text = st.builds(
    lambda y, m, d, sep: f"{y:04d}{sep}{m:02d}{sep}{d:02d}",
    st.integers(0, 10001), st.integers(0, 13), st.integers(0, 32), st.sampled_from(["-", "/", ".", ""]),
)
_iso_dt = st.datetimes(min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30)).map(
    lambda d: d.isoformat()
)
time_like = st.one_of(
    st.text(max_size=40),
    st.sampled_from(ADVERSARIAL_DATES),
    _date_text,
    _iso_dt,
    _iso_dt.map(lambda s: s + "Z"),
    st.integers(-(10**22), 10**22).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
)
time_values = st.one_of(
    time_like,
    st.none(),
    st.booleans(),
    st.integers(-(10**25), 10**25),
    st.floats(allow_nan=True, allow_infinity=True),
    st.datetimes(timezones=st.sampled_from([None, timezone.utc, timezone(timedelta(hours=14)),
                                            timezone(timedelta(hours=-12))])),
    st.dates(),
    st.binary(max_size=20),
)
queries = st.one_of(
    st.text(max_size=80),
    st.builds(lambda t, x: t.format(x=x), st.sampled_from(QUERY_TEMPLATES), time_like),
    st.lists(st.sampled_from(["latest", "in", "2024", "since", "as of", "between", "and", "last",
                              "3", "years", "ago", "the", "release", "v2.3", "May", "Q3", "в", "году",
                              "news", ",", "?", "\x00", "  "]), max_size=12).map(" ".join),
)


# ------------------------------------------------------------------ time parsing

@FAST
@given(time_values)
def test_parse_time_lenient_never_raises_and_batch_equals_scalar(value):
    check_time_value(value)


@FAST
@given(st.lists(time_values, max_size=12))
def test_parse_times_batch_equals_scalar_for_mixed_lists(values):
    batch = parse_times(values)
    assert batch.shape == (len(values),)
    for v, b in zip(values, batch):
        a = to_epoch(v)
        assert (math.isnan(a) and math.isnan(b)) or a == b, (v, a, b)


@FAST
@given(st.lists(_iso_dt, min_size=1, max_size=20))
def test_parse_times_numpy_unicode_array_equals_list(values):
    a = parse_times(values)
    b = parse_times(np.array(values))
    np.testing.assert_array_equal(a, b)


@FAST
@given(st.datetimes(min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30),
                    timezones=st.sampled_from([timezone.utc, timezone(timedelta(hours=5, minutes=30))])))
def test_parse_time_round_trips_aware_datetimes(dt):
    assert parse_time(dt.isoformat()) == dt.astimezone(timezone.utc)
    assert parse_time(dt) == dt.astimezone(timezone.utc)


# ------------------------------------------------------------------ intent

@FAST
@given(queries)
def test_intent_parse_never_raises_and_is_well_formed(q):
    check_intent_query(q)


@settings(max_examples=40, deadline=None)
@given(queries, st.sampled_from(["0001-01-02", "9999-12-30", 0.0, "2026-01-01", 253402214400.0]))
def test_intent_parse_at_extreme_now(q, now):
    check_intent_query(q, now=now)


# ------------------------------------------------------------------ kernels and fusion

MONOTONE_KERNELS = ["exponential", "weibull", "power_law", "cliff", "gaussian"]
ages = st.lists(st.floats(-1e6, 1e12, allow_nan=False), min_size=1, max_size=30)


@FAST
@given(st.sampled_from(MONOTONE_KERNELS), st.floats(0.01, 1e5), st.floats(0.0, 0.99), ages)
def test_kernels_stay_in_range_and_are_non_increasing(name, half_life, floor, a):
    k = get_kernel(name, half_life_days=half_life, floor=floor)
    x = np.sort(np.asarray(a))
    w = k(x)
    assert w.shape == x.shape
    assert np.all(w >= floor - 1e-12) and np.all(w <= 1.0 + 1e-12)
    assert np.all(np.diff(w) <= 1e-12), "a kernel must not reward older documents"
    assert np.all(k(np.minimum(x, 0)) == k(np.zeros_like(x)))  # negative ages count as 0
    assert np.isnan(k(np.array([np.nan]))[0])


@FAST
@given(st.sampled_from(["linear(zero_at=30)", "constant(floor=0.3)", "delayed_peak(peak_days=7, half_life_days=30)",
                        "piecewise(points=[(0, 1), (10, 0.5), (100, 0.1)])"]), ages)
def test_other_kernels_stay_in_range(spec, a):
    k = get_kernel(spec)
    w = k(np.asarray(a))
    assert np.all((w >= 0) & (w <= 1))


sims = st.lists(st.floats(-1, 1, allow_nan=False), min_size=1, max_size=30)


@FAST
@given(st.data(), st.sampled_from(["gated_multiply", "multiply", "linear", "rrf"]), st.floats(0, 1))
def test_combine_strength_zero_is_identity_and_output_finite(data, strategy, strength):
    s = np.asarray(data.draw(sims))
    d = np.asarray(data.draw(st.lists(st.floats(0, 1), min_size=len(s), max_size=len(s))))
    out = combine(s, d, strategy=strategy, strength=strength)
    assert out.shape == s.shape and np.all(np.isfinite(out))
    np.testing.assert_array_equal(combine(s, d, strategy=strategy, strength=0.0), s)


@FAST
@given(st.data(), st.sampled_from(["gated_multiply", "multiply"]), st.floats(0, 1))
def test_multiplicative_fusion_is_monotone_in_decay_and_similarity(data, strategy, strength):
    s = np.asarray(data.draw(sims))
    d = np.asarray(data.draw(st.lists(st.floats(0, 1), min_size=len(s), max_size=len(s))))
    bump = np.asarray(data.draw(st.lists(st.floats(0, 1), min_size=len(s), max_size=len(s))))
    d2 = np.minimum(d + bump, 1.0)
    base = combine(s, d, strategy, strength)
    assert np.all(combine(s, d2, strategy, strength) >= base - 1e-12)  # fresher never hurts
    assert np.all(combine(s + bump, d, strategy, strength) >= base - 1e-12)  # more similar never hurts
    assert np.all(base <= s + 1e-12)  # decay only demotes (negatives move further down)


@FAST
@given(st.dictionaries(st.sampled_from(["vector", "keyword", "recency", "x"]), sims, min_size=1))
def test_weighted_rrf_range_and_single_signal_order(signals):
    n = min(len(v) for v in signals.values())
    arrays = {k: np.asarray(v[:n]) for k, v in signals.items()}
    fused = weighted_rrf(arrays, k=60)
    assert fused.shape == (n,) and np.all(fused >= 0)
    assert np.all(fused <= sum(1.0 / 61 for _ in arrays) + 1e-12)
    name = next(iter(arrays))
    only = weighted_rrf({name: arrays[name]}, weights={name: 1.0})
    # one signal: fused order is that signal's order (ties keep input order)
    assert list(np.argsort(-only, kind="stable")) == list(np.argsort(-arrays[name], kind="stable"))


# ------------------------------------------------------------------ the reranker

cands = st.lists(
    st.tuples(st.floats(-1, 1, allow_nan=False),
              st.one_of(st.none(), st.integers(946684800, 1830297600), _iso_dt)),
    min_size=0, max_size=40,
)


@FAST
@given(cands, st.one_of(st.none(), st.integers(0, 50)), queries,
       st.sampled_from(["neutral", "keep", "penalise", "drop"]), st.sampled_from(["clamp", "not_yet_valid", "symmetric"]))
def test_rerank_is_a_permutation_and_top_k_is_a_prefix(rows, top_k, q, missing, future):
    r = TemporalReranker(missing_date=missing, future=future)
    docs = [{"id": f"d{i}", "score": s, "date": t} for i, (s, t) in enumerate(rows)]
    full = r.rerank(q, docs, now=NOW)
    ids = full.ranked_ids
    assert len(set(ids)) == len(ids)
    if missing != "drop":
        assert sorted(ids) == sorted(d["id"] for d in docs)
    else:
        assert set(ids) <= {d["id"] for d in docs}
    scores = [h.score for h in full]
    assert all(a >= b for a, b in zip(scores, scores[1:]))
    assert all(math.isfinite(s) for s in scores)
    if top_k is not None:
        cut = r.rerank(q, docs, top_k=top_k, now=NOW).ranked_ids
        assert cut == ids[:top_k]


@FAST
@given(cands)
def test_rerank_strength_zero_keeps_similarity_order(rows):
    assume(rows)
    docs = [{"id": i, "score": s, "date": t} for i, (s, t) in enumerate(rows)]
    got = TemporalReranker(strength=0.0, future="clamp").rerank("latest", docs, now=NOW).ranked_ids
    # equal scores by TIE_RULE: the newer document first, undated last, then the smaller id
    when = parse_times([t for _, t in rows])
    newer = np.where(np.isnan(when), np.inf, -when)
    want = sorted(range(len(rows)), key=lambda i: (-rows[i][0], newer[i], i))
    assert got == want
    # the default leaves out what was dated after the (past) reference time, and only that
    kept = TemporalReranker(strength=0.0).rerank("latest", docs, now=NOW).ranked_ids
    later = parse_times([t for _, t in rows]) > to_epoch(NOW)
    assert kept == [i for i in want if not later[i]]


def test_rerank_rejects_negative_top_k():
    with pytest.raises(InvalidInput, match="top_k"):
        TemporalReranker().rerank("q", [{"id": "a", "score": 0.5}], top_k=-1, now=NOW)
