"""The proleptic Gregorian civil calendar in integer arithmetic (scalar and numpy), UTC.

Days from civil dates, month lengths, microsecond bounds of the years 1..9999, and the
calendar units (day, week, month, quarter, year, decade) the intent parser resolves
"last month" or "Q3 2023" to: the one calendar of the parser and the query parser.
"""

from __future__ import annotations

import math
from datetime import datetime, timedelta, timezone

import numpy as np

from chronorank.types import DAY

_UTC = timezone.utc
_EPOCH = datetime(1970, 1, 1, tzinfo=_UTC)
_EPOCH_NAIVE = datetime(1970, 1, 1)
_US = 1_000_000
_DAY_US = 86_400 * _US
_MIN_US = -62_135_596_800 * _US  # 0001-01-01T00:00:00Z
_MAX_US = 253_402_300_800 * _US  # 10000-01-01T00:00:00Z (exclusive)
_MIN_TS = _MIN_US / _US
_MAX_TS = _MAX_US / _US


def _days_from_civil(y: int, m: int, d: int) -> int:
    """Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm)."""
    y -= m <= 2
    era = y // 400
    yoe = y - era * 400
    doy = (153 * ((m + 9) % 12) + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def _days_from_civil_vec(y: np.ndarray, m: np.ndarray, d: np.ndarray) -> np.ndarray:
    y = y - (m <= 2)
    era = y // 400
    yoe = y - era * 400
    doy = (153 * ((m + 9) % 12) + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def _is_leap(y: int) -> bool:
    return y % 4 == 0 and (y % 100 != 0 or y % 400 == 0)


_DIM = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)
_DIM_VEC = np.array((0, *_DIM), dtype=np.int64)


def _days_in_month(y: int, m: int) -> int:
    return 29 if m == 2 and _is_leap(y) else _DIM[m - 1]


def _us_to_s(us: int) -> float:
    """Microseconds to seconds exactly as numpy does it for int64 arrays (batch == scalar)."""
    return float(us) / 1e6


def _datetime_from_ts(t: float) -> datetime | None:
    if not (math.isfinite(t) and _MIN_TS <= t < _MAX_TS):
        return None
    try:
        return _EPOCH + timedelta(seconds=t)
    except OverflowError:
        return None


# ---------------------------------------------------------- calendar units (query intent)
# None instead of an exception when a date falls outside what ``datetime`` represents
# (years 1..9999) or does not exist (February 30), so the query parser can drop such a
# match and carry on.

UNITS = ("day", "week", "month", "quarter", "year", "decade")
_MAX_COUNT = 100_000


def to_dt(t: float) -> datetime:
    return datetime.fromtimestamp(t, tz=_UTC)


def ts(year: int, month: int = 1, day: int = 1) -> float | None:
    """Epoch seconds of a UTC midnight, None if the date does not exist."""
    try:
        return datetime(year, month, day, tzinfo=_UTC).timestamp()
    except (ValueError, OverflowError):
        return None


def add_months(year: int, month: int, n: int) -> tuple[int, int]:
    k = year * 12 + (month - 1) + n
    return k // 12, k % 12 + 1


def unit_bounds(unit: str, ref: datetime, shift: int = 0) -> tuple[float, float] | None:
    """[start, end) of the calendar ``unit`` containing ``ref``, moved by ``shift`` units."""
    if abs(shift) > _MAX_COUNT:
        return None
    try:
        if unit == "day":
            d0 = datetime(ref.year, ref.month, ref.day, tzinfo=_UTC) + timedelta(days=shift)
            return d0.timestamp(), (d0 + timedelta(days=1)).timestamp()
        if unit == "week":
            monday = datetime(ref.year, ref.month, ref.day, tzinfo=_UTC) - timedelta(days=ref.weekday())
            d0 = monday + timedelta(weeks=shift)
            return d0.timestamp(), (d0 + timedelta(weeks=1)).timestamp()
        if unit in ("month", "quarter", "year", "decade"):
            size = {"month": 1, "quarter": 3, "year": 12, "decade": 120}[unit]
            if unit == "decade":
                base_y, base_m = ref.year - ref.year % 10, 1
            elif unit == "year":
                base_y, base_m = ref.year, 1
            elif unit == "quarter":
                base_y, base_m = ref.year, ref.month - (ref.month - 1) % 3
            else:
                base_y, base_m = ref.year, ref.month
            y0, m0 = add_months(base_y, base_m, shift * size)
            y1, m1 = add_months(y0, m0, size)
            a, b = ts(y0, m0), ts(y1, m1)
            if a is None or b is None:
                return None
            return a, b
    except (ValueError, OverflowError):
        return None
    return None


def shift_back(now: float, unit: str, n: int) -> float | None:
    """``now`` moved back by ``n`` units: exact for days and weeks, calendar for months and up."""
    if n < 0 or n > _MAX_COUNT:
        return None
    if unit == "day":
        return now - n * DAY
    if unit == "week":
        return now - 7 * n * DAY
    months = {"month": 1, "quarter": 3, "year": 12, "decade": 120}.get(unit)
    if months is None:
        return None
    ref = to_dt(now)
    y, m = add_months(ref.year, ref.month, -months * n)
    if not 1 <= y <= 9999:
        return None
    day = min(ref.day, _days_in_month(y, m))
    try:
        return ref.replace(year=y, month=m, day=day).timestamp()
    except (ValueError, OverflowError):
        return None
