"""Issue 29, item 3: the question semantics people use, over Debian-style changelog entries
(epochs, ``p1``, ``+deb12u3``, ``~rc2``) written here, through the Python API and through
``chronorank index`` / ``chronorank search`` (the default MiniLM index)."""

from __future__ import annotations

import pytest
from cli_support import corpus_fixtures, search_ids
from cli_support import debian_entry as _entry

from chronorank.index.version_conflict import asked_versions, find_versions
from chronorank.intent import parse

NOW = "2024-12-01"


DOCS = [
    # a version announced before its own upload: "before 21.0" is dated by pip 21.0's entry
    _entry("python-pip", "20.0-1", "2020-01-21", "New upstream release 20.0. Python 2 support will be removed in pip 21.0."),
    _entry("python-pip", "20.2-1", "2020-07-29", "New upstream release 20.2: the new dependency resolver as a beta."),
    _entry("python-pip", "20.3.3-1", "2020-12-15", "New upstream release 20.3.3: resolver fixes."),
    _entry("python-pip", "21.0-1", "2021-01-23", "New upstream release 21.0. Drop support for Python 2."),
    _entry("python-pip", "21.1-1", "2021-04-24", "New upstream release 21.1: warn when running as root."),
    # a line and its newest release, then the next line
    _entry("sqlalchemy", "1.3.0+ds1-1", "2019-03-04", "New upstream release 1.3.0 of sqlalchemy."),
    _entry("sqlalchemy", "1.3.15+ds1-1", "2020-03-11", "New upstream release 1.3.15 of sqlalchemy."),
    _entry("sqlalchemy", "1.3.24+ds1-1", "2021-03-30", "New upstream release 1.3.24 of sqlalchemy."),
    _entry("sqlalchemy", "2.0.25+ds1-1", "2024-01-02", "New upstream release 2.0.25 of sqlalchemy."),
    _entry("sqlalchemy", "2.0.36+ds1-1", "2024-10-15", "New upstream release 2.0.36 of sqlalchemy."),
    # "python 3.7" names Python, not a release of click numbered 3.7
    _entry("python-click", "3.7-1", "2015-01-20", "New upstream release 3.7: add the --version option."),
    _entry("python-click", "8.1.0-1", "2022-03-28", "New upstream release 8.1.0. Drop support for Python 3.6."),
    _entry("python-click", "8.2.0-1", "2024-05-10", "New upstream release 8.2.0. Drop support for Python 3.7, 3.8 and 3.9."),
    _entry("python-click", "8.2.1-1", "2024-06-02", "New upstream release 8.2.1: shell completion fixes."),
    # the Jinja project, written "jinja" in its own entries and "Jinja2" by a few others
    _entry("jinja", "2.8-1", "2015-07-26", "New upstream release 2.8 of jinja. Jinja2 templates gain the policies API."),
    _entry("jinja", "2.9.5-1", "2017-01-28", "New upstream release 2.9.5 of jinja: async fixes."),
    _entry("jinja", "2.10-1", "2017-11-08", "New upstream release 2.10 of jinja: namespace objects."),
    _entry("jinja", "2.11.3-1", "2021-01-31", "New upstream release 2.11.3 of jinja: a ReDoS fix."),
    _entry("flask", "0.12-1", "2017-01-28", "New upstream release 0.12 of flask; needs Jinja2 2.4 and Werkzeug 0.7."),
]


index, cli_path = corpus_fixtures(DOCS, "semantics")


def cli_ids(capsys, path, query, k=3):
    return search_ids(capsys, path, query, NOW, k)


def test_a_version_anchor_is_dated_by_its_own_entry(index, cli_path, capsys):
    # pip 20.0 says "21.0" first (a forward reference); the 21.0 upload is when 21.0 happened
    q = "the last pip before 21.0"
    hits = index.search(q, k=3, now=NOW)
    assert hits.meta["intent"].target.end > 1.6e9  # 2021-01-23, not 2020-01-21
    assert hits.ranked_ids[0] == "python-pip@20.3.3-1", hits.ranked_ids
    assert cli_ids(capsys, cli_path, q)[0] == "python-pip@20.3.3-1"


