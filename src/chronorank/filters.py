"""One small metadata filter language for the index, the stores and the integrations.

A filter is a dict in the Mongo style most vector stores already take::

    {"project": "flask"}                                  # equality
    {"project": {"$in": ["flask", "click"]}}              # membership ($nin: not in)
    {"year": {"$gte": 2020, "$lt": 2024}}                 # ranges ($gt, $gte, $lt, $lte)
    {"$or": [{"project": "flask"}, {"tier": {"$ne": "free"}}]}
    {"project": "flask", "lang": "en"}                    # several keys: all must hold ($and)

Fields name keys of a document's ``metadata``. :func:`parse_filter` checks the dict once
and returns a tree (:class:`Cond`, :class:`And`, :class:`Or`); three renderers give the
same answer for it (tests hold them to each other):

- :func:`filter_mask`: a boolean numpy mask over metadata dicts (the embedded index);
- :func:`filter_sql`: a SQL ``WHERE`` fragment with bound parameters over a jsonb column;
- :func:`filter_qdrant`: a ``qdrant_client.models.Filter`` over ``metadata.<field>``.

Semantics, the same in all three (``tests/stores/test_filter_table.py`` runs one table of
filters against every engine):

- values compare as JSON scalars (``2 == 2.0``; ``True`` is not ``1``); integers compare
  exactly up to 64 bits (``1234567890123456789`` is not ``...790``), so a range bound must lie
  within 2^53 (the engines compare ranges as float64); a range needs a number (a string, a bool
  or a missing value never satisfies it);
- ``$ne`` / ``$nin`` / ``$not`` hold for a document that lacks the field;
- a key is one flat metadata field on every engine: ``{"app.tenant": "a"}`` reads the key
  ``"app.tenant"``, never a nested path; a key holding ``"`` is refused;
- a list value matches a condition when one of its elements does (``{"tags": "x"}`` matches
  ``tags=["x", "y"]``; ``$ne`` then means "no element equals");
- ``date`` and ``valid_from`` filter the document's start (its ``valid_from``, else its date),
  ``valid_to`` its end, with ISO dates, partial dates or epoch seconds: ``{"date": "2024-03"}``
  is every start in March 2024, ``{"date": {"$gte": "2024"}}`` every start from 2024 on,
  ``{"date": {"$lte": "2024"}}`` every start up to the end of 2024.

This module needs numpy and :mod:`chronorank.timeparse`; the Qdrant renderer imports
``qdrant_client`` when called.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

import numpy as np

from chronorank.errors import InvalidInput, require
from chronorank.timeparse import parse_span, parse_times

__all__ = [
    "And", "Cond", "FieldColumn", "Filter", "Not", "Or", "TIME_FIELDS", "and_filters", "filter_mask",
    "filter_qdrant", "filter_sql", "parse_filter",
]

COMPARE_OPS = ("$eq", "$ne", "$in", "$nin", "$gt", "$gte", "$lt", "$lte")
RANGE_OPS = ("$gt", "$gte", "$lt", "$lte")
LOGIC_OPS = ("$and", "$or", "$not")
#: the document's time fields a filter may name, and the engine column each reads: the start
#: (``valid_from``, else the date) or the end (``valid_to``)
TIME_FIELDS = {"date": "start", "valid_from": "start", "valid_to": "end"}
#: integers compare exactly; a range bound beyond this magnitude would be rounded by float64
EXACT_RANGE = 2**53
Scalar: TypeAlias = "str | int | float | bool"


@dataclass(frozen=True)
class Cond:
    """``metadata[field] <op> value``."""

    field: str
    op: str
    value: Any


@dataclass(frozen=True)
class And:
    parts: tuple[Filter, ...]


@dataclass(frozen=True)
class Or:
    parts: tuple[Filter, ...]


@dataclass(frozen=True)
class Not:
    """Holds where ``part`` does not (a document lacking its fields included)."""

    part: Filter


Filter: TypeAlias = "Cond | And | Or | Not"


def parse_filter(spec: Any) -> Filter | None:
    """The checked tree for a filter dict (None or ``{}``: no filter); a parsed tree is kept."""
    if spec is None or isinstance(spec, (Cond, And, Or, Not)):
        return spec
    if not isinstance(spec, Mapping):
        raise InvalidInput(
            f"filter={spec!r}; give a dict such as {{'project': 'flask'}} or "
            "{'year': {'$gte': 2020}} (see chronorank.filters)."
        )
    if not spec:
        return None
    parts: list[Filter] = []
    for key, value in spec.items():
        if not isinstance(key, str) or not key:
            raise InvalidInput(f"filter key {key!r}; keys are metadata field names or one of {list(LOGIC_OPS)}.")
        if key.startswith("$"):
            if key not in LOGIC_OPS:
                raise InvalidInput(f"filter operator {key!r} at the top level; use one of {list(LOGIC_OPS)} there.")
            if key == "$not":
                sub = parse_filter(value) if isinstance(value, Mapping) else None
                if sub is None:
                    raise InvalidInput(f"filter $not={value!r}; give one non-empty filter, e.g. {{'$not': {{'a': 1}}}}.")
                parts.append(Not(sub))
                continue
            if not isinstance(value, (list, tuple)) or not value:
                raise InvalidInput(f"filter {key}={value!r}; give a non-empty list of filters, e.g. [{{'a': 1}}, {{'b': 2}}].")
            subs = [parse_filter(v) for v in value]
            if any(s is None for s in subs):
                raise InvalidInput(f"filter {key}={value!r} holds an empty filter; remove it.")
            kids = tuple(s for s in subs if s is not None)
            parts.append(kids[0] if len(kids) == 1 else (And(kids) if key == "$and" else Or(kids)))
            continue
        _check_field(key)
        if isinstance(value, Mapping):
            if not value:
                raise InvalidInput(f"filter {key!r}: {{}}; give a value or operators such as {{'$gte': 2020}}.")
            for op, v in value.items():
                parts.append(_time_cond(key, op, v) if key in TIME_FIELDS else _cond(key, op, v))
        else:
            parts.append(_time_cond(key, "$eq", value) if key in TIME_FIELDS else _cond(key, "$eq", value))
    return parts[0] if len(parts) == 1 else And(tuple(parts))


def _check_field(key: str) -> None:
    if '"' in key or any(ord(c) < 32 for c in key):
        raise InvalidInput(
            f"filter key {key!r} holds a double quote or a control character, which no engine can name "
            "as one flat key; rename the metadata field (letters, digits, '_', '.', '-', spaces and ' are fine)."
        )


def _time_cond(field: str, op: Any, v: Any) -> Filter:
    """A condition on a document's start or end as epoch-second bounds: a partial date is its
    whole span (``"2024-03"``: every instant of March 2024), a number is epoch seconds."""
    if op not in COMPARE_OPS:
        raise InvalidInput(f"filter {field!r}: unknown operator {op!r}; use one of {list(COMPARE_OPS)}.")
    if op in ("$in", "$nin"):
        if not isinstance(v, (list, tuple)) or not v:
            raise InvalidInput(f"filter {field!r} {op} {v!r}; give a non-empty list of dates, e.g. ['2024-01', '2024-03'].")
        inside: Filter = Or(tuple(_span_cond(field, x) for x in v)) if len(v) > 1 else _span_cond(field, v[0])
        return Not(inside) if op == "$nin" else inside
    lo, hi, closed = _span(field, op, v)
    if op == "$eq":
        return _span_cond(field, v)
    if op == "$ne":
        return Not(_span_cond(field, v))
    if op == "$gte":
        return Cond(field, "$gte", lo)
    if op == "$gt":
        return Cond(field, "$gt" if closed else "$gte", hi)
    if op == "$lt":
        return Cond(field, "$lt", lo)
    return Cond(field, "$lte" if closed else "$lt", hi)


def _span(field: str, op: str, v: Any) -> tuple[float, float, bool]:
    if isinstance(v, bool) or v is None:
        raise InvalidInput(f"filter {field!r} {op} {v!r}; give a date such as '2024-03-01' or '2024', or epoch seconds.")
    try:
        span = parse_span(v.item() if isinstance(v, np.generic) else v, strict=True)
    except InvalidInput as exc:
        raise InvalidInput(f"filter {field!r} {op} {v!r}: {exc}") from None
    if span is None:
        raise InvalidInput(f"filter {field!r} {op} {v!r}; give a date such as '2024-03-01' or '2024', or epoch seconds.")
    closed = not span.end > span.start  # an instant: both ends inside; a day, month, year: [start, end)
    return float(span.start), float(span.end), closed


def _span_cond(field: str, v: Any) -> Filter:
    lo, hi, closed = _span(field, "$eq", v)
    return And((Cond(field, "$gte", lo), Cond(field, "$lte" if closed else "$lt", hi)))


def _scalar(field: str, op: str, v: Any) -> Scalar:
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, float) and not math.isfinite(v):
        raise InvalidInput(f"filter {field!r} {op} {v!r}; give a finite number.")
    if isinstance(v, int) and not isinstance(v, bool) and not -(2**63) <= v < 2**63:
        raise InvalidInput(f"filter {field!r} {op} {v!r}; integers compare exactly within 64 bits (signed); "
                           "store a larger id as a string.")
    if not isinstance(v, (str, int, float, bool)):
        raise InvalidInput(
            f"filter {field!r} {op} {v!r} ({type(v).__name__}); compare with a string, number or bool."
        )
    return v


def _cond(field: str, op: Any, v: Any) -> Cond:
    if op not in COMPARE_OPS:
        raise InvalidInput(f"filter {field!r}: unknown operator {op!r}; use one of {list(COMPARE_OPS)}.")
    if op in ("$in", "$nin"):
        if not isinstance(v, (list, tuple)) or not v:
            raise InvalidInput(f"filter {field!r} {op} {v!r}; give a non-empty list, e.g. ['a', 'b'].")
        return Cond(field, op, tuple(_scalar(field, op, x) for x in v))
    value = _scalar(field, op, v)
    if op in RANGE_OPS and (isinstance(value, (bool, str))):
        raise InvalidInput(
            f"filter {field!r} {op} {value!r}; ranges compare numbers only (store dates as epoch seconds "
            "or years, e.g. {'year': {'$gte': 2020}}; the document's own date filters with ISO dates: "
            "{'date': {'$gte': '2024-01-01'}})."
        )
    if op in RANGE_OPS and isinstance(value, int) and abs(value) > EXACT_RANGE:
        raise InvalidInput(
            f"filter {field!r} {op} {value!r}; a range bound beyond 2^53 would be rounded (the engines compare "
            "ranges as float64); compare such ids with $eq / $in, which are exact."
        )
    return Cond(field, op, value)


def and_filters(*filters: Any) -> Filter | None:
    """Every given filter at once (None parts are skipped)."""
    parts = [f for f in (parse_filter(x) for x in filters) if f is not None]
    if not parts:
        return None
    return parts[0] if len(parts) == 1 else And(tuple(parts))


def fields(flt: Filter | None) -> set[str]:
    """The metadata fields a filter reads."""
    if flt is None:
        return set()
    if isinstance(flt, Cond):
        return {flt.field}
    if isinstance(flt, Not):
        return fields(flt.part)
    return set().union(*(fields(p) for p in flt.parts))


# ---------------------------------------------------------------------- numpy


_MISSING = object()


def _key(v: Any) -> Any:
    """A comparison key that keeps bools apart from numbers (JSON semantics); an int stays an
    int, so 64-bit ids compare exactly (Python compares an int with a float exactly too)."""
    if isinstance(v, bool):
        return ("b", v)
    if isinstance(v, (int, float)):
        return ("n", v)
    if isinstance(v, str):
        return ("s", v)
    return ("o", id(v))  # lists, dicts, None: equal to no filter value


def _num(v: Any) -> float:
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return float(v)
    return math.nan


class FieldColumn:
    """One metadata field over every document, columnar, as elements: a scalar value is one
    element of its row, a list value one per item (a condition holds for a row when it holds for
    one of its elements). ``rows``: each element's row; ``codes``: a code per element for
    equality (equal codes = equal :func:`_key`); ``nums``: its number for ranges (NaN otherwise)."""

    __slots__ = ("codes", "index", "nums", "rows")

    def __init__(self, values: Sequence[Any]) -> None:
        index: dict[Any, int] = {}
        rows: list[int] = []
        elems: list[Any] = []
        for i, v in enumerate(values):  # once per field and index state, not per search
            if v is _MISSING:
                continue
            items = v if isinstance(v, (list, tuple)) else (v,)
            rows.extend([i] * len(items))
            elems.extend(items)
        self.rows = np.asarray(rows, dtype=np.int64)
        self.codes = np.fromiter((index.setdefault(_key(e), len(index)) for e in elems), dtype=np.int64,
                                 count=len(elems))
        self.index = index
        self.nums = np.fromiter((_num(e) for e in elems), dtype=np.float64, count=len(elems))


def filter_mask(
    flt: Any,
    metadatas: Sequence[Mapping[str, Any] | None],
    columns: dict[str, FieldColumn] | None = None,
    times: Mapping[str, np.ndarray] | None = None,
) -> np.ndarray:
    """Which of ``metadatas`` pass ``flt`` (a boolean array; all True without a filter).

    Each field is read once into a :class:`FieldColumn` (kept in ``columns`` when the caller
    passes a dict, e.g. one per index snapshot), then every condition compares in numpy.
    ``times``: the documents' ``start`` and ``end`` (epoch seconds, NaN = none) that the time
    fields (:data:`TIME_FIELDS`) read; without it they are parsed from the metadata dicts.
    """
    tree = parse_filter(flt)
    n = len(metadatas)
    if tree is None:
        return np.ones(n, dtype=bool)
    return _mask(tree, metadatas, {} if columns is None else columns, n, times)


def _time_column(field: str, metas: Sequence[Mapping[str, Any] | None], times: Mapping[str, np.ndarray] | None) -> np.ndarray:
    role = TIME_FIELDS[field]
    if times is not None:
        return np.asarray(times[role], dtype=np.float64)
    def raw(m: Mapping[str, Any] | None) -> Any:
        if m is None:
            return None
        if role == "start":
            return m.get("valid_from") if m.get("valid_from") is not None else m.get("date")
        return m.get("valid_to")

    return parse_times([raw(m) for m in metas])


def _mask(t: Filter, metas: Sequence[Mapping[str, Any] | None], cols: dict[str, FieldColumn], n: int,
          times: Mapping[str, np.ndarray] | None) -> np.ndarray:
    if isinstance(t, Not):
        return ~_mask(t.part, metas, cols, n, times)
    if isinstance(t, And):
        out = np.ones(n, dtype=bool)
        for p in t.parts:
            out &= _mask(p, metas, cols, n, times)
        return out
    if isinstance(t, Or):
        out = np.zeros(n, dtype=bool)
        for p in t.parts:
            out |= _mask(p, metas, cols, n, times)
        return out
    if t.field in TIME_FIELDS:  # a bound in epoch seconds (parse_filter made it one)
        x = _time_column(t.field, metas, times)
        with np.errstate(invalid="ignore"):
            res = {"$gt": x > t.value, "$gte": x >= t.value, "$lt": x < t.value, "$lte": x <= t.value}[t.op]
        return np.asarray(res, dtype=bool)
    col = cols.get(t.field)
    if col is None:
        col = cols[t.field] = FieldColumn([_MISSING if m is None else m.get(t.field, _MISSING) for m in metas])
    if t.op in RANGE_OPS:
        x = col.nums
        with np.errstate(invalid="ignore"):
            hit = {"$gt": x > t.value, "$gte": x >= t.value, "$lt": x < t.value, "$lte": x <= t.value}[t.op]
    else:
        values = t.value if t.op in ("$in", "$nin") else (t.value,)
        wanted = [c for c in (col.index.get(_key(v)) for v in values) if c is not None]
        hit = np.isin(col.codes, np.asarray(wanted, dtype=np.int64))
    out = np.zeros(n, dtype=bool)
    out[col.rows[np.asarray(hit, dtype=bool)]] = True
    return ~out if t.op in ("$ne", "$nin") else out


# ---------------------------------------------------------------------- SQL


def filter_sql(
    flt: Any, metadata_sql: str, params: dict[str, Any], prefix: str = "mf",
    time_sql: Mapping[str, str] | None = None,
) -> str:
    """A ``WHERE`` fragment for ``flt`` over the jsonb expression ``metadata_sql``.

    Field names and values are bound parameters (``%(mf0)s`` ...) added to ``params``; only
    ``metadata_sql`` and ``time_sql`` (the ``start`` / ``end`` epoch-second columns the time
    fields read; chosen by the caller, never by the user) are pasted into the text.
    Without a filter the fragment is ``TRUE``.
    """
    tree = parse_filter(flt)
    if tree is None:
        return "TRUE"
    counter = [0]

    def bind(value: Any) -> str:
        name = f"{prefix}{counter[0]}"
        counter[0] += 1
        params[name] = value
        return f"%({name})s"

    def render(t: Filter) -> str:
        if isinstance(t, Not):
            return f"(NOT {render(t.part)})"
        if isinstance(t, (And, Or)):
            glue = " AND " if isinstance(t, And) else " OR "
            return "(" + glue.join(render(p) for p in t.parts) + ")"
        if t.field in TIME_FIELDS:
            if time_sql is None:
                raise InvalidInput(f"filter on {t.field!r}: this engine keeps no time column to filter on.")
            sym = {"$gt": ">", "$gte": ">=", "$lt": "<", "$lte": "<="}[t.op]
            return f"COALESCE({time_sql[TIME_FIELDS[t.field]]} {sym} {bind(float(t.value))}::float8, FALSE)"
        x = f"({metadata_sql} -> {bind(t.field)}::text)"
        # a list value is its elements, a scalar one element (jsonb_build_array(NULL) = [null]
        # for a missing key, which equals no value and is no number)
        elems = f"jsonb_array_elements(CASE WHEN jsonb_typeof({x}) = 'array' THEN {x} ELSE jsonb_build_array({x}) END)"
        if t.op in RANGE_OPS:
            sym = {"$gt": ">", "$gte": ">=", "$lt": "<", "$lte": "<="}[t.op]
            test = f"jsonb_typeof(e) = 'number' AND (e #>> '{{}}')::float8 {sym} {bind(float(t.value))}::float8"
            return f"EXISTS (SELECT 1 FROM {elems} e WHERE {test})"
        values = t.value if t.op in ("$in", "$nin") else (t.value,)
        match = f"EXISTS (SELECT 1 FROM {elems} e WHERE e = ANY({bind([json.dumps(v) for v in values])}::text[]::jsonb[]))"
        return f"(NOT {match})" if t.op in ("$ne", "$nin") else match

    return render(tree)


# ---------------------------------------------------------------------- Qdrant

_PLAIN_KEY = re.compile(r"[A-Za-z0-9_]+")


def qdrant_key(prefix: str, field: str) -> str:
    """The payload path of the flat metadata key ``field`` under ``prefix``: quoted unless it
    is letters, digits and ``_`` (``metadata."app.tenant"``), so a dot never means nesting."""
    return prefix + (field if _PLAIN_KEY.fullmatch(field) else f'"{field}"')


def filter_qdrant(flt: Any, prefix: str = "metadata.", time_keys: Mapping[str, str] | None = None) -> Any:
    """A ``qdrant_client.models.Filter`` for ``flt`` over payload keys ``prefix + field``
    (None without a filter); ``time_keys``: the payload keys holding the start and end in
    epoch seconds (``{"start": "_start", "end": "_end"}``), which the time fields read."""
    tree = parse_filter(flt)
    if tree is None:
        return None

    m = require("qdrant_client.models", extra="qdrant", package="qdrant-client")

    def match_one(key: str, v: Scalar) -> Any:
        if isinstance(v, int) and not isinstance(v, bool) and abs(v) >= EXACT_RANGE:
            return m.FieldCondition(key=key, match=m.MatchValue(value=v))  # exact: a 64-bit id
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            # a range matches 2024 and 2024.0 alike (MatchValue(2024) misses a float payload)
            return m.FieldCondition(key=key, range=m.Range(gte=float(v), lte=float(v)))
        return m.FieldCondition(key=key, match=m.MatchValue(value=v))

    def equal_any(key: str, values: Sequence[Scalar]) -> Any:
        conds = [match_one(key, v) for v in values]
        return conds[0] if len(conds) == 1 else m.Filter(should=conds)

    def render(t: Filter) -> Any:
        if isinstance(t, Not):
            return m.Filter(must_not=[render(t.part)])
        if isinstance(t, And):
            return m.Filter(must=[render(p) for p in t.parts])
        if isinstance(t, Or):
            return m.Filter(should=[render(p) for p in t.parts])
        if t.field in TIME_FIELDS:
            if time_keys is None:
                raise InvalidInput(f"filter on {t.field!r}: this collection keeps no time payload to filter on.")
            return m.FieldCondition(key=time_keys[TIME_FIELDS[t.field]], range=m.Range(**{t.op[1:]: float(t.value)}))
        key = qdrant_key(prefix, t.field)
        if t.op in RANGE_OPS:
            return m.FieldCondition(key=key, range=m.Range(**{t.op[1:]: float(t.value)}))
        values = t.value if t.op in ("$in", "$nin") else (t.value,)
        cond = equal_any(key, values)
        return m.Filter(must_not=[cond]) if t.op in ("$ne", "$nin") else cond

    out = render(tree)
    return out if isinstance(out, m.Filter) else m.Filter(must=[out])
