"""Metadata numbers no engine can represent are refused at ``add()`` by every engine, with one
rule (issue 31, item 5): integers within signed 64 bits, finite floats, nested values too. An
accepted document never breaks a later query (PostgreSQL raised NumericValueOutOfRange on every
range filter of a key holding 10**400; NaN became null there but stayed NaN in the index)."""

from __future__ import annotations

import math

import pytest
from store_cases import NOW, STORES

from chronorank.errors import InvalidInput

CFG = "index(missing_date='keep', relative_recency=none, topical_margin=none, lead_weight=0)"
GOOD = [
    {"id": "a", "text": "alpha release notes", "date": "2024-01-01", "n": 5},
    {"id": "b", "text": "alpha release notes", "date": "2024-02-01", "n": 2**63 - 1},
    {"id": "c", "text": "alpha release notes", "date": "2024-03-01", "n": -(2**63), "x": 1e308},
]


@pytest.mark.parametrize("factory", STORES, indirect=True)
@pytest.mark.parametrize("value,needle", [
    (10**400, "64-bit"),
    (2**63, "64-bit"),
    (-(2**63) - 1, "64-bit"),
    (math.nan, "finite"),
    (math.inf, "finite"),
    (-math.inf, "finite"),
    ({"deep": [1, 10**30]}, "64-bit"),
], ids=["10e400", "2e63", "-2e63-1", "nan", "inf", "-inf", "nested"])
def test_unrepresentable_metadata_numbers_are_refused_by_every_engine(factory, value, needle):
    s = factory(config=CFG)
    s.add(GOOD)
    with pytest.raises(InvalidInput, match=needle) as ei:
        s.add([{"id": "ok", "text": "alpha fine"}, {"id": "bad", "text": "alpha release", "n": value}])
    msg = str(ei.value)
    assert "docs[1]" in msg and "'n'" in msg  # names the document and the field
    # nothing of the batch was written, and range filters on the key still work
    got = {h.id for h in s.search("alpha release", k=10, now=NOW)}
    assert got == {"a", "b", "c"}
    assert {h.id for h in s.search("alpha release", k=10, now=NOW, filter={"n": {"$gt": 0}})} == {"a", "b"}
    assert {h.id for h in s.search("alpha release", k=10, now=NOW, filter={"n": {"$lt": 0}})} == {"c"}
