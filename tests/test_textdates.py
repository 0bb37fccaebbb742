"""Dates a document states about itself (chronorank.timeparse.textdates, issue 33): the rules,
and the same inference in the index's add(), the reranker and the stores' ingest."""

from __future__ import annotations

import math
from datetime import datetime, timezone

import numpy as np
import pytest

from chronorank.index import TemporalIndex
from chronorank.rerank import TemporalReranker
from chronorank.stores.documents import prepare_docs
from chronorank.timeparse.textdates import CONFIDENCE, date_note, infer_date, infer_dates


def _day(s: str) -> float:
    return datetime.fromisoformat(s).replace(tzinfo=timezone.utc).timestamp()


@pytest.mark.parametrize(("text", "date", "snippet"), [
    ("Privacy policy\n\nEffective date: May 25, 2018\n\nWe collect...", "2018-05-25", "Effective date: May 25, 2018"),
    ("Help. " + "x " * 200 + "Last updated: 3 March 2024", "2024-03-03", "Last updated: 3 March 2024"),
    ("Terms. Last updated on Tuesday, Sept. 1st, 2020.", "2020-09-01", "Last updated on Tuesday, Sept. 1st, 2020"),
    ("Published 2021-04-05T10:00:00Z by the team", "2021-04-05", "Published 2021-04-05"),
    ("Revised: 05/25/2018", "2018-05-25", "Revised: 05/25/2018"),  # numeric dates only after a cue
    ("Updated 25.05.2018", "2018-05-25", "Updated 25.05.2018"),  # dots are day-first
    ("Updated May 2020: prices", "2020-05-01", "Updated May 2020"),  # a month and year: the month
])
def test_english_cue_words(text: str, date: str, snippet: str) -> None:
    got = infer_date(text)
    assert got is not None
    assert (got["date"], got["snippet"], got["source"], got["kind"]) == (date, snippet, "text", "cue")


@pytest.mark.parametrize(("text", "date"), [
    ("Дата вступления в силу: 12.03.2024. Настоящая политика ...", "2024-03-12"),
    ("Приказ № 15 от 5 марта 2023 г. Об утверждении правил", "2023-03-05"),
    ("Новости. Опубликовано 1 апреля 2022 года.", "2022-04-01"),
    ("Справка. " + "текст " * 60 + "Последнее обновление: 17 ноября 2021", "2021-11-17"),
    ("Обновлено: март 2024", "2024-03-01"),
])
def test_russian(text: str, date: str) -> None:
    got = infer_date(text)
    assert got is not None and got["date"] == date and got["kind"] == "cue"


@pytest.mark.parametrize(("meta", "date", "kind", "precision"), [
    ({"url": "https://example.com/news/2023/05/12/story"}, "2023-05-12", "url_day", "day"),
    ({"source": "docs/release-2024-02-29.md"}, "2024-02-29", "url_day", "day"),
    ({"file_path": "finance/pricing-2023-q2.pdf"}, "2023-04-01", "url_month", "quarter"),
    ({"path": "reports/Q4_2022_summary.pdf"}, "2022-10-01", "url_month", "quarter"),
    ({"url": "https://example.com/archive/2022/11/"}, "2022-11-01", "url_month", "month"),
    ({"url": "https://example.com/blog/2021/why-we-moved"}, "2021-01-01", "url_year", "year"),
])
def test_addresses(meta: dict, date: str, kind: str, precision: str) -> None:
    got = infer_date("no date in this text", meta)
    assert got is not None
    assert (got["date"], got["kind"], got["precision"], got["source"]) == (date, kind, precision, "url")


@pytest.mark.parametrize("meta", [
    {"url": "https://example.com/products/2023"},  # a year that is not a directory segment
    {"url": "https://example.com/item/20230512"},  # eight digits: an id as likely as a date
    {"file_path": "pricing-2023.pdf"},
    {"url": "https://example.com/v/2023-13-01/"},  # month 13
    {"url": "https://example.com/2023/02/30/x"},  # 30 February
])
def test_addresses_without_a_date(meta: dict) -> None:
    assert infer_date("nothing", meta) is None


