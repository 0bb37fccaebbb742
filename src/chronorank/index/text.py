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
from itertools import chain
from typing import Any

import numpy as np

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
    """``analyze`` over many texts, token for token (a test checks it on every corpus): each
    text is tokenized by one regex scan and each distinct token analysed once (see
    :func:`_token_table`)."""
    toks = [_TOKEN.findall(t.lower()) for t in texts]
    get = _token_table(toks, prefixes, stem).__getitem__
    return [list(chain.from_iterable(map(get, tk))) for tk in toks]


def analyze_documents(texts: Sequence[str], cuts: Sequence[int]) -> tuple[list[list[str]], list[int]]:
    """``analyze_many(texts, prefixes=True)`` and, from the same scan, the number of terms
    ``analyze(text[:cut], prefixes=True)`` gives for each text's ``cut`` (its lead)."""
    toks: list[list[str]] = []
    heads: list[list[str]] = []
    for text, cut in zip(texts, cuts):
        low = text.lower()
        head = _TOKEN.findall(text[:cut].lower())
        if len(low) == len(text) and _clean_cut(low, cut):
            toks.append(head + _TOKEN.findall(low[cut:]))  # no token runs across the cut
        else:  # a cut inside a token, or lower() moved offsets ("İ"): scan the whole text too
            toks.append(_TOKEN.findall(low))
        heads.append(head)
    get = _token_table(toks + heads, True, True).__getitem__
    terms = [list(chain.from_iterable(map(get, tk))) for tk in toks]
    return terms, [sum(map(len, map(get, h))) for h in heads]


def encode_documents(
    texts: Sequence[str], cuts: Sequence[int], vocab: dict[str, int]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """What ``add()`` needs of a batch, without a Python step per token: the flat term ids
    and offsets that ``bm25.encode_terms(analyze_documents(texts, cuts)[0], vocab)`` gives
    (unseen terms appended to ``vocab`` in order of first occurrence, the same ids) and the
    lead lengths (int64), both checked against those functions on every corpus.

    Each text is scanned by one regex (C); the distinct tokens are looked up in the token
    table and numbered, and every occurrence is expanded to its terms' ids in numpy.
    """
    toks: list[list[str]] = []
    head_n = np.zeros(len(texts), dtype=np.int64)  # tokens of the lead, when a prefix
    odd: dict[int, list[str]] = {}  # leads that are not a prefix of the text's tokens
    for i, (text, cut) in enumerate(zip(texts, cuts)):
        low = text.lower()
        head = _TOKEN.findall(text[:cut].lower())
        if len(low) == len(text) and _clean_cut(low, cut):
            head_n[i] = len(head)
            toks.append(head + _TOKEN.findall(low[cut:]))  # no token runs across the cut
        else:  # a cut inside a token, or lower() moved offsets ("İ"): scan the whole text too
            odd[i] = head
            toks.append(_TOKEN.findall(low))
    n = len(toks)
    flat = list(chain.from_iterable(toks))
    uniq = list(dict.fromkeys(flat))  # distinct tokens, in order of first occurrence
    table = _token_table([uniq, *odd.values()], True, True)
    # terms numbered locally in order of first occurrence (scanning the distinct tokens in
    # their first-occurrence order meets each term first where the stream does)
    local: dict[str, int] = {}
    tok_terms = [table[t] for t in uniq]
    tt_ids = np.fromiter(
        (local.setdefault(term, len(local)) for terms in tok_terms for term in terms), dtype=np.int64
    )
    tt_len = np.fromiter(map(len, tok_terms), dtype=np.int64, count=len(uniq))
    tt_ptr = np.zeros(len(uniq) + 1, dtype=np.int64)
    np.cumsum(tt_len, out=tt_ptr[1:])
    code = dict(zip(uniq, range(len(uniq))))
    occ = np.fromiter(map(code.__getitem__, flat), dtype=np.int64, count=len(flat))
    per_occ = tt_len[occ]
    occ_ptr = np.zeros(len(flat) + 1, dtype=np.int64)
    np.cumsum(per_occ, out=occ_ptr[1:])
    total = int(occ_ptr[-1])
    pos = np.arange(total, dtype=np.int64) - np.repeat(occ_ptr[:-1], per_occ)
    local_ids = tt_ids[np.repeat(tt_ptr[occ], per_occ) + pos]
    to_vocab = np.fromiter((vocab.setdefault(t, len(vocab)) for t in local), dtype=np.int64, count=len(local))
    term_ids = to_vocab[local_ids].astype(np.int32)
    tok_ptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, toks), dtype=np.int64, count=n), out=tok_ptr[1:])
    term_ptr = occ_ptr[tok_ptr]
    lead = occ_ptr[tok_ptr[:-1] + head_n] - term_ptr[:-1]
    for i, head in odd.items():
        lead[i] = sum(len(table[t]) for t in head)
    return term_ids, term_ptr, lead


