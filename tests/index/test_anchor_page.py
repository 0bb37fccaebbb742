"""Issue 29: a before question whose anchor names a version, over release entries written here,
through the Python API and through ``chronorank index`` / ``chronorank search`` (the default
MiniLM index): the anchor's own page answers "how did X work before <version>" when it alone
says so, and a question for a release before it is answered by the period."""

from __future__ import annotations

import math

import numpy as np
from cli_support import corpus_fixtures, first_both_ways, release_entry, reranked

from chronorank.ranking import anchor_page_first

NOW = "2026-08-20"


DOCS = [
    release_entry("httpkit", "1.0.0", "2019-01-10", "First release: sessions, cookies and connection pools."),
    release_entry("httpkit", "1.4.0", "2020-03-02", "Redirects keep the Cookie header on the same host. Added a retry helper."),
    release_entry("httpkit", "1.8.0", "2021-06-15", "Added per-request timeouts. Faster JSON decoding."),
    release_entry("httpkit", "1.9.0", "2022-02-01", "Dropped Python 3.6. Type hints for the session API."),
    release_entry("httpkit", "2.0.0", "2023-05-22",
                  "Security: versions 1.4.0 to 1.9.0 forward the Proxy-Authorization header when an HTTPS request "
                  "is redirected to another host. The header is now stripped on such redirects."),
    release_entry("httpkit", "2.1.0", "2023-09-01", "Added HTTP/2 support. Fixed a leak in the connection pool."),
    # another project naming the header, before the anchor
    release_entry("crawlkit", "3.2.0", "2022-10-01",
                  "Security: the proxy middleware removes the Proxy-Authorization header when the proxy changes."),
]


index, cli_path = corpus_fixtures(DOCS, "anchor_page")


def test_the_anchor_page_answers_how_it_worked_before(index, cli_path, capsys):
    # httpkit 2.0.0 says what 1.4.0 to 1.9.0 did with the header; no page before it says as much
    q = "how did httpkit treat Proxy-Authorization on HTTPS redirects before 2.0?"
    hits = first_both_ways(index, cli_path, capsys, q, NOW, "httpkit@2.0.0")
    assert "by httpkit@2.0.0" in hits.meta["anchor"], hits.meta["anchor"]
    assert "the only strong match" in hits.explain()


def test_the_anchor_page_is_not_first_when_the_question_asks_for_a_release_before_it(index, cli_path, capsys):
    # every httpkit page matches "the last httpkit release" alike: the period decides
    q = "what was the last httpkit release before 2.0?"
    first_both_ways(index, cli_path, capsys, q, NOW, "httpkit@1.9.0")


def test_anchor_page_first_needs_a_lone_strong_match_and_a_before_question():
    score = np.array([0.9, 0.8, 0.1, 0.7])
    live = np.ones(4, dtype=bool)
    alone = np.array([0.5, 0.55, 0.95, 0.6])  # position 2 is the anchor page, the rest under 0.8 x 0.95
    out = anchor_page_first(score, 2, alone, live, ("before", 100.0))
    assert out is not None and int(np.argmax(out)) == 2
    assert np.array_equal(np.delete(out, 2), np.delete(score, 2))  # the rest keep their order
    near = np.array([0.5, 0.8, 0.95, 0.6])  # 0.8 >= 0.8 x 0.95: a near-equal page, the period decides
    assert anchor_page_first(score, 2, near, live, ("before", 100.0)) is None
    assert anchor_page_first(score, 2, alone, live, ("after", 100.0)) is None
    assert anchor_page_first(score, 2, alone, live, None) is None
    assert anchor_page_first(score, None, alone, live, ("before", 100.0)) is None
    dead = live.copy()
    dead[2] = False
    assert anchor_page_first(score, 2, alone, dead, ("before", 100.0)) is None
    assert anchor_page_first(np.array([0.1, 0.2, 0.9, -math.inf]), 2, alone, live, ("before", 1.0)) is None


def test_the_reranker_ranks_the_anchor_page_first_too(index):
    # the reranker reads the anchor page from the candidates' leads (``rerank.anchor_page_of``);
    # it dates an anchor by the words a text holds, so the version is written as the lead writes it
    q = "how did httpkit treat Proxy-Authorization on HTTPS redirects before 2.0.0?"
    got = reranked(index, DOCS, q, NOW)
    assert got.ranked_ids[0] == "httpkit@2.0.0", got.ranked_ids
    assert "by httpkit@2.0.0" in got.meta["anchor"], got.meta["anchor"]
