"""The keyword analyzer: text -> index terms for BM25.

Rules (the same for documents and queries):

- lower-case; a token is a run of letters/digits joined by ``.``, ``_``, ``-`` or ``+``;
- a version-like token (starts with a digit, or ``v`` + digit, and contains a dot) is kept
  whole without the ``v``: ``v2.3.1`` and ``2.3.1`` both give ``2.3.1``, so "X 2.3.1
  changelog" matches exactly and ``2.3.10`` does not match ``2.3.1``. Documents
  (``prefixes=True``) also give the series it belongs to (``2.3.*``) and, for ``2.3.0``,
  the short name ``2.3``; queries
  (``series=True``) the series it names (``2.3`` -> ``2.3.*``), weighed at ``SERIES_WEIGHT``:
  "X 2.3" prefers a release literally named 2.3, else finds the 2.3.x releases;
- any other compound (``scikit-learn``, ``send_json``, ``aiohttp.web``) gives the whole
  compound and its parts, so ``learn`` and ``scikit-learn`` both match;
- English stop words are dropped; alphabetic terms are stemmed with the Snowball English
  stemmer (PyStemmer) when ``stem=True``.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable, Sequence
from typing import Any

from chronorank.errors import require

__all__ = ["analyze", "analyze_many", "query_weights", "query_acronyms", "acronym_expansion", "STOPWORDS", "SERIES", "SERIES_WEIGHT", "ANALYZER_VERSION"]

#: Bumped whenever documents analyse differently; an index saved under another version is
#: re-analysed from its stored texts when loaded (chronorank.index.storage).
ANALYZER_VERSION = 2

SERIES = ".*"  # suffix of a version-series term ("2.3.*"); the tokenizer never produces it
SERIES_WEIGHT = 0.3  # a series match counts less than the exact version

_TOKEN = re.compile(r"[^\W_]+(?:[._\-+][^\W_]+)*", re.UNICODE)
_SPLIT = re.compile(r"[._\-+]")
_VERSION = re.compile(r"v?(\d[\w]*(?:\.[\w]+)+)")

_STOP_TEXT = (
    "a about above after again against all am an and any are as at be because been before "
    "being below between both but by can could did do does doing down during each few for "
    "from further had has have having he her here hers herself him himself his how i if "
    "in into is it its itself just me more most my myself no nor not now of off on once "
    "only or other our ours ourselves out over own same she should so some such than that "
    "the their theirs them themselves then there these they this those through to too "
    "under until up very was we were what when where which while who whom why will with "
    "would you your yours yourself yourselves s t "
)
STOPWORDS: frozenset[str] = frozenset(_STOP_TEXT.split())

_stemmer_lock = threading.Lock()
_stemmer: Any = None


def _get_stemmer() -> Any:
    global _stemmer
    if _stemmer is None:
        with _stemmer_lock:
            if _stemmer is None:
                mod = require("Stemmer", extra="index", package="PyStemmer")
                _stemmer = mod.Stemmer("english")
    return _stemmer


def _token_terms(tok: str, prefixes: bool, series: bool, out: list[str]) -> None:
    vm = _VERSION.fullmatch(tok)
    if vm is not None:
        v = vm.group(1)
        out.append(v)
        if prefixes:  # documents: "1.2.3" is in the "1.2" series; "1.2.0" is also "1.2"
            parts = v.split(".")
            out.extend(".".join(parts[:k]) + SERIES for k in range(len(parts) - 1, 1, -1))
            k = len(parts)
            while k > 2 and parts[k - 1] == "0":
                k -= 1
                out.append(".".join(parts[:k]))
        elif series:  # queries: "1.2" also asks for the 1.2 series
            out.append(v + SERIES)
        return
    if _SPLIT.search(tok):
        out.append(tok)
        out.extend(p for p in _SPLIT.split(tok) if p)
    else:
        out.append(tok)


def _kept(t: str) -> bool:
    return t not in STOPWORDS and not (len(t) == 1 and t.isalpha())


def _raw_terms(text: str, prefixes: bool = False, series: bool = False) -> list[str]:
    out: list[str] = []
    for m in _TOKEN.finditer(text.lower()):
        _token_terms(m.group(0), prefixes, series, out)
    return [t for t in out if _kept(t)]


def _raw_terms_lead(text: str, cut: int) -> tuple[list[str], int]:
    """A document's terms (``prefixes=True``) and how many of them ``text[:cut]`` alone gives,
    from one pass: the tokens wholly before ``cut``, plus the terms of the piece of a token
    that straddles it (what analysing the cut text would see)."""
    low = text.lower()
    if len(low) != len(text):  # lower-casing moved offsets ("İ"): analyse the head on its own
        return _raw_terms(text, True), len(_raw_terms(text[:cut], True))
    out: list[str] = []
    lead_raw = -1
    extra = 0
    for m in _TOKEN.finditer(low):
        if lead_raw < 0 and m.end() > cut:
            lead_raw = len(out)
            if m.start() < cut:
                extra = len(_raw_terms(text[m.start() : cut], True))
        _token_terms(m.group(0), True, False, out)
    if lead_raw < 0:
        lead_raw = len(out)
    return [t for t in out if _kept(t)], sum(map(_kept, out[:lead_raw])) + extra


def analyze(text: str, *, stem: bool = True, prefixes: bool = False, series: bool = False) -> list[str]:
    """Index terms of one text (see the module docstring for the rules)."""
    terms = _raw_terms(text, prefixes, series)
    if stem and terms:
        stemmer = _get_stemmer()
        return [stemmer.stemWord(t) if t.isalpha() else t for t in terms]
    return terms


def query_weights(text: str) -> dict[str, float]:
    """A query's terms and their weights: repeats add up, a version-series term ("2.3.*")
    counts ``SERIES_WEIGHT`` (the embedded index and the stores weigh queries alike)."""
    out: dict[str, float] = {}
    for t in analyze(text, series=True):
        out[t] = out.get(t, 0.0) + (SERIES_WEIGHT if t.endswith(SERIES) else 1.0)
    return out


def analyze_many(texts: Iterable[str], *, stem: bool = True, prefixes: bool = False) -> list[list[str]]:
    """``analyze`` over many texts; stems each distinct word once."""
    raw = [_raw_terms(t, prefixes) for t in texts]
    return _stem_all(raw) if stem else raw


def analyze_documents(texts: Sequence[str], cuts: Sequence[int]) -> tuple[list[list[str]], list[int]]:
    """``analyze_many(texts, prefixes=True)`` and, from the same pass, the number of terms
    ``analyze(text[:cut], prefixes=True)`` would give for each text's ``cut`` (its lead)."""
    pairs = [_raw_terms_lead(t, c) for t, c in zip(texts, cuts)]
    return _stem_all([p[0] for p in pairs]), [p[1] for p in pairs]


