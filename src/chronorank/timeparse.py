"""Lenient time parsing, normalised to UTC, with partial-date precision.

Inside chronorank a time is float64 epoch seconds (UTC), NaN when missing. This module
turns what users have (strings in many formats, ``datetime``/``date``, numpy ``datetime64``,
pandas ``Timestamp``, unix numbers) into that.

Accepted values
---------------
* ISO 8601: ``2026-05-01``, ``2026-05-01T10:00``, ``2026-05-01 10:00:00.123+02:00``,
  ``...Z``, offsets ``+02``, ``+0200``, ``+02:00``, the suffixes ``UTC``/``GMT``, basic form
  ``20260501`` / ``20260501T100000Z``, hour ``24:00`` (start of the next day).
* Numeric dates ``YYYY/MM/DD``, ``DD-MM-YYYY``, ``DD/MM/YYYY``, ``MM/DD/YYYY``, ``DD.MM.YYYY``
  (optionally followed by a time). Day-first versus month-first: a part greater than 12
  decides unambiguously; otherwise ``dayfirst=None`` (auto) reads dash- and dot-separated
  dates day-first (``01-05-2026`` is 1 May) and slash-separated dates month-first
  (``01/05/2026`` is 5 January); ``dayfirst=True`` / ``False`` forces the reading. Years
  must have four digits.
* Written dates, English month names full or abbreviated, any case: ``May 1, 2026``,
  ``1 May 2026``, ``1st May 2026``, ``01-May-2026``, ``Tuesday, May 5, 2026 10:00``.
* RFC 2822 (e-mail, RSS): ``Tue, 03 Mar 2026 10:00:00 +0200``.
* Partial dates ``2026-05``, ``May 2026``, ``2026`` keep their precision as spans: ``2023``
  is [2023-01-01, 2024-01-01). ``anchor`` picks the point ages count from: ``"start"``,
  ``"mid"`` or ``"end"`` of the span. Day-only dates are one-day spans.
* Objects: ``datetime`` (naive ones are read in ``tz``), ``date`` (a day span in ``tz``),
  numpy ``datetime64`` (naive, read in ``tz``; units Y/M/W/D are spans), pandas ``Timestamp``
  (pandas is never imported by this module).
* Unix time as int/float, unit decided by magnitude ``|x|``: below 1e11 seconds, below 1e14
  milliseconds, below 1e17 microseconds, below 1e20 nanoseconds, otherwise unparseable.
  (So millisecond values before 1973-03-03 are misread as seconds.) Numeric strings count as
  unix time only with at least 9 digits before the decimal point (``"1714521600"``); four
  digits are a year and eight digits a basic ISO date ``YYYYMMDD``; other digit strings are
  unparseable. ``bool`` is never a time.

Policies: naive values are read in ``tz`` (``"UTC"``, an IANA name such as
``"Europe/Berlin"``, a fixed offset ``"+02:00"`` or any ``tzinfo``); wall times that are
ambiguous or skipped at a DST change use ``fold=0``. Aware values keep their instant, so
``2026-05-02T01:00+02:00`` is 2026-05-01 23:00 UTC. A leap second ``23:59:60`` is clamped to
``:59`` (fraction kept). Dates that do not exist (``February 30``), year 0 and years past
9999 are unparseable. ``None``, NaN, NaT and blank strings are *missing*: they give
None/NaN even in strict mode; other unparseable values give None/NaN in lenient mode
(default) and raise :class:`~chronorank.errors.InvalidInput` with ``strict=True``.

Batch parsing (:func:`parse_times`) runs ISO strings through a vectorised numpy path
(code points checked and converted with days-from-civil arithmetic), numbers and
``datetime64`` arrays fully vectorised, and falls back to the scalar parser only for the
rows that path does not recognise. Batch and scalar results are identical.
"""

from __future__ import annotations

import functools
import math
import re
import time as _time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, timezone, tzinfo
from email.utils import parsedate_to_datetime
from typing import Any

import numpy as np

from chronorank.errors import InvalidInput

__all__ = [
    "ANCHORS",
    "TimeSpan",
    "parse_span",
    "parse_time",
    "parse_times",
    "resolve_now",
    "resolve_tz",
    "to_epoch",
]

ANCHORS = ("start", "mid", "end")
_UTC = timezone.utc
_EPOCH = datetime(1970, 1, 1, tzinfo=_UTC)
_EPOCH_NAIVE = datetime(1970, 1, 1)
_US = 1_000_000
_DAY_US = 86_400 * _US
_MIN_US = -62_135_596_800 * _US  # 0001-01-01T00:00:00Z
_MAX_US = 253_402_300_800 * _US  # 10000-01-01T00:00:00Z (exclusive)
_MIN_TS = _MIN_US / _US
_MAX_TS = _MAX_US / _US
_MAX_TEXT = 200

_FORMATS_HELP = (
    "ISO 8601 (2026-05-01, 2026-05-01T10:00:00+02:00), YYYY/MM/DD, DD-MM-YYYY, "
    "MM/DD/YYYY, written dates ('May 1, 2026', '1 May 2026'), RFC 2822 "
    "('Tue, 03 Mar 2026 10:00:00 +0200'), partial dates ('2026-05', 'May 2026', '2026'), "
    "unix seconds/milliseconds/microseconds, datetime, date, numpy.datetime64, pandas.Timestamp"
)


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


# --------------------------------------------------------------------------- arguments


@functools.lru_cache(maxsize=64)
def _tz_from_name(name: str) -> tzinfo:
    key = name.strip()
    if key.upper() in ("UTC", "Z", "GMT", "ZULU", "ETC/UTC"):
        return _UTC
    m = re.fullmatch(r"(?:UTC|GMT)?\s*([+-])(\d{1,2})(?::?(\d{2}))?", key, re.IGNORECASE)
    if m:
        hours, minutes = int(m.group(2)), int(m.group(3) or 0)
        if hours <= 23 and minutes <= 59:
            sign = -1 if m.group(1) == "-" else 1
            return timezone(sign * timedelta(hours=hours, minutes=minutes))
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    try:
        return ZoneInfo(key)
    except (ZoneInfoNotFoundError, ValueError, OSError) as exc:
        raise InvalidInput(
            f"tz={name!r} is not a known time zone; use 'UTC', an IANA name such as "
            "'Europe/Berlin', a fixed offset such as '+02:00', or a tzinfo object"
        ) from exc


