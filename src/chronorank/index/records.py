"""The index's stored documents as columns, read back as record dicts on demand.

A Python dict per document (id, text, four raw time fields, metadata) cost about 450 bytes
of overhead each; here each field is one list over all documents (an empty metadata dict is
stored as None), and a record dict is built only for the documents asked for: ``get``, the
payloads of a result's top k, ``save``. Iterating or indexing gives the same dicts, in the
same key order, as the records used to be (so ``docs.jsonl`` is written unchanged).
"""

from __future__ import annotations

import itertools
import json
import math
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, overload

import numpy as np

from chronorank.errors import InvalidInput

__all__ = ["Records", "RecordsView", "LazyRecords", "DocLines", "TIME_COLUMNS", "check_storable", "surrogate_at"]

TIME_COLUMNS = ("date", "updated", "valid_from", "valid_to")


class Grown(Sequence[Any]):
    """A column after appends: a base list shared with older snapshots (never changed) and
    the values appended since (copied at each append), so that adding one document to a
    large index copies the recent values, not all of them (six 100k-entry list copies were
    ~2 ms of each one-document ``add``). Past ``FOLD`` appended values, one copy folds them
    into a plain list again."""

    __slots__ = ("base", "tail")
    FOLD = 4096

    def __init__(self, base: Sequence[Any], tail: list[Any]) -> None:
        self.base = base
        self.tail = tail

    def __len__(self) -> int:
        return len(self.base) + len(self.tail)

    @overload
    def __getitem__(self, i: int) -> Any: ...

    @overload
    def __getitem__(self, i: slice) -> list[Any]: ...

    def __getitem__(self, i: int | slice) -> Any:
        nb = len(self.base)
        if isinstance(i, slice):  # the slice's own values only (the analyzer reads in batches)
            start, stop, step = i.indices(nb + len(self.tail))
            if step != 1:
                return list(self)[i]
            if stop <= nb:
                return list(self.base[start:stop])
            if start >= nb:
                return self.tail[start - nb:stop - nb]
            return [*self.base[start:nb], *self.tail[: stop - nb]]
        if i < 0:
            i += nb + len(self.tail)
            if i < 0:
                raise IndexError("column index out of range")
        return self.base[i] if i < nb else self.tail[i - nb]

    def __iter__(self) -> Iterator[Any]:
        return itertools.chain(self.base, self.tail)

    def __eq__(self, other: object) -> bool:  # equal to a list holding the same values
        if isinstance(other, (list, tuple, Grown)):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]


def grown(col: Sequence[Any], more: list[Any]) -> Sequence[Any]:
    """``col`` with ``more`` appended, ``col`` unchanged (see :class:`Grown`)."""
    base, tail = (col.base, col.tail) if isinstance(col, Grown) else (col, [])
    if len(tail) + len(more) > Grown.FOLD:
        return [*base, *tail, *more]
    return Grown(base, tail + more)


