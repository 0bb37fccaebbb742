"""The version-conflict topic rule (``chronorank.index.version_conflict``) through
:class:`TemporalIndex` on small corpora with hand-made vectors, and its version reading."""

from __future__ import annotations

import numpy as np
import pytest

import chronorank.index.core as core
from chronorank.index import TemporalIndex
from chronorank.index.version_conflict import _key, _relation, find_versions

NOW = "2026-08-20"


def _unit(*v: float) -> np.ndarray:
    a = np.array(v, dtype=np.float32)
    return a / np.linalg.norm(a)


def _index(docs):
    idx = TemporalIndex(embedder=None)
    idx.add([d for d, _ in docs], vectors=np.stack([v for _, v in docs]))
    return idx


def _without_rule(monkeypatch):
    monkeypatch.setattr(core, "asked_versions", lambda query, intent: None)


API = [  # the 2.0 release note, pages naming v1 / v2 / both / none, and another product's 3.0 notes
    ({"id": "release-2.0", "text": "API 2.0 release. Version 2.0 of the API is out: OAuth tokens, cursor "
      "pagination, per-client rate limits.", "date": "2024-09-16"}, _unit(1, 0, 0, 0)),
    ({"id": "notes-3.0", "text": "Release notes for version 3.0. A new dashboard and dark mode; the API "
      "release adds nothing.", "date": "2023-05-10"}, _unit(0.6, 0.2, 0.3, 0)),
    ({"id": "limits-v2", "text": "API v2 rate limits. Each OAuth client may make 1,200 requests a minute.",
      "date": "2024-09-16"}, _unit(0.5, 0.5, 0, 0)),
    ({"id": "limits-v1", "text": "API v1 rate limits. Each session token may make 600 requests a minute.",
      "date": "2022-06-01"}, _unit(0.5, 0.5, 0.1, 0)),
    ({"id": "migrate", "text": "Moving from v1 to v2. Replace the session login with OAuth client tokens.",
      "date": "2024-09-20"}, _unit(0.45, 0.4, 0, 0.2)),
    ({"id": "webhooks", "text": "Webhooks. Every delivery is signed with HMAC-SHA256.", "date": "2025-05-05"},
     _unit(0.4, 0.2, 0, 0.4)),
    ({"id": "refund", "text": "Refund policy. Refunds within 60 days of purchase.", "date": "2023-07-01"},
     _unit(0, 0, 0, 1)),
]
Q = _unit(1, 0.1, 0.15, 0)


def test_a_page_naming_only_another_version_ranks_below_the_rest_of_its_tier(monkeypatch):
    idx = _index(API)
    hits = idx.search("what changed in the API 2.0 release", k=7, now=NOW, vector=Q)
    ids = hits.ids
    assert ids[0] == "release-2.0"
    # "v2" is "2.0"; "Moving from v1 to v2." names it too; "Webhooks." names none: all above
    # the pages that name only 3.0 or v1, in each tier
    on = dict(zip(ids, (bool(x) for x in hits.meta["on_topic"])))
    for tier in (True, False):
        names = [i for i in ids if on[i] is tier]
        kept = [i for i in names if i in ("release-2.0", "limits-v2", "migrate", "webhooks", "refund")]
        assert names[: len(kept)] == kept, (tier, names)
    assert ids.index("notes-3.0") > ids.index("limits-v2")
    assert ids.index("limits-v1") > ids.index("migrate")
    note = " ".join(hits.explain_records()[ids.index("notes-3.0")]["notes"])
    assert "names only version 3.0; the question asks about 2.0" in note
    assert "the question asks about version 2.0" in hits.meta["topic_rule"]
    assert "the question asks about version 2.0" in hits.explain()
    # without the rule the 3.0 notes (sharing "release" and "API") sat above the v2 page
    _without_rule(monkeypatch)
    old = idx.search("what changed in the API 2.0 release", k=7, now=NOW, vector=Q).ids
    assert old.index("notes-3.0") < old.index("limits-v2")


def test_an_off_topic_page_is_never_lifted_over_an_on_topic_one():
    idx = _index(API)
    hits = idx.search("what changed in the API 2.0 release", k=7, now=NOW, vector=Q)
    on = [bool(x) for x in hits.meta["on_topic"]]
    assert on == sorted(on, reverse=True) and any(on) and not all(on)
    # an on-topic page naming only 3.0 still ranks above every off-topic page, v2 ones too
    conflicting = [i for i, x in zip(hits.ids, on) if x and i in ("notes-3.0", "limits-v1")]
    off = [i for i, x in zip(hits.ids, on) if not x]
    for c in conflicting:
        assert all(hits.ids.index(c) < hits.ids.index(o) for o in off)


