"""Time parsing: formats, UTC normalisation, precision spans, policies, batch == scalar."""

from __future__ import annotations

import math
from datetime import date, datetime, timedelta, timezone

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chronorank.errors import InvalidInput
from chronorank.timeparse import (
    TimeSpan,
    parse_span,
    parse_time,
    parse_times,
    resolve_now,
    to_epoch,
)

UTC = timezone.utc
MAY1 = datetime(2026, 5, 1, tzinfo=UTC)
MAY1_TS = MAY1.timestamp()


@pytest.mark.parametrize(
    "text, expected",
    [
        ("2026-05-01", MAY1),
        ("2026-05-01T10:00", datetime(2026, 5, 1, 10, tzinfo=UTC)),
        ("2026-05-01 10:00:00", datetime(2026, 5, 1, 10, tzinfo=UTC)),
        ("2026-05-01T10:00:00Z", datetime(2026, 5, 1, 10, tzinfo=UTC)),
        ("2026-05-01t10:00:00z", datetime(2026, 5, 1, 10, tzinfo=UTC)),
        ("2026-05-01T10:00:00.25+00:00", datetime(2026, 5, 1, 10, 0, 0, 250000, tzinfo=UTC)),
        ("2026-05-01T10:00:00.123456789Z", datetime(2026, 5, 1, 10, 0, 0, 123456, tzinfo=UTC)),
        ("2026-05-01T10:00:00-05:30", datetime(2026, 5, 1, 15, 30, tzinfo=UTC)),
        ("2026-05-01T10:00:00+0530", datetime(2026, 5, 1, 4, 30, tzinfo=UTC)),
        ("2026-05-01T10:00:00+05", datetime(2026, 5, 1, 5, 0, tzinfo=UTC)),
        ("2026-05-01 10:00:00 UTC", datetime(2026, 5, 1, 10, tzinfo=UTC)),
        ("20260501", MAY1),
        ("20260501T100000Z", datetime(2026, 5, 1, 10, tzinfo=UTC)),
        ("2026/05/01", MAY1),
        ("2026-5-1", MAY1),
        ("May 1, 2026", MAY1),
        ("may 1 2026", MAY1),
        ("1 May 2026", MAY1),
        ("1st May 2026", MAY1),
        ("1st of May, 2026", MAY1),
        ("01-May-2026", MAY1),
        ("Friday, May 1, 2026", MAY1),
        ("SEPT 3, 2026", datetime(2026, 9, 3, tzinfo=UTC)),
        ("May 1, 2026 10:30 pm", datetime(2026, 5, 1, 22, 30, tzinfo=UTC)),
        ("Tue, 03 Mar 2026 10:00:00 +0200", datetime(2026, 3, 3, 8, tzinfo=UTC)),
        ("03 Mar 2026 10:00:00 GMT", datetime(2026, 3, 3, 10, tzinfo=UTC)),
        ("2026-05-01T24:00", datetime(2026, 5, 2, tzinfo=UTC)),
        ("2016-12-31T23:59:60Z", datetime(2016, 12, 31, 23, 59, 59, tzinfo=UTC)),
    ],
)
def test_formats(text, expected):
    got = parse_time(text)
    assert got == expected
    assert got is not None and got.tzinfo is UTC


def test_offset_that_falls_on_the_previous_utc_day():
    got = parse_time("2026-05-02T01:00:00+02:00")
    assert got == datetime(2026, 5, 1, 23, 0, tzinfo=UTC)
    assert got is not None and got.date() == date(2026, 5, 1)