class Records(Sequence[dict[str, Any]]):
    """Columns ``ids``, ``texts``, ``raw_times`` (one list per field of ``TIME_COLUMNS``, as
    given) and ``metadata`` (a dict, or None for none). Treat as immutable."""

    __slots__ = ("ids", "texts", "raw_times", "metadata")

    def __init__(
        self, ids: list[str], texts: list[str], raw_times: tuple[list[Any], ...], metadata: list[dict[str, Any] | None]
    ) -> None:
        self.ids = ids
        self.texts = texts
        self.raw_times = raw_times
        self.metadata = metadata

    @classmethod
    def from_dicts(cls, records: Iterable[Mapping[str, Any]]) -> Records:
        """Columns from records shaped as ``TemporalIndex`` normalises them."""
        if isinstance(records, Records):
            return records
        recs = records if isinstance(records, list) else list(records)
        return cls(
            [r["id"] for r in recs],
            [r["text"] for r in recs],
            tuple([r.get(name) for r in recs] for name in TIME_COLUMNS),
            [r.get("metadata") or None for r in recs],
        )

    def __len__(self) -> int:
        return len(self.ids)

    def record(self, i: int) -> dict[str, Any]:
        """Document ``i`` as a new dict (its metadata dict is the stored one)."""
        d, u, vf, vt = (col[i] for col in self.raw_times)
        meta = self.metadata[i]
        return {
            "id": self.ids[i], "text": self.texts[i], "date": d, "updated": u, "valid_from": vf, "valid_to": vt,
            "metadata": {} if meta is None else meta,
        }

    @overload
    def __getitem__(self, i: int) -> dict[str, Any]: ...

    @overload
    def __getitem__(self, i: slice) -> Records: ...

    def __getitem__(self, i: int | slice) -> dict[str, Any] | Records:
        if isinstance(i, slice):
            return Records(self.ids[i], self.texts[i], tuple(c[i] for c in self.raw_times), self.metadata[i])
        return self.record(i)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return (self.record(i) for i in range(len(self.ids)))

    def __add__(self, other: Sequence[Mapping[str, Any]]) -> Records:
        o = Records.from_dicts(other)
        return Records(
            grown(self.ids, o.ids), grown(self.texts, o.texts),  # type: ignore[arg-type]
            tuple(grown(a, b) for a, b in zip(self.raw_times, o.raw_times)),  # type: ignore[misc]
            grown(self.metadata, o.metadata),  # type: ignore[arg-type]
        )

    def take(self, rows: np.ndarray | Sequence[int]) -> Records:
        """The documents at ``rows``, in that order."""
        r = np.asarray(rows, dtype=np.int64).tolist()
        return Records(
            [self.ids[i] for i in r], [self.texts[i] for i in r],
            tuple([c[i] for i in r] for c in self.raw_times), [self.metadata[i] for i in r],
        )

    def view(self, rows: np.ndarray | Sequence[int]) -> RecordsView:
        """The documents at ``rows`` as a sequence whose record dicts are built when read."""
        return RecordsView(self, np.asarray(rows, dtype=np.int64).tolist())

    def __repr__(self) -> str:
        return f"Records(n={len(self)})"