def _stem_all(raw: list[list[str]]) -> list[list[str]]:
    stemmer = _get_stemmer()
    vocab = {w for terms in raw for w in terms if w.isalpha()}
    words = sorted(vocab)
    stems = dict(zip(words, stemmer.stemWords(words)))
    return [[stems.get(t, t) for t in terms] for terms in raw]


_ACRONYM = re.compile(r"\b([A-Z]{3,6})s?\b")
_ROMAN = re.compile(r"M{0,3}(?:CM|CD|D?C{0,3})(?:XC|XL|L?X{0,3})(?:IX|IV|V?I{0,3})")
#: An expansion must occur in at least this many documents (one page is as likely a chance
#: phrase with the right initials as the term the corpus writes out).
ACRONYM_MIN_DOCS = 2
_LINK = r"[\s-]+(?:(?:of|for|and|the|on|in|to)\s+){0,2}"  # "centers for disease control"


def query_acronyms(query: str) -> list[str]:
    """The acronyms of a query as written: 3-6 capital letters, optionally plural ("SLA",
    "SLAs"), not a Roman numeral ("III"); lower-case words and numbers are never acronyms."""
    found = (m.group(1) for m in _ACRONYM.finditer(query))
    return list(dict.fromkeys(a for a in found if not _ROMAN.fullmatch(a)))


def acronym_expansion(acronym: str, texts: Iterable[str]) -> str | None:
    """The phrase the corpus writes for ``acronym`` ("SLA" -> "service level agreement"), or
    None.

    People ask with the acronym while a page spells it out (or the reverse), and neither
    BM25 nor a small embedder links the two. A candidate phrase is consecutive words whose
    initials spell the acronym, with up to two linking stopwords between them ("centers for
    disease control") and hyphenated parts that may carry a letter ("single sign-on"). The
    phrase found in the most documents wins when it is in at least ``ACRONYM_MIN_DOCS``, in at
    least as many as the acronym itself (a corpus that writes "NATO" needs no expansion, and a
    chance phrase never outnumbers a common acronym: news-dev's "CVS" is no "camera video
    shows"), and no other phrase ties it.
    """
    letters = acronym.lower()
    if not 3 <= len(letters) <= 6 or not letters.isalpha():
        return None
    rx = re.compile(r"\b" + _LINK.join(f"{c}[a-z]*" for c in letters) + r"\b", re.IGNORECASE)
    own = re.compile(rf"\b{re.escape(acronym.upper())}s?\b")
    counts: dict[str, int] = {}
    written = 0
    for text in texts:
        written += own.search(text) is not None
        found = set()
        for m in rx.finditer(text):
            words = m.group(0).lower().split()
            if words[0] in STOPWORDS or words[-1] in STOPWORDS or "".join(words).replace("-", "") == letters:
                continue
            found.add(" ".join(words))
        for phrase in found:
            counts[phrase] = counts.get(phrase, 0) + 1
    if not counts:
        return None
    ranked = sorted(counts.items(), key=lambda kv: -kv[1])
    phrase, n = ranked[0]
    if n < max(ACRONYM_MIN_DOCS, written) or (len(ranked) > 1 and ranked[1][1] == n):
        return None
    return phrase
