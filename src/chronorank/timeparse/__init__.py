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

Modules
-------
``civil`` (calendar arithmetic, shared with the intent parser), ``zones`` (``tz=``,
localisation), ``spans`` (``TimeSpan``, anchors, ``datetime``/``date`` objects),
``grammars`` (one string -> span), ``interop`` (numpy ``datetime64``, pandas),
``scalar`` (:func:`parse_span`, :func:`parse_time`, :func:`to_epoch`,
:func:`resolve_now`), ``iso`` (the vectorised ISO path) and ``batch``
(:func:`parse_times`). This package re-exports the public API.
"""

# the private names (``_MIN_TS`` ...) are re-exported for the callers of the single module
from chronorank.timeparse.batch import _batch_strings as _batch_strings
from chronorank.timeparse.batch import parse_times
from chronorank.timeparse.civil import _MAX_TS as _MAX_TS
from chronorank.timeparse.civil import _MIN_TS as _MIN_TS
from chronorank.timeparse.iso import _TS_CHUNK as _TS_CHUNK
from chronorank.timeparse.iso import _iso_timestamps as _iso_timestamps
from chronorank.timeparse.scalar import parse_span, parse_time, resolve_now, to_epoch
from chronorank.timeparse.spans import ANCHORS, TimeSpan
from chronorank.timeparse.zones import resolve_tz

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
