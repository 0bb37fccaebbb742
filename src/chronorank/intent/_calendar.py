"""Calendar arithmetic for the intent parser: UTC epoch seconds for whole calendar units.

Every function returns ``None`` instead of raising when a date falls outside what
``datetime`` can represent (year 1..9999) or does not exist (February 30), so the parser
can drop such a match and carry on.
"""

from __future__ import annotations

import math
from datetime import datetime, timedelta, timezone
from typing import Any

UTC = timezone.utc
DAY = 86400.0
UNITS = ("day", "week", "month", "quarter", "year", "decade")
_MAX_COUNT = 100_000


_last_now: tuple[str, float] | None = None


def resolve_now(now: Any = None) -> float:
    """Epoch seconds for ``now`` via :func:`chronorank.timeparse.resolve_now`.

    Numbers pass straight through and the last string resolved is remembered, since a
    batch of queries usually shares one reference time.
    """
    global _last_now
    if isinstance(now, float) and math.isfinite(now):
        return now
    if isinstance(now, str):
        last = _last_now
        if last is not None and last[0] == now:
            return last[1]
    from chronorank.timeparse import resolve_now as project_resolve_now

    value = float(project_resolve_now(now))
    if isinstance(now, str):
        _last_now = (now, value)
    return value


def to_dt(t: float) -> datetime:
    return datetime.fromtimestamp(t, tz=UTC)


def ts(year: int, month: int = 1, day: int = 1) -> float | None:
    """Epoch seconds of a UTC midnight, None if the date does not exist."""
    try:
        return datetime(year, month, day, tzinfo=UTC).timestamp()
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
            d0 = datetime(ref.year, ref.month, ref.day, tzinfo=UTC) + timedelta(days=shift)
            return d0.timestamp(), (d0 + timedelta(days=1)).timestamp()
        if unit == "week":
            monday = datetime(ref.year, ref.month, ref.day, tzinfo=UTC) - timedelta(days=ref.weekday())
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
    import calendar

    day = min(ref.day, calendar.monthrange(y, m)[1])
    try:
        return ref.replace(year=y, month=m, day=day).timestamp()
    except (ValueError, OverflowError):
        return None
