"""Issue 29: on a page recorded in sections, the question names one section -- its versions are
the candidates time chooses among, and a fresher sibling section is no answer however close
its match (``ranking.section_chain``); a section's newest version, recorded alone on its day,
is still recognised as a section of its page (``ranking.sectioned``).

Through the Python API and through ``chronorank index`` / ``chronorank search`` on a small
corpus written here (the default MiniLM index).
"""

from __future__ import annotations

import numpy as np
import pytest
from cli_support import corpus_fixtures, search_ids

from chronorank.index import TemporalIndex
from chronorank.ranking import section_chain, section_key, sectioned

NOW = "2025-09-01"
TITLE = "Acme Shop Terms of Sale"

_FIRST = {
    "refunds": "Refunds are issued within 14 days of a cancelled order, to the card used for the purchase.",
    "returns": "Items can be returned within 30 days of delivery in their original packaging; we refund the "
               "item once it arrives.",
    "cookies": "We set cookies to keep you signed in and to remember your language.",
    "accounts": "You need an account to order; keep your password secret and tell us about misuse.",
    "deliveries": "Parcels ship within two working days; tracking links arrive by email.",
}


def _section(name: str, date: str, body: str) -> dict[str, str]:
    return {"id": f"acme-terms#{name}@{date}", "date": date, "text": f"{TITLE}. {name.capitalize()}. {body}"}


DOCS = [
    *[_section(n, "2025-01-10", b) for n, b in _FIRST.items()],  # the page as first recorded
    _section("refunds", "2025-03-02", "Refunds are issued within 30 days of a cancelled order, to the card used "
                                      "for the purchase or as store credit."),
    # a neighbouring section, changed closer to the asked day than the asked section
    _section("returns", "2025-05-20", "Items can be returned within 60 days of delivery in their original "
                                      "packaging; we refund the item once it arrives, minus shipping."),
    _section("cookies", "2025-08-25", "We set cookies to keep you signed in, to remember your language and, "
                                      "with your consent, to measure visits."),
    # a section whose heading was renamed when its text changed
    {"id": "acme-terms#cancellation@2025-01-10", "date": "2025-01-10",
     "text": f"{TITLE}. Cancellation. You may cancel an order free of charge until it leaves our warehouse; "
             "after that, send it back under the returns rules."},
    {"id": "acme-terms#cancellation@2025-06-05", "date": "2025-06-05",
     "text": f"{TITLE}. Order cancellation. You may cancel an order free of charge until it leaves our "
             "warehouse, in your account or by phone; after that, send it back under the returns rules."},
]


index, cli_path = corpus_fixtures(DOCS, "section-chain")


def test_as_of_a_day_the_asked_section_in_force_beats_a_sibling_changed_nearer_to_it(index, cli_path, capsys):
    q = "What did the Acme shop terms of sale say about refunds as of 1 June 2025?"
    want = ["acme-terms#refunds@2025-03-02", "acme-terms#refunds@2025-01-10"]
    hits = index.search(q, k=3, now=NOW)
    # the returns section changed on 20 May, nearer to the day; it is another section
    assert hits.ranked_ids[:2] == want, hits.ranked_ids
    assert search_ids(capsys, cli_path, q, NOW, k=2) == want


@pytest.mark.parametrize("q", [
    "What did the Acme terms say about refunds before the March 2025 update?",
    "What was the wording on refunds in the Acme terms of sale before it changed in March 2025?",
    "What were the rules on refunds in the Acme terms until the change of 2 March 2025?",
])
def test_before_an_update_the_section_it_replaced_comes_first(index, cli_path, capsys, q):
    hits = index.search(q, k=2, now=NOW)
    assert hits.ranked_ids[0] == "acme-terms#refunds@2025-01-10", hits.ranked_ids
    assert search_ids(capsys, cli_path, q, NOW, k=1) == ["acme-terms#refunds@2025-01-10"]


def test_a_renamed_heading_stays_one_section(index, cli_path, capsys):
    # "Cancellation" became "Order cancellation" on 5 June: the version before it is the answer,
    # not the renamed one, however close its match
    q = "What did the Acme shop terms of sale say about order cancellation prior to 5 June 2025?"
    hits = index.search(q, k=2, now=NOW)
    assert hits.ranked_ids[0] == "acme-terms#cancellation@2025-01-10", hits.ranked_ids
    assert search_ids(capsys, cli_path, q, NOW, k=1) == ["acme-terms#cancellation@2025-01-10"]


