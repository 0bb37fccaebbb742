"""Rules engine: modes, exact target intervals, spans, topical query, look-alikes."""

from __future__ import annotations

import math
from datetime import datetime, timezone

import pytest

from chronorank.errors import InvalidInput
from chronorank.intent import detect_language, parse
from chronorank.temporal import STATED_TIME_WEIGHT, intent_strength

NOW = "2026-08-20T12:00:00Z"  # a Thursday


def t(*args: int) -> float:
    return datetime(*args, tzinfo=timezone.utc).timestamp()


NOW_S = t(2026, 8, 20, 12)


def target(query: str, now: str | float = NOW) -> tuple[float, float]:
    it = parse(query, now=now)
    assert it.target is not None, it
    return it.target.start, it.target.end


@pytest.mark.parametrize(
    "query,start,end",
    [
        ("inflation in 2023", t(2023, 1, 1), t(2024, 1, 1)),
        ("chrome releases in March 2025", t(2025, 3, 1), t(2025, 4, 1)),
        ("apple revenue Q3 2024", t(2024, 7, 1), t(2024, 10, 1)),
        ("telehealth between 2019 and 2021", t(2019, 1, 1), t(2022, 1, 1)),
        ("breaking changes in pandas since 2024", t(2024, 1, 1), NOW_S),
        ("flask deployment before 2020", -math.inf, t(2020, 1, 1)),
        ("layoffs after 2021", t(2022, 1, 1), NOW_S),
        ("nvidia earnings last quarter", t(2026, 4, 1), t(2026, 7, 1)),
        ("outages this year", t(2026, 1, 1), t(2027, 1, 1)),
        ("laws passed last year", t(2025, 1, 1), t(2026, 1, 1)),
        ("price increases last month", t(2026, 7, 1), t(2026, 8, 1)),
        ("what's shipping this month", t(2026, 8, 1), t(2026, 9, 1)),
        ("markets last week", t(2026, 8, 10), t(2026, 8, 17)),
        ("security advisories this week", t(2026, 8, 17), t(2026, 8, 24)),
        ("issues opened in the past 30 days", NOW_S - 30 * 86400, NOW_S),
        ("issues opened in the last 30 days", NOW_S - 30 * 86400, NOW_S),
        ("yesterday's earnings reports", t(2026, 8, 19), t(2026, 8, 20)),
        ("best etfs two years ago", t(2024, 1, 1), t(2025, 1, 1)),
        ("rainfall 3 months ago", t(2026, 5, 1), t(2026, 6, 1)),
        ("linux commits 2 weeks ago", t(2026, 8, 3), t(2026, 8, 10)),
        ("top story 5 days ago", t(2026, 8, 15), t(2026, 8, 16)),
        ("energy prices in the first half of 2022", t(2022, 1, 1), t(2022, 7, 1)),
        ("physics discoveries of the 2010s", t(2010, 1, 1), t(2020, 1, 1)),
        ("dot-com bust 2001 to 2005", t(2001, 1, 1), t(2006, 1, 1)),
        ("reviews from jan to march 2025", t(2025, 1, 1), t(2025, 4, 1)),
    ],
)
def test_range_targets(query: str, start: float, end: float) -> None:
    it = parse(query, now=NOW)
    assert it.mode == "range"
    assert (it.target.start, it.target.end) == (start, end)
    # a stated period keeps its full effect on the ranking, whatever its sensitivity
    assert intent_strength(it) == STATED_TIME_WEIGHT


@pytest.mark.parametrize("query", ["markets last week", "issues opened in the past 30 days",
                                   "yesterday's earnings reports", "rainfall 3 months ago",
                                   "outages this year"])
def test_a_period_that_moves_with_the_day_of_asking_is_sensitive(query: str) -> None:
    assert parse(query, now=NOW).time_sensitivity > 0.5


@pytest.mark.parametrize("query", ["inflation in 2023", "telehealth between 2019 and 2021",
                                   "physics discoveries of the 2010s", "who won the world cup in 2018"])
def test_a_fixed_period_fixes_the_answer(query: str) -> None:
    it = parse(query, now=NOW)
    assert it.time_sensitivity < 0.5 and intent_strength(it) == STATED_TIME_WEIGHT


