"""The string grammars: ISO 8601 (extended and basic), numeric day/month orders, written
English dates, RFC 2822, clock times and offsets, unix numbers; one string -> ``TimeSpan``.
"""

from __future__ import annotations

import math
import re
from datetime import tzinfo

from chronorank.timeparse.civil import (
    _DAY_US,
    _MAX_TS,
    _MIN_TS,
    _US,
    _days_from_civil,
    _days_in_month,
)
from chronorank.timeparse.spans import TimeSpan, _span_datetime, _span_from_utc_us, _span_from_wall

_MAX_TEXT = 200


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
    # imported here: email.utils (socket, calendar, email.charset...) is ~6 ms of every
    # process start, and most never meet an RFC 2822 date
    from email.utils import parsedate_to_datetime

    try:
        dt = parsedate_to_datetime(s)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if dt is None:
        return None
    return _span_datetime(dt, tzi)