MISLEADING = [
    "Pro plan: $2,019.99 a year, EUR 12.05.20 a month, 1.12.2019 RUB a seat",
    "tern 2.10.2020 and v2019.05.12 ship; upgrade from 1.12.2019 or 2019.3",
    "Call +1 (555) 2023-0512 or 8-800-2024-12-31, fax 03.04.2022-7",
    "2.9 million users in 2023, up from 1.2 million in May",
    "99.9% uptime since 2019; 12.5 MB per 24 hours, 2019.99 ms",
    "Цена 2 990 руб., версия 12.03.2024, тел. 8 (495) 2023-05-12, 2,9 млн",
    "© 2023 Example Inc. All rights reserved. Founded in 1998.",
    "Version 2023.05.12 fixes 25 bugs; May 25 2.9 million",
    "Build 1.2.2019-03-01 and 10.2019.05.12",
    "In 2019 we moved; in 2020 we grew 99.9%.",
]


@pytest.mark.parametrize("text", MISLEADING)
def test_misleading_numbers_never_become_a_date(text: str) -> None:
    assert infer_date(text) is None
    assert infer_date("Last updated: " + text) is None  # not even after a cue word
    assert infer_date("Today is Friday, " + text) is None  # nor after "today" and a weekday


def test_a_date_in_running_text_is_not_the_documents_date() -> None:
    # a mention of another event, even near the top, dates nothing
    assert infer_date("On July 17, 1996, a Boeing 747 exploded over the sea.") is None
    assert infer_date("The committee investigating the January 6, 2021, attack met today.") is None
    assert infer_date("x\n" * 150 + "May 17, 2019\n\nEvent listing") is None  # a dated line far from the top


@pytest.mark.parametrize(("text", "snippet"), [
    ("The same chart was posted April 2, 2020, to the agency's account.", ""),  # another post
    ("Parts were copied from an article published April 16, 2005, in a local paper.", ""),
    ("Model this as a change to the standard offset effective 2025-03-20.", ""),  # "this" is no self-reference
    ("Editor's note: This story was originally published on Nov. 23, 2010.", "published on Nov. 23, 2010"),
    ("Originally posted Oct. 29, 2015\n\nThe county board met.", "posted Oct. 29, 2015"),
    ("Help center. We may change it; this privacy notice was last updated on May 3, 2024.",
     "last updated on May 3, 2024"),
    ("Статья в местной газете была опубликована 3 марта 2024 г.", ""),
    ("Правила. Настоящая политика вступает в силу 1 марта 2024 г.", "вступает в силу 1 марта 2024 г."),
])
def test_a_lowercase_cue_inside_a_sentence_needs_the_document_as_its_subject(text: str, snippet: str) -> None:
    got = infer_date(text)
    assert (got["snippet"] if got else "") == snippet
    assert got is None or got["kind"] == "cue"


@pytest.mark.parametrize(("text", "date", "snippet"), [
    ("Good morning, today is Wednesday, November 29th, 2023. Here is the news.", "2023-11-29",
     "today is Wednesday, November 29th, 2023"),
    ("The council voted on Tuesday, the 30th of May 2023, to close the bridge.", "2023-05-30",
     "Tuesday, the 30th of May 2023"),
    ("Crowds gather in the square, Sunday, Sept. 25, 2022. (Photo: staff)", "2022-09-25", "Sunday, Sept. 25, 2022"),
    ("Today, December 3, 2019, we open the new branch.", "2019-12-03", "Today, December 3, 2019"),
    ("Сегодня, 3 марта 2024 года, совет принял бюджет.", "2024-03-03", "Сегодня, 3 марта 2024 года"),
    ("Совет собрался в среду, 6 марта 2024 года, и принял бюджет.", "2024-03-06", "среду, 6 марта 2024 года"),
    ("Will Smith arrived on Sunday, September 25, 2022.", "2022-09-25", "Sunday, September 25, 2022"),  # a name
])
def test_a_date_stated_as_today_or_with_its_weekday(text: str, date: str, snippet: str) -> None:
    got = infer_date(text)
    assert got is not None
    assert (got["date"], got["snippet"], got["kind"], got["source"]) == (date, snippet, "stated", "text")
    assert got["confidence"] == CONFIDENCE["stated"] < CONFIDENCE["heading"]
    assert date_note(got) == f"dated {date} from {snippet!r} in the running text (low confidence)"


