"""The scalar API: one value -> ``TimeSpan`` / ``datetime`` / epoch seconds, and ``now``.
"""

from __future__ import annotations

import math
import time as _time
from datetime import date, datetime, tzinfo
from typing import Any

import numpy as np

from chronorank.errors import InvalidInput
from chronorank.timeparse.grammars import _span_str, _span_unix_number
from chronorank.timeparse.interop import _span_datetime64
from chronorank.timeparse.spans import (
    TimeSpan,
    _check_anchor,
    _check_dayfirst,
    _span_date,
    _span_datetime,
)
from chronorank.timeparse.zones import resolve_tz

_FORMATS_HELP = (
    "ISO 8601 (2026-05-01, 2026-05-01T10:00:00+02:00), YYYY/MM/DD, DD-MM-YYYY, "
    "MM/DD/YYYY, written dates ('May 1, 2026', '1 May 2026'), RFC 2822 "
    "('Tue, 03 Mar 2026 10:00:00 +0200'), partial dates ('2026-05', 'May 2026', '2026'), "
    "unix seconds/milliseconds/microseconds, datetime, date, numpy.datetime64, pandas.Timestamp"
)


def _is_missing(value: Any) -> bool:
    if value is None:
        return True
    if isinstance(value, float) and math.isnan(value):
        return True
    if isinstance(value, np.floating) and np.isnan(value):
        return True
    if isinstance(value, np.datetime64) and np.isnat(value):
        return True
    if isinstance(value, str) and not value.rstrip("\x00").strip():
        return True
    return type(value).__name__ in ("NaTType", "NAType")


def _span_any(value: Any, tzi: tzinfo, dayfirst: bool | None) -> TimeSpan | None:
    """The scalar parser. Never raises for bad values (returns None)."""
    try:
        if isinstance(value, str):
            return _span_str(value, tzi, dayfirst)
        if isinstance(value, (bool, np.bool_)) or value is None:
            return None
        module = type(value).__module__
        if module.startswith("pandas"):
            if type(value).__name__ in ("NaTType", "NAType"):
                return None
            to_py = getattr(value, "to_pydatetime", None)
            if to_py is not None:
                value = to_py(warn=False)
        if isinstance(value, datetime):
            return _span_datetime(value, tzi)
        if isinstance(value, date):
            return _span_date(value, tzi)
        if isinstance(value, np.datetime64):
            return _span_datetime64(value, tzi)
        if isinstance(value, (int, np.integer)):
            try:
                return _span_unix_number(float(value))
            except OverflowError:
                return None
        if isinstance(value, (float, np.floating)):
            return _span_unix_number(float(value))
        if isinstance(value, (bytes, bytearray)):
            try:
                return _span_str(bytes(value).decode("utf-8"), tzi, dayfirst)
            except UnicodeDecodeError:
                return None
    except (ValueError, OverflowError, TypeError, ArithmeticError):
        return None
    return None


def _unparseable(value: Any, where: str = "") -> InvalidInput:
    shown = repr(value)
    shown = shown if len(shown) <= 120 else shown[:120] + "..."
    return InvalidInput(
        f"could not parse{where} {shown} as a time. Accepted: {_FORMATS_HELP}. "
        "Fix the value, or pass strict=False to treat it as missing"
    )


def parse_span(
    value: Any, *, tz: Any = "UTC", dayfirst: bool | None = None, strict: bool = False
) -> TimeSpan | None:
    """Parse one value into a :class:`TimeSpan` (UTC epoch seconds), None if missing.

    See the module docstring for the accepted formats and policies.
    """
    tzi = resolve_tz(tz)
    _check_dayfirst(dayfirst)
    span = _span_any(value, tzi, dayfirst)
    if span is None and strict and not _is_missing(value):
        raise _unparseable(value)
    return span


def parse_time(
    value: Any,
    *,
    tz: Any = "UTC",
    dayfirst: bool | None = None,
    anchor: str = "start",
    strict: bool = False,
) -> datetime | None:
    """Parse one value into a UTC-aware ``datetime``; None when missing or unparseable.

    >>> parse_time("2026-05-02T01:00:00+02:00")
    datetime.datetime(2026, 5, 1, 23, 0, tzinfo=datetime.timezone.utc)
    >>> parse_time("2023", anchor="mid").date()
    datetime.date(2023, 7, 2)

    ``anchor`` picks start, midpoint or end of partial dates. With ``strict=True`` an
    unparseable (non-missing) value raises InvalidInput naming it.
    """
    _check_anchor(anchor)
    span = parse_span(value, tz=tz, dayfirst=dayfirst, strict=strict)
    if span is None:
        return None
    out = span.datetime_at(anchor)
    if out is None and strict:
        raise _unparseable(value, f" (anchor={anchor!r} falls outside years 1-9999)")
    return out


def to_epoch(
    value: Any,
    *,
    tz: Any = "UTC",
    dayfirst: bool | None = None,
    anchor: str = "start",
    strict: bool = False,
) -> float:
    """Parse one value into float epoch seconds (UTC); NaN when missing or unparseable."""
    _check_anchor(anchor)
    span = parse_span(value, tz=tz, dayfirst=dayfirst, strict=strict)
    return math.nan if span is None else span.at(anchor)


def resolve_now(now: Any = None, *, tz: Any = "UTC") -> float:
    """The reference time as epoch seconds: wall clock for None, else any parseable value.

    Raises InvalidInput when ``now`` is given but cannot be parsed.
    """
    if now is None:
        return _time.time()
    span = parse_span(now, tz=tz)
    if span is None:
        shown = repr(now)[:120]
        raise InvalidInput(
            f"now={shown} is not a time; pass None for the wall clock, a datetime, "
            "an ISO string such as '2026-05-01T00:00:00Z' or unix seconds"
        )
    return span.start
