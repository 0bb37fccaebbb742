"""Issue 29: relative recency inside the set that matches the question's specific part (the
``facet`` stage), and an explanation that says why a document is or is not on topic and which
version chain it belongs to.

Through the Python API and through ``chronorank index`` / ``chronorank search`` on a small
corpus of release notes written here (the default MiniLM index).
"""

from __future__ import annotations

import json

from cli_support import corpus_fixtures, search_ids

from chronorank.cli import main

NOW = "2024-12-01"


def _note(pkg: str, version: str, date: str, body: str) -> dict[str, str]:
    return {"id": f"{pkg}@{version}", "text": f"{pkg} {version}. {body}", "date": date}


DOCS = [
    _note("pyserve", "2.0.0", "2021-03-02", "safe_join on Windows does not allow special device names such as CON."),
    _note("pyserve", "2.0.3", "2022-04-11", "safe_join on Windows does not allow special device names in multi-segment paths."),
    _note("pyserve", "2.1.0", "2023-02-20", "Request.host returns the empty string if the header is missing."),
    _note("pyserve", "2.1.1", "2023-09-05", "parse_list_header preserves partially quoted items."),
    _note("pyserve", "2.2.0", "2024-10-01", "Drop support for Python 3.8. Add type hints to the routing module."),
    _note("tomlkit", "0.12.0", "2023-07-01", "Support TOML 1.0 inline tables with trailing commas."),
    _note("tomlkit", "0.13.0", "2024-08-01", "Preserve comments when an array is rewritten."),
    _note("colorama", "0.4.6", "2022-10-24", "Support the ANSI codes of the Windows terminal."),
]
QUERY = "pyserve safe_join on windows: newest fix?"


index, cli_path = corpus_fixtures(DOCS, "facet")


def test_newest_of_what_matches_the_specific_part(index, cli_path, capsys):
    # the newest pyserve entry about safe_join, then the one before it -- not the newest
    # pyserve release, which the subject ("pyserve", every entry's title) keeps on topic too
    want = ["pyserve@2.0.3", "pyserve@2.0.0"]
    hits = index.search(QUERY, k=3, now=NOW)
    assert hits.ranked_ids[:2] == want, hits.ranked_ids
    assert search_ids(capsys, cli_path, QUERY, NOW)[:2] == want


def test_a_plain_latest_question_keeps_the_newest_release(index, cli_path, capsys):
    # no specific part that keywords and meaning agree on: the newest release first
    q = "what is the latest pyserve release"
    assert index.search(q, k=3, now=NOW).ranked_ids[0] == "pyserve@2.2.0"
    assert search_ids(capsys, cli_path, q, NOW)[0] == "pyserve@2.2.0"


def _check_records(records):
    by_id = {r["id"]: r for r in records}
    first = by_id["pyserve@2.0.3"]
    assert first["on_topic"] is True
    assert first["topic"].startswith("on topic by fused similarity")
    assert "x the best" in first["topic"] and "cut 0.5" in first["topic"]
    assert "specific part (keywords and meaning agree)" in first["topic"]
    # its version chain: the series "pyserve" (the title but for the version), second of five by date
    assert first["chain"] == {"name": "series 'pyserve'", "position": 2, "length": 5, "newest": "pyserve@2.2.0"}
    newest = by_id["pyserve@2.2.0"]
    assert newest["on_topic"] is True and "not in the set matching the question's specific part" in newest["topic"]
    assert newest["chain"]["position"] == newest["chain"]["length"] == 5
    off = [r for r in records if r["on_topic"] is False]
    assert off, [(r["id"], r["on_topic"]) for r in records]
    for r in off:
        assert r["topic"].startswith("off topic: fused similarity ") and "a clearly worse match" in r["topic"]
        # tomlkit's two releases are one chain; colorama's single entry is in none
        assert (r["chain"] is None) == r["id"].startswith("colorama"), r


def test_explanation_says_why_on_topic_and_which_chain(index):
    hits = index.search(QUERY, k=8, now=NOW)
    _check_records(hits.explain_records())
    text = hits.explain(legend=False)
    assert "chain series 'pyserve': 2 of 5 by date, newest pyserve@2.2.0" in text
    assert "chain series 'pyserve': 5 of 5 by date (the newest)" in text
    assert "off topic: fused similarity" in text


def test_explanation_through_the_cli(cli_path, capsys):
    capsys.readouterr()
    assert main(["search", str(cli_path), QUERY, "--now", NOW, "-k", "8", "--explain"]) == 0
    text = capsys.readouterr().out
    assert "chain series 'pyserve': 2 of 5 by date, newest pyserve@2.2.0" in text
    assert "matches the question's specific part" in text and "off topic: fused similarity" in text
    assert main(["search", str(cli_path), QUERY, "--now", NOW, "-k", "8", "--json"]) == 0
    _check_records(json.loads(capsys.readouterr().out)["hits"])


def test_reranker_explains_topic_and_chain_too():
    from chronorank import TemporalReranker

    # scores as a retriever gave them: the three pyserve entries close, tomlkit far below
    cands = [{**d, "score": s} for d, s in zip(DOCS, (0.90, 0.88, 0.30, 0.86, 0.31, 0.20, 0.21, 0.25))]
    ranking = TemporalReranker().rerank("latest pyserve release", cands, now=NOW)
    records = {r["id"]: r for r in ranking.explain_records()}
    assert records["pyserve@2.1.1"]["on_topic"] is True
    assert records["pyserve@2.1.1"]["topic"].startswith("on topic by similarity 0.96 x the best (cut 0.5")
    assert records["tomlkit@0.12.0"]["topic"].startswith("off topic: similarity 0.22 x the best (cut 0.5")
    # the chain is read from the candidates' own titles: tomlkit's two releases, pyserve's five
    assert records["tomlkit@0.12.0"]["chain"] == {"name": "series 'tomlkit'", "position": 1, "length": 2,
                                                  "newest": "tomlkit@0.13.0"}
    assert records["pyserve@2.1.1"]["chain"]["position"] == 4 and records["pyserve@2.1.1"]["chain"]["length"] == 5
    assert records["colorama@0.4.6"]["chain"] is None
    assert "chain series 'pyserve': 4 of 5 by date, newest pyserve@2.2.0" in ranking.explain()
