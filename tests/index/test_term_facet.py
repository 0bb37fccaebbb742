"""Issue 29: "the newest of what matches" -- a question about the newest entry of a subject
that names a specific part ("latest quiver fix for redis", "newest quiver security fix")
is answered by the newest entry *holding those words*, read word by word when the keyword
score does not set those entries apart (``ranking.term_facet``), through the Python API and
through ``chronorank index`` / ``chronorank search``, over changelog entries written here."""

from __future__ import annotations

import numpy as np
import pytest
from cli_support import corpus_fixtures, search_ids

from chronorank.intent.rules import facet_text
from chronorank.ranking import term_facet

NOW = "2026-08-20"

LINES = ["worker shutdown when the pool is busy", "beat schedule drift after a restart",
         "retries of tasks with keyword arguments", "result backend timeouts", "logging of task names",
         "chord callbacks", "signal handlers on Windows", "memory growth of long-running workers",
         "CLI option parsing", "prefetch limits", "eta tasks after a clock change", "rate limits per queue"]


def _entry(project: str, i: int, date: str, lines: int, extra: str = "") -> dict[str, str]:
    body = ". ".join(f"Fix {project} {LINES[j % len(LINES)]}" for j in range(i, i + lines))
    return {"id": f"{project}@5.{i}.0", "date": date, "text": f"{project} 5.{i}.0. What's changed: {extra}{body}."}


# quiver's entries differ in length: the long ones say "quiver" and "fix" a dozen times, so the
# keyword score of the two entries that name redis is no tier above theirs
DOCS = [
    _entry("quiver", 0, "2024-01-10", 3),
    _entry("quiver", 1, "2024-04-02", 2, "Fix quiver Redis Sentinel password handling. "),
    _entry("quiver", 2, "2024-07-19", 12),
    _entry("quiver", 3, "2024-11-05", 4),
    _entry("quiver", 4, "2025-02-14", 3, "Fix quiver reconnects to a Redis broker after a failover. "),
    _entry("quiver", 5, "2025-06-30", 12),
    _entry("quiver", 6, "2025-10-12", 2),
    _entry("quiver", 7, "2026-03-03", 12),
    _entry("quiver", 8, "2026-07-21", 10),
    # lantern is a Redis client: every entry of it names Redis, so "redis" is a common word of
    # the corpus, no rarer than "quiver"
    *(_entry("lantern", i, f"202{4 + i // 4}-{i % 4 * 3 + 1:02d}-05", 3, "Redis cluster support. ")
      for i in range(12)),
]

index, cli_path = corpus_fixtures(DOCS, "term_facet")


def test_the_frame_words_of_a_question_about_the_newest_are_no_part_of_its_facet():
    assert facet_text("quiver fix for redis") == "quiver for redis"
    assert facet_text("requests security fix") == "requests security"
    assert facet_text("has pip dropped any python versions?") == "has pip dropped any python ?"
    assert facet_text("release notes") is None  # nothing left
    assert facet_text("что нового", "ru") is None  # a language without the list reads no words


