"""Issue 29: a page recorded in sections (one title and one date for all of them) -- its title
says which page, not which section, so time orders only the sections about the question.

Through the Python API and through ``chronorank index`` / ``chronorank search`` on a small
corpus written here (the default MiniLM index).
"""

from __future__ import annotations

import numpy as np
import pytest
from cli_support import corpus_fixtures, search_ids

from chronorank.index import TemporalIndex
from chronorank.ranking import SECTION_PEERS, flatten_margin, section_peers, sectioned

NOW = "2025-09-01"

_BODIES = {
    "refunds": "Refunds are issued within 14 days of a cancelled order, to the card used for the purchase.",
    "cookies": "We set cookies to keep you signed in and to remember your language.",
    "accounts": "You need an account to order; keep your password secret and tell us about misuse.",
    "deliveries": "Parcels ship within two working days; tracking links arrive by email.",
    "warranty": "Devices carry a two-year warranty against manufacturing defects.",
}


def _section(name: str, date: str, body: str | None = None) -> dict[str, str]:
    return {"id": f"acme-terms#{name}@{date}", "date": date,
            "text": f"Acme Shop Terms of Sale. {name.capitalize()}. {body or _BODIES[name]}"}


SECTIONS = [
    *[_section(n, "2025-01-10") for n in _BODIES],  # the page as first recorded, in sections
    _section("refunds", "2025-03-02", "Refunds are issued within 30 days of a cancelled order, to the card used "
                                      "for the purchase or as store credit."),
    # siblings updated since: fresh, but about something else
    _section("cookies", "2025-08-25", "We set cookies to keep you signed in, to remember your language and, "
                                      "with your consent, to measure visits."),
    _section("deliveries", "2025-08-28", "Parcels ship within one working day; tracking links arrive by email "
                                         "and text message."),
]


index, cli_path = corpus_fixtures(SECTIONS, "sections")


def cli_ids(capsys, path, query, k=3):
    return search_ids(capsys, path, query, NOW, k)


@pytest.mark.parametrize(("query", "want"), [
    # a fresh sibling section shares the page's title, not the question's subject
    ("what do the Acme shop terms of sale say about refunds right now", "acme-terms#refunds@2025-03-02"),
    ("what are the rules on refunds in the Acme shop terms currently", "acme-terms#refunds@2025-03-02"),
])
def test_a_fresh_sibling_section_is_not_lifted_above_the_asked_one(index, cli_path, capsys, query, want):
    hits = index.search(query, k=3, now=NOW)
    assert hits.ranked_ids[0] == want, hits.ranked_ids
    assert cli_ids(capsys, cli_path, query)[0] == want


def test_among_the_versions_of_one_section_time_decides(index, cli_path, capsys):
    q = "what do the Acme shop terms of sale say about refunds right now"
    hits = index.search(q, k=3, now=NOW)
    # both refund versions lead, the newer first; the older one is a near-equal, not a sibling
    assert hits.ranked_ids[:2] == ["acme-terms#refunds@2025-03-02", "acme-terms#refunds@2025-01-10"], hits.ranked_ids
    assert cli_ids(capsys, cli_path, q, k=2) == hits.ranked_ids[:2]


def test_sectioned_reads_one_title_and_one_date():
    titles = np.array([0, 0, 0, 1, 1])
    times = np.array([1.0, 1.0, 2.0, 1.0, 2.0])
    # the best match (position 0) shares its title and its date with position 1: a page in sections
    def of(pos):
        return titles[pos]

    assert sectioned(of, times, np.array([0.9, 0.5, 0.4, 0.3, 0.2]))
    # the best match's title is shared only across dates: versions or releases, not sections
    assert not sectioned(of, times, np.array([0.1, 0.2, 0.3, 0.9, 0.5]))
    assert not sectioned(lambda pos: np.array([-1, -1])[pos], np.array([1.0, 1.0]), np.array([0.9, 0.5]))


@pytest.mark.parametrize("seed", range(6))
def test_sectioned_reads_the_most_similar_of_a_large_corpus(seed):
    """Past SECTION_PEERS candidates, sectioned reads the best match's date peers and exactly
    the SECTION_PEERS most similar (ties at the last one: the first positions), NaN never."""
    rng = np.random.default_rng(seed)
    n = 5000
    sim = rng.random(n)
    if seed % 3 == 1:
        sim = np.round(sim * 50) / 50  # ties, at the cut too
    elif seed % 3 == 2:
        sim[rng.random(n) < 0.3] = np.nan
        sim[rng.random(n) < 0.3] = -np.inf
    times = np.arange(n, dtype=float)  # one document a date: only the most similar are read besides the best
    read: list[np.ndarray] = []

    def of(pos):
        read.append(pos)
        return np.zeros(pos.shape[0], dtype=np.int64)  # one title: sectioned iff two share a date

    assert not sectioned(of, times, sim)
    assert not read  # every peer has a date of its own: no title is read
    best = int(np.argmax(sim))
    finite = np.flatnonzero(~np.isnan(sim))
    order = finite[np.lexsort((finite, -sim[finite]))][:SECTION_PEERS]  # highest first, ties by position
    peers = np.union1d(order, [best])
    assert np.array_equal(section_peers(times, sim), peers)
    # two peers that share a date: their titles are read, with the best match's
    a, b = (int(x) for x in peers[peers != best][:2])
    times[b] = times[a]
    assert sectioned(of, times, sim)
    assert np.array_equal(read[0], np.sort([a, b, best]))
    read.clear()
    assert not sectioned(lambda pos: (pos != best).astype(np.int64), times, sim)  # not the best's title


