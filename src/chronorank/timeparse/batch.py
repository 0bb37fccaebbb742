"""The batch API: ``parse_times`` (a column of values -> float64 epoch seconds, NaN
missing), vectorised for ISO strings, numbers and ``datetime64``; the scalar parser only
for the rows those paths do not recognise.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import tzinfo
from typing import Any

import numpy as np

from chronorank.errors import InvalidInput
from chronorank.timeparse.civil import _MAX_TS, _MAX_US, _MIN_TS, _MIN_US, _US, _UTC
from chronorank.timeparse.grammars import _span_str
from chronorank.timeparse.interop import _pandas_to_numpy, _spans_datetime64
from chronorank.timeparse.iso import _CHUNK, _iso_fast, _iso_timestamps, _plain_iso_dates
from chronorank.timeparse.scalar import _is_missing, _span_any, _unparseable
from chronorank.timeparse.spans import _anchor_values, _check_anchor, _check_dayfirst
from chronorank.timeparse.zones import _localize_us_vec, resolve_tz


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