def resolve_tz(tz: Any) -> tzinfo:
    """A tzinfo for ``tz``: None/"UTC", an IANA name, a fixed offset string, or a tzinfo."""
    if tz is None:
        return _UTC
    if isinstance(tz, tzinfo):
        return tz
    if isinstance(tz, str):
        return _tz_from_name(tz)
    raise InvalidInput(
        f"tz={tz!r} must be a string ('UTC', 'Europe/Berlin', '+02:00') or a tzinfo, "
        f"not {type(tz).__name__}"
    )


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


# --------------------------------------------------------------------------- arithmetic


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


def _localize_us(wall_us: int, tzi: tzinfo) -> int | None:
    """UTC microseconds of a naive wall time (microseconds since 1970 on the wall clock)."""
    if tzi is _UTC:
        return wall_us
    off: timedelta | None
    if isinstance(tzi, timezone):
        off = tzi.utcoffset(None)
    else:
        try:
            naive = _EPOCH_NAIVE + timedelta(microseconds=wall_us)
        except OverflowError:
            return None
        off = naive.replace(tzinfo=tzi).utcoffset()
    if off is None:
        return wall_us
    return wall_us - off // timedelta(microseconds=1)


def _localize_us_vec(wall_us: np.ndarray, tzi: tzinfo) -> tuple[np.ndarray, np.ndarray]:
    """Vectorised :func:`_localize_us`: (utc_us int64, ok bool)."""
    ok = np.ones(wall_us.shape, dtype=bool)
    if tzi is _UTC or wall_us.size == 0:
        return wall_us, ok
    if isinstance(tzi, timezone):
        off = tzi.utcoffset(None)
        off_us = 0 if off is None else off // timedelta(microseconds=1)
        return wall_us - off_us, ok
    uniq, inverse = np.unique(wall_us, return_inverse=True)
    mapped = np.empty(uniq.shape, dtype=np.int64)
    good = np.ones(uniq.shape, dtype=bool)
    for i, w in enumerate(uniq.tolist()):
        r = _localize_us(int(w), tzi)
        if r is None:
            good[i] = False
            mapped[i] = 0
        else:
            mapped[i] = r
    return mapped[inverse].reshape(wall_us.shape), good[inverse].reshape(wall_us.shape)


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


# --------------------------------------------------------------------------- fields


def _span_from_fields(
    y: int,
    mo: int,
    d: int,
    precision: str,
    time_text: str | None,
    tzi: tzinfo,
) -> TimeSpan | None:
    """Validate calendar fields (and an optional time string) and build the span."""
    if not (1 <= y <= 9999 and 1 <= mo <= 12 and 1 <= d <= _days_in_month(y, mo)):
        return None
    day0 = _days_from_civil(y, mo, d)
    if time_text is None:
        if precision == "year":
            end_day = _days_from_civil(y + 1, 1, 1)
        elif precision == "month":
            end_day = _days_from_civil(y + (mo == 12), mo % 12 + 1, 1)
        else:
            end_day = day0 + 1
        return _span_from_wall(day0 * _DAY_US, end_day * _DAY_US, precision, tzi)
    parsed = _parse_clock(time_text)
    if parsed is None:
        return None
    tod_us, offset_us = parsed
    wall = day0 * _DAY_US + tod_us
    if offset_us is None:
        return _span_from_wall(wall, wall, "instant", tzi)
    return _span_from_utc_us(wall - offset_us)


_CLOCK_RE = re.compile(
    r"""
    (?P<h>\d{1,2})
    (?: :(?P<mi>\d{2}) (?: :(?P<s>\d{2}) (?:[.,](?P<f>\d+))? )?
      | (?P<mi2>\d{2}) (?: (?P<s2>\d{2}) (?:[.,](?P<f2>\d+))? )?
    )?
    \s*(?P<ampm>[ap]\.?m\.?)?
    \s*(?P<tz>z|(?:(?:utc|gmt)\s*)?[+-]\d{1,2}(?::?\d{2})?|utc|gmt)?
    """,
    re.VERBOSE | re.IGNORECASE | re.ASCII,
)


def _parse_offset(text: str) -> int | None | bool:
    """Offset in microseconds; None for no offset; False if malformed."""
    t = text.strip().lower()
    if not t:
        return None
    if t in ("z", "utc", "gmt"):
        return 0
    m = re.fullmatch(r"(?:utc|gmt)?\s*([+-])(\d{1,2})(?::?(\d{2}))?", t, re.ASCII)
    if not m:
        return False
    hh, mm = int(m.group(2)), int(m.group(3) or 0)
    if hh > 23 or mm > 59:
        return False
    sign = -1 if m.group(1) == "-" else 1
    return sign * (hh * 3600 + mm * 60) * _US


def _parse_clock(text: str) -> tuple[int, int | None] | None:
    """(time of day in microseconds, offset in microseconds or None), or None if invalid."""
    m = _CLOCK_RE.fullmatch(text.strip())
    if m is None:
        return None
    h = int(m.group("h"))
    mi_s = m.group("mi") or m.group("mi2")
    s_s = m.group("s") or m.group("s2")
    f_s = m.group("f") or m.group("f2")
    if mi_s is None and m.group("ampm") is None and not text.strip().isdigit():
        return None  # a bare hour needs am/pm ("10 pm") unless it is all digits (ISO "T10")
    mi = int(mi_s or 0)
    sec = int(s_s or 0)
    us = int((f_s or "")[:6].ljust(6, "0"))
    ampm = m.group("ampm")
    if ampm:
        if not 1 <= h <= 12:
            return None
        h = h % 12 + (12 if ampm.lower().startswith("p") else 0)
    if sec == 60:  # leap second: clamp to :59, keep the fraction
        sec = 59
    if mi > 59 or sec > 59:
        return None
    if h == 24:
        if mi or sec or us:
            return None
    elif h > 23:
        return None
    offset = _parse_offset(m.group("tz") or "")
    if offset is False:
        return None
    return ((h * 3600 + mi * 60 + sec) * _US + us, offset if isinstance(offset, int) else None)


# --------------------------------------------------------------------------- strings

