"""Documents on their way into a store: a batch validated the way the embedded index
checks it and split into columns (:func:`prepare_docs` -> :class:`PreparedDocs`), vectors
checked and normalised (:func:`as_matrix`), hashed term counts of each text and of its lead
(:func:`analyze_docs`), the roles of a ``columns=`` mapping, and Qdrant's point ids."""

from __future__ import annotations

import math
import uuid
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from chronorank.errors import InvalidInput
from chronorank.index.lead import lead_lengths
from chronorank.index.records import check_storable
from chronorank.index.text import analyze_many
from chronorank.stores.bm25 import term_id
from chronorank.timeparse import parse_times
from chronorank.timeparse.numbers import read_numbers
from chronorank.timeparse.textdates import INFERRED_KEY, infer_dates

__all__ = [
    "COLUMN_ROLES",
    "PreparedDocs",
    "analyze_docs",
    "as_matrix",
    "column_roles",
    "point_id",
    "prepare_docs",
]


@dataclass
class PreparedDocs:
    """A batch of documents, validated and split into columns."""

    ids: list[str]
    texts: list[str]
    records: list[dict[str, Any]]
    start: np.ndarray  # epoch s, NaN = undated
    end: np.ndarray  # epoch s, NaN = open
    vectors: np.ndarray | None  # float32 (n, d), L2-normalised
    terms: list[Counter[int]]  # hashed BM25 term counts
    lengths: np.ndarray  # terms per document
    lead_terms: list[Counter[int]] = field(default_factory=list)  # the same over each lead
    lead_lengths: np.ndarray = field(default_factory=lambda: np.zeros(0))  # terms per lead
    inferred: dict[str, int] = field(default_factory=dict)  # undated documents checked, dates found by source


_RESERVED = ("id", "text", "date", "updated", "valid_from", "valid_to", "metadata", "vector")


def prepare_docs(
    docs: Iterable[Mapping[str, Any]],
    vectors: Any,
    *,
    embedder: Any,
    dim: int | None,
    bad_dates: str,
    need_terms: bool,
    lead_tokens: int = 12,
    infer_dates: bool = True,
) -> PreparedDocs:
    """Validate a batch the way the embedded index does (ids, text, dates, vectors); a document
    with no date gets the one its metadata, text or address states, as in the index
    (:func:`chronorank.timeparse.textdates.infer_dates`; ``infer_dates=False``: none)."""
    docs = list(docs)
    records: list[dict[str, Any]] = []
    seen: dict[str, int] = {}
    for i, d in enumerate(docs):
        if not isinstance(d, Mapping):
            raise InvalidInput(f"docs[{i}] is a {type(d).__name__}; every document must be a dict with 'id' and 'text'.")
        did = d.get("id")
        if did is None or isinstance(did, bool) or not isinstance(did, (str, int)) or str(did) == "":
            raise InvalidInput(f"docs[{i}]: id={did!r}; every document needs a non-empty string id.")
        text = d.get("text")
        if not isinstance(text, str):
            raise InvalidInput(f"docs[{i}] (id={did!r}): text={text!r}; 'text' must be a string (an empty string is allowed).")
        sid = str(did)
        if sid in seen:
            raise InvalidInput(
                f"docs[{i}] repeats id={sid!r} (first at docs[{seen[sid]}]); one batch must not hold the "
                "same id twice -- keep the version you want, or call add() twice."
            )
        seen[sid] = i
        meta = {k: v for k, v in d.items() if k not in _RESERVED}
        nested = d.get("metadata")
        if nested is not None:
            if not isinstance(nested, Mapping):
                raise InvalidInput(f"docs[{i}] (id={did!r}): metadata={nested!r}; it must be a dict.")
            meta.update(nested)
        where = f"docs[{i}] (id={did!r})"
        for name, value in (("id", sid), ("text", text), ("metadata", meta)):  # as the index checks them
            check_storable(value, f"{where}: {name}", 0, numbers=name == "metadata")
        rec: dict[str, Any] = {"id": sid, "text": text, "metadata": _jsonable(meta)}
        for name in ("date", "updated", "valid_from", "valid_to"):
            v: Any = d.get(name)
            rec[name] = v.isoformat() if hasattr(v, "isoformat") else v
            check_storable(rec[name], f"{where}: {name}", 0)
        records.append(rec)
    n = len(records)
    cols = {name: _parse_col(records, name, bad_dates) for name in ("date", "updated", "valid_from", "valid_to")}
    t = np.where(np.isnan(cols["date"]), cols["updated"], cols["date"])
    start = np.where(np.isnan(cols["valid_from"]), t, cols["valid_from"])
    end = cols["valid_to"]
    inferred = _infer_missing(records, start, end, infer_dates)
    vecs = _vectors(docs, records, vectors, embedder, dim)
    terms: list[Counter[int]] = []
    lengths = np.zeros(n, dtype=np.float64)
    lead_terms: list[Counter[int]] = []
    lead_len = np.zeros(n, dtype=np.float64)
    if need_terms and n:
        terms, lengths, lead_terms, lead_len = analyze_docs([r["text"] for r in records], lead_tokens)
    return PreparedDocs(
        ids=[r["id"] for r in records], texts=[r["text"] for r in records], records=records,
        start=start, end=end, vectors=vecs, terms=terms, lengths=lengths,
        lead_terms=lead_terms, lead_lengths=lead_len, inferred=inferred,
    )


