"""A period question's in-force bands, written once (:func:`chronorank.temporal.in_force_bands`):
numpy evaluates them for the reranker, the index and the fit grid; the stores render the same
bands for Qdrant and PostgreSQL (issue 21)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chronorank import expr as ex
from chronorank.stores.config import StoreConfig
from chronorank.stores.plan import plan_query
from chronorank.temporal import (
    BAND_AFTER,
    BAND_AT_END,
    BAND_ENDED_INSIDE,
    BAND_REPLACED,
    BAND_UNKNOWN,
    TemporalConfig,
    _in_force_range,
    apply_temporal,
    in_force_bands,
    plan,
)
from chronorank.types import DAY, Intent, Interval

REF = 1_700_000_000.0
LO = REF - 100 * DAY
NAN = math.nan


def _range(lo: float, hi: float) -> Intent:
    return Intent(query="q", time_sensitivity=0.6, mode="range", target=Interval(lo, hi), topical_query="q")


def test_each_band_weighs_base_plus_width_times_the_kernel_of_its_age() -> None:
    # (start, end) -> band, age in days, base, width
    docs = {
        (REF - 50 * DAY, NAN): (BAND_AT_END, 50, 1 - 0.2 * 50 / 100, 0.0),  # published inside, in force
        (LO - 10 * DAY, REF + 5 * DAY): (BAND_AT_END, 110, 0.55, 0.8 - 0.55),  # carried in, in force
        (LO - 10 * DAY, NAN): (BAND_UNKNOWN, 10, 0.0, 0.2),  # carried in, not known to be in force
        (LO - 10 * DAY, REF - 20 * DAY): (BAND_ENDED_INSIDE, 20, 0.4, 0.15),
        (REF + 3 * DAY, NAN): (BAND_AFTER, 3, 0.2, 0.2),
        (LO - 30 * DAY, LO - 7 * DAY): (BAND_REPLACED, 7, 0.0, 0.2),
        (NAN, NAN): (-1, 0, 0.0, 1.0),  # undated: the missing-date policy decides
    }
    start = np.array([s for s, _ in docs])
    end = np.array([e for _, e in docs])
    age, base, width, band, unsure = _in_force_range(np.ones(len(docs)), start, end, LO, REF, TemporalConfig(range_slope=0.2))
    assert unsure is None  # no pool: every anchor is the corpus's own
    want = np.array(list(docs.values()))
    np.testing.assert_array_equal(band, want[:, 0])
    np.testing.assert_allclose(age, want[:, 1], rtol=1e-12)
    np.testing.assert_allclose(base, want[:, 2], rtol=1e-12)
    np.testing.assert_allclose(width, want[:, 3], rtol=1e-12)


days = st.one_of(st.just(NAN), st.integers(-300, 300).map(float), st.floats(-300, 300))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(days, days), min_size=1, max_size=20), st.sampled_from([-math.inf, -100.0, -1.0, 0.0, 30.0]),
       st.booleans())
def test_a_dated_candidate_passes_exactly_one_band(rows, lo_days, compared) -> None:
    start = REF + np.array([s for s, _ in rows]) * DAY
    end = REF + np.array([e for _, e in rows]) * DAY
    bands = in_force_bands(REF + lo_days * DAY, REF, 0.3, compared=compared)
    tests = ex.evaluate_tests([b.test for b in bands], {"start": start, "end": end})
    np.testing.assert_array_equal(np.sum(tests, axis=0), ~np.isnan(start))


KERNELS = ["exponential(half_life_days=30)", "weibull(half_life_days=90, shape=2)", "gaussian(half_life_days=45)"]
PERIODS = [(LO, REF), (LO, math.inf), (-math.inf, REF), (REF + 10 * DAY, REF + 40 * DAY)]  # the last: in the future


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("period", PERIODS, ids=lambda p: f"{p[0] - REF:+g}..{p[1] - REF:+g}")
def test_the_engines_expression_is_the_numpy_formula(kernel: str, period: tuple[float, float]) -> None:
    rng = np.random.default_rng(7)
    n = 400
    start = REF + rng.integers(-400, 60, n) * DAY * rng.choice([1.0, 0.37], n)
    end = start + rng.integers(0, 300, n) * DAY
    end[rng.random(n) < 0.4] = NAN
    start[rng.random(n) < 0.05] = NAN
    intent = _range(*period)
    cfg = StoreConfig(index=f"index(kernel='{kernel}', missing_date='keep')", fallback="error")  # the engine's form
    engine = plan_query(intent, REF, cfg).weights(start, end)  # numpy over the engines' form
    tp = plan(intent, REF, cfg.index.temporal)
    numpy = apply_temporal(np.full(n, 0.5), start, plan=tp, valid_to=end).decay
    # the same numbers, but for exp()'s underflow guard in the engines' form (exp(x < -700))
    np.testing.assert_allclose(engine, numpy, rtol=1e-15, atol=1e-300)