@pytest.mark.parametrize("text", [
    "The council voted on Monday, the 30th of May 2023, to close the bridge.",  # 30 May 2023 was a Tuesday
    "Совет собрался в пятницу, 6 марта 2024 года.",  # a Wednesday
    "They wed May 3, 2023 and sun, Sept. 25, 2022 was warm.",  # short names are words too
    "The riots began 50 years ago today, on July 23, 1967.",  # "today" not right before the date
    "Watch the Today show from April 23, 1976 tonight.",
    "The awards are scheduled for Sunday, Feb. 4, 2024, and will air live.",  # a later event
    "Заседание состоится в среду, 6 марта 2024 года.",
])
def test_a_weekday_that_does_not_fit_or_a_remote_today_dates_nothing(text: str) -> None:
    assert infer_date(text) is None


def test_a_stated_date_yields_to_any_stronger_evidence() -> None:
    text = "Updated: March 5, 2021.\n\nThe board met on Tuesday, March 9, 2021, and again today, March 12, 2021."
    got = infer_date(text)
    assert got is not None and (got["date"], got["kind"]) == ("2021-03-05", "cue")
    # among stated dates, the latest
    got = infer_date("The board met on Tuesday, March 9, 2021, and again today, March 12, 2021.")
    assert got is not None and (got["date"], got["kind"]) == ("2021-03-12", "stated")


@pytest.mark.parametrize(("text", "date"), [
    ("## 2021-04-05\n\n- fixed the parser", "2021-04-05"),
    ("Tuesday, May 5, 2026\n\nThe council met.", "2026-05-05"),
    ("WASHINGTON, Jan. 6, 2021 — Congress met.", "2021-01-06"),
    ("Jerry Mitchell | December 30, 2016\n\nMy office telephone rang", "2016-12-30"),
])
def test_dated_heading_and_dateline(text: str, date: str) -> None:
    got = infer_date(text)
    assert got is not None and got["date"] == date and got["kind"] == "heading"


def test_head_cues_count_only_near_the_top() -> None:
    assert infer_date("Приказ от 12.03.2024 № 7")["date"] == "2024-03-12"  # type: ignore[index]
    assert infer_date("Правила. " + "слово " * 60 + "согласно письму от 12.03.2024") is None
    assert infer_date("Memo dated March 3, 2024: budget")["date"] == "2024-03-03"  # type: ignore[index]
    assert infer_date("Memo. " + "word " * 60 + "the letter dated March 3, 2024") is None


def test_the_strongest_evidence_then_the_latest_date() -> None:
    text = "## 2019-01-01\n\nPublished: March 1, 2020. Updated: March 5, 2021."
    got = infer_date(text, {"url": "https://x.org/2022/01/02/post"})
    assert got is not None and got["date"] == "2021-03-05" and got["confidence"] == CONFIDENCE["cue"]
    # the address outranks a heading, and a date-named metadata field outranks everything
    assert infer_date("## 2019-01-01\n\ntext", {"url": "https://x.org/2022/01/02/p"})["kind"] == "url_day"  # type: ignore[index]
    got = infer_date(text, {"published": "2010-10-10"})
    assert got is not None and (got["date"], got["source"]) == ("2010-10-10", "field")


