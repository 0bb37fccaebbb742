"""Issue 29: time reorders the documents about the question; it never lifts a clearly worse
match above a better one.

Each case a user met (Debian changelog entries, versioned policy sections) runs through the
Python API and through ``chronorank index`` / ``chronorank search`` on a small corpus written
here (the default MiniLM index).
"""

from __future__ import annotations

import json

import pytest
from cli_support import corpus_fixtures, search_ids
from cli_support import debian_entry as _entry

from chronorank.cli import main
from chronorank.index import TemporalIndex
from chronorank.temporal import near_tier

NOW = "2024-12-01"


DOCS = [
    _entry("sqlite3", "3.34.1-3", "2022-05-10", "Fix CVE-2022-35737: sqlite3 security fix for an array-bounds overflow."),
    _entry("sqlite3", "3.40.1-1", "2023-01-05", "New upstream release of sqlite3."),
    _entry("sqlite3", "3.40.1-2", "2023-06-20", "sqlite3 security fix: CVE-2023-7104, a heap overflow in the session extension."),
    *[_entry("chromium", f"131.0.6778.{85 + i}-1", f"2024-11-{10 + i:02d}",
             f"Security fix: CVE-2024-{11100 + i} use after free in the renderer; several security fixes.")
      for i in range(6)],
    _entry("tzdata", "2022a-1", "2022-03-20", "New upstream release. Palestine will spring forward on 2022-03-27."),
    _entry("tzdata", "2022b-1", "2022-08-12", "Chile's DST is delayed by a week in September 2022. Iran no longer observes DST."),
    _entry("tzdata", "2024a-1", "2024-02-05", "Kazakhstan unifies on UTC+5. Palestine springs forward a week later."),
    _entry("tzdata", "2024b-1", "2024-09-10", "Improve historical data for Mexico, Mongolia and Portugal."),
    _entry("tzdata", "2022f-1", "2022-10-31", "Paraguay stays on DST all year, from October 2022. Mexico no longer observes DST."),
    _entry("openssh", "1:9.1p1-1", "2022-10-05", "New upstream release (9.1p1)."),
    _entry("openssh", "1:9.2p1-1", "2023-02-06", "New upstream release (9.2p1): fix a double free in sshd."),
    _entry("openssh", "1:9.3p1-1", "2023-03-16", "New upstream release (9.3p1): ssh-keygen fixes."),
    _entry("openssh", "1:9.4p1-1", "2023-08-12", "New upstream release (9.4p1): ssh -J forwarding changes."),
    _entry("valgrind", "1:3.16.1-1", "2020-06-25", "New upstream release 3.16.1."),
    _entry("valgrind", "1:3.17.0-1", "2021-03-22", "New upstream release 3.17.0. Wrap the close_range syscall."),
    _entry("valgrind", "1:3.18.1-1", "2021-10-20", "New upstream release 3.18.1: support for close_range on arm64."),
    _entry("make-dfsg", "3.81-8", "2010-03-04", "Merge a fix from version 3.18 of the gnulib glob module."),
]


index, cli_path = corpus_fixtures(DOCS, "topic")


def cli_ids(capsys, path, query, k=3):
    return search_ids(capsys, path, query, NOW, k)


CASES = [
    # a fresher entry of another package is a clearly worse match (similarity rank 75 -> 1)
    ("newest sqlite3 security fix", "sqlite3@3.40.1-2"),
    # the entry that names Paraguay, not the newer tzdata entries its title keeps on topic
    ("what did the tzdata update say about Paraguay", "tzdata@2022f-1"),
    # an advisory id names one entry; "2023" inside it is not a year
    ("CVE-2023-7104 sqlite3", "sqlite3@3.40.1-2"),
]


@pytest.mark.parametrize(("query", "want"), CASES)
def test_time_never_lifts_a_clearly_worse_match(index, cli_path, capsys, query, want):
    hits = index.search(query, k=3, now=NOW)
    assert hits.ranked_ids[0] == want, hits.ranked_ids
    assert cli_ids(capsys, cli_path, query)[0] == want


