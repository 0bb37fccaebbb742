"""The index's numpy-free stand-ins for np.quantile and np.median give numpy's values bit for
bit (they exist so that a cached rerun does not import ``numpy.ma``)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from chronorank.ranking import quantile_linear as _quantile_linear
from chronorank.temporal import median_of


@pytest.mark.parametrize("seed", range(4))
def test_quantile_linear_is_np_quantile(seed):
    rng = np.random.default_rng(seed)
    for i in range(2000):
        n = int(rng.integers(1, 400))
        v = rng.standard_normal(n) * 10.0 ** int(rng.integers(-3, 7))
        if i % 3 == 0:
            v = np.round(v)  # ties
        q = float(rng.choice([0.0, 0.05, 0.1, 0.2, 0.5, 0.9, 1.0, rng.random()]))
        assert _quantile_linear(v.copy(), q) == float(np.quantile(v, q)), (n, q)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64])
def test_median_of_is_np_median(dtype):
    rng = np.random.default_rng(7)
    for i in range(2000):
        n = int(rng.integers(1, 60))
        v = (rng.standard_normal(n) * 10.0 ** int(rng.integers(-3, 8)))
        if dtype is np.int64:
            v = np.round(v)
        v = v.astype(dtype)
        if i % 97 == 0 and dtype is not np.int64:
            v[0] = np.nan
        got, want = median_of(v), float(np.median(v))
        assert got == want or (math.isnan(got) and math.isnan(want)), (v, got, want)
