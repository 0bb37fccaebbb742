"""The vectorised ISO 8601 path: arrays of ``YYYY-MM-DD`` dates and
``YYYY-MM-DDTHH:MM:SS[.f][offset]`` timestamps checked and converted as byte blocks
(days-from-civil arithmetic over whole columns); rows it does not recognise go back to
the scalar grammars.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from datetime import tzinfo
from typing import Any

import numpy as np

from chronorank.timeparse.civil import (
    _DAY_US,
    _DIM_VEC,
    _MAX_US,
    _MIN_US,
    _US,
    _UTC,
    _days_from_civil_vec,
)
from chronorank.timeparse.spans import _anchor_values

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


def _plain_iso_dates(seq: Sequence[Any], anchor: str) -> np.ndarray | None:
    """The commonest column -- every value a ``YYYY-MM-DD`` str, read in UTC -- parsed from
    one joined byte buffer. None when any value is something else (the general path then
    handles the whole column, so results never depend on which path ran)."""
    n = len(seq)
    if type(seq[0]) is not str or len(seq[0]) != 10:  # not this column: skip the join
        return None
    try:
        joined = "\n".join(seq)
    except TypeError:
        return None
    # each value and its newline make an 11-byte row, the newline checked with the digits:
    # values of other lengths that add up to 10 each ("2020-01-0", "12020-01-01") do not pass
    if len(joined) != 11 * n - 1:
        return None
    try:
        raw = joined.encode("ascii") + b"\n"
    except UnicodeEncodeError:
        return None
    flat = np.frombuffer(raw, dtype=np.uint8)
    ymd = np.empty((n, 3), dtype=np.int64)
    block = _DATE_ROWS * 11
    for a in range(0, flat.shape[0], block):  # flat ops against a tiled template: fast
        chunk = flat[a : a + block]
        m = chunk.shape[0]
        # digit - '0' wraps below '0'; '-' - '-' and '\n' - '\n' are 0: every cell must be <= its limit
        d = chunk - _ISO_TEMPLATE[:m]
        if not (d <= _ISO_LIMIT[:m]).all():
            return None
        # one product gives (year * 12 + month, month, day): the month index addresses flat
        # tables. Exact (values < 2**24) in any summation order; block by block, because one
        # product over 100k rows goes multi-threaded in BLAS, 38 ms against 0.3 ms on 2 busy cores
        rows = a // 11
        ymd[rows : rows + m // 11] = d.astype(np.float32).reshape(-1, 11) @ _ISO_WEIGHTS
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
    starts, ends = nl[:-1] + 1, nl[1:]
    shaped = _iso_by_shape(buf, starts, ends, tzi)
    if shaped is None:
        out, ok = np.empty(n), np.empty(n, dtype=bool)
        rest = None
    else:
        out, ok, rest = shaped
        if rest.shape[0] == 0:
            return out, ok
        starts, ends = starts[rest], ends[rest]
    m = starts.shape[0]
    part_out, part_ok = (out, ok) if rest is None else (np.empty(m), np.empty(m, dtype=bool))
    for lo in range(0, m, _TS_CHUNK):  # blocks keep the temporaries cache-resident
        hi = min(m, lo + _TS_CHUNK)
        part_out[lo:hi], part_ok[lo:hi] = _iso_timestamp_block(buf, starts[lo:hi], ends[lo:hi], tzi)
    if rest is not None:
        out[rest], ok[rest] = part_out, part_ok
    return out, ok


def _iso_timestamp_block(
    buf: np.ndarray, starts: np.ndarray, ends: np.ndarray, tzi: tzinfo
) -> tuple[np.ndarray, np.ndarray]:
    """Rows ``buf[starts[i]:ends[i]]`` (each followed by a newline): (epoch_seconds, ok).

    Each row's first 32 bytes and last 8 bytes are gathered as single 32- and 8-byte items
    (a strided void view: one copy per row, not per byte). Where the time goes (10k mixed
    rows, 2 busy cores): these two gathers, the head's SWAR check and the offset flags are
    each tens of microseconds; every whole-row pass is counted, so the flags are combined as
    exclusive 0/1 products rather than nested ``np.where``.
    """
    n = starts.shape[0]
    tlen = ends - starts - 19  # the tail after "YYYY-MM-DDTHH:MM:SS"
    # a short row's window runs into the next value: harmless, its tlen rejects it
    win = _byte_rows(buf, 32)[starts].view(np.uint8).reshape(n, 32)
    sep = win[:, 10] | 32  # T, t and space all become 116 or 32 (and NUL 32: not a separator)
    t_ok = ((sep == 116) | (sep == 32)) & (win[:, 10] != 0)
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


def _iso_by_shape(
    buf: np.ndarray, starts: np.ndarray, ends: np.ndarray, tzi: tzinfo
) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """Rows grouped by shape -- length and whether the last byte is a letter -- each group
    checked against the template of its first row in two whole-block comparisons, its fields
    read in one float32 product: ``(epoch_seconds, ok, rest)``, ``rest`` the rows left to
    ``_iso_timestamp_block`` (a group whose rows do not all fit their template, or of an
    unknown shape). None for columns of more than ``_MAX_SHAPES`` shapes.

    Timing on 2 busy cores (``benchmarks/rerank_speed.py`` iso-timestamp rows, 10k rows of
    four shapes, best of many): ~0.42 ms against ~0.59 ms for ``_iso_timestamp_block`` on the
    same rows; the products take about a third of it. Values are the same integer
    microseconds, so both agree to the bit.
    """
    n = starts.shape[0]
    length = ends - starts
    key = (np.minimum(length, 63) + (buf[ends - 1] > 57) * 64).astype(np.uint8)
    counts = np.bincount(key, minlength=128)
    keys = np.flatnonzero(counts)
    if keys.shape[0] > _MAX_SHAPES:
        return None
    # rows sorted by shape (a radix sort of bytes): each group is one slice
    order = np.argsort(key, kind="stable") if keys.shape[0] > 1 else None
    heads = starts if order is None else starts[order]
    bounds = np.cumsum(counts[keys]).tolist()
    fields = np.empty((n, _NF), dtype=np.float32)
    left = []
    lo = 0
    for k, hi in zip(keys.tolist(), bounds):
        width = k & 63
        first = buf[heads[lo] : heads[lo] + width].tobytes().translate(_DIGITS_TO_ZERO)  # the cache key
        shape = _shape(first) if 19 <= width <= 35 else None
        if shape is None or (shape[3] and tzi is not _UTC):  # naive rows: the block path localises
            left.append((lo, hi))
            lo = hi
            continue
        template, limit, weights = shape[:3]
        windows = _byte_rows(buf, width)
        step = _BLAS_ONE_THREAD // (width * _NF)
        for a in range(lo, hi, step):
            b = min(hi, a + step)
            flat = windows[heads[a:b]].view(np.uint8)  # a fresh copy: changed in place
            m = flat.shape[0]
            flat -= template[:m]  # digits become 0-9 (others wrap above), fixed bytes 0, a sign 0 or 2
            d = flat.reshape(-1, width)
            if not (flat <= limit[:m]).all():
                left.append((a, b))
                continue
            np.matmul(d.astype(np.float32), weights, out=fields[a:b])
        lo = hi
    for a, b in left:
        fields[a:b] = _DUMMY_FIELDS
    idx = fields[:, 0].astype(np.int64)  # year * 20 + month: months 0-19 (their tens digit <= 1)
    day0, neg, tod, off, frac = (fields[:, k] for k in range(1, _NF))
    day0 -= 1
    ok = (day0 < _MONTH20_LEN.take(idx)) & (day0 >= 0)  # months 0, 13-19 and year 0 have no days
    ok &= neg != 1  # ',' at the sign's place (',' - '+')
    ok &= np.maximum(tod, off) < 86400  # hours <= 23 (minutes' and seconds' tens are <= 5)
    # seconds past the month's start (exact in float32: below 2**24), then microseconds
    # (exact in float64: below 2**53)
    np.subtract(1, neg, out=neg)  # the sign: 1 or -1
    off *= neg
    tod -= off
    day0 *= 86400
    tod += day0
    start_us = _MONTH20_START_US.take(idx) + (tod.astype(np.float64) * 1e6 + frac).astype(np.int64)
    ok &= (start_us - _MIN_US).view(np.uint64) < np.uint64(_MAX_US - _MIN_US)
    out = start_us / _US
    if left:
        rest = np.concatenate([np.arange(a, b) for a, b in left])
        ok[rest] = False
    if order is None:
        return out, ok, rest if left else np.zeros(0, dtype=np.int64)
    out[order], ok[order] = out.copy(), ok.copy()
    return out, ok, order[rest] if left else np.zeros(0, dtype=np.int64)


_MAX_SHAPES = 8
# OpenBLAS runs a product of m * n * k <= 65536 * 4 multiply-adds on one thread; a bigger one
# goes multi-threaded, and on a busy machine waits for its second thread (tens of ms, not us)
_BLAS_ONE_THREAD = 65536 * 4
# the fields one product reads: year * 20 + month, day, the offset's sign byte less '+' (0 or
# 2), seconds of the day, offset seconds, microseconds
_NF = 6
_DUMMY_FIELDS = np.array([1970 * 20 + 1, 1, 0, 0, 0, 0], dtype=np.float32)
_SHAPE = re.compile(
    rb"[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt ][0-9]{2}:[0-9]{2}:[0-9]{2}"
    rb"(?:[.,]([0-9]{1,9}))?(?:([Zz])|([+-])[0-9]{2}(?:(:?)[0-9]{2})?)?"
)


_DIGITS_TO_ZERO = bytes(48 if 48 <= b <= 57 else b for b in range(256))


@functools.lru_cache(maxsize=32)
def _shape(text: bytes) -> tuple[np.ndarray, np.ndarray, np.ndarray, bool] | None:
    """The template of a timestamp whose digits are all '0' (one per shape, however many
    columns pass): (bytes to subtract, the largest value each may leave -- both tiled for
    one product's rows -- the product's weights, naive). Month tens are limited to 1,
    minutes' and seconds' tens to 5, so the product needs no month, hour, minute or second
    columns: days and hours are checked after it, against month tables and 86400 seconds."""
    m = _SHAPE.fullmatch(text)
    if m is None:
        return None
    width = len(text)
    template = np.frombuffer(text, dtype=np.uint8).copy()
    limit = np.where(template == 48, 9, 0).astype(np.uint8)
    w = np.zeros((width, _NF), dtype=np.float32)
    w[[0, 1, 2, 3, 5, 6], 0] = (20000, 2000, 200, 20, 10, 1)
    w[[8, 9], 1] = (10, 1)
    w[[11, 12, 14, 15, 17, 18], 3] = (36000, 3600, 600, 60, 10, 1)
    limit[[5, 14, 17]] = (1, 5, 5)
    if m.group(1) is not None:
        for j in range(min(6, len(m.group(1)))):
            w[20 + j, 5] = 10 ** (5 - j)
    if m.group(3) is not None:
        sign = m.start(3)
        template[sign] = 43  # '+' leaves 0, '-' 2, ',' 1 (rejected after the product)
        limit[sign] = 2
        w[sign, 2] = 1  # 0 for '+', 2 for '-'
        w[[sign + 1, sign + 2], 4] = (36000, 3600)
        if width > sign + 3:
            mins = sign + 3 + len(m.group(4))
            w[[mins, mins + 1], 4] += (600, 60)
            limit[mins] = 5
    naive = m.group(2) is None and m.group(3) is None
    rows = _BLAS_ONE_THREAD // (width * _NF)
    return np.tile(template, rows), np.tile(limit, rows), w, naive


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

_DATE_ROWS = _BLAS_ONE_THREAD // (11 * 3)  # plain-date rows per product (one BLAS thread)
_ISO_TEMPLATE = np.tile(np.frombuffer(b"0000-00-00\n", dtype=np.uint8), _DATE_ROWS)
_ISO_LIMIT = np.tile(np.array([9, 9, 9, 9, 0, 9, 9, 0, 9, 9, 0], dtype=np.uint8), _DATE_ROWS)
_ISO_WEIGHTS = np.zeros((11, 3), dtype=np.float32)
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
# the same per year * 20 + month, months 0 and 13-19 of no days (the shaped reader's index)
_MONTH20_LEN = np.zeros(200000, dtype=np.float32)
_MONTH20_LEN.reshape(10000, 20)[:, 1:13] = _MONTH_LEN.reshape(10000, 12)
_MONTH20_START_US = np.zeros(200000, dtype=np.int64)
_MONTH20_START_US.reshape(10000, 20)[:, 1:13] = (_MONTH_START_S * _US).reshape(10000, 12)
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