@pytest.mark.parametrize(
    "query,now,start",
    [
        ("usd to eur rate as of March 3 2025", NOW, t(2025, 3, 3)),
        ("who was CEO of OpenAI on 1 May", NOW, t(2026, 5, 1)),
        ("who was CEO of OpenAI on 1 May", "2026-03-10T00:00:00Z", t(2025, 5, 1)),
        ("what was the newest django release on 2021-03-03", NOW, t(2021, 3, 3)),
        ("which GDPR fines were in force as of june 30, 2022", NOW, t(2022, 6, 30)),
        ("which Click release was current on 3 March 2021", NOW, t(2021, 3, 3)),
    ],
)
def test_as_of_day_targets(query: str, now: str, start: float) -> None:
    it = parse(query, now=now)
    assert it.mode == "as_of"
    assert (it.target.start, it.target.end) == (start, start + 86400)


def test_as_of_start_and_end_of_a_year() -> None:
    assert target("aws prices at the start of 2024") == (t(2024, 1, 1), t(2024, 1, 2))
    assert target("headcount at the end of 2023") == (t(2023, 12, 31), t(2024, 1, 1))
    it = parse("travel policy as of march 2025", now=NOW)
    assert it.mode == "as_of" and (it.target.start, it.target.end) == (t(2025, 3, 1), t(2025, 4, 1))


@pytest.mark.parametrize(
    "query", ["what changed in requests 2.31.0", "django 3.2 docs", "the v1 API", "ubuntu 22.04 drivers",
              "Python 2 docs", "java 8 stream api examples", "version 2.3 migration"]
)
def test_specific_versions(query: str) -> None:
    it = parse(query, now=NOW)
    assert it.mode == "specific" and it.target is None
    assert it.time_sensitivity <= 0.1


def test_specific_named_year_keeps_the_year_in_the_topical_query() -> None:
    it = parse("the 2019 edition of the pricing guide", now=NOW)
    assert it.mode == "specific"
    assert (it.target.start, it.target.end) == (t(2019, 1, 1), t(2020, 1, 1))
    assert "2019" in it.topical_query


@pytest.mark.parametrize(
    "query", ["explain how cosine similarity works", "proof of the Pythagorean theorem",
              "when did WW2 end", "what is a vector database", "derivative of x^2 sin x"]
)
def test_timeless(query: str) -> None:
    it = parse(query, now=NOW)
    assert it.mode == "timeless" and it.target is None
    assert it.time_sensitivity <= 0.2


@pytest.mark.parametrize("query", ["latest release of fastapi", "current EUR to USD exchange rate",
                                   "weather right now in lisbon", "newest stable node version",
                                   "up-to-date instructions for cuda"])
def test_recent_cues(query: str) -> None:
    it = parse(query, now=NOW)
    assert it.mode == "recent" and it.target is None
    assert it.time_sensitivity >= 0.9


def test_no_cue_fact_about_now_is_recent_and_between_cue_and_timeless() -> None:
    it = parse("who is the CEO of Microsoft", now=NOW)
    assert it.mode == "recent"
    assert it.time_sensitivity >= 0.55
    howto = parse("how to configure nginx", now=NOW)
    assert howto.time_sensitivity < 0.5 and howto.mode == "timeless"


def test_topical_query_and_spans() -> None:
    q = "what changed in the latest release of polars"
    it = parse(q, now=NOW)
    assert it.topical_query == "what changed in release of polars"
    (span,) = it.spans
    assert (span.start, span.end, span.text, span.kind) == (20, 26, "latest", "recent")
    assert q[span.start:span.end] == "latest"
    it = parse("what changed in polars in 2021", now=NOW)
    assert it.topical_query == "what changed in polars"
    assert [s.text for s in it.spans] == ["in 2021"]
    it = parse("tech news from last week", now=NOW)
    assert it.topical_query == "tech news"
    it = parse("since 2024, how many countries banned tiktok", now=NOW)
    assert it.topical_query == "how many countries banned tiktok"


@pytest.mark.parametrize(
    "query,word",
    [("ServiceNow CMDB best practices", "ServiceNow"), ("what is Now TV", "Now TV"),
     ("Time magazine person of the year", "Time"), ("is Current a good bank", "Current"),
     ("2001: A Space Odyssey plot", "2001: A Space Odyssey"), ("Timeless lyrics", "Timeless")],
)
def test_look_alike_topic_words_are_kept(query: str, word: str) -> None:
    it = parse(query, now=NOW)
    assert word in it.topical_query
    # the name makes no temporal expression; whether "person of the year" depends on the
    # day of asking is the sensitivity model's call, and it stays below a real cue's
    assert not it.spans and it.mode not in ("range", "as_of")
    assert it.time_sensitivity < 0.85


RU_NOW = "2026-03-10T09:30:00Z"  # a Tuesday


