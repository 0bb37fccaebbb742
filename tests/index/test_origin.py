"""Issue 29: timeless questions over release notes written here, through the Python API and
through ``chronorank index`` / ``chronorank search`` (the default MiniLM index): "what is X"
is answered by the release that introduced X, not by the later, shorter notes that fix it."""

from __future__ import annotations

import numpy as np
import pytest
from cli_support import corpus_fixtures, first_both_ways, release_entry, reranked

from chronorank.ranking import origin_first, release_header, series_key

NOW = "2026-08-20"


DOCS = [
    # testkit 2.4.0 introduces scratch_dir among many other notes; later notes fix it briefly
    release_entry("testkit", "2.3.0", "2018-03-01", "Faster collection of test modules. The junit report holds durations."),
    release_entry("testkit", "2.4.0", "2018-10-10",
                  "Deprecations: the old setup hooks warn. Features: improve the error shown when a conftest file "
                  "fails to import. Add an ini option to fail on empty parameter sets. Log messages of the collection "
                  "phase are shown with live logging. Introduce scratch_dir as a fixture providing a temporary Path "
                  "object to each test. Assertion rewriting covers plugins. Markers are validated when strict."),
    release_entry("testkit", "3.1.2", "2020-06-03", "Bug fixes: scratch_dir cleans up read-only files."),
    release_entry("testkit", "4.0.1", "2022-02-11",
                  "Bug fixes: scratch_dir directories are created with private permissions; the scratch_dir fixture "
                  "no longer follows symlinks."),
    release_entry("testkit", "4.2.0", "2023-04-20", "Improvements: scratch_dir retention policy option for the fixture."),
    # a security note: the word only it holds keeps it first
    release_entry("testkit", "5.0.3", "2025-09-01",
                  "Security: fixed use of an insecure temporary directory by the scratch_dir fixture (CVE-2025-0001)."),
    release_entry("testkit", "5.1.0", "2026-01-15", "Added parallel collection. Dropped Python 3.9."),
    # another project, and pages of a topic with a version in the title (not release notes)
    release_entry("webkit", "1.2.0", "2019-05-05", "The debugger asks for a PIN before it runs code."),
    {"id": "limits-v1", "text": "API v1 rate limits. Each key may send 100 requests a minute.", "date": "2021-01-01"},
    {"id": "limits-v2", "text": "API v2 rate limits. Each key may send 600 requests a minute.", "date": "2024-01-01"},
]


index, cli_path = corpus_fixtures(DOCS, "origin")


def test_a_timeless_question_is_answered_by_the_release_that_introduced_it(index, cli_path, capsys):
    q = "scratch_dir fixture in testkit, what does it give you"
    hits = first_both_ways(index, cli_path, capsys, q, NOW, "testkit@2.4.0")
    assert hits.meta["intent"].mode == "timeless"
    assert "introduced" in hits.explain()


def test_a_word_only_the_best_match_holds_keeps_it_first(index, cli_path, capsys):
    q = "testkit insecure temporary directory vulnerability"
    first_both_ways(index, cli_path, capsys, q, NOW, "testkit@5.0.3")


def test_similarity_only_leaves_the_order_alone(index):
    # what the stage is for: the similarity alone puts a shorter fix first
    q = "scratch_dir fixture in testkit, what does it give you"
    plain = index.search(q, k=3, now=NOW, strength=0).ranked_ids
    assert plain[0] != "testkit@2.4.0", plain


def test_the_reranker_ranks_the_introducing_release_first_too(index):
    q = "scratch_dir fixture in testkit, what does it give you"
    assert reranked(index, DOCS, q, NOW).ranked_ids[0] == "testkit@2.4.0"


@pytest.mark.parametrize(("text", "header"), [
    ("pytest 3.9.0. Deprecations: ...", True),
    ("Apache Airflow 2.3.0. Fixes.", True),
    ("API v2 rate limits. Each key ...", False),
    ("2024 review. Words.", False),
    ("Release notes. Words.", False),
])
def test_a_release_header_is_a_name_and_its_version(text, header):
    assert release_header(text, 12) is header


def test_origin_first_lifts_the_earliest_strong_match_naming_it_in_one_sentence():
    texts = [
        "kit 3.0. Fixed the frob cache. Faster start.",          # 0: the first hit
        "kit 1.0. Added the frob cache for lookups.",            # 1: names it in one sentence, earliest
        "kit 2.0. The frob option. A cache for sessions.",       # 2: holds the words apart
        "kit 0.5. Added the frob cache for lookups.",            # 3: names it, but a weak match
        "other 0.1. Added the frob cache.",                      # 4: another series
    ]
    score = np.array([0.95, 0.9, 0.92, 0.5, 0.94])
    sim = np.array([0.9, 0.85, 0.88, 0.3, 0.9])
    start = np.array([30.0, 10.0, 20.0, 5.0, 1.0])
    live = np.ones(5, dtype=bool)

    def keys(pos: np.ndarray) -> list[str]:
        return [series_key(texts[i], 12) for i in pos.tolist()]

    def texts_of(pos: np.ndarray) -> list[str]:
        return [texts[i] for i in pos.tolist()]

    got = origin_first(score, sim, live, start, "what is the frob cache", "en", keys, texts_of, 12)
    assert got is not None
    out, origin = got
    assert origin == 1 and int(np.argmax(out)) == 1
    assert np.array_equal(np.delete(out, 1), np.delete(score, 1))
    # a word the first hit alone holds: nothing older names it
    assert origin_first(score, sim, live, start, "fixed frob cache", "en", keys, texts_of, 12) is None
    # titles that are a topic's pages, not release headers ("kit v3 notes."): nothing moves
    for i in range(4):
        texts[i] = texts[i].replace("kit ", "kit v", 1).replace(". ", " notes. ", 1)
    assert keys(np.array([0]))[0] == keys(np.array([1]))[0] == "kit notes"
    assert origin_first(score, sim, live, start, "what is the frob cache", "en", keys, texts_of, 12) is None
