"""Bare numbers in a document's date field: a year, a compact date, or epoch time.

``"date": 2022`` is the year 2022 and ``20220304`` is 4 March 2022, never 33 minutes or
eight months after 1970. With ``unit="auto"`` (the default of every document path):

- an integer 1000-9999 is a year (its 1 January);
- an 8-digit integer that is a valid YYYYMMDD date is that date;
- a number at or above 1e8 is epoch time, its unit read from the magnitude (seconds up to
  1e11, then milliseconds, microseconds, nanoseconds: :func:`parse_times`' rule) --
  1e8 seconds is 1973-03-03, so no year or compact date reaches it;
- anything else (0, 86400, 12345678, 1.5) is refused: its unit is not clear.

``unit`` settles it for the whole column: ``s``, ``ms``, ``us``, ``ns`` (epoch time in that
unit), ``year`` or ``yyyymmdd``. Columnar: numbers are found with one type pass and converted
with numpy.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from chronorank.errors import InvalidInput
from chronorank.timeparse.batch import _batch_numbers

__all__ = ["DATE_UNITS", "check_date_unit", "read_numbers"]

DATE_UNITS = ("auto", "s", "ms", "us", "ns", "year", "yyyymmdd")
_SCALE = {"s": 1.0, "ms": 1e3, "us": 1e6, "ns": 1e9}
_EPOCH_FLOOR = 1e8  # 1973-03-03 in seconds: every year and compact date lies below it


def check_date_unit(unit: str) -> str:
    if unit not in DATE_UNITS:
        raise InvalidInput(f"date_unit={unit!r}; use one of {list(DATE_UNITS)} (auto: a year 1000-9999, a "
                           "YYYYMMDD date or epoch time at or above 1e8, the rest refused)")
    return unit


def _days(y: np.ndarray, m: np.ndarray, d: np.ndarray) -> np.ndarray:
    """Days since 1970-01-01 of a proleptic Gregorian date (vectorised days-from-civil)."""
    y = y - (m <= 2)
    era = np.floor_divide(y, 400)
    yoe = y - era * 400
    doy = (153 * (m + np.where(m > 2, -3, 9)) + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def _compact(v: np.ndarray) -> np.ndarray:
    """Epoch seconds of YYYYMMDD integers; NaN where one is not a real date."""
    iv = v.astype(np.int64)
    y, m, d = iv // 10000, iv // 100 % 100, iv % 100
    leap = ((y % 4 == 0) & (y % 100 != 0)) | (y % 400 == 0)
    month_len = np.array([31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31])[np.clip(m - 1, 0, 11)] + (leap & (m == 2))
    ok = (y >= 1000) & (m >= 1) & (m <= 12) & (d >= 1) & (d <= month_len)
    return np.where(ok, _days(y, m, d) * 86400.0, np.nan)


def read_numbers(values: Sequence[Any], unit: str = "auto") -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(is_number, epochs, refused)`` over ``values``: which values are bare numbers (not
    bools), their epoch seconds (NaN where refused or not a number), and which numbers the
    rule above refuses. The caller parses the other values as usual."""
    check_date_unit(unit)
    n = len(values)
    is_num = np.fromiter((type(v) in (int, float) or isinstance(v, (np.integer, np.floating)) for v in values),
                         dtype=bool, count=n)
    out = np.full(n, np.nan)
    refused = np.zeros(n, dtype=bool)
    if not is_num.any():
        return is_num, out, refused
    idx = np.flatnonzero(is_num)
    try:
        v = np.array([float(values[i]) for i in idx.tolist()], dtype=np.float64)
    except OverflowError:
        v = np.array([float(values[i]) if abs(values[i]) < 1e300 else np.inf for i in idx.tolist()])
    finite = np.isfinite(v)
    whole = finite & (v == np.floor(np.where(finite, v, 0)))
    res = np.full(v.shape, np.nan)
    if unit in _SCALE:
        res = np.where(finite, v / _SCALE[unit], np.nan)
    elif unit == "year":
        ok = whole & (v >= 1) & (v <= 9999)
        res[ok] = _days(v[ok].astype(np.int64), np.ones(int(ok.sum()), np.int64), np.ones(int(ok.sum()), np.int64)) * 86400.0
    elif unit == "yyyymmdd":
        ok = whole & (v >= 10000101) & (v <= 99991231)
        res[ok] = _compact(v[ok])
    else:
        year = whole & (v >= 1000) & (v <= 9999)
        res[year] = _days(v[year].astype(np.int64), np.ones(int(year.sum()), np.int64),
                          np.ones(int(year.sum()), np.int64)) * 86400.0
        eight = whole & (v >= 10000101) & (v <= 99991231)
        res[eight] = _compact(v[eight])
        big = finite & (np.abs(v) >= _EPOCH_FLOOR)
        if big.any():
            res[big] = _batch_numbers(v[big])
    out[idx] = res
    refused[idx] = np.isnan(res)
    return is_num, out, refused