@pytest.mark.parametrize(
    "text, dayfirst, expected",
    [
        ("13/05/2026", None, date(2026, 5, 13)),  # 13 can only be a day
        ("05/13/2026", None, date(2026, 5, 13)),
        ("13-05-2026", False, date(2026, 5, 13)),  # unambiguous wins over the flag
        ("01/05/2026", None, date(2026, 1, 5)),  # slash: month-first
        ("01-05-2026", None, date(2026, 5, 1)),  # dash: day-first
        ("01.05.2026", None, date(2026, 5, 1)),  # dot: day-first
        ("01/05/2026", True, date(2026, 5, 1)),
        ("01-05-2026", False, date(2026, 1, 5)),
    ],
)
def test_dayfirst_rule(text, dayfirst, expected):
    got = parse_time(text, dayfirst=dayfirst)
    assert got is not None and got.date() == expected


def test_dayfirst_must_be_bool_or_none():
    with pytest.raises(InvalidInput, match="dayfirst"):
        parse_time("01/05/2026", dayfirst="yes")


@pytest.mark.parametrize(
    "text, start, end, precision",
    [
        ("2023", datetime(2023, 1, 1, tzinfo=UTC), datetime(2024, 1, 1, tzinfo=UTC), "year"),
        ("2026-05", MAY1, datetime(2026, 6, 1, tzinfo=UTC), "month"),
        ("May 2026", MAY1, datetime(2026, 6, 1, tzinfo=UTC), "month"),
        ("2026-12", datetime(2026, 12, 1, tzinfo=UTC), datetime(2027, 1, 1, tzinfo=UTC), "month"),
        ("2026-05-01", MAY1, datetime(2026, 5, 2, tzinfo=UTC), "day"),
    ],
)
def test_partial_dates_keep_precision(text, start, end, precision):
    span = parse_span(text)
    assert span == TimeSpan(start.timestamp(), end.timestamp(), precision)


def test_anchors():
    start = datetime(2023, 1, 1, tzinfo=UTC).timestamp()
    end = datetime(2024, 1, 1, tzinfo=UTC).timestamp()
    assert to_epoch("2023", anchor="start") == start
    assert to_epoch("2023", anchor="mid") == start + (end - start) / 2
    assert to_epoch("2023", anchor="end") == end
    assert parse_time("2023", anchor="mid") == datetime(2023, 7, 2, 12, tzinfo=UTC)
    # instants ignore the anchor
    assert to_epoch("2026-05-01T10:00Z", anchor="end") == to_epoch("2026-05-01T10:00Z")
    with pytest.raises(InvalidInput, match="anchor"):
        to_epoch("2023", anchor="middle")


def test_objects():
    assert parse_time(datetime(2026, 5, 1, 10)) == datetime(2026, 5, 1, 10, tzinfo=UTC)
    aware = datetime(2026, 5, 2, 1, tzinfo=timezone(timedelta(hours=2)))
    assert parse_time(aware) == datetime(2026, 5, 1, 23, tzinfo=UTC)
    assert parse_span(date(2026, 5, 1)) == TimeSpan(MAY1_TS, MAY1_TS + 86400, "day")
    assert parse_time(np.datetime64("2026-05-01T10:00:00")) == datetime(2026, 5, 1, 10, tzinfo=UTC)
    assert parse_span(np.datetime64("2026-05")).precision == "month"
    assert parse_time(np.datetime64("NaT")) is None


def test_pandas_timestamp():
    pd = pytest.importorskip("pandas")
    assert parse_time(pd.Timestamp("2026-05-01 10:00")) == datetime(2026, 5, 1, 10, tzinfo=UTC)
    assert parse_time(pd.Timestamp("2026-05-02 01:00", tz="Europe/Berlin")) == datetime(2026, 5, 1, 23, tzinfo=UTC)
    assert parse_time(pd.NaT) is None
    series = pd.Series(pd.to_datetime(["2026-05-01T00:00", None, "2026-05-02T01:00"]))
    out = parse_times(series)
    assert out[0] == MAY1_TS and np.isnan(out[1]) and out[2] == MAY1_TS + 86400 + 3600
    aware = series.dt.tz_localize("Europe/Berlin")
    assert parse_times(aware)[0] == MAY1_TS - 7200