def test_after_a_version_keeps_it_and_later_ones_above_earlier_ones():
    docs = [
        ({"id": "rel-2.0", "text": "Product 2.0 release. Projects and tags.", "date": "2021-03-01"},
         _unit(1, 0.25, 0)),
        ({"id": "rel-3.0", "text": "Release notes for version 3.0. New dashboard.", "date": "2023-05-10"},
         _unit(1, 0.1, 0)),
        ({"id": "rel-4.0", "text": "Release notes for version 4.0. New editor.", "date": "2025-10-20"},
         _unit(1, 0.2, 0)),
        ({"id": "refund", "text": "Refund policy. Refunds within 60 days.", "date": "2023-07-01"}, _unit(0, 0, 1)),
    ]
    idx = _index(docs)
    q = _unit(1, 0.15, 0)
    ids = idx.search("what changed after the 3.0 release", k=4, now=NOW, vector=q).ids
    assert ids.index("rel-2.0") > max(ids.index("rel-3.0"), ids.index("rel-4.0"))
    # before 3.0: 4.0 names only a later version
    ids = idx.search("what changed before the 3.0 release", k=4, now=NOW, vector=q).ids
    assert ids.index("rel-4.0") > max(ids.index("rel-3.0"), ids.index("rel-2.0"))


def test_the_first_hits_own_versions_are_not_demoted():
    # "authentication in the v1 API": the v2 page of the same title is what replaced v1 and
    # stays above another v1 page; a v2 page of another title goes below it
    docs = [
        ({"id": "auth-v1", "text": "API v1 authentication. Send POST /api/v1/login.", "date": "2022-06-01"},
         _unit(1, 0, 0)),
        ({"id": "auth-v2", "text": "API v2 authentication. Get an OAuth token.", "date": "2024-09-16"},
         _unit(0.9, 0.3, 0)),
        ({"id": "limits-v1", "text": "API v1 rate limits. 600 requests a minute.", "date": "2022-06-01"},
         _unit(0.8, 0, 0.5)),
        ({"id": "limits-v2", "text": "API v2 rate limits. 1,200 requests a minute.", "date": "2024-09-16"},
         _unit(0.85, 0.1, 0.4)),
    ]
    idx = _index(docs)
    ids = idx.search("authentication in the v1 API", k=4, now=NOW, vector=_unit(1, 0.1, 0.1)).ids
    assert ids[:2] == ["auth-v1", "auth-v2"]
    assert ids.index("limits-v2") > ids.index("limits-v1")


@pytest.mark.parametrize(("text", "want"), [
    ("API v2 rate limits", ["2"]),
    ("Release notes for version 3.0", ["3.0"]),
    ("aiohttp 3.9.0", ["3.9.0"]),
    ("3.0-rc1 is out", ["3.0"]),
    ("aiohttp 3.12 and 2.x", ["3.12", "2.x"]),
    # a number inside a name is the subject, not a version (the language's numbered_names)
    ("drops Python 3.7, 3.8 and 3.9", []),
    ("HTTP/2 and Windows 11 support in urllib3 2.2", ["2.2"]),
    ("recalled 2.9 million cars", []),
    ("a 7.0-magnitude quake", []),
    ("gas at $3.99 a gallon", []),
    ("99.9% uptime", []),
    ("released 2024.01.05", []),
    ("последний релиз на 01.10.2024", []),
])
def test_versions_are_read_from_text_without_quantities_or_dates(text, want):
    assert find_versions(text) == want


@pytest.mark.parametrize(("q", "p", "rel"), [
    ("2", "2.0", 0), ("2", "2.0.0", 0), ("2.0", "2", 0),  # trailing zeros do not count
    ("2", "2.3", 0), ("2.3", "2", 0), ("2.x", "2.4.1", 0),  # a line holds its releases
    ("2.0", "2.3", 1), ("2.0", "2.0.1", 1), ("3.0.9", "3.0", -1),  # a release is one version
    ("3.0", "2.0", -1), ("3.0", "4", 1), ("1.9", "1.10", 1),
])
def test_versions_compare_normalised_and_prefix_aware(q, p, rel):
    assert _relation(_key(q), _key(p)) == rel