def test_among_near_equals_time_decides(index, cli_path, capsys):
    # every chromium entry is as good a match as the others: the newest one first
    q = "latest chromium security fixes"
    assert index.search(q, k=3, now=NOW).ranked_ids[0] == "chromium@131.0.6778.90-1"
    assert cli_ids(capsys, cli_path, q)[0] == "chromium@131.0.6778.90-1"


def test_after_a_debian_version_is_the_changes_after_it(index, cli_path, capsys):
    q = "what changed in openssh after the 9.2p1 release"
    ids = index.search(q, k=3, now=NOW).ranked_ids
    assert ids[0] != "openssh@1:9.2p1-1" and ids[0] in ("openssh@1:9.3p1-1", "openssh@1:9.4p1-1"), ids
    assert cli_ids(capsys, cli_path, q)[0] == ids[0]


def test_a_version_anchor_is_dated_inside_the_question_subject(index, cli_path, capsys):
    # "version 3.18" is valgrind's 3.18 (2021), not the make entry naming a gnulib 3.18 (2010)
    q = "was close_range supported in valgrind before version 3.18"
    hits = index.search(q, k=3, now=NOW)
    assert hits.meta["intent"].target is not None
    assert hits.meta["intent"].target.end > 1.6e9  # dated in 2021, not 2010
    assert hits.ranked_ids[0] == "valgrind@1:3.17.0-1", hits.ranked_ids
    assert cli_ids(capsys, cli_path, q)[0] == "valgrind@1:3.17.0-1"


def test_near_tier_is_calibrated_per_query():
    import numpy as np

    live = np.ones(6, dtype=bool)
    # a cluster well apart from the rest: the cluster, whatever its internal spread
    assert near_tier(np.array([1.0, 0.9, 0.82, 0.8, 0.2, 0.1]), live, 0.5).tolist() == [
        True, True, True, True, False, False]
    # two versions of one section, then a slope of siblings: the two versions
    assert near_tier(np.array([1.0, 0.99, 0.7, 0.68, 0.66, 0.45]), live, 0.5).tolist() == [
        True, True, False, False, False, False]
    # a lone best match above the rest is no tier (one stale article above fresh ones)
    assert near_tier(np.array([1.0, 0.7, 0.68, 0.66, 0.64, 0.45]), live, 0.5) is None


def test_a_lone_keyword_match_leads_only_when_the_meaning_agrees():
    import numpy as np

    from chronorank.ranking import facet_first

    # five entries under one title; the first alone names the question's specific part
    score = np.array([0.1, 0.9, 0.8, 0.7, 0.6])
    on = np.ones(5, dtype=bool)
    words = np.array([27.0, 2.0, 1.9, 1.9, 1.9])
    titles = np.full(5, 0.67)
    got = facet_first(score, on, words, np.array([0.71, 0.58, 0.59, 0.51, 0.51]), on, 0.5, titles)
    assert got is not None and got[1].tolist() == [True, False, False, False, False]
    assert int(np.argmax(got[0])) == 0 and np.argsort(-got[0])[1:].tolist() == [1, 2, 3, 4]  # time orders the rest
    # a keyword outlier whose meaning is no better than the fresh ones' is no facet: time decides
    assert facet_first(score, on, words, np.array([0.55, 0.58, 0.59, 0.51, 0.51]), on, 0.5, titles) is None
    # nor one whose own title is the only one that strong (another subject, not a part of this one)
    assert facet_first(score, on, words, np.array([0.71, 0.58, 0.59, 0.51, 0.51]), on, 0.5,
                       np.array([0.9, 0.6, 0.6, 0.6, 0.6])) is None


def test_a_facet_named_in_passing_still_agrees_by_its_best_meaning():
    import numpy as np

    from chronorank.ranking import facet_first

    # two entries name the specific part; the newer one in one line of a long list (its cosine
    # diluted below a sibling's): the facet's best meaning is still the best on topic
    score = np.array([0.3, 0.6, 0.9, 0.8, 0.7])
    on = np.ones(5, dtype=bool)
    words = np.array([30.0, 25.0, 2.0, 2.0, 1.5])
    got = facet_first(score, on, words, np.array([0.71, 0.50, 0.55, 0.40, 0.38]), on, 0.5, np.full(5, 1.1))
    assert got is not None and got[1].tolist() == [True, True, False, False, False]
    assert np.argsort(-got[0]).tolist() == [1, 0, 2, 3, 4]  # time orders the two, then the rest
    # the best meaning outside the keyword tier: the words do not say what is specific
    assert facet_first(score, on, words, np.array([0.60, 0.50, 0.65, 0.40, 0.38]), on, 0.5, np.full(5, 1.1)) is None


