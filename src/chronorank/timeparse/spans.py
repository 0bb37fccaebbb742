"""``TimeSpan`` (a parsed time with its precision), its anchors, and the spans of
``datetime`` and ``date`` objects.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, tzinfo
from typing import Any

import numpy as np

from chronorank.errors import InvalidInput
from chronorank.timeparse.civil import (
    _DAY_US,
    _EPOCH,
    _EPOCH_NAIVE,
    _MAX_US,
    _MIN_US,
    _datetime_from_ts,
    _days_from_civil,
    _us_to_s,
)
from chronorank.timeparse.zones import _localize_us

ANCHORS = ("start", "mid", "end")


@dataclass(frozen=True)
class TimeSpan:
    """A parsed time: the half-open UTC interval [start, end) in epoch seconds.

    ``precision`` is ``"instant"`` (``end == start``), ``"day"``, ``"week"``, ``"month"`` or
    ``"year"``.
    """

    start: float
    end: float
    precision: str
    _start_us: int | None = field(default=None, repr=False, compare=False)

    def at(self, anchor: str = "start") -> float:
        """Epoch seconds of the span's ``"start"``, ``"mid"`` or ``"end"``."""
        _check_anchor(anchor)
        if anchor == "start":
            return self.start
        if anchor == "end":
            return self.end
        return self.start + (self.end - self.start) / 2

    def datetime_at(self, anchor: str = "start") -> datetime | None:
        """The anchor point as a UTC datetime (None if outside datetime's range)."""
        if anchor == "start" and self._start_us is not None:
            return _EPOCH + timedelta(microseconds=self._start_us)
        return _datetime_from_ts(self.at(anchor))

    @property
    def is_instant(self) -> bool:
        return self.end == self.start


def _check_anchor(anchor: Any) -> None:
    if anchor not in ANCHORS:
        raise InvalidInput(
            f"anchor={anchor!r} must be one of {', '.join(map(repr, ANCHORS))}: the point of a "
            "partial date (e.g. '2026' = the whole year) that ages count from"
        )


def _check_dayfirst(dayfirst: Any) -> None:
    if dayfirst is not None and not isinstance(dayfirst, bool):
        raise InvalidInput(
            f"dayfirst={dayfirst!r} must be None (auto: dashes day-first, slashes month-first), "
            "True or False"
        )


def _span_from_wall(
    start_wall_us: int, end_wall_us: int, precision: str, tzi: tzinfo
) -> TimeSpan | None:
    start = _localize_us(start_wall_us, tzi)
    if start is None or not _MIN_US <= start < _MAX_US:
        return None
    if end_wall_us == start_wall_us:
        end = start
    else:
        end_loc = _localize_us(end_wall_us, tzi)
        end = end_loc if end_loc is not None else start + (end_wall_us - start_wall_us)
    return TimeSpan(_us_to_s(start), _us_to_s(end), precision, start)


def _span_from_utc_us(start_us: int) -> TimeSpan | None:
    if not _MIN_US <= start_us < _MAX_US:
        return None
    return TimeSpan(_us_to_s(start_us), _us_to_s(start_us), "instant", start_us)


def _span_datetime(dt: datetime, tzi: tzinfo) -> TimeSpan | None:
    if dt.tzinfo is None or dt.tzinfo.utcoffset(dt) is None:
        wall = (dt.replace(tzinfo=None) - _EPOCH_NAIVE) // timedelta(microseconds=1)
        return _span_from_wall(wall, wall, "instant", tzi)
    try:
        off = dt.utcoffset()
    except (ValueError, OverflowError):
        return None
    wall = (dt.replace(tzinfo=None) - _EPOCH_NAIVE) // timedelta(microseconds=1)
    return _span_from_utc_us(wall - (off // timedelta(microseconds=1) if off else 0))


def _span_date(d: date, tzi: tzinfo) -> TimeSpan | None:
    day0 = _days_from_civil(d.year, d.month, d.day)
    return _span_from_wall(day0 * _DAY_US, (day0 + 1) * _DAY_US, "day", tzi)


def _anchor_values(start_s: np.ndarray, end_s: np.ndarray, anchor: str) -> np.ndarray:
    if anchor == "start":
        return start_s
    if anchor == "end":
        return end_s
    return start_s + (end_s - start_s) / 2