def _clean_cut(low: str, cut: int) -> bool:
    """Whether no token can run across position ``cut`` of ``low``: it is the end, or a line
    break / space / ``!`` / ``?``, or a dot followed by a space or the end (where
    :func:`chronorank.index.core.lead_cut` ends a lead)."""
    if cut >= len(low):
        return True
    c = low[cut]
    if c.isspace() or c in "!?":
        return True
    return c == "." and (cut + 1 == len(low) or low[cut + 1].isspace())


def _stem_all(raw: list[list[str]]) -> list[list[str]]:
    stemmer = _get_stemmer()
    vocab = {w for terms in raw for w in terms if w.isalpha()}
    words = sorted(vocab)
    stems = dict(zip(words, stemmer.stemWords(words)))
    return [[stems.get(t, t) for t in terms] for terms in raw]


#: Distinct tokens whose terms are remembered per (prefixes, stem) mode; past it the table
#: starts afresh (a token's terms depend on the token alone, so forgetting is harmless).
TOKEN_TABLE_MAX = 1 << 16
_tables: dict[tuple[bool, bool], dict[str, tuple[str, ...]]] = {}
_tables_lock = threading.Lock()


def _token_table(token_lists: list[list[str]], prefixes: bool, stem: bool) -> dict[str, tuple[str, ...]]:
    """A table token -> its index terms (kept and stemmed) holding every token of
    ``token_lists``. A token's terms depend on the token alone (``_token_terms``, then the
    stop-word filter and the stemmer word by word), so a batch's terms are its tokens' table
    entries chained: the per-token Python work is done once per distinct token, not once
    per occurrence (with encode_documents: 1.2-1.6x the documents per CPU second of the
    per-token analyzer, benchmarks/index_append.py; the regex scan is most of what is left)."""
    with _tables_lock:
        table = _tables.get((prefixes, stem))
        uniq = set(chain.from_iterable(token_lists))
        missing = uniq if table is None else uniq.difference(table)
        if table is None or len(table) + len(missing) > TOKEN_TABLE_MAX:
            # a new dict, not clear(): a concurrent reader keeps the complete one it holds
            table, missing = {}, uniq
            _tables[(prefixes, stem)] = table
        if missing:
            _fill(table, missing, prefixes, stem)
    return table


def _fill(table: dict[str, tuple[str, ...]], tokens: Iterable[str], prefixes: bool, stem: bool) -> None:
    """Add each token's terms to ``table``: a plain word or number (``isalnum``, the
    common case) is its own term unless a stop word or single letter, stemmed if
    alphabetic; a compound or version goes through ``_token_terms``."""
    words: list[str] = []
    rest: list[str] = []
    for tok in tokens:
        (words if tok.isalnum() else rest).append(tok)
    alpha = [w for w in words if w.isalpha()]
    table.update((w, (w,)) for w in words if not w.isalpha())  # digits and mixed: always kept
    kept = [w for w in alpha if _kept(w)]
    table.update((w, ()) for w in alpha if not _kept(w))
    table.update(zip(kept, ((t,) for t in (_get_stemmer().stemWords(kept) if stem else kept))))
    raw = []
    for tok in rest:
        out: list[str] = []
        _token_terms(tok, prefixes, False, out)
        raw.append([t for t in out if _kept(t)])
    table.update(zip(rest, map(tuple, _stem_all(raw) if stem else raw)))


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
