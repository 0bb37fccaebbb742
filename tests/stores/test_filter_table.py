"""One filter meaning on every engine: a table of filters, each with the documents it must
return (written from the semantics in :mod:`chronorank.filters`, not from an engine's answer),
run against the index, Qdrant local mode, Qdrant's engine (edge) and PostgreSQL + pgvector.

The rows cover flat dotted keys, list values, exact 64-bit integers (2^53 + 1 and two ids that
float64 cannot tell apart), a key with a quote, ``$not``, and the document's own dates
(``date`` / ``valid_from`` / ``valid_to``) with ISO and partial dates."""

from __future__ import annotations

from typing import Any

import pytest
from store_cases import NOW, STORES

BIG = 1234567890123456789  # float64 rounds it and BIG + 1 to the same number
DOCS: list[dict[str, Any]] = [
    {"id": "d0", "date": "2024-01-15",
     "metadata": {"app.tenant": "a", "tags": ["x", "y"], "uid": BIG, "year": 2024, "it's": "q"}},
    {"id": "d1", "date": "2024-03-10",
     "metadata": {"app": {"tenant": "a"}, "tags": "x", "uid": BIG + 1, "year": 2024.0}},
    {"id": "d2", "date": "2023-06-01", "valid_from": "2023-07-01", "valid_to": "2024-02-01",
     "metadata": {"tags": [], "uid": 2**53 + 1, "year": "2024"}},
    {"id": "d3", "date": "2022-12-31", "metadata": {"uid": 2**53, "tags": ["y"], "app.tenant": "b"}},
    {"id": "d4", "metadata": {}},
]
ALL = {"d0", "d1", "d2", "d3", "d4"}

TABLE: list[tuple[dict[str, Any], set[str]]] = [
    ({"app.tenant": "a"}, {"d0"}),  # a flat key: d1's nested {"app": {"tenant"}} is another key
    ({"app.tenant": {"$ne": "a"}}, ALL - {"d0"}),
    ({"tags": "x"}, {"d0", "d1"}),  # a list matches when an element does
    ({"tags": {"$in": ["y"]}}, {"d0", "d3"}),
    ({"tags": {"$ne": "x"}}, {"d2", "d3", "d4"}),
    ({"uid": BIG}, {"d0"}),
    ({"uid": BIG + 1}, {"d1"}),
    ({"uid": 2**53 + 1}, {"d2"}),
    ({"uid": 2**53}, {"d3"}),
    ({"uid": {"$in": [BIG + 1, 2**53]}}, {"d1", "d3"}),
    ({"uid": {"$nin": [BIG]}}, ALL - {"d0"}),
    ({"year": 2024}, {"d0", "d1"}),  # 2024 == 2024.0; the string "2024" is not a number
    ({"year": {"$gte": 2024}}, {"d0", "d1"}),
    ({"it's": "q"}, {"d0"}),
    ({"date": "2024-01"}, {"d0"}),
    ({"date": {"$gte": "2024"}}, {"d0", "d1"}),
    ({"date": {"$lt": "2023"}}, {"d3"}),
    ({"date": {"$lte": "2023"}}, {"d2", "d3"}),  # d2 starts at its valid_from, 2023-07-01
    ({"date": {"$in": ["2022-12", "2024-03"]}}, {"d1", "d3"}),
    ({"date": {"$ne": "2024"}}, {"d2", "d3", "d4"}),
    ({"valid_from": "2023-07"}, {"d2"}),
    ({"valid_to": {"$lt": "2024-06-01"}}, {"d2"}),
    ({"$not": {"tags": "x"}}, {"d2", "d3", "d4"}),
    ({"$or": [{"app.tenant": "b"}, {"uid": 2**53 + 1}]}, {"d2", "d3"}),
    ({"$and": [{"tags": "y"}, {"$not": {"app.tenant": "b"}}]}, {"d0"}),
]


@pytest.mark.parametrize("factory", STORES, indirect=True)
def test_every_engine_returns_the_table(factory: Any) -> None:
    store = factory()
    store.add([{**d, "text": "release notes for the parser"} for d in DOCS])
    opts = {"method": "exact"} if factory.kind == "pgvector" else {}
    wrong = []
    for flt, want in TABLE:
        got = set(store.search("release notes", k=10, now=NOW, filter=flt, **opts).ids)
        if got != want:
            wrong.append((flt, sorted(got), sorted(want)))
    assert not wrong, wrong