_RE_FLAGS = re.IGNORECASE | re.ASCII
_ISO_RE = re.compile(
    r"(?P<y>\d{4})(?:-(?P<mo>\d{1,2})(?:-(?P<d>\d{1,2})(?:(?:[Tt]|\s+)(?P<time>.+))?)?)?", _RE_FLAGS
)
_ISO_BASIC_RE = re.compile(r"(?P<y>\d{4})(?P<mo>\d{2})(?P<d>\d{2})(?:[Tt](?P<time>.+))?", _RE_FLAGS)
_NUMERIC_RE = re.compile(
    r"(?P<a>\d{1,4})(?P<sep>[/.\-])(?P<b>\d{1,2})(?P=sep)(?P<c>\d{1,4})(?:(?:[Tt]|\s+)(?P<time>.+))?",
    _RE_FLAGS,
)
_NUMBER_RE = re.compile(r"[+-]?(?P<int>\d*)(?:\.\d*)?", re.ASCII)
_WEEKDAY_RE = re.compile(
    r"(?:mon|tue|wed|thu|fri|sat|sun)[a-z]*\.?,?\s+", _RE_FLAGS
)
_ORD = r"(?:st|nd|rd|th)?"
_TIME_TAIL = r"(?:(?:,\s*|\s+)(?:at\s+)?(?P<time>\d.*))?"
_WRITTEN_RES = (
    # May 1, 2026 / May 1st 2026 10:00
    re.compile(rf"(?P<mon>[a-z]+)\.?\s+(?P<d>\d{{1,2}}){_ORD},?\s+(?P<y>\d{{4}}){_TIME_TAIL}", _RE_FLAGS),
    # 1 May 2026 / 1st of May, 2026 / 01-May-2026
    re.compile(
        rf"(?P<d>\d{{1,2}}){_ORD}(?:\s+of)?(?:\s+|[-/.])(?P<mon>[a-z]+)\.?,?(?:\s+|[-/.])(?P<y>\d{{4}}){_TIME_TAIL}",
        _RE_FLAGS,
    ),
    # 2026-May-01 / 2026 May 1
    re.compile(rf"(?P<y>\d{{4}})(?:\s+|[-/.])(?P<mon>[a-z]+)\.?(?:\s+|[-/.])(?P<d>\d{{1,2}}){_ORD}{_TIME_TAIL}", _RE_FLAGS),
    # May 2026 / May, 2026
    re.compile(r"(?P<mon>[a-z]+)\.?,?\s+(?P<y>\d{4})", _RE_FLAGS),
    # 2026 May
    re.compile(r"(?P<y>\d{4})\s+(?P<mon>[a-z]+)\.?", _RE_FLAGS),
)
_RFC_RE = re.compile(r"(?:[a-z]{3},?\s*)?\d{1,2}\s+[a-z]{3}\s+\d{2,4}\s+\d{1,2}:\d{2}", _RE_FLAGS)
_MONTHS: dict[str, int] = {}
for _i, _name in enumerate(
    ("january", "february", "march", "april", "may", "june", "july", "august", "september",
     "october", "november", "december"),
    start=1,
):
    _MONTHS[_name] = _i
    _MONTHS[_name[:3]] = _i
_MONTHS["sept"] = 9


def _span_numeric_date(m: re.Match[str], tzi: tzinfo, dayfirst: bool | None) -> TimeSpan | None:
    a, b, c, sep = m.group("a"), m.group("b"), m.group("c"), m.group("sep")
    if len(a) == 4:
        if len(c) > 2:
            return None
        y, mo, d = int(a), int(b), int(c)
    elif len(c) == 4 and len(a) <= 2:
        p, q, y = int(a), int(b), int(c)
        if p > 12 and q > 12:
            return None
        if p > 12:
            d, mo = p, q
        elif q > 12:
            mo, d = p, q
        else:
            first = dayfirst if dayfirst is not None else sep in "-."
            d, mo = (p, q) if first else (q, p)
    else:
        return None
    return _span_from_fields(y, mo, d, "day", m.group("time"), tzi)


def _span_unix_number(x: float) -> TimeSpan | None:
    if not math.isfinite(x):
        return None
    a = abs(x)
    if a < 1e11:
        s = x
    elif a < 1e14:
        s = x / 1e3
    elif a < 1e17:
        s = x / 1e6
    elif a < 1e20:
        s = x / 1e9
    else:
        return None
    if not _MIN_TS <= s < _MAX_TS:
        return None
    return TimeSpan(s, s, "instant")


def _span_str(text: str, tzi: tzinfo, dayfirst: bool | None) -> TimeSpan | None:
    s = text.rstrip("\x00").strip()
    if not s or len(s) > _MAX_TEXT:
        return None
    m = _ISO_RE.fullmatch(s)
    if m:
        y = int(m.group("y"))
        if m.group("mo") is None:
            return _span_from_fields(y, 1, 1, "year", None, tzi)
        mo = int(m.group("mo"))
        if m.group("d") is None:
            return _span_from_fields(y, mo, 1, "month", None, tzi)
        time_text = m.group("time")
        return _span_from_fields(y, mo, int(m.group("d")), "day", time_text, tzi)
    m = _ISO_BASIC_RE.fullmatch(s)
    if m:
        return _span_from_fields(
            int(m.group("y")), int(m.group("mo")), int(m.group("d")), "day", m.group("time"), tzi
        )
    m = _NUMERIC_RE.fullmatch(s)
    if m:
        return _span_numeric_date(m, tzi, dayfirst)
    m = _NUMBER_RE.fullmatch(s)
    if m and any(ch.isdigit() for ch in s):
        if len(m.group("int")) >= 9:
            try:
                return _span_unix_number(float(s))
            except (ValueError, OverflowError):
                return None
        return None
    if _RFC_RE.match(s):
        span = _span_rfc2822(s, tzi)
        if span is not None:
            return span
    w = _WEEKDAY_RE.match(s)
    body = s[w.end():] if w else s
    for rx in _WRITTEN_RES:
        m = rx.fullmatch(body)
        if m is None:
            continue
        mon = _MONTHS.get(m.group("mon").lower())
        if mon is None:
            continue
        groups = m.groupdict()
        y = int(groups["y"])
        if groups.get("d") is None:
            return _span_from_fields(y, mon, 1, "month", None, tzi)
        return _span_from_fields(y, mon, int(groups["d"]), "day", groups.get("time"), tzi)
    return None


def _span_rfc2822(s: str, tzi: tzinfo) -> TimeSpan | None:
    try:
        dt = parsedate_to_datetime(s)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if dt is None:
        return None
    return _span_datetime(dt, tzi)


# --------------------------------------------------------------------------- objects


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


