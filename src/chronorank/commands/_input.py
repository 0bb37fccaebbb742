"""Input checks shared by the commands that read corpora and candidates (docs/format.md).

Every problem becomes one :class:`~chronorank.errors.InvalidInput` line naming the file, the
line, the field, the value and a fix in the command line's own words (``--bad-dates missing``,
never a Python keyword). Lenient policies report how many records they touched.
"""

from __future__ import annotations

import json
import math
import re
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from chronorank.errors import InvalidInput
from chronorank.eval.datasets import decode_text as decode
from chronorank.eval.datasets import parse_jsonl

FORMAT_DOC = "docs/format.md"
TEXT_LIMIT = 8 * 1024 * 1024  # characters; a longer text is refused (split the document)
TEXT_WARN = 1024 * 1024  # characters; a longer text is indexed with a warning (only its start is embedded)
_TIME_FIELDS = ("date", "updated", "valid_from", "valid_to")


class NothingToDo(InvalidInput):
    """The input holds no records: the command stops with exit code 3 (docs/format.md)."""

    exit_code = 3


def add_date_options(p: Any, undated: str) -> None:
    """``--bad-dates`` and ``--dayfirst``, the same for every command that reads dates."""
    p.add_argument("--bad-dates", default="raise", choices=("raise", "missing"),
                   help=f"unreadable dates: raise (default) stops with the line, or missing {undated} "
                        "and prints how many")
    p.add_argument("--dayfirst", action="store_true",
                   help="read slash dates day-first: 03/04/2022 is 3 April (default: month-first, 4 March, "
                        "unless a date such as 31/12/2022 can only be day-first; one order for the whole file)")
    p.add_argument("--date-unit", default="auto", choices=("auto", "s", "ms", "us", "ns", "year", "yyyymmdd"),
                   help="how to read a bare number as a date: auto (default) reads 1000-9999 as a year, 8 digits "
                        "as YYYYMMDD and 1e8 and more as epoch time by magnitude, and refuses the rest; s, ms, us, "
                        "ns: epoch time in that unit; year; yyyymmdd")


def warn(command: str, message: str) -> None:
    print(f"chronorank {command}: warning: {message}", file=sys.stderr)


def read_text(path: str | Path, flag: str) -> str:
    """The whole file as text: UTF-8 with or without a byte-order mark, never a binary file."""
    return decode(read_bytes(path, flag), f"{flag} {str(Path(path))!r}")


def read_bytes(path: str | Path, flag: str) -> bytes:
    """The whole file's bytes; a directory, a missing or an unreadable file is an error naming ``flag``."""
    p = Path(path)
    if p.is_dir():
        raise InvalidInput(
            f"{flag} {str(p)!r} is a directory; give a JSON Lines file inside it (e.g. {str(p / 'corpus.jsonl')!r})"
        )
    if not p.exists():
        raise InvalidInput(f"{flag} {str(p)!r} does not exist; give a JSON Lines file ({FORMAT_DOC})")
    try:
        return p.read_bytes()
    except OSError as exc:
        raise InvalidInput(f"{flag} {str(p)!r} cannot be read ({exc.strerror}); check the path and its permissions") from None