def test_the_subject_s_words_and_the_words_no_entry_holds_set_nothing_apart():
    on = np.ones(6, dtype=bool)
    meaning = np.array([0.7, 0.4, 0.65, 0.4, 0.4, 0.4])
    # rows: the subject (every entry), a specific word (entries 0 and 2), a word none holds
    held = np.array([[1, 1, 1, 1, 1, 1], [1, 0, 1, 0, 0, 0], [0, 0, 0, 0, 0, 0]], dtype=bool)
    got = term_facet(on, lambda pos: held[:, pos], meaning, on, 0.5)
    assert got is not None and got.tolist() == [True, False, True, False, False, False]
    # two specific words: an entry holding one of them is half the specific part, enough
    held2 = np.array([[1, 1, 1, 1, 1, 1], [1, 0, 0, 0, 0, 0], [0, 0, 1, 0, 0, 0]], dtype=bool)
    got = term_facet(on, lambda pos: held2[:, pos], meaning, on, 0.5)
    assert got is not None and got.tolist() == [True, False, True, False, False, False]
    # no word of the question names the subject (every one of its entries holding it: a
    # question over news articles, not over one subject's history): no facet
    assert term_facet(on, lambda pos: held2[1:, pos], meaning, on, 0.5) is None
    # a word most entries hold is the subject's vocabulary: no facet
    held3 = np.array([[1, 1, 1, 1, 1, 1], [1, 1, 1, 1, 0, 0]], dtype=bool)
    assert term_facet(on, lambda pos: held3[:, pos], meaning, on, 0.5) is None
    # the meaning disagrees (the entries holding the word are no closer to the question): no facet
    assert term_facet(on, lambda pos: held[:, pos], meaning[::-1].copy(), on, 0.5) is None
    # only the subject's entries count (a title match >= margin x the best on topic)
    titles = np.array([1.0, 1.0, 0.2, 1.0, 1.0, 1.0])
    got = term_facet(on, lambda pos: held[:, pos], meaning, on, 0.5, titles)
    assert got is not None and got.tolist() == [True, False, False, False, False, False]


@pytest.mark.parametrize("query", ["latest quiver fix for redis", "most recent quiver redis fix"])
def test_the_newest_entry_that_names_the_specific_part_ranks_first(index, cli_path, capsys, query):
    # every quiver entry says "quiver" and "fix" many times; two name redis, neither is the newest
    hits = index.search(query, k=3, now=NOW)
    assert hits.meta["intent"].mode == "recent"
    assert hits.ranked_ids[:2] == ["quiver@5.4.0", "quiver@5.1.0"], hits.ranked_ids
    why = {r["id"]: r["topic"] for r in hits.explain_records()}
    assert "matches the question's specific part" in why["quiver@5.4.0"]
    assert "not in the set matching the question's specific part" in why["quiver@5.8.0"]
    assert search_ids(capsys, cli_path, query, NOW, k=2) == ["quiver@5.4.0", "quiver@5.1.0"]


@pytest.mark.parametrize("query", ["latest quiver release", "what's new in the newest quiver version?"])
def test_a_plain_latest_question_still_gets_the_newest_entry(index, cli_path, capsys, query):
    assert index.search(query, k=1, now=NOW).ranked_ids == ["quiver@5.8.0"]
    assert search_ids(capsys, cli_path, query, NOW, k=1) == ["quiver@5.8.0"]



def test_the_reranker_and_the_stores_read_the_specific_words_from_the_texts():
    # no postings there: rerank.text_facet_hits reads the same words from the candidates' texts
    from chronorank.intent.rules import parse
    from chronorank.rerank import text_facet_hits

    texts = [d["text"] for d in DOCS]
    hits = text_facet_hits(parse("latest quiver fix for redis", now=NOW), texts)
    assert hits is not None
    held = hits(np.arange(9))  # quiver's entries: "quiver" in each, "redis" in two
    assert held.shape == (2, 9)
    assert sorted(held.sum(axis=1).tolist()) == [2, 9]
    assert text_facet_hits(parse("latest quiver release", now=NOW), texts) is None  # the subject alone
    assert text_facet_hits(parse("latest quiver fix for redis", now=NOW), None) is None


def test_a_store_ranks_the_facet_question_as_the_index(index):
    pytest.importorskip("qdrant_client")
    from chronorank.stores import QdrantStore

    q = "latest quiver fix for redis"
    store = QdrantStore("term_facet", embedder=index.embedder)  # local mode, client-side ranking
    try:
        store.add(DOCS, vectors=index._snap.vectors)
        got = store.search(q, k=2, now=NOW)
        assert got.meta["scoring"] == "client"
        assert got.ids == ["quiver@5.4.0", "quiver@5.1.0"], got.ids
    finally:
        store.close()
