"""Issue 29: hand-written lookup and before questions over changelog entries written here,
through the Python API and through ``chronorank index`` / ``chronorank search`` (the default
MiniLM index): a number that is part of a name is not a release's number."""

from __future__ import annotations

import pytest
from cli_support import corpus_fixtures, search_ids

from chronorank.intent.rules import name_numbers

NOW = "2026-08-20"


def _entry(project: str, version: str, date: str, body: str) -> dict[str, str]:
    return {"id": f"{project}@{version}", "text": f"{project} {version}. {body}", "date": date}


DOCS = [
    # releases numbered like the Python versions the questions name; Python is named everywhere
    _entry("scrapy", "2.7.0", "2022-10-17", "Added Python 3.11 support. New settings for the HTTP cache."),
    _entry("requests", "2.7.0", "2015-05-03", "Relicensed the chardet dependency for Python users."),
    _entry("marshmallow", "2.7.0", "2016-04-04", "Added the Python 3.5 classifiers."),
    _entry("aiohttp", "3.8.0", "2021-10-31", "Added Python 3.10 support and the fallback charset resolver."),
    _entry("marshmallow", "3.8.0", "2020-09-16", "Added the fields.IPInterface field for Python 3."),
    _entry("pytest", "3.8.0", "2018-09-05", "Python warnings are captured by default."),
    # the entries that name the Python versions
    _entry("sphinx", "1.8.0", "2018-09-13", "Added the autodoc_default_options setting for Python domains."),
    _entry("sphinx", "2.0.0", "2019-03-29",
           "Drop python 2.7 and 3.4 support. The LaTeX builder uses xelatex for Chinese documents. "
           "The Python domain resolves cross references lazily. Autodoc mocks imports of missing modules."),
    _entry("sphinx", "2.1.0", "2019-06-02", "Added the html_baseurl setting. Python 3.8 support."),
    *(_entry("sphinx", f"2.{m}.0", f"2019-{m + 5:02d}-10", f"Sphinx fixes for the Python domain, part {m}.")
      for m in range(2, 6)),
    _entry("tox", "4.25.0", "2025-03-27", "Added the --list-dependencies flag for Python environments."),
    _entry("tox", "4.26.0", "2025-05-13",
           "Drop support for EOL Python 3.8. Faster environment setup with uv. Environment variables are "
           "passed to the Python interpreter unchanged. The config loader reports duplicated sections."),
    _entry("tox", "4.27.0", "2025-06-17", "Added the dependency_groups setting for Python projects."),
    *(_entry("tox", f"4.{m}.0", f"2025-{m - 20:02d}-01", f"Tox fixes for Python environments, part {m}.")
      for m in range(28, 32)),
]


index, cli_path = corpus_fixtures(DOCS, "user_questions")


def test_name_numbers_leave_the_lead_lane():
    assert name_numbers("sphinx: which version dropped python 2.7?") == "sphinx: which version dropped python ?"
    assert name_numbers("click removed python 3.7, 3.8 and 3.9") == "click removed python , and"
    assert name_numbers("what is new in requests 2.32.0") == "what is new in requests 2.32.0"


@pytest.mark.parametrize(("query", "answer"), [
    ("sphinx: which version dropped python 2.7?", "sphinx@2.0.0"),
    ("tox dropped python 3.8 when?", "tox@4.26.0"),
])
def test_a_python_version_is_not_a_release_number(index, cli_path, capsys, query, answer):
    # "2.7" is Python's: the entries titled "scrapy 2.7.0." / "requests 2.7.0." are not about it,
    # so the asked project's entries follow the answer
    project = answer.split("@")[0]
    for ids in (index.search(query, k=3, now=NOW).ranked_ids, search_ids(capsys, cli_path, query, NOW)):
        assert ids[0] == answer, ids
        assert all(i.startswith(f"{project}@") for i in ids), ids


ANCHOR_DOCS = [
    # "before pip 20.3": pip's 20.3, though the resolver pages that say "20.3" come later
    _entry("pip", "20.2", "2020-07-29", "The new dependency resolver ships as a beta: try it with "
           "--use-feature=2020-resolver. It becomes the default in pip 20.3."),
    _entry("pip", "20.2.4", "2020-10-16", "Fixed the wheel cache on Windows."),
    _entry("pip", "20.3", "2020-11-30", "Features: the new resolver is the default. Support for macOS Big Sur. "
           "Wheel builds are isolated. Deprecated the --build-dir option. Dropped the legacy cache layout. "
           "Colors in the progress bar."),
    _entry("pip", "20.3.1", "2020-12-03", "New resolver: the resolver prefers installed versions. New resolver: "
           "resolver backtracking messages since 20.3 are shorter."),
    _entry("pip", "20.3.2", "2020-12-15", "New resolver: resolver performance since 20.3. New resolver: the "
           "resolver resolves pinned requirements first."),
    _entry("attrs", "20.3.0", "2020-11-05", "attrs now installs with pip 20.3 and newer. Added the field alias."),
    # "jinja2 2.x final version before 3.0": jinja's 3.0.0, not a 2.x entry announcing 3.0
    _entry("jinja", "2.11.0", "2020-01-27", "jinja: the last version line that supports Python 2."),
    _entry("jinja", "2.11.2", "2020-04-13", "jinja: fixed a hang. Jinja 3.0 will drop Python 2."),
    _entry("jinja", "2.11.3", "2021-01-31", "jinja: improve the speed of the urlize filter."),
    _entry("jinja", "3.0.0", "2021-05-11", "Drop support for Python 2.7 and 3.5. Bump MarkupSafe to 2.0. Remove "
           "deprecated code. Add type hints. Use PEP 451 to load templates. Async support needs no patching. "
           "Fix a bug with imported macros. The sandbox handles str.format_map."),
    _entry("jinja", "3.0.1", "2021-05-18", "jinja: MarkupSafe 2.0 is required since 3.0."),
    _entry("flask", "3.0.0", "2023-09-30", "Remove the deprecated code of flask 2.3."),
]