BOXER_TOPICS = ["faster environment creation", "colored output on Windows terminals", "parallel test sessions",
                "configuration file discovery", "plugin hooks for reporting", "environment variable passing",
                "better error messages for missing interpreters", "recreate environments when dependencies change"]
BOXER = [{"id": f"boxer@4.{i}.0", "date": f"2024-{i + 2:02d}-15",
          "text": f"boxer 4.{i}.0. Features: {BOXER_TOPICS[i]}. Bug fixes: {BOXER_TOPICS[(i + 3) % 8]} no longer fails."}
         for i in range(8)]
BOXER[1] = {"id": "boxer@4.1.0", "date": "2024-03-15",
            "text": "boxer 4.1.0. Features: support PEP 751 pylock.toml lock files as dependency input via the "
                    "pylock configuration option; packages are filtered by extras and markers."}
BOXER[3] = {"id": "boxer@4.3.0", "date": "2024-05-15",
            "text": "boxer 4.3.0. Bug fixes: discard a partially registered configuration on failure; report the "
                    "first creation failure in definition order; fix installs from pylock.toml lock files with "
                    "extras; colored output on Windows terminals; keep environment variables when recreating."}


boxer, boxer_cli = corpus_fixtures(BOXER, "boxer", "boxer", "boxer_cli")


def test_time_orders_only_the_entries_that_name_the_specific_thing(boxer, boxer_cli, capsys):
    # two entries name pylock.toml; four newer releases of boxer do not: the newer of the two
    # first, the older one next, then the rest
    q = "recent boxer changes for pylock.toml lock files"
    hits = boxer.search(q, k=4, now=NOW)
    assert hits.meta["intent"].mode == "recent"
    assert hits.ranked_ids[:2] == ["boxer@4.3.0", "boxer@4.1.0"], hits.ranked_ids
    assert cli_ids(capsys, boxer_cli, q, k=2) == ["boxer@4.3.0", "boxer@4.1.0"]


# versioned sections of one made-up policy: each section version is a document ------------

SECTIONS = [
    {"id": "acme-terms#copilot@2024-01-10", "date": "2024-01-10",
     "text": "Additional products: Copilot. Copilot suggestions are provided as is; you are responsible "
             "for reviewing any code Copilot suggests before you use it."},
    {"id": "acme-terms#copilot@2024-06-02", "date": "2024-06-02",
     "text": "Additional products: Copilot. Copilot suggestions are provided as is; you are responsible "
             "for reviewing code Copilot suggests, and Copilot may not be used to train other models."},
    {"id": "acme-terms#sponsors@2024-11-28", "date": "2024-11-28",
     "text": "Additional products: Sponsors. Sponsors lets you fund open source maintainers; payouts "
             "follow the sponsored developer's region and tax settings."},
    {"id": "acme-terms#actions@2024-11-20", "date": "2024-11-20",
     "text": "Additional products: Actions. Actions minutes are billed per job; self-hosted runners are "
             "free of charge."},
    {"id": "acme-privacy#cookies@2019-06-01", "date": "2019-06-01",
     "text": "Cookies. We use cookies to keep you signed in and to remember your preferences."},
    {"id": "acme-privacy#cookies@2020-04-17", "date": "2020-04-17",
     "text": "Cookies. We use cookies to keep you signed in, to remember your preferences and to "
             "measure how our pages perform."},
    {"id": "acme-privacy#cookies@2021-03-01", "date": "2021-03-01",
     "text": "Cookies. We use cookies to keep you signed in, to remember your preferences, to measure "
             "how our pages perform and, with your consent, for advertising."},
    {"id": "acme-privacy#your-rights@2024-11-25", "date": "2024-11-25",
     "text": "Your rights. You may access, correct or delete your personal data at any time."},
]


