"""Issue 29: "X just put out a new release - what's in it?" asks for the newest release, through
the Python API and through ``chronorank index`` / ``chronorank search`` (the default MiniLM
index). The English lexicon's "just released" cue only fired when another trigger word was in
the question too; "just" is a trigger now, and the cue covers the other verbs of shipping."""

from __future__ import annotations

import pytest
from cli_support import corpus_fixtures, search_ids

from chronorank.intent import parse

NOW = "2026-08-20"


def _entry(project: str, version: str, date: str, body: str) -> dict[str, str]:
    return {"id": f"{project}@{version}", "text": f"{project} {version}. {body}", "date": date}


DOCS = [
    # the older entries name the project most and read like release announcements; the newest
    # one is a plain fix list: by similarity alone the 1.4 series comes first
    _entry("sqlalchemy", "1.4.0", "2021-03-15",
           "The SQLAlchemy 1.4 series brings the 2.0-style query API and async support to SQLAlchemy."),
    _entry("sqlalchemy", "2.0.0", "2023-01-26",
           "SQLAlchemy 2.0 is out: typed ORM mappings and insert batching in SQLAlchemy."),
    _entry("sqlalchemy", "2.0.41", "2025-05-14", "Fixed the MySQL reflection of computed columns."),
    _entry("sqlalchemy", "2.0.43", "2026-08-11", "Fixed the SQLite dialect's handling of JSON defaults."),
    _entry("flask", "3.1.0", "2026-07-30", "Fixed the handling of the SESSION_COOKIE_PARTITIONED setting."),
]


index, cli_path = corpus_fixtures(DOCS, "recency_cues")


@pytest.mark.parametrize("query", [
    "sqlalchemy just put out a new release - what's in it?",
    "just released: the new sqlalchemy",
    "sqlalchemy just shipped an update",
])
def test_just_shipped_is_a_recency_cue(query):
    intent = parse(query, now=NOW)
    assert intent.mode == "recent", intent
    assert [s.kind for s in intent.spans] == ["recent"], intent.spans


@pytest.mark.parametrize("query", [
    "how do I just run one test with pytest",
    "is it just a wrapper around urllib3",
])
def test_just_alone_is_no_cue(query):
    assert not parse(query, now=NOW).spans


def test_the_newest_release_answers_just_put_out(index, cli_path, capsys):
    query = "sqlalchemy just put out a new release - what's in it?"
    for ids in (index.search(query, k=3, now=NOW).ranked_ids, search_ids(capsys, cli_path, query, NOW)):
        assert ids[0] == "sqlalchemy@2.0.43", ids