def test_flatten_margin_ties_the_near_tier_only():
    # versions of one section (0.90, 0.88) stand a wide step above the siblings (0.55-0.50)
    sim = np.array([0.90, 0.88, 0.55, 0.52, 0.50])
    m = flatten_margin(sim, 0.5)
    assert m == pytest.approx(0.88 / 0.90)
    # a lone best match ties with nothing; a flat slope keeps the configured margin's floor
    assert flatten_margin(np.array([0.9, 0.4, 0.38]), 0.5) == 1.0
    assert flatten_margin(np.array([0.0, 0.0]), 0.5) == 0.5


def _rank_sections(dates: list[float]):
    """rank() (the reranker's and the stores' path) over four sections of one page titled alike:
    the asked one (best fused match), a fresh sibling whose lead and dense cosine equal it."""
    from chronorank.kernels import get_kernel
    from chronorank.ranking import Rules, rank
    from chronorank.temporal import TemporalConfig
    from chronorank.types import Intent

    day = 86400.0
    texts = ["Acme Terms. Refunds. Refunds within 30 days.", "Acme Terms. Cookies. We set cookies.",
             "Acme Terms. Accounts. Keep your password.", "Acme Terms. Deliveries. Parcels ship fast."]
    sim = np.array([0.9, 0.3, 0.25, 0.2])  # the siblings under the fused cut (0.5 x the best)
    signals = {"bm25": np.array([9.0, 2.0, 1.5, 1.0]), "dense": np.array([0.8, 0.78, 0.5, 0.5]),
               "lead": np.ones(4)}
    intent = Intent(query="refunds now", mode="recent", target=None, time_sensitivity=1.0)
    cfg = TemporalConfig(kernel=get_kernel("exponential(half_life_days=30)"))
    return rank(sim, np.array(dates) * day, intent=intent, now=400 * day, config=cfg, rules=Rules(),
                terms=3, signals=signals, texts=texts)


def test_rank_a_page_in_sections_keeps_only_the_asked_section_on_topic():
    # one title and one date for the page: the lead and dense floors name the page, not the section
    r = _rank_sections([100.0, 100.0, 100.0, 399.0])
    assert r.on_topic is not None and r.on_topic.tolist() == [True, False, False, False]
    assert int(np.argmax(r.score)) == 0
    # one title, every document its own date (releases, versions): the floors keep the sibling on topic
    r = _rank_sections([100.0, 200.0, 300.0, 399.0])
    assert r.on_topic is not None and r.on_topic.all()


PAGE = """Welcome to the Acme shop.

# Refunds
Refunds are issued within 30 days of a cancelled order.

Cookies
-------
We set cookies to keep you signed in.

**Deliveries**
Parcels ship within one working day.

# Empty
"""


def test_split_sections_cuts_a_page_at_its_headings():
    from chronorank.sections import split_sections

    docs = split_sections(PAGE, id="acme-terms", title="Acme Terms", date="2025-08-01", lang="en")
    assert [d["id"] for d in docs] == ["acme-terms#preamble@2025-08-01", "acme-terms#refunds@2025-08-01",
                                       "acme-terms#cookies@2025-08-01", "acme-terms#deliveries@2025-08-01"]
    assert docs[1]["text"] == "Acme Terms. Refunds. Refunds are issued within 30 days of a cancelled order."
    assert docs[0]["text"] == "Acme Terms. Welcome to the Acme shop."
    assert {d["date"] for d in docs} == {"2025-08-01"} and {d["lang"] for d in docs} == {"en"}
    assert docs[2]["section"] == "acme-terms#cookies"  # the same key in every recording: a version chain


def test_split_sections_refuses_a_page_without_a_title():
    from chronorank.errors import InvalidInput
    from chronorank.sections import split_sections

    with pytest.raises(InvalidInput, match="title"):
        split_sections(PAGE, id="acme-terms", title="")


def test_a_split_page_is_ranked_as_sections():
    from chronorank.sections import split_sections

    old = split_sections(PAGE, id="acme-terms", title="Acme Shop Terms of Sale", date="2025-01-10")
    new = split_sections(PAGE.replace("one working day", "one working day, tracked by text message"),
                         id="acme-terms", title="Acme Shop Terms of Sale", date="2025-08-28")
    idx = TemporalIndex(group_key="section")
    idx.add(old + [d for d in new if d["section"] == "acme-terms#deliveries"])
    hits = idx.search("what do the Acme shop terms of sale say about refunds right now", k=3, now=NOW)
    assert hits.ranked_ids[0] == "acme-terms#refunds@2025-01-10", hits.ranked_ids
    hits = idx.search("what do the Acme shop terms of sale say about deliveries right now", k=3, now=NOW)
    assert hits.ranked_ids[:2] == ["acme-terms#deliveries@2025-08-28", "acme-terms#deliveries@2025-01-10"]
