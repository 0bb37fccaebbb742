"""The metadata filter language: parsing, the numpy semantics, and the Qdrant renderer
agreeing with the numpy mask on random filters (the SQL renderer: tests/stores/test_filters_engines.py)."""

from __future__ import annotations

import random

import numpy as np
import pytest

from chronorank.errors import InvalidInput
from chronorank.filters import And, Cond, Or, and_filters, filter_mask, filter_sql, parse_filter

METAS = [
    {"project": "flask", "year": 2021, "tier": "free", "ok": True},
    {"project": "flask", "year": 2024.0, "tier": "pro"},
    {"project": "click", "year": 2019, "ok": False},
    {"project": "attrs", "year": "2020", "tier": "pro"},  # a string year never satisfies a range
    {"project": "click", "ok": 1},  # 1 is not True
    {},
]


def ids(flt):
    return np.flatnonzero(filter_mask(flt, METAS)).tolist()


def test_parse_builds_the_tree():
    assert parse_filter({"project": "flask"}) == Cond("project", "$eq", "flask")
    assert parse_filter({"project": "flask", "year": {"$gte": 2020, "$lt": 2024}}) == And(
        (Cond("project", "$eq", "flask"), Cond("year", "$gte", 2020), Cond("year", "$lt", 2024))
    )
    assert parse_filter({"$or": [{"a": 1}, {"b": {"$in": [2, 3]}}]}) == Or(
        (Cond("a", "$eq", 1), Cond("b", "$in", (2, 3)))
    )
    assert parse_filter(None) is None and parse_filter({}) is None
    assert and_filters(None, {"a": 1}, None) == Cond("a", "$eq", 1)


@pytest.mark.parametrize(
    ("bad", "match"),
    [
        ({"a": {"$like": "x"}}, "unknown operator"),
        ({"$not": [{"a": 1}]}, "one non-empty filter"),
        ({"$nor": [{"a": 1}]}, r"\$and"),
        ({'it"s': 1}, "double quote"),
        ({"uid": 2**64}, "64 bits"),
        ({"uid": {"$gt": 2**53 + 1}}, "2\\^53"),
        ({"date": {"$gte": "not a date"}}, "could not parse"),
        ({"a": {"$in": []}}, "non-empty list"),
        ({"a": {"$gte": "2020-01-01"}}, "numbers only"),
        ({"a": {"$gt": True}}, "numbers only"),
        ({"a": [1, 2]}, "string, number or bool"),
        ({"a": float("nan")}, "finite"),
        ("project == flask", "give a dict"),
        ({"$and": []}, "non-empty list"),
    ],
)
def test_bad_filters_name_the_problem(bad, match):
    with pytest.raises(InvalidInput, match=match):
        parse_filter(bad)


def test_numpy_semantics():
    assert ids({"project": "flask"}) == [0, 1]
    assert ids({"project": {"$in": ["click", "attrs"]}}) == [2, 3, 4]
    assert ids({"project": {"$nin": ["click", "attrs"]}}) == [0, 1, 5]  # a missing field is "not in"
    assert ids({"year": {"$gte": 2020}}) == [0, 1]  # "2020" is a string: no range holds
    assert ids({"year": 2024}) == [1]  # 2024 == 2024.0
    assert ids({"ok": True}) == [0]  # 1 is not True
    assert ids({"ok": 1}) == [4]
    assert ids({"tier": {"$ne": "pro"}}) == [0, 2, 4, 5]
    assert ids({"$or": [{"project": "attrs"}, {"year": {"$lt": 2020}}]}) == [2, 3]
    assert ids({"$and": [{"project": "flask"}, {"$or": [{"tier": "pro"}, {"ok": True}]}]}) == [0, 1]
    assert ids(None) == list(range(len(METAS)))


def test_sql_is_bound_parameters_only():
    params: dict = {}
    sql = filter_sql({"pro'ject": {"$in": ["a'; DROP TABLE x; --"]}, "year": {"$gte": 2020}}, "m", params)
    assert "DROP" not in sql and "pro'ject" not in sql
    assert params == {"mf0": "pro'ject", "mf1": ['"a\'; DROP TABLE x; --"'], "mf2": "year", "mf3": 2020.0}


def _random_filter(rng: random.Random, depth: int = 0) -> dict:
    if depth < 2 and rng.random() < 0.35:
        op = rng.choice(["$and", "$or"])
        return {op: [_random_filter(rng, depth + 1) for _ in range(rng.randint(1, 3))]}
    field = rng.choice(["project", "year", "tier", "ok", "absent"])
    kind = rng.choice(["eq", "ne", "in", "nin", "range"])
    values = {"project": ["flask", "click", "attrs"], "year": [2019, 2021, 2024.0, 2020],
              "tier": ["free", "pro"], "ok": [True, False, 1], "absent": ["x", 3]}[field]
    if kind == "range":
        return {field: {rng.choice(["$gt", "$gte", "$lt", "$lte"]): rng.choice([2019, 2020.5, 2021, 2024])}}
    if kind in ("in", "nin"):
        return {field: {f"${kind}": rng.sample(values, rng.randint(1, len(values)))}}
    return {field: {f"${kind}": rng.choice(values)}}


def test_qdrant_renderer_agrees_with_numpy():
    pytest.importorskip("qdrant_client")
    from qdrant_client import QdrantClient, models

    from chronorank.filters import filter_qdrant

    client = QdrantClient(location=":memory:")
    client.create_collection("f", vectors_config=models.VectorParams(size=2, distance=models.Distance.COSINE))
    client.upsert("f", points=[
        models.PointStruct(id=i, vector=[1.0, 0.5], payload={"metadata": m}) for i, m in enumerate(METAS)
    ])
    rng = random.Random(7)
    for _ in range(150):
        flt = _random_filter(rng)
        got = sorted(p.id for p in client.scroll("f", scroll_filter=filter_qdrant(flt), limit=100)[0])
        assert got == ids(flt), flt


def test_index_filter_columns_follow_each_index_state():
    """The index keeps each filtered field as a column per state: a document added (or
    replaced) after a filtered search is filtered by its own metadata, not a stale column."""
    from chronorank.index import TemporalIndex

    idx = TemporalIndex(embedder=None)
    idx.add([{"id": "a", "text": "backup release notes", "tenant": "x", "n": 1},
             {"id": "b", "text": "backup release notes", "tenant": "y", "n": 5}])
    assert idx.search("backup", now="2026-01-01", filter={"tenant": "x"}).ranked_ids == ["a"]
    idx.add([{"id": "c", "text": "backup release notes", "tenant": "x", "n": 9},
             {"id": "a", "text": "backup release notes", "tenant": "y", "n": 1}])
    assert idx.search("backup", now="2026-01-01", filter={"tenant": "x"}).ranked_ids == ["c"]
    got = idx.search("backup", now="2026-01-01", filter={"n": {"$gte": 5}}).ranked_ids
    assert sorted(got) == ["b", "c"]