def _infer_missing(records: list[dict[str, Any]], start: np.ndarray, end: np.ndarray, on: bool) -> dict[str, int]:
    """``start`` filled in place for the documents with no time at all, their source kept in
    the metadata as ``date_inferred`` (a stale one dropped); the counts by source."""
    for r in records:
        r["metadata"].pop(INFERRED_KEY, None)
    rows = np.flatnonzero(np.isnan(start) & np.isnan(end)) if on else np.zeros(0, np.int64)
    if not rows.size:
        return {}
    found = infer_dates([records[i]["text"] for i in rows], [records[i]["metadata"] for i in rows])
    hit = np.flatnonzero(~np.isnan(found.time))
    start[rows[hit]] = found.time[hit]
    for j in hit.tolist():
        records[int(rows[j])]["metadata"][INFERRED_KEY] = found.record(j)
    return {"checked": int(rows.size), **found.counts()}


def analyze_docs(
    texts: Sequence[str], lead_tokens: int
) -> tuple[list[Counter[int]], np.ndarray, list[Counter[int]], np.ndarray]:
    """Hashed term counts and lengths of each text and of its lead, as the index cuts it: the
    first ``min(terms, terms in the first sentence or line, lead_tokens)`` terms."""
    n = len(texts)
    heads = lead_lengths(texts)
    terms: list[Counter[int]] = []
    lead_terms: list[Counter[int]] = []
    lengths = np.zeros(n, dtype=np.float64)
    lead_len = np.zeros(n, dtype=np.float64)
    for i, toks in enumerate(analyze_many(texts, prefixes=True)):
        ids = [term_id(tk) for tk in toks]
        keep = min(len(ids), int(heads[i]), int(lead_tokens))
        terms.append(Counter(ids))
        lead_terms.append(Counter(ids[:keep]))
        lengths[i], lead_len[i] = len(ids), keep
    return terms, lengths, lead_terms, lead_len


COLUMN_ROLES = ("id", "text", "date", "embedding", "metadata")


def column_roles(columns: Mapping[str, str] | None, required: Sequence[str], example: str) -> dict[str, str] | None:
    """A store's ``columns=`` mapping (a table or collection chronorank did not create), its
    roles checked: only known ones, the ``required`` ones present. Names are checked by the store."""
    if columns is None:
        return None
    if not isinstance(columns, Mapping):
        raise InvalidInput(f"columns={columns!r}; give a dict such as {example}.")
    unknown = [k for k in columns if k not in COLUMN_ROLES]
    if unknown:
        raise InvalidInput(f"columns= has unknown role(s) {unknown}; use {list(COLUMN_ROLES)}.")
    need = [k for k in required if k not in columns]
    if need:
        raise InvalidInput(f"columns= lacks {need}; {', '.join(required)} required, e.g. {example}.")
    return dict(columns)


def _jsonable(x: Any) -> Any:
    if isinstance(x, Mapping):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    if hasattr(x, "isoformat"):
        return str(x.isoformat())
    if isinstance(x, float) and not math.isfinite(x):
        return None
    if isinstance(x, np.generic):
        return x.item()
    return x