@pytest.mark.parametrize(
    "value, expected",
    [
        (1714521600, 1714521600.0),  # seconds
        (1714521600123, 1714521600.123),  # milliseconds
        (1714521600123456, 1714521600.123456),  # microseconds
        (1714521600.5, 1714521600.5),
        ("1714521600", 1714521600.0),
        ("1714521600000", 1714521600.0),
        (0, 0.0),
        (np.int64(1714521600), 1714521600.0),
    ],
)
def test_unix_numbers(value, expected):
    assert to_epoch(value) == pytest.approx(expected, abs=1e-6)


@pytest.mark.parametrize(
    "value",
    [True, False, 1e30, float("inf"), 10**400, "12345", "garbage", "February 30, 2026",
     "2026-02-30", "2023-02-29", "0000-01-01", "10000-01-01", "2026-13-01", "2026-05-01T25:00",
     "32/13/2026", "01/02/26", "\x00", "🕰️ 2026", "9" * 500, b"\xff\xfe", object(), [2026]],
)
def test_unparseable_is_none_in_lenient_mode(value):
    assert parse_time(value) is None
    assert math.isnan(to_epoch(value))


def test_strict_mode_names_the_value():
    with pytest.raises(InvalidInput) as err:
        parse_time("next tuesday", strict=True)
    assert "'next tuesday'" in str(err.value) and "ISO 8601" in str(err.value)
    with pytest.raises(InvalidInput, match=r"values\[1\]"):
        parse_times(["2026-05-01", "nope"], strict=True)
    with pytest.raises(InvalidInput, match=r"values\[1\]"):
        parse_times([date(2026, 5, 1), "nope"], strict=True)
    # missing is not unparseable
    assert parse_time(None, strict=True) is None
    assert parse_time("  ", strict=True) is None
    assert np.isnan(parse_times(["2026-05-01", None, ""], strict=True)[1:]).all()


def test_tz_for_naive_values():
    berlin = parse_time("2026-05-01T10:00", tz="Europe/Berlin")
    assert berlin == datetime(2026, 5, 1, 8, tzinfo=UTC)
    assert parse_time("2026-05-01T10:00", tz="+05:30") == datetime(2026, 5, 1, 4, 30, tzinfo=UTC)
    assert parse_time("2026-05-01T10:00", tz=timezone(timedelta(hours=-3))) == datetime(2026, 5, 1, 13, tzinfo=UTC)
    # aware values keep their instant whatever tz says
    assert parse_time("2026-05-01T10:00Z", tz="Europe/Berlin") == datetime(2026, 5, 1, 10, tzinfo=UTC)
    # a day in a zone is that zone's midnight-to-midnight
    span = parse_span("2026-05-01", tz="America/New_York")
    assert span is not None and span.start == MAY1_TS + 4 * 3600 and span.end - span.start == 86400
    with pytest.raises(InvalidInput, match="time zone"):
        parse_time("2026-05-01", tz="Mars/Olympus")
    with pytest.raises(InvalidInput, match="tz="):
        parse_time("2026-05-01", tz=5)


def test_resolve_now(monkeypatch):
    import chronorank.timeparse.scalar as tp

    monkeypatch.setattr(tp._time, "time", lambda: 1234.5)
    assert resolve_now(None) == 1234.5
    assert resolve_now("2026-05-01") == MAY1_TS
    assert resolve_now(MAY1) == MAY1_TS
    assert resolve_now(1714521600) == 1714521600.0
    with pytest.raises(InvalidInput, match="now="):
        resolve_now("soonish")


# ---------------------------------------------------------------- batch

MIXED = [
    "2026-05-01", "2026-05-01T10:00:00Z", "2026-05-02T01:00:00+02:00", "2026-05-01 10:00",
    "2026-05-01T10:00:00.5-03:00", "2026", "2026-05", "May 1, 2026", "01/05/2026", "01-05-2026",
    "Tue, 03 Mar 2026 10:00:00 +0200", "1714521600", "", "garbage", "2026-02-30",
    "2016-12-31T23:59:60Z", "2026-05-01T24:00", "9999", "0001-01-01", "ｍａｙ 2026",
]