def check_dates(
    rows: Sequence[tuple[int, dict[str, Any]]],
    where: str,
    *,
    fields: Iterable[str] = _TIME_FIELDS,
    bad_dates: str = "raise",
    dayfirst: bool = False,
    id_field: str = "id",
    date_unit: str = "auto",
    command: str | None = None,
) -> int:
    """Check the time fields of every row in place; returns how many values became undated.

    One rule for every command: a value that does not parse is an error naming the line, the
    field and the value, unless ``--bad-dates missing``, which sets it to null. With
    ``dayfirst``, slash dates are read day-first and rewritten as ISO dates, so the library
    downstream reads them the same way; without it one order holds for the whole file
    (:func:`_slash_order`, which says on standard error which one it chose when it matters).
    Bare numbers follow ``date_unit`` (:mod:`chronorank.timeparse.numbers`) and are rewritten
    as ISO times. ``valid_to`` before ``date``/``valid_from`` is an error.
    """
    from chronorank.timeparse import parse_times
    from chronorank.timeparse.numbers import read_numbers

    fields = tuple(fields)
    if not dayfirst:
        dayfirst = _slash_order(rows, fields, where, command)
    cleared = 0
    parsed: dict[str, np.ndarray] = {}
    for name in fields:
        values = [r.get(name) for _, r in rows]
        present = np.array([not _blank(v) for v in values], dtype=bool)
        if not present.any():
            continue
        is_num, num, refused = read_numbers(values, date_unit)
        for i in np.flatnonzero(is_num & ~refused).tolist():
            rows[i][1][name] = _iso(float(num[i]))
        clean = [v if ok and not b else None for v, ok, b in zip(values, present, is_num)]
        epochs = np.where(is_num, num, _parse(parse_times, clean))
        if dayfirst:
            first = _parse(parse_times, clean, dayfirst=True)
            changed = np.flatnonzero(present & ~np.isnan(first) & ~(first == epochs))
            for i in changed.tolist():
                rows[i][1][name] = _iso(float(first[i]))
            epochs = np.where(present & ~np.isnan(first), first, epochs)
        bad = np.flatnonzero(present & np.isnan(epochs))
        if bad.size and bad_dates != "missing":
            lineno, row = rows[int(bad[0])]
            more = f" (and {bad.size - 1} more)" if bad.size > 1 else ""
            if refused[int(bad[0])]:
                raise InvalidInput(
                    f"{where} line {lineno} ({id_field} {row.get(id_field)!r}): {name} {_short(row.get(name))} is a "
                    f"bare number whose unit is not clear{more} (a year is 1000-9999, a date YYYYMMDD, epoch "
                    "seconds 100000000 or more); pass --date-unit s (or ms, us, ns, year, yyyymmdd), write it "
                    "like 2024-09-02, or pass --bad-dates missing to treat it as undated"
                )
            raise InvalidInput(
                f"{where} line {lineno} ({id_field} {row.get(id_field)!r}): {name} {_short(row.get(name))} is not a "
                f"date{more}; write it like 2024-09-02 ({FORMAT_DOC}), remove it, or pass --bad-dates missing "
                f"to treat it as undated"
            )
        for i in bad:
            rows[int(i)][1][name] = None
        cleared += int(bad.size)
        parsed[name] = np.where(present, epochs, np.nan)
    end = parsed.get("valid_to")
    if end is not None:
        for start_name in ("valid_from", "date"):
            start = parsed.get(start_name)
            if start is None:
                continue
            wrong = np.flatnonzero(end < start)  # NaN compares False: open ends are fine
            if wrong.size:
                lineno, row = rows[int(wrong[0])]
                more = f" (and {wrong.size - 1} more)" if wrong.size > 1 else ""
                raise InvalidInput(
                    f"{where} line {lineno} ({id_field} {row.get(id_field)!r}): valid_to {_short(row.get('valid_to'))} "
                    f"is before {start_name} {_short(row.get(start_name))}{more}; valid_to is when the document "
                    f"stops being true -- swap or fix the two dates, or set valid_to to null"
                )
    return cleared


_SLASH = re.compile(r"^\s*(\d{1,2})[/.](\d{1,2})[/.](\d{2}|\d{4})\b")