class DocLines:
    """A saved index's ``docs.jsonl`` (bytes or a memory map) and where each line starts: a
    record is parsed when it is read, and every record at most once more when a whole
    column is needed (:meth:`columns`). ``corrupt(what)`` makes the error a damaged line
    raises (storage's ``CorruptIndex`` naming the file)."""

    __slots__ = ("buf", "starts", "corrupt", "_cols", "_row_of", "_ids", "_lock", "_last")

    def __init__(self, buf: Any, starts: np.ndarray, corrupt: Callable[[str], Exception]) -> None:
        self.buf = buf
        self.starts = starts  # int64 (n + 1,): line i is buf[starts[i]:starts[i + 1] - 1]
        self.corrupt = corrupt
        self._cols: Records | None = None
        self._row_of: dict[str, int] | None = None
        self._ids: list[str] | None = None
        self._lock = threading.Lock()
        # the last line read as columns (:meth:`one`): a record's seven fields, one parse
        self._last: tuple[int, Records] | None = None

    def __len__(self) -> int:
        return int(self.starts.shape[0]) - 1

    def parse(self, i: int) -> dict[str, Any]:
        """Line ``i`` as a checked record dict (as ``docs.jsonl`` holds it)."""
        n = len(self)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError("document row out of range")
        raw = self.buf[int(self.starts[i]):int(self.starts[i + 1]) - 1]
        try:
            rec = json.loads(raw.decode("utf-8"))
        except UnicodeDecodeError:
            raise self.corrupt(f"docs.jsonl line {i + 1} is not UTF-8") from None
        except (ValueError, RecursionError):
            raise self.corrupt(f"docs.jsonl line {i + 1} is not valid JSON") from None
        if not (type(rec) is dict and type(rec.get("id")) is str and type(rec.get("text")) is str
                and type(rec.get("metadata")) is dict):
            raise self.corrupt(f"docs.jsonl line {i + 1} is not a document record")
        ids = self._ids
        if ids is not None and ids[i] != rec["id"]:  # e.g. a crafted line naming "id" twice
            raise self.corrupt(f"docs.jsonl line {i + 1} gives two ids")
        return rec

    def one(self, i: int) -> Records:
        """Line ``i`` as one-row columns (the last one asked for is kept)."""
        last = self._last
        if last is not None and last[0] == i:
            return last[1]
        got = _one(self.parse(i))
        self._last = (i, got)
        return got

    def ids(self) -> list[str]:
        """Every record's id (distinct, else CorruptIndex), read from the start of its line without parsing the rest
        (``save`` writes the id first: ``{"id": "..."``); a line that starts otherwise, or
        whose id holds an escape, is parsed whole. :meth:`parse` checks a record it reads
        against these ids, so a line whose JSON says otherwise is refused, not believed."""
        got = self._ids
        if got is None:
            with self._lock:
                got = self._ids
                if got is None:
                    got = self._scan_ids()
                    self._make_row_of(got)  # refuses a file that repeats an id
                    self._ids = got
        return got

    def _scan_ids(self) -> list[str]:
        if self._cols is not None:
            return list(self._cols.ids)
        n = len(self)
        out: list[str] = []
        for a in range(0, n, _ID_BATCH):
            out.extend(self._scan_id_batch(a, min(n, a + _ID_BATCH)))
        return out

    def _scan_id_batch(self, lo: int, hi: int) -> list[str]:
        """The ids of lines ``lo .. hi``: in numpy, each line's first ``_ID_WINDOW`` bytes
        after ``{"id": "`` up to the closing quote, joined by newlines (raw JSON holds none)
        and decoded at once; a line whose id holds an escape, runs past the window or does
        not start so is parsed whole."""
        buf, width = self.buf, len(_ID_HEAD)
        raw = np.frombuffer(buf, dtype=np.uint8) if len(buf) else np.zeros(1, dtype=np.uint8)
        size = raw.shape[0]
        a = self.starts[lo:hi]
        end = self.starts[lo + 1 : hi + 1] - 1  # each line's newline
        pos = np.minimum(a[:, None] + np.arange(width + _ID_WINDOW), size - 1)
        win = raw[pos]
        ok = (win[:, :width] == _ID_HEAD_ARR).all(axis=1)
        body = win[:, width:]
        quote = body == 34
        length = quote.argmax(axis=1)
        ok &= quote.any(axis=1) & (a + width + length < end)
        cols = np.arange(_ID_WINDOW)
        ok &= ~((body == 92) & (cols < length[:, None])).any(axis=1)  # no backslash in the id
        body = body.copy()
        body[np.arange(body.shape[0]), length] = 10
        keep = (cols <= length[:, None]) & ok[:, None]
        try:
            got = body[keep].tobytes().decode("utf-8").split("\n")
        except UnicodeDecodeError:
            got = None
        if got is None or not ok.all():
            good = iter(got) if got is not None else None
            ids: list[str] = []
            for i, fine in enumerate(ok.tolist()):
                if fine and good is not None:
                    ids.append(next(good))
                else:
                    ids.append(str(self.parse(lo + i)["id"]))
            return ids
        got.pop()  # after the last newline
        return got

    def columns(self) -> Records:
        """Every record as columns (parsed once, on the first need of a whole column)."""
        cols = self._cols
        if cols is None:
            with self._lock:
                cols = self._cols
                if cols is None:
                    cols = Records.from_dicts([self.parse(i) for i in range(len(self))])
                    if self._ids is None:
                        self._ids = list(cols.ids)
                    self._make_row_of(self._ids)  # refuses a file that repeats an id
                    self._cols = cols
        return cols

    def row_of(self) -> dict[str, int]:
        """id -> row, from :meth:`ids` (a file that repeats an id is refused)."""
        got = self._row_of
        return got if got is not None else self._make_row_of(self.ids())

    def _make_row_of(self, ids: list[str]) -> dict[str, int]:
        got = self._row_of
        if got is None:
            got = dict(zip(ids, range(len(ids))))
            if len(got) != len(ids):
                raise self.corrupt("docs.jsonl repeats a document id")
            self._row_of = got
        return got


def _one(rec: dict[str, Any]) -> Records:
    """One parsed line as columns (what :meth:`Records.from_dicts` stores for it)."""
    return Records([rec["id"]], [rec["text"]], tuple([rec.get(name)] for name in TIME_COLUMNS),
                   [rec.get("metadata") or None])


#: how ``save`` begins every line of docs.jsonl (``json.dumps`` of a record, id first)
_ID_HEAD = b'{"id": "'
_ID_HEAD_ARR = np.frombuffer(_ID_HEAD, dtype=np.uint8)
#: id bytes read per line by the vectorised scan (a longer id: its line is parsed whole)
_ID_WINDOW = 96
#: lines per batch of that scan (a batch's window array: _ID_BATCH * (8 + _ID_WINDOW) bytes)
_ID_BATCH = 1 << 15