@pytest.mark.parametrize(
    "query,mode,tgt",
    [
        ("последний релиз polars", "recent", None),
        ("актуальный курс доллара", "recent", None),
        ("что сейчас с погодой в москве", "recent", None),
        ("данные в 2024 году", "range", (t(2024, 1, 1), t(2025, 1, 1))),
        ("отчёт за прошлую неделю", "range", (t(2026, 3, 2), t(2026, 3, 9))),
        ("остатки на 1 марта", "as_of", (t(2026, 3, 1), t(2026, 3, 2))),
        ("курс евро по состоянию на 1 марта 2025", "as_of", (t(2025, 3, 1), t(2025, 3, 2))),
        ("продажи в марте", "range", (t(2026, 3, 1), t(2026, 4, 1))),
        ("за последние 30 дней", "range", (t(2026, 3, 10, 9, 30) - 30 * 86400, t(2026, 3, 10, 9, 30))),
        ("выручка в прошлом году", "range", (t(2025, 1, 1), t(2026, 1, 1))),
        ("что такое косинусное сходство", "timeless", None),
        ("синтаксис print в python 2", "specific", None),
    ],
)
def test_russian(query: str, mode: str, tgt: tuple[float, float] | None) -> None:
    it = parse(query, now=RU_NOW)
    assert it.lang == "ru"
    assert it.mode == mode
    got = None if it.target is None else (it.target.start, it.target.end)
    assert got == tgt


def test_russian_topical_query_drops_the_operator() -> None:
    assert parse("данные за прошлую неделю", now=RU_NOW).topical_query == "данные"
    assert parse("последний релиз polars", now=RU_NOW).topical_query == "релиз polars"


def test_language_detection() -> None:
    assert detect_language("what changed in polars") == "en"
    assert detect_language("свежая версия android studio") == "ru"
    assert detect_language("") == "en"


def test_adversarial_dates_do_not_crash() -> None:
    assert parse("what happened in 99999", now=NOW).mode != "range"
    feb = parse("prices on February 30 2024", now=NOW)
    assert feb.mode == "as_of" and (feb.target.start, feb.target.end) == (t(2024, 2, 1), t(2024, 3, 1))
    assert parse("99999999 years ago", now=NOW) is not None
    assert parse("past 9999999 days", now=NOW) is not None


def test_bad_input() -> None:
    with pytest.raises(InvalidInput):
        parse(None)  # type: ignore[arg-type]
    with pytest.raises(InvalidInput):
        parse("x", lang="xx")
    with pytest.raises(InvalidInput):
        parse("x", now="not a date")


def test_now_forms_agree() -> None:
    a = parse("last week", now=NOW)
    b = parse("last week", now=NOW_S)
    c = parse("last week", now=datetime(2026, 8, 20, 12, tzinfo=timezone.utc))
    assert a.target == b.target == c.target


@pytest.mark.parametrize(("query", "end"), [
    ("latest flask in 2019", t(2020, 1, 1)),
    ("most recent jinja before July 4 2017", t(2017, 7, 4)),
    ("back in March 2021, what was the newest httpx", t(2021, 4, 1)),
    ("последний релиз flask в 2019 году", t(2020, 1, 1)),
])
def test_a_superlative_with_a_period_is_as_of_its_end(query: str, end: float) -> None:
    it = parse(query, now=NOW)
    assert it.mode == "as_of" and it.target is not None and it.target.end == end


@pytest.mark.parametrize("query", ["what changed in flask in 2019", "aiohttp changes last year",
                                   "what's new in httpx in 2021"])
def test_a_period_without_a_superlative_stays_a_range(query: str) -> None:
    assert parse(query, now=NOW).mode == "range"


# --------------------------------------------------------------------------- before / after an anchor


@pytest.mark.parametrize(("query", "relation", "text", "topical"), [
    ("how did authentication work before the v2 change", "before", "v2 change", "how did authentication work"),
    ("how does authentication work since the migration to OAuth", "after", "migration to OAuth",
     "how does authentication work"),
    ("rate limits after the 2.0 release", "after", "2.0 release", "rate limits"),
    ("rate limit before API 2.0", "before", "API 2.0", "rate limit"),
    ("how did pagination work until the v2 change", "before", "v2 change", "how did pagination work"),
    ("как работала авторизация до перехода на OAuth", "before", "перехода на OAuth", "как работала авторизация"),
    ("лимиты после выхода версии 2.0", "after", "выхода версии 2.0", "лимиты"),
])
def test_before_and_after_a_version_or_an_event(query, relation, text, topical):
    it = parse(query, now=NOW)
    assert it.mode == "range" and it.target is None
    assert it.anchor is not None and (it.anchor.relation, it.anchor.text) == (relation, text)
    assert it.topical_query == topical