def _slash_order(rows: Sequence[tuple[int, dict[str, Any]]], fields: tuple[str, ...], where: str,
                 command: str | None) -> bool:
    """One order for every slash date of a file: day-first when one can only be day-first
    (31/12/2022), else month-first; says which on standard error when a date could be either.
    Dates that need both orders in one file are an error. Returns whether to read day-first."""
    day_only = month_only = either = None
    count = 0
    for lineno, row in rows:
        for name in fields:
            v = row.get(name)
            m = _SLASH.match(v) if isinstance(v, str) else None
            if m is None:
                continue
            a, b = int(m[1]), int(m[2])
            if a > 12 >= b:
                day_only = day_only or (lineno, v)
            elif b > 12 >= a:
                month_only = month_only or (lineno, v)
            elif a != b:
                either = either or (lineno, v, a, b)
                count += 1
    if day_only and month_only:
        raise InvalidInput(
            f"{where}: the slash dates mix two orders: {day_only[1]!r} (line {day_only[0]}) can only be day-first, "
            f"{month_only[1]!r} (line {month_only[0]}) only month-first; write one order for the whole file "
            "(or ISO dates such as 2024-09-02)"
        )
    if day_only:
        if command and either:
            warn(command, f"{where}: slash dates read day-first for the whole file, as {day_only[1]!r} (line "
                          f"{day_only[0]}) can only be: {either[1]!r} (line {either[0]}) is day {either[2]} of month "
                          f"{either[3]}; pass --dayfirst to say so and silence this")
        return True
    if either and command:
        warn(command, f"{where}: {count} slash date(s) such as {either[1]!r} (line {either[0]}) could be either order; "
                      "read month-first for the whole file (MM/DD/YYYY); pass --dayfirst if they are day-first")
    return False


def check_texts(rows: Sequence[tuple[int, dict[str, Any]]], where: str, command: str) -> None:
    """Refuse a text over :data:`TEXT_LIMIT` characters; warn once about texts over :data:`TEXT_WARN`."""
    sizes = np.array([len(t) if isinstance(t := r.get("text"), str) else 0 for _, r in rows], dtype=np.int64)
    if not sizes.size:
        return
    top = int(np.argmax(sizes))
    if sizes[top] > TEXT_LIMIT:
        lineno, row = rows[top]
        raise InvalidInput(
            f"{where} line {lineno} (id {row.get('id')!r}): text has {sizes[top]:,} characters, over the "
            f"limit of {TEXT_LIMIT:,}; split the document into sections of a few thousand characters each"
        )
    big = int((sizes > TEXT_WARN).sum())
    if big:
        lineno, row = rows[top]
        warn(command, f"{big} text(s) over {TEXT_WARN:,} characters (the longest: {where} line {lineno}, "
                      f"{sizes[top]:,}); the embedder reads only the start of each text -- split long documents into "
                      f"sections so every part can be found by meaning")


def read_corpus(
    path: str | Path, command: str, flag: str = "corpus", *, bad_dates: str = "raise", dayfirst: bool = False,
    data: bytes | None = None, date_unit: str = "auto", stats: dict[str, int] | None = None,
) -> list[dict[str, Any]]:
    """A docs/format.md corpus, checked and normalised; exit code 3 when it holds no documents.
    ``data``: the file's bytes, when the caller has read them (:func:`read_bytes`)."""
    from chronorank.eval.datasets import normalize_document

    where = str(path)
    text = read_text(path, flag) if data is None else decode(data, f"{flag} {str(Path(path))!r}")
    rows = parse_jsonl(text, where, "document")
    if not rows:
        raise NothingToDo(f"{flag} {where!r} holds no documents; nothing to do (add JSON lines, see {FORMAT_DOC})")
    seen: dict[str, int] = {}
    for lineno, obj in rows:
        doc_id = obj.get("id")
        if isinstance(doc_id, (str, int)) and not isinstance(doc_id, bool) and str(doc_id) in seen:
            raise InvalidInput(
                f"{where} line {lineno}: id {str(doc_id)!r} is already used on line {seen[str(doc_id)]}; "
                "ids must be unique -- rename one, or keep only the version you want"
            )
        if doc_id is not None:
            seen[str(doc_id)] = lineno
    check_texts(rows, where, command)
    cleared = check_dates(rows, where, bad_dates=bad_dates, dayfirst=dayfirst, date_unit=date_unit, command=command)
    if stats is not None:
        stats["unreadable"] = cleared
    if cleared:
        warn(command, f"{cleared} date(s) unreadable in {where}, indexed as undated (--bad-dates missing)")
    docs = []
    for lineno, obj in rows:
        docs.append(normalize_document(obj, where=f"{where} line {lineno}"))
    return docs