TRAILER = "pkg (1.2-3) unstable; urgency=medium\n\n  * Fix the build (Closes: #1234).\n\n"


@pytest.mark.parametrize(("text", "when"), [
    (TRAILER + " -- Jane Doe <jane@example.org>  Thu, 03 Mar 2022 12:00:00 +0100", "2022-03-03T11:00:00"),
    (TRAILER + " -- J. <j@x.org>  Sun, 1 Jan 2023 00:30:00 +0200\n", "2022-12-31T22:30:00"),  # the offset crosses a year
    (TRAILER + " -- Jane <j@x.org> 3 Mar 2022 12:00:00 -0530 (IST)", "2022-03-03T17:30:00"),  # no weekday, a comment
    ("From: a@example.org\nDate: Wed, 02 Mar 2022 23:59:59 -0800\nSubject: hi", "2022-03-03T07:59:59"),
    ("x\n" * 200 + "Date: 5 May 2021 10:00 GMT\n\nbody", "2021-05-05T10:00:00"),  # far from the top too
])
def test_signoff_and_date_header_lines(text: str, when: str) -> None:
    got = infer_dates([text])
    assert got.kind == ["signoff"] and got.precision == ["second"]
    assert got.time[0] == datetime.fromisoformat(when).replace(tzinfo=timezone.utc).timestamp()


def test_signoff_outranks_the_day_a_head_cue_reads_and_keeps_the_date_in_the_snippet() -> None:
    # "Date:" near the top is also a head cue (the day, midnight UTC); the line's own time wins
    got = infer_date("Date: Wed, 02 Mar 2022 00:30:00 +0100\nSubject: x")
    assert got is not None and (got["date"], got["kind"]) == ("2022-03-01", "signoff")
    got = infer_date(" -- " + "Long Name " * 12 + "<a@b.org>  Thu, 03 Mar 2022 12:00:00 +0100")
    assert got is not None and got["snippet"].endswith("Thu, 03 Mar 2022 12:00:00 +0100")


@pytest.mark.parametrize("text", [
    "We met on Thu, 03 Mar 2022 12:00:00 +0100 in Paris.",  # running text
    " -- Jane <j@x.org>  Thu, 03 Mar 2022 12:00:00 +0100 and then more words",  # not the whole line
    "  * merged the patch -- Thu, 03 Mar 2022 12:00:00 +0100",  # no name and address
    "x\n" * 200 + "> Date: Thu, 03 Mar 2022 12:00:00 +0100",  # a quoted header
    "x\n" * 200 + "Subject: Date: Thu, 03 Mar 2022 12:00:00 +0100",
    "x\n" * 200 + "Date: Thu, 03 Mar 2022 25:00:00 +0100",  # hour 25
    "x\n" * 200 + "Date: Thu, 31 Feb 2022 12:00:00 +0100",  # 31 February
    "x\n" * 200 + "Date: Thu, 03 Mar 2022 12:00:00",  # no offset
    "x\n" * 200 + "Date: 1.2.2022 12:00:00 +0100",  # a numeric date is no RFC 2822 date
    "Thursday, March 3 at 12:00 the release ships; Mar 2022 prices go up 12:00 +0100 users",
])
def test_no_signoff_date(text: str) -> None:
    assert infer_date(text) is None


def test_batch_equals_one_at_a_time_and_documents_never_join() -> None:
    texts = ["Effective date: May 25,", "2018 is when it began", "Updated 2020-02-02", "", "x" * 300,
             "Опубликовано 1 апреля 2022 года", "Last updated: March"]
    metas = [None, {"url": "/2019/03/04/"}, None, None, {"source": "a-2021-q3.md"}, None, None]
    batch = infer_dates(texts, metas)
    for i, (t, m) in enumerate(zip(texts, metas)):
        assert batch.record(i) == infer_date(t, m)
    assert math.isnan(batch.time[0])  # "May 25," + "2018" across two documents is no date
    assert batch.counts() == {"field": 0, "text": 2, "url": 2}