@pytest.mark.parametrize("packed", [True, False])
def test_the_columnar_test_is_the_pairwise_definition(monkeypatch, packed):
    import random

    import chronorank.index.version_conflict as vc
    from chronorank.index.version_conflict import AskedVersions, LeadVersions, _compatible, _pad

    if not packed:  # the general path: versions too wide for one int64
        monkeypatch.setattr(vc, "_BITS", 40)
    rng = random.Random(3)

    def version() -> str:
        parts = [str(rng.randint(0, 3) if rng.random() < 0.9 else rng.randint(0, 9999)) for _ in range(rng.randint(1, 4))]
        return ".".join(parts + (["x"] if rng.random() < 0.15 else []))

    for _ in range(500):
        keys = list(dict.fromkeys(_key(version()) for _ in range(rng.randint(1, 8))))
        width = max(max(len(k[0]), k[1]) for k in keys)
        lv = LeadVersions(np.ones(1, bool), np.zeros(0, np.int64), np.zeros(0, np.int64),
                          np.array([_pad(k[0], width) for k in keys], dtype=np.int64), np.array([k[1] for k in keys]))
        relation = rng.choice(["same", "before", "after"])
        asked = AskedVersions(keys=tuple(dict.fromkeys(_key(version()) for _ in range(2))), relation=relation, text="")
        want = [any(r == 0 or (relation == "after" and r > 0) or (relation == "before" and r < 0)
                    for r in (_relation(q, p) for q in asked.keys)) for p in keys]
        assert _compatible(asked, lv).tolist() == want


LOGIN = [
    ({"id": "auth-v1", "text": "API v1 authentication. To log in, send POST /login with your username and "
      "password.", "date": "2022-06-01", "valid_to": "2024-09-16"}, _unit(1, 0, 0)),
    ({"id": "auth-v2", "text": "API v2 authentication. Clients get an OAuth token and send it as a bearer "
      "header.", "date": "2024-09-16"}, _unit(0.6, -0.3, 0.75)),
    ({"id": "sso-2022", "text": "Setting up single sign-on. Upload your identity provider metadata, then test "
      "the login page.", "date": "2022-02-14"}, _unit(0.9, 0.3, 0)),
    ({"id": "refund", "text": "Refund policy. Refunds within 60 days of purchase.", "date": "2023-07-01"},
     _unit(0, 1, 0)),
]


def test_before_a_date_the_version_that_replaced_the_first_hit_ranks_second():
    # the SSO page matches "login" about as well as v1 (in the 0.8 core, so the versions rule
    # leaves it be); the v2 page, v1's replacement across the boundary, says what changed
    idx = _index(LOGIN)
    q = _unit(1, 0.1, 0)
    hits = idx.search("how did login work before September 2024", k=3, now=NOW, vector=q)
    assert hits.ids[:2] == ["auth-v1", "auth-v2"]
    # a question with no open side ("in 2023") does not lift it
    assert idx.search("how did login work in 2023", k=2, now=NOW, vector=q).ids == ["auth-v1", "sso-2022"]


def test_the_page_announcing_the_anchors_version_is_its_event_page():
    docs = [*LOGIN, ({"id": "api-2.0", "text": "API 2.0 release. Version 2.0 replaces password logins with "
                      "OAuth.", "date": "2024-09-16T10:00:00+02:00"}, _unit(0.2, 0.3, 0.3))]
    idx = _index(docs)
    q = _unit(1, 0.1, 0)
    hits = idx.search("how did authentication work before the v2 change", k=3, now=NOW, vector=q)
    assert "api-2.0" in hits.ids
    assert "the page of the anchor event" in " ".join(hits.explain_records()[hits.ids.index("api-2.0")]["notes"])
    # no page names the version with an event noun ("release", "migration" ...): none is lifted
    idx = _index(LOGIN)
    hits = idx.search("how did authentication work before the v2 change", k=4, now=NOW, vector=q)
    assert not any("anchor event" in n for ns in hits.notes.values() for n in ns)


def test_pages_added_after_a_search_are_read_for_versions():
    idx = _index(API[:3] + API[5:])
    q = "what changed in the API 2.0 release"
    assert "notes-3.0" in idx.search(q, k=6, now=NOW, vector=Q).ids
    idx.add([API[3][0]], vectors=API[3][1][None, :])  # "API v1 rate limits." after the first search
    hits = idx.search(q, k=6, now=NOW, vector=Q)
    assert "names only version 1" in " ".join(hits.explain_records()[hits.ids.index("limits-v1")]["notes"])