def test_section_key_is_the_title_and_the_heading():
    assert section_key("Acme Terms. Refunds. Refunds within 30 days.", 12) == "acme terms | refunds"
    assert section_key("Acme Terms. Refunds. Refunds within 14 days.", 12) == \
        section_key("Acme Terms. Refunds. Refunds within 30 days, or store credit.", 12)
    assert section_key("Acme Terms. Cookies. We set cookies.", 12) != section_key("Acme Terms. Refunds. x.", 12)


def test_section_chain_is_the_best_matchs_section_only():
    texts = ["Acme Terms. Refunds. Within 30 days.", "Acme Terms. Refunds. Within 14 days.",
             "Acme Terms. Returns. Within 60 days.", "Acme Terms. Cookies. We set cookies."]
    sim = np.array([0.9, 0.88, 0.86, 0.3])

    def keys(pos):
        return [section_key(texts[i], 12) for i in pos.tolist()]

    chain = section_chain(sim, np.ones(4, dtype=bool), keys)
    assert chain is not None and chain.tolist() == [True, True, False, False]
    # the best live match sets the section
    chain = section_chain(sim, np.array([False, False, True, True]), keys)
    assert chain is not None and chain.tolist() == [False, False, True, False]
    assert section_chain(sim, np.zeros(4, dtype=bool), keys) is None


def test_sectioned_sees_a_newest_version_recorded_alone_on_its_day():
    # the best match (position 0) is the only one of its page dated that day, but two of its
    # siblings share their first record: a page in sections
    titles = np.array([0, 0, 0, 0, 1])
    times = np.array([5.0, 1.0, 1.0, 2.0, 5.0])

    def of(pos):
        return titles[pos]

    assert sectioned(of, times, np.array([0.9, 0.5, 0.4, 0.3, 0.2]))
    # every document of the title on its own date: versions or releases, not sections
    assert not sectioned(of, np.array([5.0, 1.0, 2.0, 3.0, 5.0]), np.array([0.9, 0.5, 0.4, 0.3, 0.2]))


def test_rank_over_texts_puts_the_version_in_force_first():
    """rank() -- the reranker's and the stores' path -- finds the section and its renamed version
    from the candidates' texts alone: as of day 250, the version of day 200 (renamed heading),
    not the one of day 300 (the best match) nor the sibling of day 240."""
    from chronorank.kernels import get_kernel
    from chronorank.ranking import Rules, rank
    from chronorank.temporal import TemporalConfig
    from chronorank.types import Intent, Interval

    day = 86400.0
    body = "You may cancel an order free of charge until it leaves our warehouse"
    texts = [f"Acme Terms. Cancellation. {body}.", f"Acme Terms. Order cancellation. {body}, or by phone.",
             f"Acme Terms. Order cancellation. {body}, or by phone or email.",
             "Acme Terms. Returns. Items can be returned within 60 days.", "Acme Terms. Cookies. We set cookies."]
    dates = np.array([100.0, 200.0, 300.0, 240.0, 100.0]) * day
    sim = np.array([0.84, 0.80, 0.86, 0.82, 0.40])  # the old heading's wording matches better
    signals = {"bm25": np.array([7.0, 8.0, 8.5, 7.5, 1.0]), "dense": np.array([0.8, 0.8, 0.8, 0.8, 0.4]),
               "lead": np.ones(5)}
    intent = Intent(query="order cancellation as of day 250", mode="as_of", time_sensitivity=0.05,
                    target=Interval(250 * day, 251 * day))
    cfg = TemporalConfig(kernel=get_kernel("exponential(half_life_days=30)"))
    r = rank(sim, dates, intent=intent, now=400 * day, config=cfg, rules=Rules(), terms=3, signals=signals,
             texts=texts)
    assert "section chain" in r.stages
    order = np.argsort(-r.score, kind="stable")
    assert order[0] == 1, r.score
    assert order.tolist().index(0) < order.tolist().index(3)  # the section's versions above the sibling