def _parse_col(records: list[dict[str, Any]], name: str, bad_dates: str) -> np.ndarray:
    raw = [r.get(name) for r in records]
    if not raw:
        return np.zeros(0)
    # a bare number is a year, a YYYYMMDD date or epoch time, as in the index (timeparse.numbers)
    is_num, num, _ = read_numbers(raw)
    vals = np.asarray(parse_times([None if b else v for v, b in zip(raw, is_num)] if is_num.any() else raw),
                      dtype=np.float64)
    vals = np.where(is_num, num, vals)
    for i in np.flatnonzero(np.isnan(vals)).tolist():
        x = raw[i]
        present = x is not None and not (isinstance(x, float) and math.isnan(x)) and not (isinstance(x, str) and not x.strip())
        if present and bad_dates == "raise":
            raise InvalidInput(
                f"document id={records[i]['id']!r}: {name}={x!r} is not a date chronorank can read; fix it "
                "(e.g. '2024-08-27'), remove it, or pass bad_dates='missing' to store it as undated."
            )
    return vals


def _vectors(docs: list[Any], records: list[dict[str, Any]], vectors: Any, embedder: Any, dim: int | None) -> np.ndarray | None:
    n = len(records)
    if n == 0:
        return None
    given: dict[int, np.ndarray] = {}
    if vectors is not None:
        mat = as_matrix(vectors, dim, "vectors")
        if mat.shape[0] != n:
            raise InvalidInput(f"vectors has {mat.shape[0]} rows for {n} docs; pass one row per document, in order.")
        given = {i: mat[i] for i in range(n)}
        dim = mat.shape[1]
    for i, d in enumerate(docs):
        v = d.get("vector")
        if v is not None:
            if i in given:
                raise InvalidInput(f"docs[{i}] (id={records[i]['id']!r}) has a 'vector' key and a row in vectors=; give one.")
            given[i] = as_matrix(v, dim, f"docs[{i}].vector")[0]
            dim = given[i].shape[0]
    todo = [i for i in range(n) if i not in given]
    if todo and embedder is None:
        raise InvalidInput(
            f"docs[{todo[0]}] (id={records[todo[0]]['id']!r}) has no vector and the store has no embedder; "
            "give every document a 'vector' (or vectors=...), or create the store with embedder=..."
        )
    if todo:
        emb = np.asarray(embedder.embed([records[i]["text"] for i in todo]), dtype=np.float32)
        if dim is not None and emb.shape[1] != dim:
            raise InvalidInput(f"embedder {embedder.name!r} gives width {emb.shape[1]} but the store uses {dim}.")
        dim = emb.shape[1]
        for j, i in enumerate(todo):
            given[i] = emb[j]
    out = np.stack([given[i] for i in range(n)]).astype(np.float32)
    return as_matrix(out, dim, "vectors")


def as_matrix(v: Any, dim: int | None, name: str) -> np.ndarray:
    """Rows as contiguous float32, L2-normalised; InvalidInput on width, NaN or zero rows."""
    try:
        mat = np.asarray(v, dtype=np.float32)
    except (TypeError, ValueError):
        raise InvalidInput(f"{name} could not be read as numbers; give a float array.") from None
    if mat.ndim == 1:
        mat = mat[None, :]
    if mat.ndim != 2 or mat.shape[1] == 0:
        raise InvalidInput(f"{name} has shape {mat.shape}; expected (n, dim) or (dim,).")
    if dim is not None and mat.shape[1] != dim:
        raise InvalidInput(
            f"{name} has width {mat.shape[1]} but the store uses {dim}-dimensional vectors; "
            "embed with the same model or use a new collection/table."
        )
    if not np.isfinite(mat).all():
        raise InvalidInput(f"{name} holds NaN or inf; vectors must be finite.")
    norms = np.linalg.norm(mat, axis=1, keepdims=True)
    if (norms == 0).any():
        raise InvalidInput(f"{name} has an all-zero row; a zero vector has no direction for cosine similarity.")
    return np.ascontiguousarray(mat / norms, dtype=np.float32)


def point_id(doc_id: str) -> str:
    """Qdrant point id for a chronorank id (UUID5, stable across runs)."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, "chronorank:" + doc_id))