@pytest.mark.parametrize("anchor", ["start", "mid", "end"])
@pytest.mark.parametrize("tz", ["UTC", "Europe/Berlin", "-04:00"])
@pytest.mark.parametrize("container", [list, tuple, np.array])
def test_batch_equals_scalar_on_strings(anchor, tz, container):
    got = parse_times(container(MIXED), anchor=anchor, tz=tz)
    expected = np.array([to_epoch(v, anchor=anchor, tz=tz) for v in MIXED])
    np.testing.assert_array_equal(got, expected)


def test_batch_equals_scalar_on_mixed_objects():
    values = [*MIXED, None, float("nan"), 1714521600123, True, date(2026, 5, 1),
              datetime(2026, 5, 1, 10), np.datetime64("2026-05-01"), b"2026-05-01", 2.5]
    got = parse_times(values, anchor="mid")
    expected = np.array([to_epoch(v, anchor="mid") for v in values])
    np.testing.assert_array_equal(got, expected)


def test_batch_numeric_and_datetime64_arrays():
    nums = np.array([1714521600, 1714521600123, 1714521600123456, -1, 1e25])
    np.testing.assert_allclose(parse_times(nums)[:4], [1714521600, 1714521600.123, 1714521600.123456, -1])
    assert np.isnan(parse_times(nums)[4])
    d64 = np.array(["2026-05-01", "NaT", "2026-05-03"], dtype="datetime64[D]")
    out = parse_times(d64, anchor="end")
    assert out[0] == MAY1_TS + 86400 and np.isnan(out[1]) and out[2] == MAY1_TS + 3 * 86400
    assert parse_times(np.array(["2026-05-01T10:00"], dtype="datetime64[m]"), tz="Europe/Berlin")[0] == MAY1_TS + 8 * 3600
    assert np.isnan(parse_times(np.array([True, False]))).all()
    assert parse_times([]).shape == (0,)
    assert parse_times(np.array([["2026-05-01"], ["2026"]])).shape == (2, 1)


def test_batch_rejects_a_single_string():
    with pytest.raises(InvalidInput, match="single value"):
        parse_times("2026-05-01")


def test_batch_variable_length_and_non_ascii_lists():
    values = ["2026-05-01", "2026-05-01T10:00:00Z", "x" * 100, "1 May 2026", "2026-05-01é"]
    got = parse_times(values)
    expected = np.array([to_epoch(v) for v in values])
    np.testing.assert_array_equal(got, expected)



@pytest.mark.parametrize(
    "values",
    [
        # lengths 10, 9, 11: 30 characters in all, which read as three dates when joined bare
        ["2026-05-01", "2026-05-0", "12026-05-01"],
        ["2026-05-01", "2026-05-011", "2026-05-0"],
        ["2026-05-01", "2026-05-0\n", "2026-05-01"],
    ],
)
def test_plain_date_column_with_values_of_other_lengths(values):
    got = parse_times(values)
    expected = np.array([to_epoch(v) for v in values])
    np.testing.assert_array_equal(got, expected)
    assert np.isnan(got[1])

# ---------------------------------------------------------------- properties


@settings(max_examples=300)
@given(st.text(max_size=40))
def test_never_raises_in_lenient_mode(text):
    t = to_epoch(text)
    assert math.isnan(t) or -62135596800 <= t <= 253402300800
    got = parse_times([text, "2026-05-01"])
    assert got[1] == MAY1_TS
    np.testing.assert_array_equal(got[:1], [t])


