"""The keyword analyzer against its frozen output (``tests/data/analyzer_reference.json``,
recorded by ``tools/analyzer_reference.py`` from the analyzer before the batch path moved to
numpy), and the batch path's own assumptions.

- ``analyze`` in every mode and the batch functions (``analyze_many``, ``analyze_documents``,
  ``encode_documents``) give the recorded terms and lead lengths of odd strings (versions,
  URLs, dates, Cyrillic, Greek sigma, CJK, emoji, curly quotes, the scan's mark characters,
  lone surrogates, pieces around the numpy key's length limits, empty text);
- every document of the bundled release notes (and of each ``../shared/data`` corpus, when
  present) analyses to the recorded digests, by the batch path and by ``analyze``;
- fuzzed text over a wide alphabet: the batch path equals ``analyze`` text by text;
- the characters the scan turns into spaces, and those ``str.split`` splits at, are never in
  or between a token's characters; ``\\d`` is ``str.isdecimal``; lower-casing is idempotent.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chronorank.index import text as T
from chronorank.index.bm25 import encode_terms
from chronorank.index.core import lead_cut
from chronorank.index.text import analyze, analyze_documents, analyze_many, encode_documents

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = json.loads((ROOT / "tests" / "data" / "analyzer_reference.json").read_text(encoding="ascii"))
SHARED = ROOT.parent / "shared" / "data"
ODD = REFERENCE["odd"]


def _digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, ensure_ascii=True).encode("ascii")).hexdigest()


def _corpus(name: str) -> list[str] | None:
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        from analyzer_reference import corpora
    finally:
        sys.path.pop(0)
    return corpora().get(name)


@pytest.mark.parametrize("i", range(len(ODD)), ids=lambda i: f"odd{i}")
def test_analyze_gives_the_recorded_terms(i):
    e = ODD[i]
    assert analyze(e["text"], prefixes=True) == e["documents"]
    assert analyze(e["text"]) == e["plain"]
    assert analyze(e["text"], stem=False) == e["unstemmed"]
    assert analyze(e["text"], series=True) == e["queries"]


def _holds_mark(text: str) -> bool:
    """Whether a text holds one of the scan's mark pieces itself (its batch is then analysed
    text by text)."""
    return any(p in (b"\x00", b"\x01") for p in T._pieces(text))


@pytest.mark.parametrize("small", [1 << 13, 0], ids=["dict-scan", "numpy-scan"])
def test_batch_functions_give_the_recorded_terms_and_leads(small, monkeypatch):
    monkeypatch.setattr(T, "SMALL_SCAN_BYTES", small)
    odd = [e for e in ODD if not _holds_mark(e["text"])]
    assert len(odd) == len(ODD) - 1
    texts = [e["text"] for e in odd]
    assert T._scan(texts, None) is not None  # the numpy path, not the per-text fallback
    assert analyze_many(texts, prefixes=True) == [e["documents"] for e in odd]
    assert analyze_many(texts) == [e["plain"] for e in odd]
    assert analyze_many(texts, stem=False) == [e["unstemmed"] for e in odd]
    for k in range(5):  # every recorded cut, each text with the others in one batch
        cuts = [sorted(map(int, e["leads"]))[k % len(e["leads"])] for e in odd]
        assert T._scan(texts, cuts) is not None
        want_leads = [e["leads"][str(c)] for e, c in zip(odd, cuts)]
        terms, leads = analyze_documents(texts, cuts)
        assert terms == [e["documents"] for e in odd] and leads == want_leads
        vocab_ref: dict[str, int] = {"seen": 0}
        vocab: dict[str, int] = {"seen": 0}
        ids_ref, ptr_ref = encode_terms([e["documents"] for e in odd], vocab_ref)
        ids, ptr, lead = encode_documents(texts, cuts, vocab)
        assert list(vocab.items()) == list(vocab_ref.items())
        assert ids.dtype == np.int32 and np.array_equal(ids, ids_ref) and np.array_equal(ptr, ptr_ref)
        assert lead.dtype == np.int64 and lead.tolist() == want_leads


def test_a_text_holding_a_mark_piece_is_analysed_text_by_text():
    holder = next(e for e in ODD if _holds_mark(e["text"]))
    texts = [ODD[4]["text"], holder["text"], ODD[5]["text"]]
    assert T._scan(texts, None) is None
    want = [ODD[4]["documents"], holder["documents"], ODD[5]["documents"]]
    assert analyze_many(texts, prefixes=True) == want
    ids_ref, ptr_ref = encode_terms(want, {})
    ids, ptr, _ = encode_documents(texts, [lead_cut(t) for t in texts], {})
    assert np.array_equal(ids, ids_ref) and np.array_equal(ptr, ptr_ref)
    # a mark character inside a piece is an ordinary non-token character
    inside = "alpha\x00beta gamma\x01delta"
    assert T._scan([inside], None) is not None
    assert analyze_many([inside]) == [analyze(inside)] == [["alpha", "beta", "gamma", "delta"]]


def test_each_odd_string_alone_and_an_empty_batch():
    for e in ODD:
        assert analyze_many([e["text"]], prefixes=True) == [e["documents"]]
        c = max(map(int, e["leads"]))
        ids, ptr, lead = encode_documents([e["text"]], [c], {})
        assert len(ids) == len(e["documents"]) and ptr.tolist() == [0, len(ids)]
        assert lead.tolist() == [e["leads"][str(c)]]
    assert analyze_many([]) == [] and analyze_documents([], []) == ([], [])
    ids, ptr, lead = encode_documents([], [], {})
    assert ids.dtype == np.int32 and len(ids) == 0 and ptr.tolist() == [0] and len(lead) == 0


def _check_digests(name: str, texts: list[str]) -> None:
    want = REFERENCE["digests"][name]
    assert len(texts) == want["docs"]
    cuts = [lead_cut(t) for t in texts]
    terms, leads = analyze_documents(texts, cuts)
    assert _digest(terms) == want["documents"] and _digest(leads) == want["leads"]
    assert _digest(analyze_many(texts, prefixes=True)) == want["documents"]
    assert _digest(analyze_many(texts)) == want["plain"]
    assert _digest(analyze_many(texts, stem=False)) == want["unstemmed"]
    vocab: dict[str, int] = {}
    ids, ptr, lead = encode_documents(texts, cuts, vocab)
    words = list(vocab)
    flat = [words[i] for i in ids.tolist()]
    b = ptr.tolist()
    assert _digest([flat[b[i] : b[i + 1]] for i in range(len(texts))]) == want["documents"]
    assert _digest(lead.tolist()) == want["leads"]


def test_bundled_release_notes_give_the_recorded_digests():
    texts = _corpus("bundled-release-notes")
    assert texts
    _check_digests("bundled-release-notes", texts)
    assert _digest([analyze(t, prefixes=True) for t in texts]) == REFERENCE["digests"]["bundled-release-notes"]["documents"]


@pytest.mark.skipif(not SHARED.is_dir(), reason="needs ../shared/data (the team's corpora beside the repository)")
@pytest.mark.parametrize("name", ["changelogs", "news-dev", "tdw-rag-release-corpus"])
def test_shared_corpora_give_the_recorded_digests(name):
    texts = _corpus(name)
    if texts is None or name not in REFERENCE["digests"]:
        pytest.skip(f"{name} not under {SHARED}")
    _check_digests(name, texts)


def test_batch_size_changes_nothing(monkeypatch):
    texts = [e["text"] for e in ODD] * 3
    cuts = [lead_cut(t) for t in texts]
    whole = encode_documents(texts, cuts, {})
    many = analyze_many(texts, prefixes=True)
    monkeypatch.setattr(T, "SCAN_BATCH_CHARS", 40)
    split = encode_documents(texts, cuts, {})
    assert all(np.array_equal(a, b) for a, b in zip(whole, split))
    assert analyze_many(texts, prefixes=True) == many


def test_many_distinct_pieces_and_shared_prefixes():
    """All-distinct pieces (the numpy table grows), pieces equal in their first 8 / 16 / 24
    bytes and differing after, at every length around the key's word limits."""
    rng = np.random.default_rng(7)
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    words = ["".join(rng.choice(letters, size=int(n))) for n in rng.integers(2, 12, size=30_000)]
    base = "abcdefghijklmnopqrstuvwxyzabcdefghij"
    near = [base[:n] + tail for n in (6, 7, 8, 15, 16, 23, 24, 25, 30) for tail in ("", "q", "qq", "é", ".z")]
    texts = [" ".join(words[i : i + 300]) + " " + " ".join(near) for i in range(0, len(words), 300)]
    cuts = [lead_cut(t) for t in texts]
    ref = [analyze(t, prefixes=True) for t in texts]
    assert analyze_many(texts, prefixes=True) == ref
    vocab_ref: dict[str, int] = {}
    ids_ref, ptr_ref = encode_terms(ref, vocab_ref)
    vocab: dict[str, int] = {}
    ids, ptr, _ = encode_documents(texts, cuts, vocab)
    assert list(vocab) == list(vocab_ref) and np.array_equal(ids, ids_ref) and np.array_equal(ptr, ptr_ref)