def test_in_force_first_lifts_the_version_in_force_at_the_instant():
    from chronorank.ranking import asked_instant, in_force_first
    from chronorank.types import Intent, Interval

    chain = np.array([True, True, True, False])
    start = np.array([100.0, 200.0, 300.0, 150.0])
    score = np.array([0.9, 0.5, 0.7, 0.3])
    live = np.ones(4, dtype=bool)
    moved = in_force_first(score, chain, start, live, 250.0)
    assert moved is not None and moved[1] == 1
    assert np.argmax(moved[0]) == 1 and moved[0][0] == 0.9 and moved[0][2] == 0.7  # the rest keep their order
    assert in_force_first(score, chain, start, live, 150.0) is None  # already first
    assert in_force_first(score, chain, start, live, 50.0) is None  # none in force yet
    # before X: the boundary; a day: its end; now: the reference time; after X: no one state
    before = Intent(query="q", mode="range", target=Interval(float("-inf"), 500.0), time_sensitivity=0.5,
                    spans=())
    assert asked_instant(before, 900.0) == 500.0  # in force at the end of what is asked
    assert asked_instant(Intent(query="q", mode="as_of", target=Interval(400.0, 486.4), time_sensitivity=0.5),
                         900.0) == 486.4
    assert asked_instant(Intent(query="q", mode="recent", target=None, time_sensitivity=0.5), 900.0) == 900.0
    assert asked_instant(Intent(query="q", mode="timeless", target=None, time_sensitivity=0.0), 900.0) is None
    from chronorank.intent import parse
    from chronorank.timeparse import to_epoch

    since = parse("what changed in the Acme terms since March 2025", now="2025-09-01")
    assert asked_instant(since, to_epoch("2025-09-01")) is None
    # "before it changed in <month>" / "until the change of <day>": just before it
    for q, day in [("what did the Acme terms say about refunds before it changed in March 2025", "2025-03-01"),
                   ("refunds in the Acme terms until the change of 2 March 2025", "2025-03-02")]:
        assert asked_instant(parse(q, now="2025-09-01"), to_epoch("2025-09-01")) == to_epoch(day), q


def _sectioned_bm25(hits):
    return {h.id: round(float(h.signals["bm25"]), 6) for h in hits}


def test_a_page_in_sections_weighs_the_questions_words_at_plain_bm25(index, cli_path, capsys):
    """The question names the page (rare words: the title matches them already) and the section
    (ordinary words), so on a page in sections BM25 counts the words at plain idf (``idf_power``
    0); releases, each titled with its own version, keep ``idf_power``."""
    import json

    from chronorank.cli import main

    q = "What do the Acme shop terms of sale say about refunds right now?"
    hits = index.search(q, k=4, now=NOW)
    plain = index.search(q, k=4, now=NOW, config=index.config.replace(idf_power=0.0))
    assert index.config.idf_power > 0
    assert _sectioned_bm25(hits) == _sectioned_bm25(plain)
    capsys.readouterr()
    assert main(["search", str(cli_path), q, "--now", NOW, "-k", "4", "--json"]) == 0
    cli = {h["id"]: round(h["signals"]["bm25"], 6) for h in json.loads(capsys.readouterr().out)["hits"]}
    assert cli == _sectioned_bm25(hits)

    releases = TemporalIndex()
    releases.add([{"id": f"httpx-{v}", "date": d, "text": f"httpx {v} release notes. {body}"} for v, d, body in [
        ("0.7.0", "2024-01-10", "Adds HTTP/2 support and a new connection pool."),
        ("0.8.0", "2024-05-02", "Drops Python 3.7 and adds trio support."),
        ("0.9.0", "2024-09-12", "A new transport API and faster connection reuse."),
    ]] + [{"id": "requests-2.32", "date": "2024-06-01",
           "text": "requests 2.32 release notes. Connection pool fixes and a new adapter."}])
    q = "latest httpx connection pool release"
    assert _sectioned_bm25(releases.search(q, k=4, now=NOW)) != _sectioned_bm25(
        releases.search(q, k=4, now=NOW, config=releases.config.replace(idf_power=0.0)))