@settings(max_examples=200)
@given(
    st.lists(
        st.datetimes(min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30)),
        min_size=1,
        max_size=20,
    ),
    st.sampled_from(["{d}", "{d}Z", "{d}+02:00", "{d}-0930", "date", "{s}"]),
    st.sampled_from(["start", "mid", "end"]),
)
def test_batch_agrees_with_scalar_on_generated_datetimes(dts, form, anchor):
    if form == "date":
        texts = [d.date().isoformat() for d in dts]
    elif form == "{s}":
        texts = [d.isoformat(sep=" ") for d in dts]
    else:
        texts = [form.format(d=d.isoformat()) for d in dts]
    got = parse_times(texts, anchor=anchor)
    expected = np.array([to_epoch(t, anchor=anchor) for t in texts])
    np.testing.assert_array_equal(got, expected)
    # and the instant is the one datetime itself computes
    if form == "{d}Z":
        want = [d.replace(tzinfo=UTC).timestamp() for d in dts]
        np.testing.assert_allclose(got, want, rtol=4e-16, atol=1e-6)
    if form == "{d}+02:00":
        want = [d.replace(tzinfo=timezone(timedelta(hours=2))).timestamp() for d in dts]
        np.testing.assert_allclose(got, want, rtol=4e-16, atol=1e-6)


@given(st.datetimes(min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30), timezones=st.just(UTC)))
def test_datetime_round_trip(dt):
    assert parse_time(dt) == dt
    assert parse_time(dt.isoformat()) == dt


# full ISO timestamps take their own vectorised path (_iso_timestamps): it must agree to the
# bit with the general batch path and the scalar parser on well-formed and malformed rows


def _stamp_parts():
    """A valid date and clock with any fraction and offset (well formed or not), then maybe one
    character replaced, so nearly valid rows are common."""
    digits = st.integers(0, 99).map(lambda v: f"{v:02d}")
    frac = st.one_of(st.just(""), st.tuples(st.sampled_from(".,"), st.text("0123456789", min_size=0, max_size=11))
                     .map("".join))
    offset = st.one_of(
        st.sampled_from(["", "Z", "z", "+00:00", "-00:00", "+0530", "-12", "+24", "-99", "+2400", "+24:00",
                         "+05:60", "Q", "+5:30", " "]),
        st.tuples(st.sampled_from("+-"), digits, st.sampled_from([":", ""]), digits).map("".join),
    )
    stamp = st.tuples(
        st.datetimes(min_value=datetime(1, 1, 1), max_value=datetime(9999, 12, 31)),
        st.sampled_from(["T", "t", " ", "_"]), frac, offset,
    ).map(lambda p: p[0].isoformat(sep=p[1], timespec="seconds") + p[2] + p[3])

    def poke(s_pos_ch):
        s, pos, ch = s_pos_ch
        i = pos % len(s)
        return s[:i] + ch + s[i + 1:]

    poked = st.tuples(stamp, st.integers(0, 40), st.sampled_from(list("09:-+.TZ /a\x00"))).map(poke)
    return st.one_of(stamp, poked)


def _realistic_stamp():
    return st.tuples(
        st.datetimes(min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30)),
        st.sampled_from(["T", " "]),
        st.sampled_from(["seconds", "milliseconds", "microseconds", "auto"]),
        st.sampled_from(["", "Z", "+02:00", "-0930", "+05", "-00:00"]),
    ).map(lambda p: p[0].isoformat(sep=p[1], timespec=p[2]) + p[3])


@settings(max_examples=300)
@given(
    st.lists(st.one_of(_stamp_parts(), _realistic_stamp(), _realistic_stamp().map(lambda s: s[:-1])),
             min_size=1, max_size=30),
    st.sampled_from(["UTC", "Europe/Paris"]),
    st.sampled_from(["start", "mid", "end"]),
)
def test_iso_timestamp_path_agrees_with_general_and_scalar(texts, tz, anchor):
    from chronorank.timeparse import _batch_strings, _iso_timestamps, resolve_tz

    got = parse_times(texts, tz=tz, anchor=anchor)
    general = _batch_strings(list(texts), resolve_tz(tz), None, anchor, False)
    scalar = np.array([to_epoch(t, tz=tz, anchor=anchor) for t in texts])
    np.testing.assert_array_equal(got, general)
    np.testing.assert_array_equal(got, scalar)
    # every row the fast path accepts is a real time, equal to the scalar parser's
    fast = _iso_timestamps(list(texts), resolve_tz(tz))
    assert fast is not None
    out, ok = fast
    np.testing.assert_array_equal(out[ok], scalar[ok])