_ALPHABET = list("aZ _.-+1v2.0!?\n\tİΣσςé²ªµ") + [
    "\x00", "\x01", "\x85", "\xa0", "\u2019", "\u201c", "\u2014", "\u2026", "\u200b", "\u3000",
    "д", "Я", "東", "🚀", "\u0301", "\ud800", "K", "ǅ", "ß", "١", "'", ",", "/", ":",
]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.text(alphabet=st.sampled_from(_ALPHABET), max_size=60), min_size=1, max_size=8),
       st.integers(min_value=0, max_value=70))
def test_batch_equals_analyze_on_fuzzed_text(texts, cut_at):
    """Both ways of numbering a scan's pieces (dict below ``SMALL_SCAN_BYTES``, numpy above)
    and both ways of giving a batch its vocabulary ids."""
    cuts = [min(len(t), cut_at) for t in texts]
    for small, ratio in ((1 << 13, 8), (0, 8), (0, 0), (1 << 13, 1 << 30)):
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(T, "SMALL_SCAN_BYTES", small)
            mp.setattr(T, "_DENSE_RATIO", ratio)
            _check_fuzzed(texts, cuts)


def _check_fuzzed(texts: list[str], cuts: list[int]) -> None:
    ref = [analyze(t, prefixes=True) for t in texts]
    terms, leads = analyze_documents(texts, cuts)
    assert terms == ref
    assert leads == [len(analyze(t[:c], prefixes=True)) for t, c in zip(texts, cuts)]
    assert analyze_many(texts) == [analyze(t) for t in texts]
    assert analyze_many(texts, stem=False) == [analyze(t, stem=False) for t in texts]
    vocab_ref: dict[str, int] = {}
    ids_ref, ptr_ref = encode_terms(ref, vocab_ref)
    vocab: dict[str, int] = {}
    ids, ptr, lead = encode_documents(texts, cuts, vocab)
    assert list(vocab) == list(vocab_ref) and np.array_equal(ids, ids_ref) and np.array_equal(ptr, ptr_ref)
    assert lead.tolist() == leads