class _LazyColumn(Sequence[Any]):
    """One field of :class:`DocLines`: a row read parses its line, a whole-column read parses
    every line once."""

    __slots__ = ("lines", "pick")

    def __init__(self, lines: DocLines, pick: Callable[[Records], Sequence[Any]], ) -> None:
        self.lines = lines
        self.pick = pick

    def __len__(self) -> int:
        return len(self.lines)

    @overload
    def __getitem__(self, i: int) -> Any: ...

    @overload
    def __getitem__(self, i: slice) -> list[Any]: ...

    def __getitem__(self, i: int | slice) -> Any:
        cols = self.lines._cols
        if cols is None and not isinstance(i, slice):
            return self.pick(self.lines.one(i))[0]
        return self.pick(self.lines.columns())[i]

    def __iter__(self) -> Iterator[Any]:
        return iter(self.pick(self.lines.columns()))


class _IdColumn(Sequence[str]):
    """The ids of :class:`DocLines`: one row read parses its line (a search's hits), a whole
    column read scans the ids alone (:meth:`DocLines.ids`), not every record."""

    __slots__ = ("lines",)

    def __init__(self, lines: DocLines) -> None:
        self.lines = lines

    def __len__(self) -> int:
        return len(self.lines)

    @overload
    def __getitem__(self, i: int) -> str: ...

    @overload
    def __getitem__(self, i: slice) -> list[str]: ...

    def __getitem__(self, i: int | slice) -> str | list[str]:
        ids = self.lines._ids
        if ids is None and not isinstance(i, slice):
            return str(self.lines.one(i).ids[0])
        return self.lines.ids()[i]

    def __iter__(self) -> Iterator[str]:
        return iter(self.lines.ids())


class _LazyRowOf(Mapping[str, int]):
    """id -> row of :class:`DocLines`, built at its first use (``get``, ``add``, ``delete``)."""

    __slots__ = ("lines",)

    def __init__(self, lines: DocLines) -> None:
        self.lines = lines

    def __getitem__(self, key: str) -> int:
        return self.lines.row_of()[key]

    def get(self, key: str, default: Any = None) -> Any:
        return self.lines.row_of().get(key, default)

    def __contains__(self, key: object) -> bool:
        return key in self.lines.row_of()

    def __len__(self) -> int:
        return len(self.lines)

    def __iter__(self) -> Iterator[str]:
        return iter(self.lines.row_of())


class LazyRecords(Records):
    """The records of a loaded index, read from its ``docs.jsonl`` when asked for: the rows of
    a search's hits each parse one line; the ids (``get``, ``ids``) are read alone
    (:meth:`DocLines.ids`); another whole column (a metadata filter's first field, ``add``)
    parses every line once, as a load used to."""

    __slots__ = ("lines",)

    def __init__(self, lines: DocLines) -> None:
        super().__init__(
            _IdColumn(lines), _LazyColumn(lines, lambda r: r.texts),  # type: ignore[arg-type]
            tuple(_LazyColumn(lines, lambda r, c=c: r.raw_times[c]) for c in range(len(TIME_COLUMNS))),  # type: ignore[misc]
            _LazyColumn(lines, lambda r: r.metadata),  # type: ignore[arg-type]
        )
        self.lines = lines

    def row_of(self) -> Mapping[str, int]:
        return _LazyRowOf(self.lines)

    def record(self, i: int) -> dict[str, Any]:
        cols = self.lines._cols
        if cols is not None:
            return cols.record(i)
        return self.lines.one(i).record(0)

    def __getitem__(self, i: int | slice) -> Any:
        if isinstance(i, slice):
            return self.lines.columns()[i]
        return self.record(i)

    def __add__(self, other: Sequence[Mapping[str, Any]]) -> Records:
        """This file's columns, still lazy, with ``other`` appended (an ``add`` after a load
        parses no stored record; a row of the result reads its line when asked for)."""
        cols = self.lines._cols
        return cols + other if cols is not None else Records.__add__(self, other)

    def take(self, rows: np.ndarray | Sequence[int]) -> Records:
        return Records.from_dicts([self.record(i) for i in np.asarray(rows, dtype=np.int64).tolist()])

    def __repr__(self) -> str:
        return f"LazyRecords(n={len(self)})"