@given(st.lists(_realistic_stamp(), min_size=1, max_size=30))
def test_iso_timestamp_path_takes_well_formed_utc_rows(texts):
    from chronorank.timeparse import _iso_timestamps

    fast = _iso_timestamps(texts, UTC)
    assert fast is not None
    assert fast[1].all(), [t for t, k in zip(texts, fast[1]) if not k]


def test_iso_timestamp_strict_names_the_bad_row():
    values = ["2024-03-01T12:30:00Z"] * 5 + ["2024-13-01T12:30:00Z"] + ["2024-03-01T12:30:00.5+01:00"]
    with pytest.raises(InvalidInput, match=r"values\[5\]"):
        parse_times(values, strict=True)
    got = parse_times(values)
    assert math.isnan(got[5]) and got[0] == 1709296200.0 and got[6] == 1709296200.5 - 3600


def test_iso_timestamp_outside_utc_localises_naive_rows():
    values = ["2024-07-01T12:00:00", "2024-07-01T12:00:00Z", "2024-07-01T12:00:00+02:00"]
    got = parse_times(values, tz="Europe/Paris")
    # Paris is UTC+2 in July: all three are the same instant
    assert got[0] == got[1] - 7200 == got[2]


def _edge_stamp():
    """Timestamps at the fast path's edges: leap days, years 1 and 9999 with offsets that leave
    the range, every separator and case, fractions of 0-11 digits, rows of 19-40 characters."""
    day = st.sampled_from(["0000-01-01", "0001-01-01", "9999-12-31", "2024-02-29", "2023-02-29",
                           "1900-02-29", "2000-02-29", "2024-04-31", "2024-00-10", "2024-13-01",
                           "2024-12-00", "2024-12-32", "2026-05-01"])
    clock = st.sampled_from(["00:00:00", "23:59:59", "24:00:00", "23:60:00", "23:59:60", "12:30:45",
                             "9:30:45", "12:3:45"])
    frac = st.one_of(st.just(""), st.tuples(st.sampled_from(".,"), st.text("0123456789", max_size=11))
                     .map("".join))
    offset = st.sampled_from(["", "Z", "z", "+00:00", "-00:00", "+01:00", "-01:00", "+23:59", "-23:59",
                              "+24:00", "+05:60", "+0530", "-0530", "+05", "-23", "+24", "+5",
                              "+05:3", "+05:30:00", "UTC", " +01:00", "ZZ", "+:0530"])
    return st.tuples(day, st.sampled_from("Tt _"), clock, frac, offset).map("".join)


@settings(max_examples=300)
@given(st.lists(st.one_of(_edge_stamp(), _realistic_stamp()), min_size=1, max_size=40),
       st.sampled_from(["UTC", "+05:30"]))
def test_iso_timestamp_edges_agree_with_scalar(texts, tz):
    from chronorank.timeparse import _iso_timestamps, resolve_tz

    got = parse_times(texts, tz=tz)
    scalar = np.array([to_epoch(t, tz=tz) for t in texts])
    np.testing.assert_array_equal(got.view(np.int64), scalar.view(np.int64))  # to the bit, NaN too
    fast = _iso_timestamps(list(texts), resolve_tz(tz))
    assert fast is not None
    out, ok = fast
    np.testing.assert_array_equal(out[ok].view(np.int64), scalar[ok].view(np.int64))