def test_date_note_names_the_source() -> None:
    assert date_note(infer_date("Effective date: May 25, 2018")) == "dated 2018-05-25 from 'Effective date: May 25, 2018'"
    assert date_note(infer_date("x", {"url": "https://a.b/2023/05/12/c"})) == "dated 2023-05-12 from the address '2023/05/12'"


# ---------------------------------------------------------------------- the engines

DOCS = [
    {"id": "old", "text": "Refund policy. Effective date: May 25, 2018. Refunds within 30 days."},
    {"id": "new", "text": "Refund policy. Last updated: March 3, 2024. Refunds within 14 days."},
    {"id": "web", "text": "Refund policy for the web shop.", "url": "https://shop.example/2023/05/12/refunds"},
    {"id": "given", "text": "Refund policy. Last updated: January 1, 2025.", "date": "2020-06-01"},
    {"id": "none", "text": "Refund policy: $2,019.99 refunds, 99.9% of them within 2.9 days."},
]


def test_index_dates_undated_documents_and_explains() -> None:
    idx = TemporalIndex("hashing")
    idx.add(DOCS)
    assert idx.last_inferred == {"checked": 4, "field": 0, "text": 2, "url": 1}
    t = dict(zip(idx._snap.ids, idx._snap.times[0].tolist()))
    assert t["old"] == _day("2018-05-25") and t["new"] == _day("2024-03-03") and t["web"] == _day("2023-05-12")
    assert t["given"] == _day("2020-06-01")  # an explicit date always wins
    assert math.isnan(t["none"])
    assert "date_inferred" not in (idx.get("given") or {}).get("metadata", {})
    assert idx.get("old")["metadata"]["date_inferred"]["snippet"] == "Effective date: May 25, 2018"  # type: ignore[index]
    ranking = idx.search("latest refund policy", k=5, now="2025-06-01")
    notes = {h.id: h.notes for h in ranking}
    assert notes["old"][0] == "dated 2018-05-25 from 'Effective date: May 25, 2018'"
    assert notes["web"][0] == "dated 2023-05-12 from the address '2023/05/12'"
    assert not any(n.startswith("dated") for n in notes["given"])
    assert "dated 2018-05-25 from 'Effective date: May 25, 2018'" in ranking.explain()
    # the newest stated date now ranks first among the undated-by-field pages
    ids = ranking.ranked_ids
    assert ids.index("new") < ids.index("web") < ids.index("old")


def test_index_inference_off_and_saved(tmp_path) -> None:
    off = TemporalIndex("hashing", infer_dates=False)
    off.add(DOCS)
    assert off.last_inferred == {}
    assert int(np.isnan(off._snap.times[0]).sum()) == 4
    on = TemporalIndex("hashing")
    on.add(DOCS)
    on.save(tmp_path / "on")
    off.save(tmp_path / "off")
    back = TemporalIndex.load(tmp_path / "on")
    assert back.infer_dates and not TemporalIndex.load(tmp_path / "off").infer_dates
    assert np.array_equal(back._snap.times, on._snap.times, equal_nan=True)
    hit = next(h for h in back.search("refund policy", k=5, now="2025-06-01") if h.id == "old")
    assert hit.notes[0].startswith("dated 2018-05-25")


def test_index_readding_with_a_date_drops_the_inferred_one() -> None:
    idx = TemporalIndex("hashing")
    idx.add(DOCS[:1])
    rec = idx.get("old")
    assert rec is not None and "date_inferred" in rec["metadata"]
    idx.add([{**rec, "date": "2019-01-01"}])
    again = idx.get("old")
    assert again is not None and "date_inferred" not in again["metadata"]
    assert idx._snap.times[0][0] == _day("2019-01-01")


