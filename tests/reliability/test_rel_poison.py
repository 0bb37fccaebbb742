"""Documents that add() used to accept and save() could never write (issue 18, item 3), float
time columns (item 4) and the smaller boundary checks of item 9."""

from __future__ import annotations

import numpy as np
import pytest

from chronorank.errors import InvalidInput
from chronorank.index import TemporalIndex
from chronorank.rerank import TemporalReranker

NOW = "2026-01-01"


def _circular() -> dict:
    d: dict = {"a": 1}
    d["self"] = d
    return d


def _deep(n: int) -> dict:
    d: dict = {}
    for _ in range(n):
        d = {"x": d}
    return d


# (document, the field the error must name)
POISONED = {
    "surrogate_in_id": ({"id": "a\ud800b", "text": "alpha"}, "id"),
    "surrogate_in_metadata_value": ({"id": "m", "text": "alpha", "metadata": {"tag": "x\udcff"}}, "metadata['tag']"),
    "surrogate_in_metadata_key": ({"id": "k", "text": "alpha", "metadata": {"t\ud800": 1}}, "key"),
    "surrogate_in_top_level_field": ({"id": "f", "text": "alpha", "source": "\ud83d"}, "metadata['source']"),
    "surrogate_in_date": ({"id": "d", "text": "alpha", "date": "2024-01-01\ud800"}, "date"),
    "surrogate_in_valid_to": ({"id": "v", "text": "alpha", "valid_to": "\udfff"}, "valid_to"),
    "tuple_metadata_key": ({"id": "t", "text": "alpha", "metadata": {("a", "b"): 1}}, "key ('a', 'b')"),
    "int_metadata_key": ({"id": "i", "text": "alpha", "metadata": {1: "x"}}, "key 1"),
    "circular_metadata": ({"id": "c", "text": "alpha", "metadata": _circular()}, "circular"),
    "deep_metadata": ({"id": "deep", "text": "alpha", "metadata": _deep(1000)}, "deeper than"),
    "surrogate_in_nested_list": ({"id": "n", "text": "alpha", "metadata": {"tags": ["ok", "\ud800"]}}, "metadata['tags'][1]"),
}


@pytest.mark.parametrize("kind", sorted(POISONED))
def test_poisoned_document_is_refused_at_add_and_later_saves_work(tmp_path, kind):
    doc, field = POISONED[kind]
    idx = TemporalIndex(embedder=None, bad_dates="missing")
    idx.add([{"id": "good", "text": "alpha beta", "date": "2024-01-01"}])
    with pytest.raises(InvalidInput) as ei:
        idx.add([{"id": "fine", "text": "alpha"}, doc])
    msg = str(ei.value)
    assert "docs[1]" in msg and repr(doc["id"]) in msg, msg  # names the document
    assert field in msg, msg  # and the field
    assert len(idx) == 1  # the batch is refused whole
    idx.save(tmp_path / "i")  # the index stays saveable
    again = TemporalIndex.load(tmp_path / "i")
    assert again.ids == ["good"]


def test_storable_metadata_round_trips(tmp_path):
    meta = {"tags": ["a", "b"], "n": 3, "f": 1.5, "ok": True, "none": None, "nested": _deep(20), "t": (1, 2)}
    idx = TemporalIndex(embedder=None)
    idx.add([{"id": "x", "text": "alpha", "metadata": meta}])
    idx.save(tmp_path / "i")
    got = TemporalIndex.load(tmp_path / "i").get("x")["metadata"]
    assert got == {**meta, "t": [1, 2]}


def test_failed_add_does_not_set_the_vector_width():
    idx = TemporalIndex(embedder=None)
    with pytest.raises(InvalidInput):
        idx.add([{"id": "a", "text": "alpha", "date": "not a date"}], vectors=np.ones((1, 3)))
    assert idx.dim is None
    idx.add([{"id": "a", "text": "alpha"}], vectors=np.ones((1, 5)))  # another width is fine now
    assert idx.dim == 5


DOCS_MS = [("old", 0.9, "2015-01-01T00:00:00Z"), ("new", 0.85, "2025-12-01T00:00:00Z")]


@pytest.mark.parametrize("as_type", ["float64_array", "int64_array", "list"])
def test_millisecond_timestamps_rank_the_same_in_every_container(as_type):
    from chronorank.timeparse import to_epoch

    ms = [to_epoch(t) * 1000.0 for _, _, t in DOCS_MS]
    times = {"float64_array": np.array(ms, dtype=np.float64), "int64_array": np.array(ms, dtype=np.int64),
             "list": [int(x) for x in ms]}[as_type]
    r = TemporalReranker()
    res = r.rerank_columns("latest release notes", [s for _, s, _ in DOCS_MS], times,
                           ids=[i for i, _, _ in DOCS_MS], now=NOW)
    assert [h.id for h in res][0] == "new"
    ages = {h.id: h.age_days for h in res}
    assert ages["old"] == pytest.approx((to_epoch(NOW) - to_epoch("2015-01-01T00:00:00Z")) / 86400)
    assert ages["new"] == pytest.approx((to_epoch(NOW) - to_epoch("2025-12-01T00:00:00Z")) / 86400)


@pytest.mark.parametrize("value", [1e300, -1e300, np.inf, 1e25])
def test_out_of_range_float_times_are_missing_not_brand_new(value):
    # relative recency off: with it the one dated candidate is its own anchor (age 0, weight 1),
    # and the undated fill (the dated candidates' median) is 1 too
    r = TemporalReranker(relative_recency=None)
    res = r.rerank_columns("latest release notes", [0.9, 0.85], np.array([value, 1.76e9]), ids=["bad", "ok"], now=NOW)
    bad = next(h for h in res if h.id == "bad")
    assert np.isnan(bad.age_days)
    assert any("undated" in n for n in bad.notes)
    assert bad.decay < 1.0  # the missing-date weight, not "brand new"


@pytest.mark.parametrize("top_k", ["3", 2.5, True])
def test_top_k_of_the_wrong_type_is_invalid_input(top_k):
    r = TemporalReranker()
    with pytest.raises(InvalidInput, match="top_k"):
        r.rerank_columns("q", [0.5, 0.4], [1.7e9, 1.6e9], top_k=top_k, now=NOW)