def _token_char(c: str) -> bool:
    """In a token ([^\\W_]) or a joiner of one."""
    return c.isalnum() or c in "._-+"


def test_what_the_scan_makes_spaces_is_never_in_a_token():
    for b in range(128):
        if T._SCAN_TABLE[b] == 32 and b != 32:
            assert not _token_char(chr(b)), chr(b)
        if 65 <= b <= 90:
            assert T._SCAN_TABLE[b] == ord(chr(b).lower())
    for b in range(256):
        if T._C2_SPACE[b]:
            assert not _token_char(bytes([0xC2, b]).decode())
        if T._E280_SPACE[b]:
            assert not _token_char(bytes([0xE2, 0x80, b]).decode())
    splits_at = [c for c in map(chr, range(0x110000)) if c.isspace()]
    assert splits_at and not any(_token_char(c) for c in splits_at)
    assert all(len(f"a{c}b".split()) == 2 for c in " \t\n\r\x0b\x0c")


def test_digit_prefilter_and_lower_casing_assumptions():
    digit = re.compile(r"\d")
    for cp in range(0x110000):
        c = chr(cp)
        assert (digit.fullmatch(c) is not None) == c.isdecimal(), hex(cp)
        low = c.lower()
        if low != c:
            assert low.lower() == low, hex(cp)
