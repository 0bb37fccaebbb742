"""Dates a corpus gives: bare numbers read as years, YYYYMMDD dates or epoch time (never minutes
after 1970), ``date_unit=`` for the rest, and the report ``add()`` keeps (dated by field,
undated, unreadable) with a warning when nothing is dated."""

from __future__ import annotations

import warnings
from datetime import datetime, timezone

import numpy as np
import pytest

from chronorank.errors import DateWarning, InvalidInput
from chronorank.index import TemporalIndex
from chronorank.timeparse.numbers import read_numbers


def _epoch(*ymd: int) -> float:
    return datetime(*ymd, tzinfo=timezone.utc).timestamp()


def test_bare_numbers_are_years_compact_dates_or_epoch_time() -> None:
    values = [2022, 20220304, 1_700_000_000, 1_700_000_000_000, 1.7e9, "2022", None, True]
    is_num, epochs, refused = read_numbers(values)
    assert is_num.tolist() == [True, True, True, True, True, False, False, False]
    assert epochs[0] == _epoch(2022, 1, 1) and epochs[1] == _epoch(2022, 3, 4)
    assert epochs[2] == epochs[3] == 1_700_000_000 and epochs[4] == 1.7e9
    assert not refused.any()


@pytest.mark.parametrize("value", [0, 86400, 12345678, 20221332, 999, 1.5, -5])
def test_a_number_of_unclear_unit_is_refused(value: float) -> None:
    _, epochs, refused = read_numbers([value])
    assert refused.tolist() == [True] and np.isnan(epochs[0])


def test_date_unit_reads_every_number_one_way() -> None:
    assert read_numbers([86400], "s")[1][0] == 86400
    assert read_numbers([86_400_000], "ms")[1][0] == 86400
    assert read_numbers([1999], "year")[1][0] == _epoch(1999, 1, 1)
    assert read_numbers([19990231], "yyyymmdd")[2].tolist() == [True]  # no 31 February
    with pytest.raises(InvalidInput, match="date_unit"):
        read_numbers([1], "days")


def test_add_reports_dates_by_field_and_reads_numbers_so() -> None:
    idx = TemporalIndex(embedder="hashing", bad_dates="missing")
    with warnings.catch_warnings():
        warnings.simplefilter("error", DateWarning)
        idx.add([
            {"id": "y", "text": "a", "date": 2022},
            {"id": "c", "text": "b", "date": 20220304},
            {"id": "v", "text": "c", "valid_from": "2023-01-01"},
            {"id": "u", "text": "d"},
            {"id": "bad", "text": "e", "date": "someday"},
        ])
    r = idx.date_report
    assert r is not None and (r.total, r.dated, r.undated, r.unreadable) == (5, 3, 2, 1)
    assert r.by_source == {"valid_from": 1, "date": 2, "updated": 0}
    assert r.describe() == "3 of 5 document(s) dated (valid_from: 1, date: 2), 2 undated, 1 unreadable"
    when = {h.id: h.time for h in idx.search("a b c d e", k=5, now="2026-01-01", strength=0)}
    assert when["y"] == _epoch(2022, 1, 1) and when["c"] == _epoch(2022, 3, 4)
    with pytest.raises(InvalidInput, match="date_unit='s'"):
        TemporalIndex(embedder="hashing").add([{"id": "x", "text": "a", "date": 86400}])
    idx2 = TemporalIndex(embedder="hashing")
    idx2.add([{"id": "x", "text": "a", "date": 86400}], date_unit="s")
    assert idx2.date_report is not None and idx2.date_report.dated == 1


def test_a_batch_without_a_readable_date_warns_and_names_the_field() -> None:
    docs = [{"id": "a", "text": "x", "published": "2024-01-02"}, {"id": "b", "text": "y", "published": "2025-03-04"}]
    idx = TemporalIndex(embedder="hashing", infer_dates=False)
    with pytest.warns(DateWarning, match="'published'"):
        idx.add(docs)
    assert idx.date_report is not None and idx.date_report.likely_field == "published"
    # by default a date-named field dates its documents (timeparse.textdates), and the report says so
    idx = TemporalIndex(embedder="hashing")
    with warnings.catch_warnings():
        warnings.simplefilter("error", DateWarning)
        idx.add(docs)
    assert idx.date_report is not None and idx.date_report.by_source["inferred from the field"] == 2
    assert idx.date_report.undated == 0 and "inferred from the field: 2" in idx.date_report.describe()
    with pytest.warns(DateWarning, match="give each document a 'date'"):
        TemporalIndex(embedder="hashing").add([{"id": "a", "text": "x"}])
