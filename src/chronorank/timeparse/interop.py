"""numpy ``datetime64`` and pandas values (pandas is never imported: its objects are read
through their numpy views).
"""

from __future__ import annotations

from datetime import tzinfo
from typing import Any

import numpy as np

from chronorank.timeparse.civil import _MAX_US, _MIN_US, _UTC, _us_to_s
from chronorank.timeparse.spans import TimeSpan
from chronorank.timeparse.zones import _localize_us_vec

_DT64_PRECISION = {"Y": "year", "M": "month", "W": "week", "D": "day"}


def _spans_datetime64(
    arr: np.ndarray, tzi: tzinfo, aware: bool = False
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(start_us, end_us, ok) for a datetime64 array; naive values are read in ``tzi``."""
    arr = np.asarray(arr).ravel()
    ok = ~np.isnat(arr)
    unit, count = np.datetime_data(arr.dtype)
    unit_any: Any = unit
    with np.errstate(all="ignore"):
        start = arr.astype("datetime64[us]").view(np.int64).copy()
        if unit in _DT64_PRECISION:
            end = (arr + np.timedelta64(count, unit_any)).astype("datetime64[us]").view(np.int64).copy()
        else:
            end = start.copy()
    start[~ok] = 0
    end[~ok] = 0
    if not aware and tzi is not _UTC:
        wall_start = start
        start, ok_s = _localize_us_vec(wall_start, tzi)
        spans = end != wall_start
        end_loc, ok_e = _localize_us_vec(end, tzi)
        end = np.where(spans & ok_e, end_loc, start + (end - wall_start))
        ok &= ok_s
    ok &= (start >= _MIN_US) & (start < _MAX_US)
    return start, end, ok


def _span_datetime64(value: np.datetime64, tzi: tzinfo) -> TimeSpan | None:
    arr = np.asarray([value])
    start, end, ok = _spans_datetime64(arr, tzi)
    if not ok[0]:
        return None
    unit, _ = np.datetime_data(arr.dtype)
    s, e = int(start[0]), int(end[0])
    return TimeSpan(_us_to_s(s), _us_to_s(e), _DT64_PRECISION.get(unit, "instant"), s)


def _pandas_to_numpy(values: Any) -> tuple[np.ndarray, bool]:
    """A pandas Series/Index as a numpy array; aware datetimes become UTC datetime64."""
    dtype = getattr(values, "dtype", None)
    if dtype is not None and getattr(dtype, "tz", None) is not None:
        if hasattr(values, "dt"):  # Series
            utc = values.dt.tz_convert("UTC").dt.tz_localize(None)
        else:  # DatetimeIndex
            utc = values.tz_convert("UTC").tz_localize(None)
        return np.asarray(utc.to_numpy()), True
    try:
        return np.asarray(values.to_numpy()), False
    except (TypeError, ValueError):
        return np.asarray(list(values), dtype=object), False