anchor_index, anchor_cli = corpus_fixtures(ANCHOR_DOCS, "user_anchors", "anchor_index", "anchor_cli")


@pytest.mark.parametrize(("query", "dated_by", "answer"), [
    ("before pip 20.3, how could you try the new resolver?", "pip@20.3", "pip@20.2"),
    ("jinja2 2.x final version before 3.0", "jinja@3.0.0", "jinja@2.11.3"),
])
def test_a_version_anchor_is_dated_by_its_own_page_in_the_subject(anchor_index, anchor_cli, capsys, query,
                                                                   dated_by, answer):
    hits = anchor_index.search(query, k=3, now=NOW)
    assert f"by {dated_by}," in hits.meta["anchor"], hits.meta["anchor"]
    assert hits.ranked_ids[0] == answer, hits.ranked_ids
    assert search_ids(capsys, anchor_cli, query, NOW)[0] == answer


LINE_DOCS = [
    _entry("flask", "1.0", "2018-04-26", "Python 2.6 and 3.3 are no longer supported. The 1.x line starts: "
           "the flask command, app.json_encoder, the 1.0 release of the app factory pattern."),
    _entry("flask", "1.1.0", "2019-07-04", "Add app.json_provider hooks. The 1.1 release of the 1.x line."),
    _entry("flask", "1.1.1", "2019-07-08", "The flask.json_available flag is deprecated in the 1.x release line."),
    _entry("flask", "2.0.0", "2021-05-11", "Drop support for Python 2 and 3.5. Async views."),
    _entry("flask", "1.1.4", "2021-05-13", "Update static_folder to use fspath."),
    _entry("flask", "2.0.1", "2021-05-21", "Re-add the filename parameter in send_from_directory."),
]


line_index, line_cli = corpus_fixtures(LINE_DOCS, "user_lines", "line_index", "line_cli")


def test_the_final_release_of_a_line_is_its_newest_however_the_question_is_worded(line_index, line_cli, capsys):
    # "what *was*": a past question, yet "final ... 1.x" asks for the newest of the line in so
    # many words (1.1.4, two days after 2.0.0), not the entries that say "1.x" most
    q = "what was the final flask 1.x release?"
    hits = line_index.search(q, k=3, now=NOW)
    assert hits.meta["intent"].time_sensitivity >= 0.9
    assert hits.ranked_ids[0] == "flask@1.1.4", hits.ranked_ids
    assert search_ids(capsys, line_cli, q, NOW)[0] == "flask@1.1.4"


SAME_DAY_DOCS = [
    _entry("pip", "20.3.3", "2020-12-15", "Bug fixes: new resolver fixes for pinned requirements."),
    _entry("pip", "20.3.4", "2021-01-23", "pip wheel verifies the built wheel's metadata. Improve XMLRPC errors."),
    _entry("pip", "21.0", "2021-01-23", "Drop support for Python 2. Remove support for legacy wheel cache entries."),
    _entry("pip", "21.1", "2021-04-24", "Warn when running pip as root outside a virtual environment."),
    _entry("attrs", "20.3.0", "2021-01-23", "Python 2 users: attrs works with pip 21.0 and older."),
]


same_day_index, same_day_cli = corpus_fixtures(SAME_DAY_DOCS, "user_same_day", "same_day_index", "same_day_cli")


def test_a_release_of_the_anchor_day_with_an_earlier_version_is_before_it(same_day_index, same_day_cli, capsys):
    # 20.3.4 and 21.0 were uploaded the same day: the pip before 21.0 is 20.3.4, and 21.0
    # (which says "Python 2" as the question does) is not before itself
    q = "the pip I'd have had just before 21.0 removed python 2"
    hits = same_day_index.search(q, k=3, now=NOW)
    assert "the day is in the period" in hits.meta["anchor"], hits.meta["anchor"]
    assert hits.ranked_ids[0] == "pip@20.3.4", hits.ranked_ids
    assert search_ids(capsys, same_day_cli, q, NOW)[0] == "pip@20.3.4"


def test_a_version_anchor_whose_day_holds_no_earlier_release_leaves_the_day_out(same_day_index):
    # 21.1 has its day to itself: the period ends before it, as before
    hits = same_day_index.search("the last pip before 21.1", k=3, now=NOW)
    assert "the day is in the period" not in hits.meta["anchor"]
    assert hits.ranked_ids[0] in ("pip@21.0", "pip@20.3.4"), hits.ranked_ids