@pytest.mark.parametrize("query", ["newest sqlalchemy 1.3 release", "what was the final sqlalchemy 1.3.x release?"])
def test_the_newest_of_a_line_is_a_release_of_that_line(index, cli_path, capsys, query):
    intent = parse(query, now=NOW)
    assert intent.mode == "recent"
    assert asked_versions(query, intent).keys[0][1] > 0  # 1.3 read as the line, holding 1.3.24
    line = {"sqlalchemy@1.3.0+ds1-1", "sqlalchemy@1.3.15+ds1-1", "sqlalchemy@1.3.24+ds1-1"}
    ids = index.search(query, k=3, now=NOW).ranked_ids
    assert set(ids) == line, ids  # never a 2.0 release above them
    assert set(cli_ids(capsys, cli_path, query)) == line


def test_a_number_inside_a_name_is_the_subject_not_a_version(index, cli_path, capsys):
    assert find_versions("drop support for Python 3.7, 3.8 and 3.9 in click 8.2") == ["8.2"]
    q = "which click release dropped python 3.7"
    assert asked_versions(q, parse(q, now=NOW)) is None
    hits = index.search(q, k=3, now=NOW)
    assert hits.ranked_ids[0] == "python-click@8.2.0-1", hits.ranked_ids
    assert cli_ids(capsys, cli_path, q)[0] == "python-click@8.2.0-1"


@pytest.mark.parametrize(("text", "want"), [
    # the epoch orders packagings; the upstream release is what a question names
    ("openssh (1:9.2p1-2+deb12u3) bookworm-security", ["9.2"]),
    ("gzip (1.12~rc2-1) experimental", ["1.12"]),
    ("HTTP/2 for ES2015 on Windows 11", []),
])
def test_debian_versions_and_numbered_names(text, want):
    assert find_versions(text) == want


def test_a_name_with_its_number_glued_on_is_the_bare_name(index, cli_path, capsys):
    # "jinja2" is the jinja project: its 2017 entries, not the few pages spelling "Jinja2"
    q = "which jinja2 versions came out in 2017?"
    want = {"jinja@2.9.5-1", "jinja@2.10-1"}
    assert set(index.search(q, k=2, now=NOW).ranked_ids) == want
    assert set(cli_ids(capsys, cli_path, q, k=2)) == want


@pytest.mark.parametrize(("query", "version"), [
    ("I'm on click 8.1.0, what did I miss?", "8.1.0"),
    ("upgrading click from 8.1.0 - what do I need to know?", "8.1.0"),
])
def test_the_version_one_is_on_asks_what_came_after_it(index, cli_path, capsys, query, version):
    intent = parse(query, now=NOW)
    assert intent.mode == "range" and intent.anchor.relation == "after" and intent.anchor.text == version
    assert "click" in intent.topical_query  # the subject stays in what is searched
    after = {"python-click@8.2.0-1", "python-click@8.2.1-1"}
    ids = index.search(query, k=2, now=NOW).ranked_ids
    assert set(ids) == after, ids  # never 8.1.0 itself, never "the most recent" of another package
    assert set(cli_ids(capsys, cli_path, query, k=2)) == after


def test_a_version_range_is_not_an_upgrade_anchor():
    assert parse("migrating from 1.x to 2.0", now=NOW).anchor is None
    assert parse("I'm stuck on rich 12 - what's the newest 12.x?", now=NOW).anchor is None


def test_a_named_day_is_a_date(index, cli_path, capsys):
    intent = parse("which sqlalchemy release was current on Christmas 2020?", now=NOW)
    assert intent.mode == "as_of" and intent.target.start == 1608854400.0  # 2020-12-25
    q = "sqlalchemy release available on Halloween 2020"
    assert parse(q, now=NOW).target.start == 1604102400.0  # 2020-10-31
    ids = index.search(q, k=2, now=NOW).ranked_ids
    assert ids[0] == "sqlalchemy@1.3.15+ds1-1", ids  # the one in force then, not 2.0.36
    assert cli_ids(capsys, cli_path, q)[0] == "sqlalchemy@1.3.15+ds1-1"