def test_iso_timestamp_fast_path_reads_every_field():
    # each value differs from the first in one field: a misread column changes one instant
    from chronorank.timeparse import _iso_timestamps

    values = [
        "2024-02-29T23:59:59.999999-23:59", "2024-02-29 23:59:59.999999-23:59",
        "2024-02-29t23:59:59,999999-2359", "2024-02-29T23:59:59.999999999-23",
        "2024-02-29T23:59:59.9Z", "2024-02-29T23:59:59+23:59", "0001-01-01T23:59:59+23:59",
        "9999-12-31T00:00:00-23:59", "1970-01-01T00:00:00.000001Z", "1969-12-31T23:59:59.5z",
    ]
    expected = [
        datetime(2024, 3, 1, 23, 58, 59, 999999, tzinfo=UTC).timestamp(),
        datetime(2024, 3, 1, 23, 58, 59, 999999, tzinfo=UTC).timestamp(),
        datetime(2024, 3, 1, 23, 58, 59, 999999, tzinfo=UTC).timestamp(),
        datetime(2024, 3, 1, 22, 59, 59, 999999, tzinfo=UTC).timestamp(),
        datetime(2024, 2, 29, 23, 59, 59, 900000, tzinfo=UTC).timestamp(),
        datetime(2024, 2, 29, 0, 0, 59, tzinfo=UTC).timestamp(),
        datetime(1, 1, 1, 0, 0, 59, tzinfo=UTC).timestamp(),
        datetime(9999, 12, 31, 23, 59, tzinfo=UTC).timestamp(),
        1e-6,
        -0.5,
    ]
    out, ok = _iso_timestamps(values, UTC)
    assert ok.all()
    np.testing.assert_array_equal(out, expected)
    np.testing.assert_array_equal(parse_times(values), [to_epoch(v) for v in values])


def test_iso_timestamp_blocks_of_mixed_lengths():
    # more rows than one vectorised block, lengths 19-35 interleaved, a bad row near the seam
    from chronorank.timeparse import _TS_CHUNK

    tails = ["", "Z", "+02:00", ".123456Z", ".5-05:30", ",123456789+0530", ".1234567-11"]
    rng = np.random.default_rng(7)
    secs = rng.integers(-2_000_000_000, 4_000_000_000, _TS_CHUNK + 700)
    base = np.datetime_as_string(secs.astype("datetime64[s]"), unit="s")
    values = [str(b) + tails[i % len(tails)] for i, b in enumerate(base)]
    values[_TS_CHUNK - 1] = values[_TS_CHUNK - 1].replace("T", "x")
    got = parse_times(values)
    scalar = np.array([to_epoch(v) for v in values])
    np.testing.assert_array_equal(got, scalar)
    assert np.isnan(got[_TS_CHUNK - 1]) and np.isfinite(np.delete(got, _TS_CHUNK - 1)).all()


# columns of a few shapes take _iso_by_shape: each group of rows of one length checked against
# its first row's template. It must agree to the bit with the general path, whatever the mix.

_SHAPE_TAILS = ["", "Z", "z", "+02:00", "-05:30", "+0530", "-11", ".5Z", ",25+01:00", ".123Z", ".123456Z",
                ".123456789-23:59", ".1234567+0000", ".000001z", ".9-00"]
_BAD_ROWS = ["2023-02-29T00:00:00Z", "2024-02-30T12:00:00Z", "2024-04-31T12:00:00Z", "2024-13-01T00:00:00Z",
             "2024-00-01T00:00:00Z", "2024-01-00T00:00:00Z", "2024-01-01T24:00:00Z", "2024-01-01T23:60:00Z",
             "2024-01-01T23:59:60Z", "2024-01-01T12:00:00+24:00", "2024-01-01T12:00:00+05:60",
             "2024-01-01X12:00:00Z", "2024/01/01T12:00:00Z", "2024-01-01T12-00-00Z", "0000-01-01T00:00:00Z",
             "２０２４-01-01T12:00:00Z", "2024-01-01T12:00:00,5Q", "2024-01-01T12:00:00*02:00",
             "2024-01-01T12:00:00,02:00", "9999-12-31T23:59:59-01:00", "0001-01-01T00:00:00+01:00",
             "2024-01-01t12:00:00Z", "2024-01-01 12:00:00Z", "2024-01-01T12:00:00.Z", "2024-01-01T1:00:00Z",
             "2024-01-01\x0012:00:00Z"]