def test_reranker_dates_candidates_without_a_date() -> None:
    cands = [{**d, "score": 0.9 - 0.01 * i} for i, d in enumerate(DOCS)]
    ranking = TemporalReranker().rerank("latest refund policy", cands, now="2025-06-01")
    by_id = {h.id: h for h in ranking}
    assert by_id["old"].time == _day("2018-05-25")
    assert by_id["old"].notes[0] == "dated 2018-05-25 from 'Effective date: May 25, 2018'"
    assert by_id["web"].time == _day("2023-05-12")
    assert by_id["given"].time == _day("2020-06-01") and not by_id["given"].notes
    assert math.isnan(by_id["none"].time)
    off = {h.id: h for h in TemporalReranker(infer_dates=False).rerank("latest refund policy", cands, now="2025-06-01")}
    assert math.isnan(off["old"].time) and off["old"].notes == ("undated: weight from the missing-date policy",)


def test_store_ingest_uses_the_same_inference() -> None:
    prep = prepare_docs(DOCS, np.eye(len(DOCS)), embedder=None, dim=None, bad_dates="raise", need_terms=False)
    assert prep.inferred == {"checked": 4, "field": 0, "text": 2, "url": 1}
    start = dict(zip(prep.ids, prep.start.tolist()))
    assert start["old"] == _day("2018-05-25") and start["given"] == _day("2020-06-01") and math.isnan(start["none"])
    assert prep.records[0]["metadata"]["date_inferred"]["kind"] == "cue"
    off = prepare_docs(DOCS, np.eye(len(DOCS)), embedder=None, dim=None, bad_dates="raise", need_terms=False, infer_dates=False)
    assert int(np.isnan(off.start).sum()) == 4 and off.inferred == {}


def test_qdrant_store_explains_an_inferred_date() -> None:
    pytest.importorskip("qdrant_client")
    from chronorank.stores import QdrantStore

    store = QdrantStore("t33", embedder="hashing")
    store.add(DOCS)
    assert store.last_inferred["text"] == 2
    hit = next(h for h in store.search("refund policy", k=5, now="2025-06-01") if h.id == "old")
    assert hit.notes[0] == "dated 2018-05-25 from 'Effective date: May 25, 2018'"
    assert hit.time == _day("2018-05-25")


def test_the_windows_around_years_find_what_a_full_scan_finds(monkeypatch) -> None:
    from chronorank.timeparse import textdates

    texts = [
        "Policy\n\nEffective date: Wednesday, September 25th, 2019\n" + "word " * 50 + "Last updated 2020-01-02",
        "Дата вступления в силу: 12.03.2024; " + "текст " * 40 + "Опубликовано 1 апреля 2022 года",
        "## 2021-04-05\n" + "1999 2000 " * 30 + "Updated May 2020",
        "WASHINGTON, Jan. 6, 2021 — 2019 2018 2017",
        "no year here at all",
    ] + MISLEADING
    windowed = infer_dates(texts)
    monkeypatch.setattr(textdates, "_windows", lambda big: np.array([[0, len(big)]]))
    full = infer_dates(texts)
    assert [windowed.record(i) for i in range(len(texts))] == [full.record(i) for i in range(len(texts))]
    assert sum(not math.isnan(x) for x in windowed.time) == 4


def test_a_huge_text_is_read_at_its_head_and_tail_only() -> None:
    from chronorank.timeparse import textdates

    filler = "release notes fixed the parser 2019 and version 1.2.3\n" * (4 * textdates.READ_CHARS // 50)
    top = "Effective date: May 25, 2018\n" + filler
    signed = filler + " -- Jane Roe <jane@example.org>  Thu, 03 Mar 2022 12:00:00 +0100\n"
    middle = filler + "Last updated: 3 March 2024\n" + filler  # a cue in the middle is beyond the read
    got = textdates.infer_dates([top, signed, middle])
    assert got.time[0] == _day("2018-05-25")
    assert got.time[1] == _day("2022-03-03T11:00:00")  # 12:00 at +0100
    assert math.isnan(got.time[2])
