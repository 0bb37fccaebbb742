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
from cli_support import saved_index, search_ids

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


@pytest.fixture(scope="module")
def index():
    idx = TemporalIndex()
    idx.add(DOCS)
    return idx


@pytest.fixture(scope="module")
def cli_path(tmp_path_factory):
    return saved_index(tmp_path_factory, DOCS, "section-chain")


def test_as_of_a_day_the_asked_section_in_force_beats_a_sibling_changed_nearer_to_it(index, cli_path, capsys):
    q = "What did the Acme shop terms of sale say about refunds as of 1 June 2025?"
    want = ["acme-terms#refunds@2025-03-02", "acme-terms#refunds@2025-01-10"]
    hits = index.search(q, k=3, now=NOW)
    # the returns section changed on 20 May, nearer to the day; it is another section
    assert hits.ranked_ids[:2] == want, hits.ranked_ids
    assert search_ids(capsys, cli_path, q, NOW, k=2) == want


def test_before_an_update_the_section_it_replaced_comes_first(index, cli_path, capsys):
    q = "What did the Acme terms say about refunds before the March 2025 update?"
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