def _shaped_column(rng, n, tails, seps="T"):
    secs = rng.integers(-62_135_596_800 + 86400 * 2, 253_402_300_799 - 86400 * 2, n)
    base = np.datetime_as_string(secs.astype("datetime64[s]"), unit="s")
    sep = np.array(list(seps))[rng.integers(0, len(seps), n)]
    tail = np.array(tails)[rng.integers(0, len(tails), n)]
    return [b[:10] + s + b[11:] + t for b, s, t in zip(base.tolist(), sep.tolist(), tail.tolist())]


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.lists(st.sampled_from(_SHAPE_TAILS), min_size=1, max_size=5, unique=True),
       st.sampled_from(["T", "t", " ", "Tt "]), st.lists(st.sampled_from(_BAD_ROWS), max_size=3),
       st.sampled_from(["UTC", "Europe/Paris"]), st.sampled_from(["start", "end"]))
def test_iso_shaped_path_agrees_with_general(seed, tails, seps, bad, tz, anchor):
    from chronorank.timeparse import _batch_strings, resolve_tz

    rng = np.random.default_rng(seed)
    values = _shaped_column(rng, 300, tails, seps)
    for b in bad:  # bad rows anywhere, also first (their group's template)
        values.insert(int(rng.integers(0, len(values) + 1)), b)
    got = parse_times(values, tz=tz, anchor=anchor)
    general = _batch_strings(list(values), resolve_tz(tz), None, anchor, False)
    np.testing.assert_array_equal(got.view(np.int64), general.view(np.int64))
    some = rng.choice(len(values), 40, replace=False)
    scalar = np.array([to_epoch(values[i], tz=tz, anchor=anchor) for i in some])
    np.testing.assert_array_equal(got[some].view(np.int64), scalar.view(np.int64))


def test_iso_shaped_path_takes_clean_groups_and_only_those():
    from chronorank.timeparse import _iso_timestamps
    from chronorank.timeparse.iso import _CHUNK, _iso_by_shape

    rng = np.random.default_rng(3)
    values = _shaped_column(rng, 2 * _CHUNK + 500, ["Z", "+02:00", ".123456Z", ".5-05:30"])
    raw = ("\n".join(values)).encode("ascii")
    buf = np.frombuffer(b"\n" + raw + b"\n" * 40, dtype=np.uint8)
    nl = np.flatnonzero(buf == 10)[: len(values) + 1]
    out, ok, rest = _iso_by_shape(buf, nl[:-1] + 1, nl[1:], UTC)
    assert ok.all() and rest.shape[0] == 0
    ref = np.array([to_epoch(v) for v in values[:: 97]])
    np.testing.assert_array_equal(out[:: 97], ref)
    # one bad row sends its block (and only it) to the general reader
    values[_CHUNK + 3] = "2024-02-30T12:00:00Z"
    stamps = _iso_timestamps(values, UTC)
    assert stamps is not None and not stamps[1][_CHUNK + 3] and stamps[1].sum() == len(values) - 1
    got = parse_times(values)
    assert np.isnan(got[_CHUNK + 3])
    np.testing.assert_array_equal(np.delete(got, _CHUNK + 3)[:: 89], [to_epoch(v) for v in np.delete(values, _CHUNK + 3)[:: 89]])
    # a NUL is no date-time separator (the block reader once read it as a space)
    assert np.isnan(parse_times(["2000-01-01\x0000:00:00"] * 3)).all()
