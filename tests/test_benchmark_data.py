"""Checks on the labelled evaluation data under ``benchmarks/data/``.

Schema, counts, splits, well-formed target intervals, duplicates, and that every
relevance id exists in the corpus its query file points to. Checks that need the
shared changelog corpus (``../shared`` next to the repository) are skipped when it
is absent. Standard library only; no network.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import re
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "benchmarks" / "data"
INTENT = DATA / "intent_queries.jsonl"
MODES = {"recent", "as_of", "range", "specific", "timeless"}
ISO_Z = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$")
CYRILLIC = re.compile(r"[\u0400-\u04FF]")


def _shared_changelogs() -> Path | None:
    for base in (ROOT.parent / "shared", ROOT / "shared"):
        d = base / "data" / "changelogs"
        if (d / "corpus.jsonl").is_file() and (d / "queries.jsonl").is_file():
            return d
    return None


SHARED = _shared_changelogs()
needs_shared = pytest.mark.skipif(SHARED is None, reason="needs ../shared/data (the team's data folder beside the repository; a clone has none)")


def _jsonl(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def _ts(value: str) -> datetime:
    assert ISO_Z.match(value), value
    return datetime.strptime(value, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc)


@pytest.fixture(scope="module")
def intents() -> list[dict]:
    return _jsonl(INTENT)


# --------------------------------------------------------------------------- intent set


def test_intent_schema(intents):
    keys = {"id", "query", "lang", "now", "time_sensitive", "mode", "target", "split", "source"}
    for r in intents:
        assert set(r) == keys, r
        assert re.fullmatch(r"(en|ru)-\d{4}", r["id"]), r
        assert r["id"].startswith(r["lang"] + "-")
        assert r["lang"] in ("en", "ru")
        assert isinstance(r["query"], str) and r["query"] == r["query"].strip() and r["query"]
        assert r["mode"] in MODES, r
        assert r["time_sensitive"] in (0, 1)
        assert r["time_sensitive"] == int(r["mode"] in ("recent", "range", "as_of")), r
        assert r["split"] in ("train", "test")
        assert isinstance(r["source"], str) and r["source"]
        _ts(r["now"])


def test_intent_counts(intents):
    langs = Counter(r["lang"] for r in intents)
    assert len(intents) >= 650
    assert langs["ru"] >= 170
    modes = Counter(r["mode"] for r in intents)
    for mode in MODES:
        assert modes[mode] / len(intents) >= 0.08, modes
    for lang in ("en", "ru"):
        per = Counter(r["mode"] for r in intents if r["lang"] == lang)
        assert set(per) == MODES, (lang, per)
    assert len({r["now"] for r in intents}) >= 4
    assert len({r["source"] for r in intents}) >= 12


def test_intent_unique(intents):
    ids = [r["id"] for r in intents]
    assert len(ids) == len(set(ids))
    norm = [" ".join(r["query"].lower().split()) for r in intents]
    dup = [q for q, n in Counter(norm).items() if n > 1]
    assert not dup, dup


def test_intent_language_script(intents):
    for r in intents:
        assert bool(CYRILLIC.search(r["query"])) == (r["lang"] == "ru"), r


def test_intent_split_is_hash_of_id(intents):
    for r in intents:
        h = int(hashlib.sha256(r["id"].encode("utf-8")).hexdigest()[:8], 16)
        assert r["split"] == ("train" if h % 100 < 65 else "test"), r
    test = [r for r in intents if r["split"] == "test"]
    assert 0.25 <= len(test) / len(intents) <= 0.45
    for lang in ("en", "ru"):
        assert {r["mode"] for r in test if r["lang"] == lang} == MODES


def test_intent_targets_well_formed(intents):
    for r in intents:
        t, mode = r["target"], r["mode"]
        if mode in ("recent", "timeless"):
            assert t is None, r
            continue
        if mode == "specific":
            if t is None:
                continue
            start, end = _ts(t["start"]), _ts(t["end"])  # only a named year
            assert (start.month, start.day, end.year, end.month, end.day) == (
                1,
                1,
                start.year + 1,
                1,
                1,
            ), r
            continue
        assert isinstance(t, dict) and set(t) == {"start", "end"}, r
        assert t["start"] is not None or t["end"] is not None, r
        if mode == "as_of":
            assert t["start"] is not None and t["end"] is not None, r
        if t["start"] is not None and t["end"] is not None:
            assert _ts(t["start"]) < _ts(t["end"]), r
        else:
            for v in t.values():
                if v is not None:
                    _ts(v)


def test_intent_targets_mostly_in_the_past(intents):
    future = [
        r
        for r in intents
        if r["target"] and r["target"]["start"] and _ts(r["target"]["start"]) > _ts(r["now"])
    ]
    assert len(future) <= 3, future


def test_intent_file_matches_its_source():
    """The jsonl is exactly what the helper builds from the hand-written sources."""
    path = DATA / "tools" / "build_intent.py"
    spec = importlib.util.spec_from_file_location("_build_intent", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert mod.build() == _jsonl(INTENT)


def test_intent_relative_examples():
    spec = importlib.util.spec_from_file_location(
        "_build_intent2", DATA / "tools" / "build_intent.py"
    )
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    now = datetime(2026, 8, 20, 12, tzinfo=timezone.utc)

    def r(code, at=now):
        got = mod.resolve(code, at)
        return tuple(mod.iso(x) for x in got)

    assert r("lastweek") == ("2026-08-10T00:00:00Z", "2026-08-17T00:00:00Z")
    assert r("past:30d") == ("2026-07-21T12:00:00Z", "2026-08-20T12:00:00Z")
    assert r("lastq") == ("2026-04-01T00:00:00Z", "2026-07-01T00:00:00Z")
    assert r("after:2021") == ("2022-01-01T00:00:00Z", "2026-08-20T12:00:00Z")
    assert r("before:2020") == (None, "2020-01-01T00:00:00Z")
    assert r("span:2019..2021") == ("2019-01-01T00:00:00Z", "2022-01-01T00:00:00Z")
    assert r("dny:05-01") == ("2026-05-01T00:00:00Z", "2026-05-02T00:00:00Z")
    march = datetime(2026, 3, 10, 9, 30, tzinfo=timezone.utc)
    assert r("dny:05-01", march) == ("2025-05-01T00:00:00Z", "2025-05-02T00:00:00Z")
    jan = datetime(2026, 1, 2, 8, tzinfo=timezone.utc)
    assert r("lastweek", jan) == ("2025-12-22T00:00:00Z", "2025-12-29T00:00:00Z")
    assert r("lastq", jan) == ("2025-10-01T00:00:00Z", "2026-01-01T00:00:00Z")
    assert r("ago:2w") == ("2026-08-03T00:00:00Z", "2026-08-10T00:00:00Z")


# --------------------------------------------------------------------------- changelog copies

REWORDED = {
    "changelogs_reworded": (DATA / "changelogs_reworded" / "queries.jsonl", 6),
    "changelogs_ru": (DATA / "changelogs_ru" / "queries.jsonl", 4),
}


def _skeleton(q: dict) -> str:
    """The query with its project, version, year and date replaced by placeholders."""
    kind, text = q["kind"], q["query"].lower()
    rest = q["qid"][len(kind) + 1 :]
    project, _, tail = rest.partition("-")
    if kind == "as_of_date":
        text = re.sub(r"\d{4}-\d{2}-\d{2}|\d{1,2}\.\d{2}\.\d{4}|\d{4}", "<y>", text)
        text = re.sub(r"\d{1,2}(st|nd|rd|th)?", "<d>", text)
        text = re.sub(r"\b[a-zа-я]+(?= <d>)|(?<=<d> )[a-zа-я]+", "<m>", text)
    elif tail:
        text = text.replace(tail.lower(), "<x>")
    return text.replace(project, "<p>")


@pytest.mark.parametrize("name", sorted(REWORDED))
def test_changelog_copy_schema_and_variety(name):
    path, min_phrasings = REWORDED[name]
    rows = _jsonl(path)
    assert len(rows) == 196
    assert len({r["qid"] for r in rows}) == len(rows)
    assert len({r["query"] for r in rows}) == len(rows)
    kinds = Counter(r["kind"] for r in rows)
    assert kinds == {"latest": 20, "as_of": 76, "version": 60, "as_of_date": 40}
    for kind in kinds:
        skeletons = {_skeleton(r) for r in rows if r["kind"] == kind}
        assert len(skeletons) >= min_phrasings, (kind, skeletons)
    for r in rows:
        assert r["relevance"] and all(1 <= g <= 3 for g in r["relevance"].values())
        if name == "changelogs_ru":
            assert CYRILLIC.search(r["query"]), r


@needs_shared
@pytest.mark.parametrize("name", sorted(REWORDED))
def test_changelog_copy_matches_source(name):
    path, _ = REWORDED[name]
    src = {r["qid"]: r for r in _jsonl(SHARED / "queries.jsonl")}
    rows = _jsonl(path)
    assert [r["qid"] for r in rows] == list(src)
    corpus_ids = {d["id"] for d in _jsonl(SHARED / "corpus.jsonl")}
    for r in rows:
        orig = src[r["qid"]]
        assert set(r) == set(orig)
        for key in orig:
            if key != "query":
                assert r[key] == orig[key], (r["qid"], key)
        assert r["query"] != orig["query"]
        assert set(r["relevance"]) <= corpus_ids


MONTHS_EN = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
]
MONTHS_RU = [
    "января",
    "февраля",
    "марта",
    "апреля",
    "мая",
    "июня",
    "июля",
    "августа",
    "сентября",
    "октября",
    "ноября",
    "декабря",
]


@pytest.mark.parametrize("name", sorted(REWORDED))
def test_changelog_copy_dates_match_labels(name):
    path, _ = REWORDED[name]
    for r in _jsonl(path):
        text = r["query"].lower()
        if r["kind"] == "as_of":
            assert r["qid"].rsplit("-", 1)[1] in text
        if r["kind"] == "version":
            assert r["qid"].split("-", 2)[2].lower() in text
        if r["kind"] != "as_of_date":
            continue
        d = datetime.strptime(r["target_date"], "%Y-%m-%d")
        assert "before" not in text and "до " not in text, r
        forms = {
            d.strftime("%Y-%m-%d"),
            d.strftime("%d.%m.%Y"),
            f"{d.day} {MONTHS_EN[d.month - 1]} {d.year}",
            f"{MONTHS_EN[d.month - 1]} {d.day}, {d.year}",
            f"{MONTHS_EN[d.month - 1][:3]} {d.day} {d.year}",
            f"{d.day} {MONTHS_RU[d.month - 1]} {d.year}",
        }
        ordinal = re.sub(r"(\d+)(st|nd|rd|th)", r"\1", text)
        assert any(f in text or f in ordinal for f in forms), r


# --------------------------------------------------------------------------- FORMAT.md examples


@pytest.mark.parametrize("name", ["pricing", "api_login"])
def test_example_pairs(name):
    corpus = _jsonl(DATA / "examples" / name / "corpus.jsonl")
    queries = _jsonl(DATA / "examples" / name / "queries.jsonl")
    ids = [d["id"] for d in corpus]
    assert len(ids) == len(set(ids))
    for d in corpus:
        assert d["text"] and d["date"]
        datetime.strptime(d["date"], "%Y-%m-%d")
    assert len({q["qid"] for q in queries}) == len(queries)
    kinds = set()
    for q in queries:
        datetime.strptime(q["reference_date"], "%Y-%m-%d")
        assert q["kind"] in MODES
        kinds.add(q["kind"])
        assert q["relevance"] and set(q["relevance"]) <= set(ids)
        assert 3 in q["relevance"].values()
        for doc_id in q["relevance"]:
            doc = next(d for d in corpus if d["id"] == doc_id)
            assert doc["date"] <= q["reference_date"]
    assert {"recent", "as_of"} <= kinds


def test_pricing_example_labels():
    corpus = {d["id"]: d for d in _jsonl(DATA / "examples" / "pricing" / "corpus.jsonl")}
    queries = {q["qid"]: q for q in _jsonl(DATA / "examples" / "pricing" / "queries.jsonl")}
    dates = {d["date"] for d in corpus.values() if d["metadata"]["doc_key"] == "pricing-page"}
    assert {"2021-03-11", "2023-08-02", "2026-05-14"} <= dates and len(dates) >= 4
    top = {qid: [k for k, g in q["relevance"].items() if g == 3] for qid, q in queries.items()}
    assert corpus[top["pricing-now"][0]]["date"] == max(dates)
    assert corpus[top["pricing-2023"][0]]["date"].startswith("2023")
    assert queries["pricing-seat"]["kind"] == "timeless"


def test_api_login_example_validity_chain():
    corpus = {d["id"]: d for d in _jsonl(DATA / "examples" / "api_login" / "corpus.jsonl")}
    v1, v2 = corpus["auth-v1"], corpus["auth-v2"]
    assert v1["metadata"]["doc_key"] == v2["metadata"]["doc_key"]
    assert v1["valid_to"] == v2["valid_from"] and v2["valid_to"] is None
    assert v1["valid_from"] < v1["valid_to"]
    assert "POST /api/v1/login" in v1["text"] and "/api/v1/login" not in v2["text"]
    queries = {q["qid"]: q for q in _jsonl(DATA / "examples" / "api_login" / "queries.jsonl")}
    assert queries["login-now"]["relevance"]["auth-v2"] == 3
    assert queries["login-v1"]["relevance"]["auth-v1"] == 3
    assert queries["login-asof-2025"]["relevance"]["auth-v1"] == 3


# --------------------------------------------------------------------------- the READMEs' paths

_PATH = re.compile(r"`([^`\s]+)`")


def _candidates(token: str) -> list[str]:
    brace = re.search(r"\{([^}]*)\}", token)
    if brace:
        return [token[: brace.start()] + alt + token[brace.end():] for alt in brace.group(1).split(",")]
    return [token]


@pytest.mark.parametrize("readme", sorted((ROOT / "benchmarks" / "data").glob("**/README.md")),
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_readme_names_only_files_that_exist(readme: Path) -> None:
    """Every path a data README names is in the repository, except ``../shared/...``, which the
    README must say is not."""
    text = readme.read_text(encoding="utf-8")
    missing = []
    for token in _PATH.findall(text):
        if "/" not in token and not token.endswith((".jsonl", ".py", ".json", ".txt", ".md")):
            continue
        if "<" in token or "*" in token or token.startswith(("http", "-")):
            continue
        if token.startswith("../shared"):
            assert "not in this repository" in text, f"{readme} names {token} without saying it is outside"
            continue
        bases = [readme.parent, ROOT / "benchmarks" / "data", ROOT, readme.parent / "examples"]
        if not any((b / c).exists() for b in bases for c in _candidates(token)):
            missing.append(token)
    assert not missing, f"{readme.relative_to(ROOT)} names files that are not in the repository: {missing}"


def test_time_semantics_fixture():
    """The issue-16 fixture: >= 30 versioned documents over 5 topics, >= 60 questions."""
    folder = DATA / "time_semantics"
    corpus = {d["id"]: d for d in _jsonl(folder / "corpus.jsonl")}
    queries = _jsonl(folder / "queries.jsonl")
    assert len(corpus) >= 30 and len(queries) >= 60
    assert {d["metadata"]["topic"] for d in corpus.values()} == {"policy", "pricing", "sla", "api", "product"}
    assert sum(1 for d in corpus.values() if d.get("date") is None) == 1
    assert any(d.get("valid_to") for d in corpus.values())
    assert len({q["qid"] for q in queries}) == len(queries)
    for q in queries:
        assert set(q["relevance"]) <= set(corpus), q["qid"]
        assert list(q["relevance"].values()).count(3) == 1, q["qid"]
    kinds = {q["kind"] for q in queries}
    assert {"period", "as_of", "before", "after", "current", "timeless", "distractor"} <= kinds