# --------------------------------------------------------------------------- scalar API


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


# --------------------------------------------------------------------------- batch API

_ZERO = ord("0")


def _iso_fast(codes: np.ndarray, length: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Vectorised ISO parser over a code-point matrix (one row per string, zero padded).

    Recognises ``YYYY``, ``YYYY-MM``, ``YYYY-MM-DD`` and
    ``YYYY-MM-DD[T ]HH:MM[:SS[.f{1,9}]][Z|±HH|±HHMM|±HH:MM]``. Returns
    ``(start_us, end_us, ok, naive)``: wall-clock microseconds for naive rows, UTC for rows
    with an offset. Rows it does not recognise have ``ok=False`` (the caller falls back to
    the scalar parser, which accepts a superset, so both always agree).
    """
    n, w = codes.shape
    if n == 0 or w < 4:
        z = np.zeros(n, dtype=np.int64)
        return z, z.copy(), np.zeros(n, dtype=bool), np.ones(n, dtype=bool)
    # digit values of the first 10 columns (-1 pads short rows); int32 keeps arithmetic cheap
    k = min(w, 10)
    d = np.full((n, 10), -1, dtype=np.int32)
    d[:, :k] = codes[:, :k]
    d[:, :k] -= _ZERO
    isd = (d >= 0) & (d <= 9)
    year = d[:, 0] * 1000 + d[:, 1] * 100 + d[:, 2] * 10 + d[:, 3]
    ok = isd[:, 0] & isd[:, 1] & isd[:, 2] & isd[:, 3] & (year >= 1)
    has_month = ok & (d[:, 4] == 45 - _ZERO) & isd[:, 5] & isd[:, 6]
    has_day = has_month & (d[:, 7] == 45 - _ZERO) & isd[:, 8] & isd[:, 9] & (length >= 10)
    month = np.where(has_month, d[:, 5] * 10 + d[:, 6], 1)
    day = np.where(has_day, d[:, 8] * 10 + d[:, 9], 1)
    leap = (year % 4 == 0) & ((year % 100 != 0) | (year % 400 == 0))
    dim = _DIM_VEC[np.clip(month, 0, 12)] + ((month == 2) & leap)
    ok &= (month >= 1) & (month <= 12) & (day >= 1) & (day <= dim)
    is_day = has_day & (length == 10)
    is_month = has_month & (length == 7)
    is_year = length == 4
    timed = has_day & (length > 10)
    y64 = year.astype(np.int64)
    days = _days_from_civil_vec(y64, month.astype(np.int64), day.astype(np.int64))
    start = days * _DAY_US
    end = start + _DAY_US
    naive = np.ones(n, dtype=bool)
    coarse = is_year | is_month
    if coarse.any():
        nxt_y = np.where(is_year | (month == 12), y64 + 1, y64)
        nxt_m = np.where(is_year, 1, month % 12 + 1).astype(np.int64)
        end = np.where(coarse, _days_from_civil_vec(nxt_y, nxt_m, np.ones_like(nxt_m)) * _DAY_US, end)
    good = ok & (is_day | is_month | is_year)
    if timed.any():
        rows = np.flatnonzero(timed & ok)
        t_ok, tod, off, has_off = _iso_clock(codes[rows], length[rows])
        start[rows] += tod - off
        end[rows] = start[rows]
        naive[rows] = ~has_off
        good[rows] = t_ok
    return start, end, good, naive


def _iso_clock(c: np.ndarray, ln: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The ``[T ]HH:MM[:SS[.f]][offset]`` tail from column 10: (ok, tod_us, offset_us, has_offset)."""
    m, w = c.shape
    zero = np.zeros(m, dtype=np.int64)
    flat = np.ascontiguousarray(c).ravel()
    row0 = np.arange(m, dtype=np.int64) * w

    def g(idx: np.ndarray | int) -> np.ndarray:
        if isinstance(idx, int):
            return c[:, idx].astype(np.int64) if idx < w else zero
        vals = flat[row0 + np.minimum(idx, w - 1)].astype(np.int64)
        return np.where(idx < w, vals, 0)

    def isdig(x: np.ndarray) -> np.ndarray:
        return (x >= 48) & (x <= 57)

    def two(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return (a - _ZERO) * 10 + (b - _ZERO)

    sep, h1, h2, colon, m1, m2 = g(10), g(11), g(12), g(13), g(14), g(15)
    t_ok = ((sep == 84) | (sep == 116) | (sep == 32)) & (ln >= 16)
    t_ok &= isdig(h1) & isdig(h2) & (colon == 58) & isdig(m1) & isdig(m2)
    hh, mm = two(h1, h2), two(m1, m2)
    c16, s1, s2 = g(16), g(17), g(18)
    has_sec = (ln >= 19) & (c16 == 58) & isdig(s1) & isdig(s2)
    t_ok &= ~((c16 == 58) & ~has_sec)
    ss = np.where(has_sec, two(s1, s2), 0)
    pos = np.where(has_sec, 19, 16).astype(np.int64)
    dot = g(pos)
    has_frac = has_sec & ((dot == 46) | (dot == 44)) & (pos < ln)
    frac = np.zeros(m, dtype=np.int64)
    run = has_frac.copy()
    nfrac = np.zeros(m, dtype=np.int64)
    for k in range(10):
        idx = pos + 1 + k
        ch = g(idx)
        run &= isdig(ch) & (idx < ln)
        nfrac += run
        if k < 6:
            frac += np.where(run, (ch - _ZERO) * 10 ** (5 - k), 0)
    t_ok &= ~has_frac | ((nfrac > 0) & (nfrac <= 9))
    p = pos + np.where(has_frac, 1 + nfrac, 0)
    t0, p1, p2, p3, p4, p5 = g(p), g(p + 1), g(p + 2), g(p + 3), g(p + 4), g(p + 5)
    zulu = ((t0 == 90) | (t0 == 122)) & (ln == p + 1)
    signed = ((t0 == 43) | (t0 == 45)) & isdig(p1) & isdig(p2)
    form_h = signed & (ln == p + 3)
    form_colon = signed & (p3 == 58) & isdig(p4) & isdig(p5) & (ln == p + 6)
    form_compact = signed & isdig(p3) & isdig(p4) & (ln == p + 5)
    oh = two(p1, p2)
    om = np.where(form_colon, two(p4, p5), np.where(form_compact, two(p3, p4), 0))
    has_off = zulu | form_h | form_colon | form_compact
    t_ok &= (p == ln) | has_off
    t_ok &= (hh <= 23) & (mm <= 59) & (ss <= 59) & (oh <= 23) & (om <= 59)
    sign = np.where(t0 == 45, -1, 1)
    off_us = np.where(has_off & ~zulu, sign * (oh * 3600 + om * 60), 0) * _US
    tod = (hh * 3600 + mm * 60 + ss) * _US + frac
    return t_ok, tod, off_us, has_off


def _anchor_values(start_s: np.ndarray, end_s: np.ndarray, anchor: str) -> np.ndarray:
    if anchor == "start":
        return start_s
    if anchor == "end":
        return end_s
    return start_s + (end_s - start_s) / 2


def _plain_iso_dates(seq: Sequence[Any], anchor: str) -> np.ndarray | None:
    """The commonest column -- every value a ``YYYY-MM-DD`` str, read in UTC -- parsed from
    one joined byte buffer. None when any value is something else (the general path then
    handles the whole column, so results never depend on which path ran)."""
    n = len(seq)
    if type(seq[0]) is not str or len(seq[0]) != 10:  # not this column: skip the join
        return None
    try:
        joined = "".join(seq)
    except TypeError:
        return None
    if len(joined) != 10 * n:
        return None
    try:
        raw = joined.encode("ascii")
    except UnicodeEncodeError:
        return None
    flat = np.frombuffer(raw, dtype=np.uint8)
    ymd = np.empty((n, 3), dtype=np.int64)
    block = _CHUNK * 10
    for a in range(0, flat.shape[0], block):  # flat ops against a tiled template: fast
        chunk = flat[a : a + block]
        m = chunk.shape[0]
        # digit - '0' wraps below '0'; '-' - '-' is 0: every cell must be <= its limit
        d = chunk - _ISO_TEMPLATE[:m]
        if not (d <= _ISO_LIMIT[:m]).all():
            return None
        # one product gives (year * 12 + month, month, day): the month index addresses flat
        # tables. Exact (values < 2**24) in any summation order; block by block, because one
        # product over 100k rows goes multi-threaded in BLAS, 38 ms against 0.3 ms on 2 busy cores
        rows = a // 10
        ymd[rows : rows + m // 10] = d.astype(np.float32).reshape(-1, 10) @ _ISO_WEIGHTS
    ym, month, day0 = ymd[:, 0] - 1, ymd[:, 1], ymd[:, 2] - 1
    # months 1-12 first (13-99 would index past the tables); year 0 months have no days
    if not (((month - 1).astype(np.uint64) < 12).all() and (day0.astype(np.uint64) < _MONTH_LEN[ym]).all()):
        return None
    start = _MONTH_START[ym] + day0 * 86400.0
    if anchor == "start":
        return start
    return _anchor_values(start, start + 86400.0, anchor)


def _iso_timestamps(seq: Sequence[Any], tzi: tzinfo) -> tuple[np.ndarray, np.ndarray] | None:
    """Full ISO timestamps -- ``YYYY-MM-DD[T ]HH:MM:SS[.f{1,9}][Z|±HH|±HHMM|±HH:MM]``, mixed
    lengths -- parsed from one joined byte buffer: ``(epoch_seconds, ok)``.

    Each row's first 32 and last 8 bytes are gathered as single items: the 19-character head
    is checked and its digit pairs read eight bytes at a time (SWAR), the offset read from the
    last bytes, the fraction checked and summed as one word. Timing on 2 busy cores (best of
    many, ``benchmarks/rerank_speed.py`` iso-timestamp rows): 10k mixed timestamps in ~0.85 ms
    (1.9 ms with column-by-column reads), against ~0.2 ms for 10k plain dates. Rows that do not
    fit (or, outside UTC, carry no offset) have ``ok=False`` for the general parser. Values are
    integer microseconds, as in ``_iso_fast``, so both paths agree to the bit. None when the
    column is not all ASCII strings.
    """
    n = len(seq)
    try:
        raw = "\n".join(seq).encode("ascii")
    except (TypeError, UnicodeEncodeError):
        return None
    buf = np.frombuffer(b"\n" * 8 + raw + b"\n" * 40, dtype=np.uint8)
    nl = np.flatnonzero(buf == 10)[7:-39]  # the separators, framed by the padding
    if nl.shape[0] != n + 1:  # a value holding a newline
        return None
    out = np.empty(n)
    ok = np.empty(n, dtype=bool)
    for lo in range(0, n, _TS_CHUNK):  # blocks keep the temporaries cache-resident
        hi = min(n, lo + _TS_CHUNK)
        out[lo:hi], ok[lo:hi] = _iso_timestamp_block(buf, nl[lo : hi + 1], tzi)
    return out, ok


def _iso_timestamp_block(buf: np.ndarray, nl: np.ndarray, tzi: tzinfo) -> tuple[np.ndarray, np.ndarray]:
    """Rows between consecutive newline positions ``nl`` of ``buf``: (epoch_seconds, ok).

    Each row's first 32 bytes and last 8 bytes are gathered as single 32- and 8-byte items
    (a strided void view: one copy per row, not per byte). Where the time goes (10k mixed
    rows, 2 busy cores): these two gathers, the head's SWAR check and the offset flags are
    each tens of microseconds; every whole-row pass is counted, so the flags are combined as
    exclusive 0/1 products rather than nested ``np.where``.
    """
    starts = nl[:-1] + 1
    ends = nl[1:]
    n = starts.shape[0]
    tlen = ends - starts - 19  # the tail after "YYYY-MM-DDTHH:MM:SS"
    # a short row's window runs into the next value: harmless, its tlen rejects it
    win = _byte_rows(buf, 32)[starts].view(np.uint8).reshape(n, 32)
    sep = win[:, 10] | 32  # T, t and space all become 116 or 32
    t_ok = (sep == 116) | (sep == 32)
    c0 = win[:, 19]
    dot = (c0 == 46) | (c0 == 44)  # a fraction's [.,]
    # one flat subtraction of a tiled template, in place (the gather is a fresh copy): digits
    # become 0-9 (anything else wraps above 9), separators 0; bytes 19-31 lose a '0'
    sub = win
    np.subtract(win.reshape(-1), _TS_TEMPLATE[: n * 32], out=sub.reshape(-1))
    # SWAR on the head's words (flat, against tiled masks: contiguous loops): a digit byte
    # has its high nibble clear, also after adding 6; a separator byte is 0 (a carry out of
    # a bad byte only marks its row bad again)
    words = sub.view(np.uint64).reshape(-1)
    w4 = n * 4
    bad = words + _TS_SIX[:w4]  # in place from here: one temporary, not three
    bad |= words
    bad &= _TS_HI[:w4]
    bad = bad.reshape(n, 4)
    ok = ((bad[:, 0] | bad[:, 1] | bad[:, 2]) == 0) & t_ok
    ok &= tlen.astype(np.uint64) <= 16
    # pairs of digits: byte i of ``pair`` is sub[i] * 10 + sub[i + 1] (no carries: <= 99)
    pair = words * np.uint64(10)
    pair += words >> np.uint64(8)
    pair = pair.view(np.uint8).reshape(n, 32)
    year = pair[:, 0].astype(np.int32) * 100 + pair[:, 2]
    month = pair[:, 5].astype(np.int32)
    day0 = pair[:, 8].astype(np.int32) - 1
    # (a space or "t" at column 10 wraps after the template and carries into pair[:, 11])
    hh = sub[:, 11].astype(np.int32) * 10 + sub[:, 12]
    mm, ss = pair[:, 14].astype(np.int32), pair[:, 17].astype(np.int32)
    ok &= ((month - 1).astype(np.uint32) < 12) & (hh <= 23) & (mm <= 59) & (ss <= 59)
    ym = year * 12 + month - 1
    ok &= day0.astype(np.uint32) < _MONTH_LEN.take(ym, mode="clip")  # year 0: no days
    # offset: the row's last 1, 3, 5 or 6 bytes, Z/z, ±HH, ±HHMM or ±HH:MM (exclusive forms)
    last = _byte_rows(buf, 8)[ends - 8].view(np.uint8).reshape(n, 8)
    od = last - np.uint8(48)
    isd = od <= 9
    pm = ((last - np.uint8(43)) & np.uint8(0xFD)) == 0  # '+' or '-'
    d67 = isd[:, 6] & isd[:, 7]
    zulu = (last[:, 7] | 32) == 122
    colon = pm[:, 2] & isd[:, 3] & isd[:, 4] & (last[:, 5] == 58) & d67
    compact = pm[:, 3] & isd[:, 4] & isd[:, 5] & d67
    hours = pm[:, 5] & d67
    zu, co, cp, ho = zulu.view(np.uint8), colon.view(np.uint8), compact.view(np.uint8), hours.view(np.uint8)
    off_len = zu + co * np.uint8(6) + cp * np.uint8(5) + ho * np.uint8(3)
    rest = tlen - off_len  # the fraction's length, its [.,] included: 2-10
    has_frac = dot & ((rest - 2).view(np.uint64) <= 8)
    ok &= has_frac | (rest == 0)
    if tzi is not _UTC:
        ok &= off_len > 0  # naive rows need the local zone: the general parser localises them
    # two-digit values of the last bytes (non-digits zeroed first, so no carries): hours at
    # 3 (±HH:MM), 4 (±HHMM) or 6 (±HH), minutes at 6
    lp = ((od * isd).view(np.uint64) * np.uint64(10) + ((od * isd).view(np.uint64) >> np.uint64(8)))
    lp8 = lp.view(np.uint8).reshape(n, 8)
    hm = co | cp
    # the sign sits at 8 - off_len in each form, its hours right after it
    sign_at = _ROW8[:n] + (8 - off_len)
    off_h = (lp8.reshape(-1).take(sign_at + 1, mode="clip") * (hm | ho)).astype(np.int32)
    off_m = (lp8[:, 6] * hm).astype(np.int32)
    ok &= (off_h <= 23) & (off_m <= 59)
    neg = last.reshape(-1).take(sign_at, mode="clip") == 45  # no offset: off_h = off_m = 0
    off_s = (off_h * 3600 + off_m * 60) * (1 - 2 * neg.view(np.int8).astype(np.int32))
    secs = _MONTH_START_S.take(ym, mode="clip") + (day0 * 86400 + hh * 3600 + mm * 60 + ss - off_s)
    start_us = secs * _US
    if has_frac.any():  # 1-9 digits after the [.,]; microseconds from the first six
        nfrac = (rest - 1) * has_frac
        f = _unaligned_words(sub, 20)  # bytes 20-27, less '0'
        ok &= ((f | (f + _FRAC_SIX.take(nfrac))) & _FRAC_HI.take(nfrac)) == 0
        ok &= (nfrac < 9) | (sub[:, 28] <= 9)  # a ninth digit
        # the first six digits behind two zero digits: the SWAR sum is the microseconds
        # (eight digits, first in the lowest byte, in three multiply-shifts: pairs, quads, all)
        v = (f & _FRAC_KEEP.take(nfrac)) << np.uint64(16)
        v = (v * np.uint64(10 * 256 + 1)) >> np.uint64(8)
        v = ((v & _LO8) * np.uint64(100 * 65536 + 1)) >> np.uint64(16)
        v = ((v & _LO16) * np.uint64(10000 * 2**32 + 1)) >> np.uint64(32)
        start_us += v.view(np.int64)
    ok &= (start_us - _MIN_US).view(np.uint64) < np.uint64(_MAX_US - _MIN_US)
    return start_us / _US, ok


def _unaligned_words(rows: np.ndarray, col: int) -> np.ndarray:
    """Bytes ``col`` to ``col + 7`` of each row of a C-contiguous uint8 matrix, as uint64."""
    view = np.ndarray(shape=(rows.shape[0],), dtype="V8", buffer=rows, offset=col, strides=(rows.shape[1],))
    return view.copy().view(np.uint64)


def _byte_rows(buf: np.ndarray, width: int) -> np.ndarray:
    """Every ``width``-byte window of ``buf`` as one void item (overlapping, no copy)."""
    return np.ndarray(
        shape=(buf.shape[0] - width + 1,), dtype=f"V{width}", buffer=buf, offset=0, strides=(1,)
    )


_CHUNK = 8192  # rows per vectorised block: temporaries stay small and cache-resident

_ISO_TEMPLATE = np.tile(np.frombuffer(b"0000-00-00", dtype=np.uint8), _CHUNK)
_ISO_LIMIT = np.tile(np.array([9, 9, 9, 9, 0, 9, 9, 0, 9, 9], dtype=np.uint8), _CHUNK)
_ISO_WEIGHTS = np.zeros((10, 3), dtype=np.float32)
_ISO_WEIGHTS[[0, 1, 2, 3], 0] = (12000, 1200, 120, 12)
_ISO_WEIGHTS[[5, 6], 0] = (10, 1)
_ISO_WEIGHTS[[5, 6], 1] = (10, 1)
_ISO_WEIGHTS[[8, 9], 2] = (10, 1)
# per month of years 0-9999, indexed year * 12 + month - 1: its length in days (year 0 does
# not exist: 0) and the epoch second it starts at
_Y12 = np.repeat(np.arange(10000, dtype=np.int64), 12)
_M12 = np.tile(np.arange(1, 13, dtype=np.int64), 10000)
_MONTH_LEN = (_DIM_VEC[_M12] + ((_M12 == 2) & (_Y12 % 4 == 0) & ((_Y12 % 100 != 0) | (_Y12 % 400 == 0))))
_MONTH_LEN = np.where(_Y12 == 0, 0, _MONTH_LEN).astype(np.uint64)
_MONTH_START_S = _days_from_civil_vec(np.maximum(_Y12, 1), _M12, np.ones_like(_Y12)) * 86400
_MONTH_START = _MONTH_START_S.astype(np.float64)
del _Y12, _M12
# full timestamps: the 19-character head "YYYY-MM-DDTHH:MM:SS" (column 10, the T, is checked
# on its own)
_TS_CHUNK = 16384  # timestamp rows per block: fewer blocks, each op's fixed cost paid less often
_TS_TEMPLATE = np.tile(np.frombuffer(b"0000-00-00T00:00:00" + b"0" * 13, dtype=np.uint8), _TS_CHUNK)


def _byte_words(cells: list[int]) -> np.ndarray:
    return np.frombuffer(bytes(cells), dtype=np.uint64)


# the head's bytes (4 words a row, the fourth unchecked): digit columns need a clear high nibble (also after
# adding 6), separator columns must be exactly 0 after the template; T and 19-31 are free
_TS_DIGIT = [i in (0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18) for i in range(32)]
_TS_HI = np.tile(_byte_words([0xF0 if d else 0xFF if i in (4, 7, 13, 16) else 0 for i, d in enumerate(_TS_DIGIT)]), _TS_CHUNK)
_TS_SIX = np.tile(_byte_words([6 if d else 0 for d in _TS_DIGIT]), _TS_CHUNK)
# fractions, per digit count 0-9: the bytes 20-27 to check and the first six to keep
_FRAC_HI = np.array([(1 << 8 * min(k, 8)) - 1 for k in range(10)], dtype=np.uint64) & np.uint64(0xF0F0F0F0F0F0F0F0)
_FRAC_SIX = np.array([(1 << 8 * min(k, 8)) - 1 for k in range(10)], dtype=np.uint64) & np.uint64(0x0606060606060606)
_FRAC_KEEP = np.array([(1 << 8 * min(k, 6)) - 1 for k in range(10)], dtype=np.uint64)
_LO8 = np.uint64(0x00FF00FF00FF00FF)
_LO16 = np.uint64(0x0000FFFF0000FFFF)
_ROW8 = np.arange(_TS_CHUNK, dtype=np.int64) * 8

class _CodeSource:
    """Code-point matrices for blocks of strings, from a unicode array or a list of str.

    A list of ASCII strings is joined into one buffer and viewed as uint8 rows (no
    per-string numpy conversion); a unicode array is viewed as uint32 rows.
    """

    def __init__(self, texts: Sequence[str] | np.ndarray) -> None:
        """Raises TypeError when a list holds anything but strings."""
        self.texts = texts
        self.n = len(texts)
        self.u: np.ndarray | None = None
        self.data: np.ndarray | None = None
        self.lens = np.zeros(0, dtype=np.int64)
        self.offsets = np.zeros(0, dtype=np.int64)
        self.uniform = -1
        self.width = 0
        if isinstance(texts, np.ndarray):
            self.u = np.ascontiguousarray(texts)
            return
        n = self.n
        try:
            buf = "\n".join(texts).encode("ascii")
        except UnicodeEncodeError:
            self.u = np.asarray(texts, dtype=str)
            return
        # Uniform length L is proven without a per-string pass: the n - 1 separators are
        # the only newlines and all sit on the (L + 1)-grid.
        L = len(texts[0]) if n else 0
        if n and len(buf) == n * (L + 1) - 1 and buf.count(b"\n") == n - 1:
            grid = np.frombuffer(buf + b"\n", dtype=np.uint8).reshape(n, L + 1)
            if bool((grid[:, L] == 10).all()):
                self.uniform = L
                self.data = grid
                return
        self.lens = np.fromiter(map(len, texts), dtype=np.int64, count=n)
        self.offsets = np.cumsum(self.lens + 1) - self.lens - 1
        # A sliding-window view gives each string's row with one row gather. Bytes past a
        # string's end are its "\n" separator and the next string: the parser never reads
        # past a row's length without seeing that separator first.
        self.width = int(min(self.lens.max(initial=0), 64))
        padded = np.frombuffer(buf + b"\n" * (self.width + 1), dtype=np.uint8)
        self.data = np.lib.stride_tricks.sliding_window_view(padded, max(self.width, 1))

    def text(self, i: int) -> str:
        return str(self.texts[i])

    def block(self, lo: int, hi: int) -> tuple[np.ndarray, np.ndarray]:
        if self.u is not None:
            part = self.u[lo:hi]
            w = part.dtype.itemsize // 4
            return part.view(np.uint32).reshape(hi - lo, w), np.char.str_len(part)
        data = self.data
        if data is None:  # pragma: no cover - set in __init__
            raise RuntimeError("no data")
        if self.uniform >= 0:
            L = self.uniform
            return data[lo:hi, :L], np.full(hi - lo, L, dtype=np.int64)
        lens = self.lens[lo:hi]
        # strings longer than the window are left to the scalar parser (length -1)
        return data[self.offsets[lo:hi]], np.where(lens > self.width, -1, lens)


def _batch_strings(
    texts: Sequence[str] | np.ndarray | _CodeSource, tzi: tzinfo, dayfirst: bool | None,
    anchor: str, strict: bool, index: np.ndarray | None = None,
) -> np.ndarray:
    """Epoch seconds for strings: the vectorised ISO path, then the scalar parser for the rest."""
    src = texts if isinstance(texts, _CodeSource) else _CodeSource(texts)
    n = src.n
    start = np.empty(n, dtype=np.int64)
    end = np.empty(n, dtype=np.int64)
    ok = np.empty(n, dtype=bool)
    naive = np.empty(n, dtype=bool)
    for lo in range(0, n, _CHUNK):
        hi = min(n, lo + _CHUNK)
        codes, length = src.block(lo, hi)
        start[lo:hi], end[lo:hi], ok[lo:hi], naive[lo:hi] = _iso_fast(codes, length)
    if tzi is not _UTC:
        loc = ok & naive
        if loc.any():
            ws, we = start[loc], end[loc]
            s_utc, s_ok = _localize_us_vec(ws, tzi)
            spans = we != ws
            e_utc, e_ok = _localize_us_vec(we, tzi)
            start[loc] = s_utc
            end[loc] = np.where(spans & e_ok, e_utc, np.where(spans, s_utc + (we - ws), s_utc))
            ok[np.flatnonzero(loc)[~s_ok]] = False
    ok &= (start >= _MIN_US) & (start < _MAX_US)
    out = _anchor_values(start / _US, end / _US, anchor)
    if not ok.all():
        out[~ok] = np.nan
        for i in np.flatnonzero(~ok).tolist():
            text = src.text(i)
            span = _span_str(text, tzi, dayfirst)
            if span is None:
                if strict and text.rstrip("\x00").strip():
                    j = i if index is None else int(index[i])
                    raise _unparseable(text, f" values[{j}]")
            else:
                out[i] = span.at(anchor)
    return out


def _batch_numbers(x: np.ndarray) -> np.ndarray:
    x = x.astype(np.float64, copy=False)
    a = np.abs(x)
    div = np.select([a < 1e11, a < 1e14, a < 1e17, a < 1e20], [1.0, 1e3, 1e6, 1e9], np.nan)
    with np.errstate(invalid="ignore"):
        s = x / div
        bad = ~((s >= _MIN_TS) & (s < _MAX_TS))
    s = np.where(bad, np.nan, s)
    return s


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


def parse_times(
    values: Iterable[Any] | np.ndarray,
    *,
    tz: Any = "UTC",
    dayfirst: bool | None = None,
    anchor: str = "start",
    strict: bool = False,
) -> np.ndarray:
    """Parse many values into float64 epoch seconds (UTC), NaN for missing/unparseable.

    Accepts lists, tuples, numpy arrays (unicode, numeric, ``datetime64``, object) and pandas
    Series/Index. The result has the input's length (numpy inputs keep their shape) and
    equals ``[to_epoch(v, ...) for v in values]``, computed with numpy: ISO strings, numbers
    and ``datetime64`` never reach a per-item Python loop. With ``strict=True`` the first
    unparseable value raises InvalidInput naming it and its index.
    """
    _check_anchor(anchor)
    _check_dayfirst(dayfirst)
    tzi = resolve_tz(tz)
    if values is None or isinstance(values, (str, bytes)):
        raise InvalidInput(
            f"values must be a list or array of times, got {type(values).__name__} {values!r}; "
            "use parse_time or to_epoch for a single value"
        )
    aware = False
    if type(values).__module__.startswith("pandas"):
        arr, aware = _pandas_to_numpy(values)
    elif isinstance(values, np.ndarray):
        arr = values
    else:
        seq = values if isinstance(values, (list, tuple)) else list(values)
        if seq and tzi is _UTC:
            fast = _plain_iso_dates(seq, anchor)
            if fast is not None:
                return fast
        if seq:
            stamps = _iso_timestamps(seq, tzi)
            if stamps is not None:
                out, ok = stamps
                if not ok.all():  # the rest, row by row through the general path
                    rest = np.flatnonzero(~ok)
                    out[rest] = _batch_strings(
                        [seq[i] for i in rest.tolist()], tzi, dayfirst, anchor, strict, index=rest
                    )
                return out
        if seq:
            try:
                src = _CodeSource(seq)
            except TypeError:  # not all strings: sorted out below
                pass
            else:
                return _batch_strings(src, tzi, dayfirst, anchor, strict)
        kinds = set(map(type, seq))
        if kinds and kinds <= {int, float}:
            try:
                arr = np.asarray(seq, dtype=np.float64)
            except OverflowError:
                arr = np.empty(len(seq), dtype=object)
                arr[:] = seq
        else:
            arr = np.empty(len(seq), dtype=object)
            for i, v in enumerate(seq):
                arr[i] = v
    shape = arr.shape
    flat = arr.ravel()
    kind = flat.dtype.kind
    if kind == "U":
        out = _batch_strings(flat, tzi, dayfirst, anchor, strict)
    elif kind == "S":
        out = parse_times(flat.astype(object), tz=tzi, dayfirst=dayfirst, anchor=anchor, strict=strict)
    elif kind == "M":
        start, end, ok = _spans_datetime64(flat, tzi, aware=aware)
        out = _anchor_values(start / _US, end / _US, anchor)
        out[~ok] = np.nan
    elif kind in "iuf":
        out = _batch_numbers(flat)
        if strict:
            bad = np.isnan(out) & ~np.isnan(flat.astype(np.float64))
            if bad.any():
                i = int(np.flatnonzero(bad)[0])
                raise _unparseable(flat[i].item(), f" values[{i}]")
    elif kind == "b":
        if strict and flat.size:
            raise _unparseable(flat[0].item(), " values[0] (a bool is not a time)")
        out = np.full(flat.shape, np.nan)
    else:
        out = _batch_objects(flat, tzi, dayfirst, anchor, strict)
    return out.reshape(shape)


def _batch_objects(
    flat: np.ndarray, tzi: tzinfo, dayfirst: bool | None, anchor: str, strict: bool
) -> np.ndarray:
    n = flat.shape[0]
    out = np.full(n, np.nan)
    is_str = np.fromiter((type(v) is str for v in flat), dtype=bool, count=n)
    if is_str.any():
        idx = np.flatnonzero(is_str)
        out[idx] = _batch_strings(flat[idx].tolist(), tzi, dayfirst, anchor, strict, index=idx)
    for i in np.flatnonzero(~is_str).tolist():
        v = flat[i]
        span = _span_any(v, tzi, dayfirst)
        if span is None:
            if strict and not _is_missing(v):
                raise _unparseable(v, f" values[{i}]")
        else:
            out[i] = span.at(anchor)
    return out