class RecordsView(Sequence[dict[str, Any]]):
    """Some rows of a :class:`Records`, in order (a search's top k): ``view[i]`` is
    ``records[rows[i]]``, a new dict each time, built only for the hits that are read."""

    __slots__ = ("records", "rows")

    def __init__(self, records: Records, rows: list[int]) -> None:
        self.records = records
        self.rows = rows

    def __len__(self) -> int:
        return len(self.rows)

    @overload
    def __getitem__(self, i: int) -> dict[str, Any]: ...

    @overload
    def __getitem__(self, i: slice) -> list[dict[str, Any]]: ...

    def __getitem__(self, i: int | slice) -> dict[str, Any] | list[dict[str, Any]]:
        if isinstance(i, slice):
            return [self.records.record(r) for r in self.rows[i]]
        return self.records.record(self.rows[i])

    def __repr__(self) -> str:
        return f"RecordsView(n={len(self)})"


MAX_META_DEPTH = 32
_UTF8_STEP = 1 << 20


def surrogate_at(s: str) -> int | None:
    """Where ``s`` holds its first character UTF-8 cannot encode (an unpaired surrogate),
    or None; encoded a megabyte at a time, so a huge text is never copied whole."""
    if s.isascii():
        return None
    for a in range(0, len(s), _UTF8_STEP):
        try:
            s[a : a + _UTF8_STEP].encode("utf-8")
        except UnicodeEncodeError as exc:
            return a + exc.start
    return None
#: metadata integers every engine stores and compares as they are: Qdrant keeps int64, and
#: PostgreSQL's range filters read a jsonb number as float8 (an integer beyond it, 10**400,
#: made every $gt/$lt on its key fail); the index filters alike
META_INT_MIN, META_INT_MAX = -(1 << 63), (1 << 63) - 1


def check_storable(v: Any, where: str, depth: int, path: set[int] | None = None, *, numbers: bool = False) -> None:
    """Raise InvalidInput unless ``v`` can be written to docs.jsonl and read back (the
    index and every store check a document's fields with it before accepting it).

    ``numbers=True`` (metadata) also holds numbers, nested ones included, to what every
    engine represents: integers within signed 64 bits, finite floats (PostgreSQL's jsonb
    has no NaN or infinity; a missing value is left out or None)."""
    if numbers and isinstance(v, (int, float)) and not isinstance(v, bool):
        if isinstance(v, int) and not META_INT_MIN <= v <= META_INT_MAX:
            shown = repr(v) if v.bit_length() < 200 else f"an integer of {v.bit_length()} bits"
            raise InvalidInput(
                f"{where} is {shown}, beyond the 64-bit integer range every engine stores "
                f"({META_INT_MIN} .. {META_INT_MAX}); store it as a string, or as a float if "
                "approximate is fine."
            )
        if isinstance(v, float) and not math.isfinite(v):
            raise InvalidInput(
                f"{where} is {v!r}; metadata numbers must be finite (PostgreSQL's JSON has no NaN or "
                "infinity). Leave the field out, or set it to None, for a missing value."
            )
        return
    if isinstance(v, str):
        at = surrogate_at(v)
        if at is not None:
            raise InvalidInput(
                f"{where} holds an unpaired surrogate {v[at]!r} at position {at}; it cannot "
                "be stored as UTF-8. Decode the source with errors='replace' first."
            )
        return
    if v is None or isinstance(v, (bool, int, float)):
        return
    if isinstance(v, (Mapping, list, tuple)):
        if depth >= MAX_META_DEPTH:
            raise InvalidInput(
                f"{where} nests deeper than {MAX_META_DEPTH} levels; flatten it (e.g. store the deep part "
                "as a JSON string)."
            )
        path = set() if path is None else path
        if id(v) in path:
            raise InvalidInput(f"{where} contains itself (a circular reference); pass a copy without the cycle.")
        path.add(id(v))
        if isinstance(v, Mapping):
            for k, x in v.items():
                if not isinstance(k, str):
                    raise InvalidInput(
                        f"{where} has the key {k!r} ({type(k).__name__}); metadata keys must be strings "
                        f"-- use str(key)."
                    )
                check_storable(k, f"{where} key {k!r}", depth + 1, path)
                check_storable(x, f"{where}[{k!r}]", depth + 1, path, numbers=numbers)
        else:
            for j, x in enumerate(v):
                check_storable(x, f"{where}[{j}]", depth + 1, path, numbers=numbers)
        path.discard(id(v))
        return
    check_storable(str(v), f"{where} (written as str())", depth, path)