@pytest.mark.parametrize(("query", "interval"), [
    ("refund policy before the July 2023 update", (-math.inf, t(2023, 7, 1))),
    ("pro plan price after the August 2023 increase", (t(2023, 8, 1), NOW_S)),
    ("service credits before the 2025 SLA update", (-math.inf, t(2025, 1, 1))),
])
def test_an_event_named_with_its_date_is_that_date(query, interval):
    it = parse(query, now=NOW)
    assert it.mode == "range" and it.anchor is None
    assert (it.target.start, it.target.end) == interval


@pytest.mark.parametrize("query", ["what to eat before a workout", "before september 2024", "after the war"])
def test_no_anchor_without_a_version_or_an_event_word(query):
    assert parse(query, now=NOW).anchor is None


def test_every_pattern_kind_has_one_handler() -> None:
    # a language file may name any kind in KINDS; the rules dispatch each to its handler
    from chronorank.intent.lang import KINDS
    from chronorank.intent.rules import _HANDLERS

    assert set(_HANDLERS) == set(KINDS)


@pytest.mark.parametrize(("query", "interval"), [
    # issue 29: "before the <date> update" is the version in force just before that day,
    # not "as of" the day (which returned the update itself)
    ("what did the privacy policy say about cookies before the April 17, 2020 update", (-math.inf, t(2020, 4, 17))),
    ("prior to 18 May 2026, what did the terms say about refunds", (-math.inf, t(2026, 5, 18))),
    ("refund terms prior to the 18 May 2026 revision", (-math.inf, t(2026, 5, 18))),
])
def test_before_a_dated_update_is_the_time_just_before_it(query, interval):
    it = parse(query, now=NOW)
    assert it.mode == "range" and it.anchor is None
    assert (it.target.start, it.target.end) == interval


@pytest.mark.parametrize("query", [
    "CVE-2024-47081 requests fix version",
    "which release fixed CVE-2025-6176",
    "is GHSA-2019-1234 fixed",
])
def test_an_advisory_id_is_not_a_year(query):
    it = parse(query, now=NOW)
    assert it.target is None and not any(sp.kind in ("range", "named_year") for sp in it.spans), it


@pytest.mark.parametrize(("query", "anchor"), [
    ("what changed in openssh after the 9.2p1 release", "9.2p1 release"),
    ("what changed after the 1:9.2p1-2+deb12u3 upload", "1:9.2p1-2+deb12u3 upload"),
    ("sqlite3 fixes since the 3.40.1-2+deb12u1 upload", "3.40.1-2+deb12u1 upload"),
    ("changes before the 2.0~rc2 release", "2.0~rc2 release"),
])
def test_debian_style_versions_are_anchors(query, anchor):
    it = parse(query, now=NOW)
    assert it.anchor is not None and it.anchor.text == anchor, it


def test_a_debian_version_is_one_version_and_a_range_of_two_is_two():
    assert [sp.text for sp in parse("sqlite3 3.40.1-2+deb12u1 changes", now=NOW).spans] == ["3.40.1-2+deb12u1"]
    assert [sp.text for sp in parse("changes from 1.2-1.4", now=NOW).spans] == ["1.2", "1.4"]


@pytest.mark.parametrize(("query", "start"), [
    ("urllib3 changes since the beginning of 2025", t(2025, 1, 1)),
    ("what changed since the start of March 2024", t(2024, 3, 1)),
])
def test_since_the_start_of_a_period_is_an_open_period(query, start):
    it = parse(query, now=NOW)
    assert it.mode == "range" and it.target.start == start and it.target.end >= t(2026, 8, 20), it


@pytest.mark.parametrize(("query", "mode"), [
    ("which pytest release deprecated yield_fixture", "specific"),
    ("rich live display - added in which version", "specific"),
    ("JWS support removed from itsdangerous - which version?", "specific"),
    ("tox dropped python 3.8 when?", "specific"),
    ("marshmallow CVE-2018-17175", "specific"),
    # a time expression still decides; a question about the current version is not a lookup
    ("which python version did scrapy most recently stop supporting", "recent"),
    ("which globalprotect version are we supposed to be on", "recent"),
])
def test_which_release_did_something_is_a_lookup(query, mode):
    assert parse(query, now=NOW).mode == mode
