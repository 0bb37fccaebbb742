"""Loaders for benchmark files in the docs/format.md shape, and the bundled release benchmark.

A corpus record comes back as::

    {"id": str, "text": str, "date": raw or None, "valid_from": raw or None,
     "valid_to": raw or None, "metadata": {...}}

(``updated`` is kept as a top-level key when a line has it). Dates are returned as
written; :func:`epoch_seconds` turns one column into float64 epoch seconds (NaN =
missing). A query comes back as::

    {"qid": str, "query": str, "reference_date": raw or None,
     "relevance": {doc_id: int grade 0-3}, "candidates": list[str] | None,
     "kind": str | None, ...every other key of the line...}
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from chronorank.errors import InvalidInput
from chronorank.index.records import check_storable
from chronorank.timeparse import parse_times
from chronorank.timeparse import to_epoch as parse_one

__all__ = [
    "load_corpus",
    "load_queries",
    "load_benchmark",
    "write_corpus",
    "write_queries",
    "tdw_release_benchmark",
    "shared_data_dir",
    "default_suites",
    "epoch_seconds",
    "to_epoch",
]

_TIME_FIELDS = ("date", "valid_from", "valid_to")
_CORPUS_KEYS = ("id", "text", *_TIME_FIELDS, "updated", "metadata")
_QUERY_KEYS = ("qid", "query", "reference_date", "reference_time", "relevance", "candidates", "kind")

BUNDLED_DIR = Path(__file__).parent / "bundled"
RELEASE_QUERY = "what changed in the latest release of {project}"


# --------------------------------------------------------------------------- time


def to_epoch(value: Any, *, field: str = "date") -> float:
    """One time value -> epoch seconds (UTC); ``None``/empty -> NaN; anything else that does
    not parse is an error naming the field (a benchmark file must not lose dates silently)."""
    if _blank(value):
        return math.nan
    try:
        return float(parse_one(value, strict=True))
    except InvalidInput as exc:
        raise InvalidInput(f"{field}: {exc} (or leave it null for an undated document)") from None


def epoch_seconds(records: Sequence[Mapping[str, Any]], field: str = "date") -> np.ndarray:
    """The ``field`` column of ``records`` as float64 epoch seconds (NaN = missing)."""
    values = [r.get(field) for r in records]
    return parse_times([None if _blank(v) else v for v in values], strict=True)


def _blank(value: Any) -> bool:
    return value is None or (isinstance(value, str) and not value.strip()) or (
        isinstance(value, float) and math.isnan(value)
    )


# --------------------------------------------------------------------------- reading


def _read_records(path: Path, what: str) -> list[tuple[int, dict[str, Any]]]:
    if not path.exists():
        raise InvalidInput(
            f"{what} file {str(path)!r} does not exist; pass the path of a docs/format.md "
            f"{what} file (JSON Lines, one object a line)."
        )
    if path.is_dir():
        raise InvalidInput(f"{what} file {str(path)!r} is a directory; pass the JSON Lines file inside it.")
    where = f"{what} file {str(path)!r}"
    return parse_jsonl(decode_text(path.read_bytes(), where), where, "document" if what == "corpus" else "query")


def decode_text(data: bytes, where: str) -> str:
    """UTF-8 (a leading BOM is dropped); NUL bytes or invalid UTF-8 name the offset."""
    nul = data.find(b"\x00", 0, 1 << 16)
    if nul >= 0:
        enc = " (it looks like UTF-16: convert it with iconv -f UTF-16 -t UTF-8)" if data[:2] in (b"\xff\xfe", b"\xfe\xff") else ""
        raise InvalidInput(
            f"{where} holds a NUL byte at offset {nul}: it is a binary file, not JSON Lines text{enc}; see docs/format.md"
        )
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise InvalidInput(
            f"{where} line {line}: byte 0x{data[exc.start]:02x} at offset {exc.start} is not UTF-8; "
            f"save the file as UTF-8 (e.g. iconv -f latin1 -t utf-8 FILE > FILE.utf8)"
        ) from None


def parse_jsonl(text: str, where: str, what: str = "record") -> list[tuple[int, dict[str, Any]]]:
    """(line number, object) per non-blank line; a text starting with ``[`` is one JSON array."""
    if text.lstrip().startswith("["):
        try:
            items = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InvalidInput(
                f"{where} line {exc.lineno}: not valid JSON ({exc.msg}); the file starts with '[' so it is "
                f"read as one JSON array of {what}s (docs/format.md)"
            ) from None
        rows = []
        for i, obj in enumerate(items if isinstance(items, list) else [items]):
            rows.append((i + 1, _object(obj, where, f"item {i + 1}", what)))
        return rows
    out: list[tuple[int, dict[str, Any]]] = []
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            if not out and _looks_like_csv(line, where):
                raise InvalidInput(
                    f"{where} looks like CSV (its first line is {line.strip()[:60]!r}), which chronorank does not "
                    "read; the supported formats are JSON Lines (one JSON object a line) and one JSON array of "
                    "objects (docs/format.md). Convert it, e.g. python -c \"import csv, json, sys; "
                    "[print(json.dumps(r)) for r in csv.DictReader(open(sys.argv[1]))]\" FILE.csv > FILE.jsonl"
                ) from None
            raise InvalidInput(
                f"{where} line {lineno}: not valid JSON ({exc.msg} at column {exc.colno}); "
                f"each line must hold one JSON object (docs/format.md)"
            ) from None
        out.append((lineno, _object(obj, where, f"line {lineno}", what)))
    return out


def _looks_like_csv(line: str, where: str) -> bool:
    """A first line that is not JSON and reads as a CSV/TSV header or row."""
    text = line.strip()
    if text.startswith(("{", "[", '"')):
        return False
    return where.lower().endswith((".csv", ".tsv")) or text.count(",") >= 1 or "\t" in text


def _object(obj: Any, where: str, at: str, what: str) -> dict[str, Any]:
    if not isinstance(obj, dict):
        shown = json.dumps(obj)[:60] if not isinstance(obj, float) or math.isfinite(obj) else repr(obj)
        raise InvalidInput(
            f"{where} {at}: a JSON {type(obj).__name__} ({shown}), expected one {what} object "
            f"such as {{\"id\": ..., ...}} (docs/format.md)"
        )
    return obj



def normalize_document(obj: Mapping[str, Any], *, where: str = "document") -> dict[str, Any]:
    """One docs/format.md corpus object -> the canonical record (metadata merged)."""
    doc_id = obj.get("id")
    if doc_id is None or (isinstance(doc_id, str) and not doc_id):
        raise InvalidInput(f"{where}: field 'id' is missing or empty; every document needs a unique string id.")
    text = obj.get("text")
    if not isinstance(text, str):
        raise InvalidInput(
            f"{where} (id={doc_id!r}): field 'text' must be a string, got {text!r}; "
            "give the document's text (an empty string is allowed)."
        )
    metadata: dict[str, Any] = {k: v for k, v in obj.items() if k not in _CORPUS_KEYS}
    nested = obj.get("metadata")
    if nested is not None:
        if not isinstance(nested, dict):
            raise InvalidInput(
                f"{where} (id={doc_id!r}): 'metadata' must be an object, got {nested!r}."
            )
        metadata.update(nested)
    # the index's rule, here for the line number (numbers every engine stores, storable text)
    check_storable(metadata, f"{where} (id={doc_id!r}): metadata", 0, numbers=True)
    record: dict[str, Any] = {"id": str(doc_id), "text": text}
    for f in _TIME_FIELDS:
        record[f] = obj.get(f)
    if "updated" in obj:
        record["updated"] = obj["updated"]
    record["metadata"] = metadata
    return record


def load_corpus(path: str | Path) -> list[dict[str, Any]]:
    """Read a docs/format.md ``corpus.jsonl``; ids must be unique."""
    p = Path(path)
    docs: list[dict[str, Any]] = []
    seen: set[str] = set()
    for lineno, obj in _read_records(p, "corpus"):
        doc = normalize_document(obj, where=f"{p.name} line {lineno}")
        if doc["id"] in seen:
            raise InvalidInput(
                f"{p.name} line {lineno}: id={doc['id']!r} appears twice; ids must be unique."
            )
        seen.add(doc["id"])
        docs.append(doc)
    return docs


def normalize_query(obj: Mapping[str, Any], *, where: str = "query") -> dict[str, Any]:
    """One docs/format.md query object -> the canonical record (extra keys kept)."""
    qid = obj.get("qid")
    if qid is None or qid == "":
        raise InvalidInput(f"{where}: field 'qid' is missing; every query needs a unique id.")
    query = obj.get("query")
    if not isinstance(query, str) or not query.strip():
        raise InvalidInput(f"{where} (qid={qid!r}): field 'query' must be a non-empty string, got {query!r}.")
    ref = obj.get("reference_date", obj.get("reference_time"))
    rel_in = obj.get("relevance", {})
    if not isinstance(rel_in, dict):
        raise InvalidInput(
            f"{where} (qid={qid!r}): 'relevance' must be an object {{doc_id: grade}}, got {rel_in!r}."
        )
    relevance: dict[str, int] = {}
    for doc_id, grade in rel_in.items():
        if isinstance(grade, bool) or not isinstance(grade, (int, float)) or not 0 <= grade <= 3 or grade != int(grade):
            raise InvalidInput(
                f"{where} (qid={qid!r}): relevance[{doc_id!r}]={grade!r}; grades are integers 0-3."
            )
        relevance[str(doc_id)] = int(grade)
    candidates = obj.get("candidates")
    if candidates is not None:
        if not isinstance(candidates, list):
            raise InvalidInput(
                f"{where} (qid={qid!r}): 'candidates' must be a list of document ids, got {candidates!r}."
            )
        candidates = [str(c) for c in candidates]
    record: dict[str, Any] = {
        "qid": str(qid),
        "query": query,
        "reference_date": ref,
        "relevance": relevance,
        "candidates": candidates,
        "kind": obj.get("kind"),
    }
    for k, v in obj.items():
        if k not in _QUERY_KEYS:
            record[k] = v
    return record


def load_queries(path: str | Path) -> list[dict[str, Any]]:
    """Read a docs/format.md ``queries.jsonl``; qids must be unique."""
    p = Path(path)
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    for lineno, obj in _read_records(p, "queries"):
        q = normalize_query(obj, where=f"{p.name} line {lineno}")
        if q["qid"] in seen:
            raise InvalidInput(f"{p.name} line {lineno}: qid={q['qid']!r} appears twice; qids must be unique.")
        seen.add(q["qid"])
        out.append(q)
    return out


def check_benchmark(corpus: Sequence[Mapping[str, Any]], queries: Sequence[Mapping[str, Any]]) -> None:
    """Raise InvalidInput when a query judges or lists a document the corpus lacks."""
    ids = {d["id"] for d in corpus}
    for q in queries:
        missing = [d for d in q["relevance"] if d not in ids]
        missing += [d for d in (q.get("candidates") or []) if d not in ids]
        if missing:
            raise InvalidInput(
                f"query qid={q['qid']!r} names document(s) {missing[:3]!r} that are not in the corpus; "
                "fix the ids or add the documents."
            )


def load_benchmark(directory: str | Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Read ``corpus.jsonl`` and ``queries.jsonl`` from one directory and cross-check them."""
    d = Path(directory)
    if not d.is_dir():
        raise InvalidInput(
            f"benchmark directory {str(d)!r} does not exist; pass a directory holding "
            "corpus.jsonl and queries.jsonl (see docs/format.md)."
        )
    corpus = load_corpus(d / "corpus.jsonl")
    queries = load_queries(d / "queries.jsonl")
    check_benchmark(corpus, queries)
    return corpus, queries


# --------------------------------------------------------------------------- writing


def write_corpus(docs: Iterable[Mapping[str, Any]], path: str | Path) -> Path:
    """Write documents as docs/format.md JSON Lines (UTF-8, one object a line)."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    with p.open("w", encoding="utf-8") as fh:
        for d in docs:
            fh.write(json.dumps(dict(d), ensure_ascii=False) + "\n")
    return p


def write_queries(queries: Iterable[Mapping[str, Any]], path: str | Path) -> Path:
    """Write queries as docs/format.md JSON Lines."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    with p.open("w", encoding="utf-8") as fh:
        for q in queries:
            fh.write(json.dumps({k: v for k, v in q.items() if v is not None}, ensure_ascii=False) + "\n")
    return p


# --------------------------------------------------------------------------- bundled / shared


def shared_data_dir(start: str | Path | None = None) -> Path | None:
    """``../shared/data`` beside the repository root, or None when absent.

    Looks beside the current directory and beside every parent of this file, so it
    works from a checkout, from tests and from CI (which clones ``shared/`` beside
    the repository).
    """
    candidates: list[Path] = []
    bases = [Path(start)] if start is not None else [Path.cwd(), *Path(__file__).resolve().parents]
    for base in bases:
        candidates += [base / "shared" / "data", base.parent / "shared" / "data"]
    for c in candidates:
        if c.is_dir():
            return c
    return None


def default_suites() -> list[str]:
    """The suites a command runs when none is named: the two bundled ones, plus the
    changelogs when ``../shared/data`` is beside the repository."""
    suites = ["synthetic", "tdw-release"]
    shared = shared_data_dir()
    if shared is not None and (shared / "changelogs").is_dir():
        suites.append("changelogs")
    return suites


def release_snapshot(path: str | Path | None) -> dict[str, Any]:
    return read_release_snapshot(path)[0]


def read_release_snapshot(path: str | Path | None) -> tuple[dict[str, Any], bytes]:
    """The release snapshot (the bundled one for None) and the bytes it was read from."""
    if path is not None:
        p = Path(path)
    else:
        p = BUNDLED_DIR / "release_corpus.json"
        if not p.exists():
            shared = shared_data_dir()
            if shared is None:
                raise InvalidInput(
                    "the release-notes snapshot is neither bundled nor found in ../shared/data; "
                    "pass path=... to a release_corpus.json file."
                )
            p = shared / "tdw-rag-release-corpus" / "release_corpus.json"
    if not p.exists():
        raise InvalidInput(f"release snapshot {str(p)!r} does not exist; pass the path of release_corpus.json.")
    data = p.read_bytes()
    snap = json.loads(data.decode("utf-8"))
    if not isinstance(snap, dict) or "documents" not in snap:
        raise InvalidInput(f"{str(p)!r} is not a release snapshot (expected keys 'fetched_at' and 'documents').")
    return snap, data


def release_benchmark_from_snapshot(
    snapshot: Mapping[str, Any], *, min_releases: int = 4
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """A release snapshot ``{"fetched_at", "documents": [...]}`` -> (corpus, queries).

    One query per project with at least ``min_releases`` releases: the newest release
    (by date, then id for a deterministic tie-break) is graded 3, the one before it 1.
    The reference date of every query is the snapshot time ``fetched_at``.
    """
    fetched_at = snapshot.get("fetched_at")
    corpus = [
        normalize_document(
            {
                "id": d["id"],
                "text": d["text"],
                "date": d.get("date"),
                "metadata": {k: v for k, v in d.items() if k not in ("id", "text", "date")},
            },
            where="release snapshot",
        )
        for d in snapshot["documents"]
    ]
    by_project: dict[str, list[dict[str, Any]]] = {}
    for doc in corpus:
        project = doc["metadata"].get("project") or str(doc["id"]).split("@")[0].split("/")[-1]
        by_project.setdefault(project, []).append(doc)
    queries: list[dict[str, Any]] = []
    for project in sorted(by_project):
        releases = by_project[project]
        if len(releases) < min_releases:
            continue
        releases = sorted(releases, key=lambda r: (to_epoch(r["date"]), r["id"]), reverse=True)
        queries.append(
            {
                "qid": f"latest-{project}",
                "query": RELEASE_QUERY.format(project=project),
                "reference_date": fetched_at,
                "relevance": {releases[0]["id"]: 3, releases[1]["id"]: 1},
                "candidates": None,
                "kind": "latest",
            }
        )
    return corpus, queries


def tdw_release_benchmark(
    path: str | Path | None = None, *, min_releases: int = 4
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The peer's release-notes benchmark as docs/format.md (corpus, queries): 242 docs, 13 queries.

    Reads the bundled snapshot (MIT, see ``eval/bundled/LICENSE``), else
    ``../shared/data/tdw-rag-release-corpus/release_corpus.json``, else ``path``.
    """
    return release_benchmark_from_snapshot(release_snapshot(path), min_releases=min_releases)
