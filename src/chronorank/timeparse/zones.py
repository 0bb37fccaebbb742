"""Time zones: the ``tz=`` argument (IANA name, fixed offset, ``tzinfo``) and wall-clock
microseconds localised to UTC (``fold=0`` at a DST change), one value or an array.
"""

from __future__ import annotations

import functools
import re
from datetime import timedelta, timezone, tzinfo
from typing import Any

import numpy as np

from chronorank.errors import InvalidInput
from chronorank.timeparse.civil import _EPOCH_NAIVE, _UTC


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

    # imported here: zoneinfo (and its tzpath search) is ~2 ms of every process start, and
    # most name no zone or UTC
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