@pytest.fixture(scope="module")
def sections():
    idx = TemporalIndex()
    idx.add(SECTIONS)
    return idx


@pytest.fixture(scope="module")
def sections_cli(tmp_path_factory):
    d = tmp_path_factory.mktemp("sections")
    corpus = d / "corpus.jsonl"
    corpus.write_text("".join(json.dumps(x) + "\n" for x in SECTIONS), encoding="utf-8")
    assert main(["index", str(corpus), "--out", str(d / "idx")]) == 0
    return d / "idx"


@pytest.mark.parametrize(("query", "want"), [
    # a sibling section published days ago is not the Copilot section
    ("what do the terms for additional products say about Copilot now", "acme-terms#copilot@2024-06-02"),
    # "before the <date> update" = the version in force just before it, not the update itself
    ("what did the privacy policy say about cookies before the April 17, 2020 update",
     "acme-privacy#cookies@2019-06-01"),
])
def test_a_section_question_gets_that_section(sections, sections_cli, capsys, query, want):
    hits = sections.search(query, k=3, now=NOW)
    assert hits.ranked_ids[0] == want, hits.ranked_ids
    assert cli_ids(capsys, sections_cli, query)[0] == want


# "which release did X": the entry that names X, however old -------------------------------

RELEASES = [
    {"id": "quillkit@2.0.0", "date": "2020-03-02", "text": "quillkit 2.0.0. New plugin registry; faster page rendering."},
    {"id": "quillkit@2.1.0", "date": "2021-05-14",
     "text": "quillkit 2.1.0. The legacy_loader option is deprecated; use the plugin registry instead."},
    {"id": "quillkit@2.2.0", "date": "2022-01-20",
     "text": "quillkit 2.2.0. Live preview of rendered pages. Fixes CVE-2022-31337, a path traversal in the dev server."},
    *[{"id": f"quillkit@3.{i}.0", "date": f"2024-{i + 3:02d}-10",
       "text": f"quillkit 3.{i}.0. Bug fixes and small improvements to page rendering and plugins."}
      for i in range(8)],
]


@pytest.fixture(scope="module")
def releases():
    idx = TemporalIndex()
    idx.add(RELEASES)
    return idx


@pytest.fixture(scope="module")
def releases_cli(tmp_path_factory):
    d = tmp_path_factory.mktemp("releases")
    corpus = d / "corpus.jsonl"
    corpus.write_text("".join(json.dumps(x) + "\n" for x in RELEASES), encoding="utf-8")
    assert main(["index", str(corpus), "--out", str(d / "idx")]) == 0
    return d / "idx"


@pytest.mark.parametrize(("query", "want"), [
    ("which quillkit release deprecated legacy_loader", "quillkit@2.1.0"),
    ("quillkit live preview - added in which version?", "quillkit@2.2.0"),
    ("quillkit started deprecating legacy_loader when?", "quillkit@2.1.0"),
    ("quillkit CVE-2022-31337", "quillkit@2.2.0"),
])
def test_which_release_did_something_is_a_lookup(releases, releases_cli, capsys, query, want):
    hits = releases.search(query, k=3, now=NOW)
    assert hits.meta["intent"].mode == "specific"  # time off: not "recent", no current-event burst
    assert hits.ranked_ids[0] == want, hits.ranked_ids
    assert cli_ids(capsys, releases_cli, query)[0] == want


def test_since_the_start_of_a_year_is_the_changes_after_it(releases, releases_cli, capsys):
    # "since the beginning of 2024" is everything from 1 January 2024 on, not "as of" that day
    q = "quillkit changes since the beginning of 2024"
    hits = releases.search(q, k=3, now=NOW)
    it = hits.meta["intent"]
    assert it.mode == "range" and it.target.start == 1704067200.0  # 2024-01-01, open up to now
    assert hits.ranked_ids[0] == "quillkit@3.7.0", hits.ranked_ids
    assert cli_ids(capsys, releases_cli, q)[0] == "quillkit@3.7.0"