def _parse(parse_times: Any, values: list[Any], dayfirst: bool | None = None) -> np.ndarray:
    try:
        return np.asarray(parse_times(values, dayfirst=dayfirst), dtype=np.float64)
    except (InvalidInput, TypeError, ValueError):  # an unsupported type: parse one by one
        from chronorank.timeparse import to_epoch

        out = np.full(len(values), np.nan)
        for i, v in enumerate(values):
            if v is None:
                continue
            try:
                out[i] = float(to_epoch(v, dayfirst=dayfirst))
            except (InvalidInput, TypeError, ValueError, OverflowError):
                out[i] = np.nan
        return out


def _iso(epoch: float) -> str:
    from chronorank.types import epoch_to_datetime

    dt = epoch_to_datetime(epoch)
    return "" if dt is None else dt.strftime("%Y-%m-%dT%H:%M:%SZ")


def _blank(value: Any) -> bool:
    return value is None or (isinstance(value, str) and not value.strip()) or (
        isinstance(value, float) and math.isnan(value)
    )


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False) if not isinstance(value, float) or math.isfinite(value) else repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def read_queries(path: str | Path, flag: str = "--queries", ids: set[str] | None = None) -> list[dict[str, Any]]:
    """A docs/format.md query file, checked and normalised; exit code 3 when it holds no queries.
    With ``ids`` (the corpus's), every judged or listed document must be one of them."""
    from chronorank.eval.datasets import normalize_query

    where = str(path)
    rows = parse_jsonl(read_text(path, flag), where, "query")
    if not rows:
        raise NothingToDo(f"{flag} {where!r} holds no queries; nothing to evaluate (see {FORMAT_DOC})")
    seen: dict[str, int] = {}
    out = []
    for lineno, obj in rows:
        q = normalize_query(obj, where=f"{where} line {lineno}")
        if q["qid"] in seen:
            raise InvalidInput(f"{where} line {lineno}: qid {q['qid']!r} is already used on line "
                               f"{seen[q['qid']]}; qids must be unique")
        seen[q["qid"]] = lineno
        if ids is not None:
            unknown = [d for d in [*q["relevance"], *(q.get("candidates") or [])] if d not in ids]
            if unknown:
                raise InvalidInput(
                    f"{where} line {lineno} (qid {q['qid']!r}): names document id {unknown[0]!r}"
                    f"{f' (and {len(unknown) - 1} more)' if len(unknown) > 1 else ''}, which the corpus does "
                    "not hold; fix the id, or add the document to the corpus"
                )
        out.append(q)
    check_dates([(n, {"qid": q["qid"], "reference_date": q["reference_date"]}) for n, q in zip(seen.values(), out)],
                where, fields=("reference_date",), id_field="qid")
    return out


def check_suite_dir(name: str, command: str) -> None:
    """A ``--suite DIR`` / ``--data DIR``: both files present and well-formed, before any work."""
    p = Path(name)
    if not (p.is_dir() or "/" in name or name.endswith(".jsonl")):
        return  # a built-in suite name
    if not p.is_dir():
        raise InvalidInput(f"{name!r} is not a directory; give a directory holding corpus.jsonl and "
                           f"queries.jsonl ({FORMAT_DOC}), e.g. examples/releases")
    docs = read_corpus(p / "corpus.jsonl", command, flag="corpus")
    read_queries(p / "queries.jsonl", flag="queries", ids={d["id"] for d in docs})


def parse_now(text: str | None, flag: str = "--now") -> float | None:
    """``--now``: None (the wall clock), Unix seconds, or any date the parser reads."""
    if text is None:
        return None
    try:
        return float(text)
    except ValueError:
        pass
    from chronorank.timeparse import to_epoch

    try:
        value = float(to_epoch(text, strict=True))
    except (InvalidInput, TypeError, ValueError, OverflowError):
        value = math.nan
    if math.isnan(value):
        raise InvalidInput(f"{flag} {text!r} is not a time; give a date like 2026-08-01, a time like "
                           f"2026-08-01T12:00:00Z or Unix seconds, or leave {flag} out for the wall clock")
    return value