def _release_corpus(n: int, seed: int = 0) -> list[dict]:
    rng = np.random.default_rng(seed)
    words = [f"w{i}" for i in range(300)]
    docs = []
    for i in range(n):
        if i % 3 == 0:  # a third of the leads name no version
            lead = f"{words[i % 300]} notes"
        else:
            lead = f"{words[i % 300]} release {rng.integers(1, 5)}.{rng.integers(0, 4)}.{rng.integers(0, 3)}"
        docs.append({"id": f"d{i}", "text": f"{lead}. fixes in {words[(7 * i) % 300]} and {words[(11 * i) % 300]}",
                     "date": f"20{10 + i % 15}-0{1 + i % 9}-1{i % 9}"})
    return docs


@pytest.mark.parametrize("query", ["what changed in w7 release 2.1.0", "w12 after 3.0", "w5 w9 notes before 2.2"])
def test_reading_only_the_leads_the_top_k_needs_gives_the_top_k_of_reading_every_lead(monkeypatch, query):
    import chronorank.index.version_conflict as vc

    docs = _release_corpus(6000)
    lazy = TemporalIndex(embedder=None)
    lazy.add(docs)
    got = [(h.id, h.score) for h in lazy.search(query, k=10, now=NOW)]
    monkeypatch.setattr(vc, "READ_MIN", 10**9)  # every lead read
    whole = TemporalIndex(embedder=None)
    whole.add(docs)
    want = [(h.id, h.score) for h in whole.search(query, k=10, now=NOW)]
    assert [i for i, _ in got] == [i for i, _ in want]


def test_leads_are_read_once_and_kept_across_an_append():
    idx = TemporalIndex(embedder=None)
    idx.add(_release_corpus(6000))
    idx.search("what changed in w7 release 2.1.0", k=10, now=NOW)
    memo = idx._snap.lead_memo["en"]
    read = int(np.count_nonzero(memo.done))
    assert 0 < read < 6000  # a third of the leads name no version: the top 10 settles early
    idx.add([{"id": "new", "text": "w7 release 2.1.0. the fix", "date": "2026-08-01"}])
    assert idx._snap.lead_memo["en"] is memo  # an append keeps what was read
    hits = idx.search("what changed in w7 release 2.1.0", k=10, now=NOW)
    assert hits[0].id == "new"
    assert int(np.count_nonzero(memo.done[:6000])) >= read


def test_saved_lead_versions_load_read_and_answer_like_the_built_index(tmp_path):
    import json

    docs = _release_corpus(3000)
    idx = TemporalIndex(embedder=None)
    idx.add(docs)
    q = "what changed in w7 release 2.1.0"
    want = [(h.id, h.score) for h in idx.search(q, k=10, now=NOW)]
    idx.save(tmp_path / "ix")
    loaded = TemporalIndex.load(tmp_path / "ix")
    memo = loaded._snap.lead_memo["en"]
    assert bool(memo.done.all())  # nothing left to read at the first version question
    assert [(h.id, h.score) for h in loaded.search(q, k=10, now=NOW)] == want
    # saved with other version patterns: ignored, the leads are read again when needed
    gen = json.loads((tmp_path / "ix" / "CURRENT").read_text())["generation"]
    man_path = tmp_path / "ix" / gen / "manifest.json"
    man = json.loads(man_path.read_text())
    man["lead_versions"]["fingerprint"] = "0" * 16
    man_path.write_text(json.dumps(man))
    from chronorank.index import storage

    ptr = json.loads((tmp_path / "ix" / "CURRENT").read_text())
    ptr["manifest_sha256"] = storage._sha256(man_path)
    (tmp_path / "ix" / "CURRENT").write_text(json.dumps(ptr))
    other = TemporalIndex.load(tmp_path / "ix")
    assert "en" not in other._snap.lead_memo
    assert [(h.id, h.score) for h in other.search(q, k=10, now=NOW)] == want


def test_a_replacement_keeps_the_read_leads_on_their_new_rows():
    docs = _release_corpus(3000)
    idx = TemporalIndex(embedder=None)
    idx.add(docs)
    q = "what changed in w7 release 2.1.0"
    idx.search(q, k=10, now=NOW)
    changed = dict(docs[7], text="w7 release 2.1.0. rewritten")
    idx.add([changed])  # replaces d7: the rows after it move up
    fresh = TemporalIndex(embedder=None)
    fresh.add([d for d in docs if d["id"] != "d7"] + [changed])
    assert [h.id for h in idx.search(q, k=10, now=NOW)] == [h.id for h in fresh.search(q, k=10, now=NOW)]
