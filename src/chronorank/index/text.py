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

import array
import functools
import re
import threading
from collections.abc import Iterable, Iterator, Sequence
from itertools import chain, count, filterfalse
from typing import Any

import numpy as np

from chronorank.errors import InvalidInput, require

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
    # a version starts with a digit (\d: str.isdecimal) or "v" and a digit
    vm = _VERSION.fullmatch(tok) if tok[:1].isdecimal() or (tok[:1] == "v" and tok[1:2].isdecimal()) else None
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
    return dict(_query_weights(text))


@functools.lru_cache(maxsize=256)
def _query_weights(text: str) -> tuple[tuple[str, float], ...]:
    # remembered: one search reads its question's terms three times (its shape, the glued
    # names, the keyword signals)
    out: dict[str, float] = {}
    for t in analyze(text, series=True):
        out[t] = out.get(t, 0.0) + (SERIES_WEIGHT if t.endswith(SERIES) else 1.0)
    return tuple(out.items())


def analyze_many(texts: Iterable[str], *, stem: bool = True, prefixes: bool = False) -> list[list[str]]:
    """``analyze`` over many texts, token for token (a test checks it on every corpus and on
    odd text): the texts are split into pieces in numpy (:func:`_scan`) and each distinct
    piece is analysed once (:func:`_table`)."""
    texts = texts if isinstance(texts, Sequence) else list(texts)
    out: list[list[str]] = []
    for a, b in _batches(texts):
        scan = _scan(texts[a:b], None)
        if scan is None:  # a text holds a mark piece itself: text by text
            out.extend(analyze(t, stem=stem, prefixes=prefixes) for t in texts[a:b])
            continue
        out.extend(_term_lists(scan, _table([scan.uniq], prefixes, stem)))
    return out


def analyze_documents(texts: Sequence[str], cuts: Sequence[int]) -> tuple[list[list[str]], list[int]]:
    """``analyze_many(texts, prefixes=True)`` and, from the same scan, the number of terms
    ``analyze(text[:cut], prefixes=True)`` gives for each text's ``cut`` (its lead)."""
    terms: list[list[str]] = []
    leads: list[int] = []
    for a, b in _batches(texts):
        scan = _scan(texts[a:b], cuts[a:b])
        if scan is None:
            terms.extend(analyze(t, prefixes=True) for t in texts[a:b])
            leads.extend(len(analyze(t[:c], prefixes=True)) for t, c in zip(texts[a:b], cuts[a:b]))
            continue
        table = _table([scan.uniq, *scan.odd.values()], True, True)
        stream, occ_ptr, _ = _expand(scan, table)
        terms.extend(_split_terms(stream, occ_ptr[scan.bounds], table))
        leads.extend(_leads(scan, occ_ptr, table).tolist())
    return terms, leads


def encode_documents(
    texts: Sequence[str], cuts: Sequence[int], vocab: dict[str, int]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`_encode_documents`, with every text longer than ``LONG_TEXT_CHARS`` scanned
    part after part, cut at white space (no token crosses a space and the token pattern
    looks at no context, so the terms are the same): the scan's arrays (~20 bytes a
    character) then stay those of one part, whatever a document's size. The ids gather in
    one ``array.array``, which grows in place (``realloc``), so they are never held twice
    (a list of parts joined at the end would hold them twice at the join)."""
    ids, ptr, lead, _ = _encode_long(texts, cuts, vocab, fold=False)
    return ids, ptr, lead


def encode_for_index(
    texts: Sequence[str], cuts: Sequence[int], vocab: dict[str, int]
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]:
    """What ``add()`` stores: :func:`encode_documents`, except that a text longer than
    ``LONG_TEXT_CHARS`` keeps its lead's terms in order (each with count 1) followed by
    each other distinct term once, ascending by id, with its count -- the term ids of the
    whole text are never held (a 100 MiB text's took ~0.65x its size). The fourth array is
    the count of each entry (int32), None when every entry is one term (no long text).
    BM25 needs only each (term, document) count and each document's length, and the lead
    features only the lead's terms in order, so every score is the same (to the bit: the
    counts are integers)."""
    return _encode_long(texts, cuts, vocab, fold=True)


def _encode_long(
    texts: Sequence[str], cuts: Sequence[int], vocab: dict[str, int], *, fold: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]:
    n = len(texts)
    if all(len(t) <= LONG_TEXT_CHARS for t in texts):
        ids0, ptr0, lead0 = _encode_documents(texts, cuts, vocab)
        return ids0, ptr0, lead0, None
    ids = array.array("i")
    tf = array.array("i") if fold else None
    counts: list[np.ndarray] = []
    leads: list[np.ndarray] = []
    i = 0
    while i < n:  # in order: a new term's id is its first occurrence's
        if len(texts[i]) <= LONG_TEXT_CHARS:
            j = i
            while j < n and len(texts[j]) <= LONG_TEXT_CHARS:
                j += 1
            t_ids, t_ptr, lead = _encode_documents(texts[i:j], cuts[i:j], vocab)
            ids.frombytes(t_ids.astype(np.int32, copy=False).tobytes())
            if tf is not None:
                tf.frombytes(np.ones(len(t_ids), dtype=np.int32).tobytes())
            counts.append(np.diff(t_ptr))
            leads.append(lead)
            i = j
            continue
        total = 0
        bag = np.zeros(0, dtype=np.int64)  # fold: count of each term id after the lead
        for k, part in enumerate(_parts(texts[i], cuts[i])):  # one part's copy alive at a time
            t_ids, _, lead = _encode_documents([part], [cuts[i] if k == 0 else len(part)], vocab)
            rest = t_ids
            if k == 0:  # the first part holds the whole lead
                leads.append(lead)
                if tf is not None:
                    head = t_ids[: int(lead[0])]
                    ids.frombytes(head.astype(np.int32, copy=False).tobytes())
                    tf.frombytes(np.ones(len(head), dtype=np.int32).tobytes())
                    total += len(head)
                    rest = t_ids[len(head):]
            if tf is None:
                ids.frombytes(t_ids.astype(np.int32, copy=False).tobytes())
                total += len(t_ids)
                continue
            if len(rest):
                if bag.shape[0] < len(vocab):
                    bag = np.concatenate([bag, np.zeros(len(vocab) - bag.shape[0], dtype=np.int64)])
                uniq, c = np.unique(rest, return_counts=True)
                bag[uniq] += c  # uniq holds each id once: a fancy add is exact
        if tf is not None:
            held = np.flatnonzero(bag)
            if held.shape[0] and int(bag[held].max()) > np.iinfo(np.int32).max:
                raise InvalidInput(f"texts[{i}] repeats one term more than 2**31 times; split the document.")
            ids.frombytes(held.astype(np.int32).tobytes())
            tf.frombytes(bag[held].astype(np.int32).tobytes())
            total += int(held.shape[0])
        counts.append(np.array([total], dtype=np.int64))
        i += 1
    ptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.concatenate(counts), out=ptr[1:])
    tf_arr = None if tf is None else np.frombuffer(tf, dtype=np.int32)
    return np.frombuffer(ids, dtype=np.int32), ptr, np.concatenate(leads), tf_arr


#: Texts longer than this (characters) are scanned in parts of about this size.
LONG_TEXT_CHARS = 1 << 18


def _parts(text: str, lead: int = 0) -> Iterator[str]:
    """``text`` in consecutive parts of at most ``LONG_TEXT_CHARS`` characters, each ending
    just after an ASCII white space (where a window holds none, the part runs on to the
    next one); the first part holds the lead's ``lead`` characters whole."""
    a, n = 0, len(text)
    spaces = " \n\t\r\x0b\x0c"
    lo = lead
    while n - a > LONG_TEXT_CHARS:
        hi = max(a + LONG_TEXT_CHARS, lo)
        cut = max(text.rfind(ws, max(a + 1, lo), hi) for ws in spaces)
        if cut < 0:
            cut = min((j for j in (text.find(ws, hi) for ws in spaces) if j >= 0), default=-1)
            if cut < 0:
                break
        yield text[a : cut + 1]
        a = lo = cut + 1
    yield text[a:]


def _encode_documents(
    texts: Sequence[str], cuts: Sequence[int], vocab: dict[str, int]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """What ``add()`` needs of a batch, without a Python step per token: the flat term ids
    and offsets that ``bm25.encode_terms(analyze_documents(texts, cuts)[0], vocab)`` gives
    (unseen terms appended to ``vocab`` in order of first occurrence, the same ids) and the
    lead lengths (int64), both checked against those functions on every corpus.

    The texts are split into pieces and the pieces numbered in numpy (:func:`_scan`); each
    distinct piece's term numbers come from the table (:func:`_table`), every occurrence is
    expanded to them in numpy, and each distinct term of the batch meets ``vocab`` once.
    """
    ids: list[np.ndarray] = []
    ptrs: list[np.ndarray] = [np.zeros(1, dtype=np.int64)]
    leads: list[np.ndarray] = []
    for a, b in _batches(texts):
        scan = _scan(texts[a:b], cuts[a:b])
        if scan is None:  # a text holds a mark piece itself: the per-text analyzer
            from chronorank.index.bm25 import encode_terms

            t_ids, t_ptr = encode_terms([analyze(t, prefixes=True) for t in texts[a:b]], vocab)
            lead = np.array([len(analyze(t[:c], prefixes=True)) for t, c in zip(texts[a:b], cuts[a:b])],
                            dtype=np.int64).reshape(-1)
        else:
            table = _table([scan.uniq, *scan.odd.values()], True, True)
            stream, occ_ptr, piece_terms = _expand(scan, table)
            t_ids = _vocab_ids(stream, piece_terms, table, vocab)
            t_ptr = occ_ptr[scan.bounds]
            lead = _leads(scan, occ_ptr, table)
        ids.append(t_ids)
        ptrs.append(t_ptr[1:] + ptrs[-1][-1])
        leads.append(lead)
    if not ids:
        return np.zeros(0, dtype=np.int32), ptrs[0], np.zeros(0, dtype=np.int64)
    if len(ids) == 1:
        return ids[0], np.concatenate(ptrs), leads[0]
    return np.concatenate(ids), np.concatenate(ptrs), np.concatenate(leads)


#: Texts scanned together (characters): bounds the joined string and its piece list for a
#: large batch; the terms and ids are the same whatever the batch size.
SCAN_BATCH_CHARS = 1 << 22


def _batches(texts: Sequence[str]) -> Iterable[tuple[int, int]]:
    """Consecutive index ranges of ``texts`` of about ``SCAN_BATCH_CHARS`` characters."""
    a, n = 0, len(texts)
    while a < n:
        b, size = a + 1, len(texts[a])
        while b < n and size + len(texts[b]) <= SCAN_BATCH_CHARS:
            size += len(texts[b])
            b += 1
        yield a, b
        a = b


_DOC_MARK = "\x00"  # the piece between two texts of a scan
_LEAD_MARK = "\x01"  # the piece at the end of a text's lead
#: ``bytes.translate`` table of the scan: ASCII capitals lower-cased, and every other ASCII
#: character that is not a letter, a digit, a joiner of a token (``._-+``) or a mark turned
#: into a space (none of them is in a token or joins one, so the tokens stay the same).
_SCAN_TABLE = bytes(
    (c + 32 if 65 <= c <= 90 else c if chr(c).isalnum() or chr(c) in "._-+" + _DOC_MARK + _LEAD_MARK else 32)
    if c < 128 else c
    for c in range(256)
)


class _Scan:
    """The pieces of a batch of texts: ``uniq``, the distinct pieces in order of first
    occurrence; ``occ``, the code (index in ``uniq``) of each occurrence; ``bounds``, where
    each text's pieces start and the last one ends (``len(texts) + 1`` positions into
    ``occ``); ``marks``, the position of each lead mark, for the texts not in ``odd``
    (text number -> its lead's own pieces, where the lead does not end between two pieces)."""

    __slots__ = ("uniq", "occ", "bounds", "marks", "odd")

    def __init__(self, uniq: list[bytes], occ: np.ndarray, bounds: np.ndarray, marks: np.ndarray | None,
                 odd: dict[int, list[bytes]]) -> None:
        self.uniq, self.occ, self.bounds, self.marks, self.odd = uniq, occ, bounds, marks, odd


def _scan_bytes(text: str) -> bytes:
    """A text's UTF-8 bytes through the scan table (capitals lower-cased, punctuation made
    spaces); the rest of the lower-casing is left to each distinct piece, as a character
    lower-cases the same wherever it stands -- except a capital sigma (final or not by its
    neighbours): a text that holds one is lower-cased whole first."""
    if "\u03a3" in text:
        text = text.lower()
    return text.encode("utf-8", "surrogatepass").translate(_SCAN_TABLE)


def _pieces(text: str) -> list[bytes]:
    """A text's pieces: :func:`_scan_bytes` split at ASCII white space. No token crosses a
    space and the token pattern looks at no context, so a text's tokens are its pieces'
    tokens in order."""
    return _scan_bytes(text).split()


def _scan(texts: Sequence[str], cuts: Sequence[int] | None) -> _Scan | None:
    """The pieces of ``texts`` joined, with a mark piece between two texts and one at each
    lead's ``cut`` where no token crosses it (see :func:`_codes`); None when a text holds a
    mark piece itself."""
    n = len(texts)
    odd: dict[int, list[bytes]] = {}
    if cuts is None:
        parts: Sequence[str] = texts
    else:
        parts = []
        for i, (text, cut) in enumerate(zip(texts, cuts)):
            if _clean_cut(text, cut):
                parts.append(f"{text[:cut]} {_LEAD_MARK} {text[cut:]}")
            else:  # a cut inside a token: the lead's pieces on their own
                parts.append(text)
                odd[i] = _pieces(text[:cut])
    data = _scan_bytes(f" {_DOC_MARK} ".join(parts))
    uniq, occ = _codes(data) if len(data) > SMALL_SCAN_BYTES else _codes_small(data)
    starts = _positions(uniq, occ, _DOC_MARK)
    marks = None if cuts is None else _positions(uniq, occ, _LEAD_MARK)
    if len(starts) != n - 1 or (marks is not None and len(marks) != n - len(odd)):
        return None
    bounds = np.empty(n + 1, dtype=np.int64)
    bounds[0], bounds[1:n], bounds[n] = 0, starts, len(occ)  # a mark piece has no terms
    return _Scan(uniq, occ, bounds, marks, odd)


#: Below this many bytes a scan numbers its pieces with a dict (numpy's fixed cost per call
#: is more than the dict's per piece there: an append of one document).
SMALL_SCAN_BYTES = 1 << 13


def _codes_small(data: bytes) -> tuple[list[bytes], np.ndarray]:
    """:func:`_codes` for a small scan: split at white space, numbered by a dict."""
    flat = data.split()
    code = dict.fromkeys(flat, 0)
    for j, piece in enumerate(code):
        code[piece] = j
    return list(code), np.fromiter(map(code.__getitem__, flat), dtype=np.int64, count=len(flat))


def _positions(uniq: list[bytes], occ: np.ndarray, mark: str) -> np.ndarray:
    try:
        return np.flatnonzero(occ == uniq.index(mark.encode()))
    except ValueError:
        return np.zeros(0, dtype=np.int64)


#: Second bytes of the two-byte UTF-8 characters U+0080-U+00BF (lead byte 0xC2) and third
#: bytes of U+2000-U+203F (0xE2 0x80: general punctuation) that are not letters or digits:
#: no-break space, curly quotes, dashes, the ellipsis... :func:`_codes` makes them spaces
#: (no token holds or joins across one), so ``“word”`` is the piece ``word``.
_C2_SPACE = np.array([0x80 <= b <= 0xBF and not chr(b).isalnum() for b in range(256)])
_E280_SPACE = np.array([0x80 <= b <= 0xBF and not chr(0x2000 + b - 0x80).isalnum() for b in range(256)])
_LOW_BYTES = np.array([(1 << (8 * k)) - 1 for k in range(8)] + [(1 << 64) - 1], dtype=np.uint64)
_MIX = tuple(np.uint64(x) for x in (0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9, 0xFF51AFD7ED558CCD))
#: Pieces longer than this (bytes) are numbered by a dict; shorter ones by their bytes in numpy.
_WORDS_MAX = 24


def _codes(data: bytes) -> tuple[list[bytes], np.ndarray]:
    """The pieces of ``data`` (runs of bytes other than the space; see :func:`_scan_bytes`):
    the distinct ones in order of first occurrence, and the code of each occurrence (its
    index there), in numpy, with no Python object per occurrence.

    The characters of :data:`_C2_SPACE` / :data:`_E280_SPACE` and a dot before a space
    (never a joiner) become spaces first. A piece of up to 7 bytes is one 64-bit key (its
    bytes and its length), a longer one up to ``_WORDS_MAX`` bytes three words and its
    length; equal pieces are found by an open-addressing hash table in numpy whose every
    match compares the whole key, so the codes are exact; longer pieces go through a dict.
    """
    size = len(data) + 2
    buf = bytearray(size + 32)  # a space at each end, zeros after for the 8-byte reads
    buf[0] = buf[size - 1] = 32
    buf[1 : size - 1] = data
    arr = np.frombuffer(buf, dtype=np.uint8)
    body = arr[:size]
    if not data.isascii():
        for lead, lut, width in ((0xC2, _C2_SPACE, 2), (0xE2, _E280_SPACE, 3)):
            at = np.flatnonzero(body == lead)
            if width == 3:
                at = at[arr[at + 1] == 0x80]
            at = at[lut[arr[at + width - 1]]]
            for k in range(width):
                body[at + k] = 32
    dots = np.flatnonzero(body == 46)
    body[dots[arr[dots + 1] == 32]] = 32
    nonspace = body != 32
    edges = np.flatnonzero(nonspace[1:] != nonspace[:-1]) + 1
    starts, ends = edges[0::2], edges[1::2]
    length = ends - starts
    m = len(starts)
    # 8-byte little-endian reads at any offset (unaligned, within buf's zero tail)
    read = np.ndarray((size + 24,), dtype="<u8", buffer=buf, strides=(1,))
    first8 = read[starts]
    short = length <= 7
    key = np.where(short, (first8 & _LOW_BYTES[np.minimum(length, 8)]) | (length.astype(np.uint64) << np.uint64(56)),
                   first8)
    mid = np.zeros(m, dtype=np.uint64)
    high = np.zeros(m, dtype=np.uint64)
    wide = np.flatnonzero(~short)
    wl = length[wide]
    mid[wide] = read[starts[wide] + 8] & _LOW_BYTES[np.clip(wl - 8, 0, 8)]
    high[wide] = read[starts[wide] + 16] & _LOW_BYTES[np.clip(wl - 16, 0, 8)]
    mixed = key * _MIX[0]
    mixed[wide] ^= mid[wide] * _MIX[1] + high[wide] * _MIX[2] + wl.astype(np.uint64) * _MIX[3]
    mixed ^= mixed >> np.uint64(31)
    long_ = np.flatnonzero(length > _WORDS_MAX)
    if len(long_):
        rows = np.ones(m, dtype=bool)
        rows[long_] = False
        rows_idx = np.flatnonzero(rows)
    else:
        rows_idx = np.arange(m, dtype=np.int64)
    owner, gid = _hash_groups(rows_idx, key, mid, high, length, mixed, ~short)
    text = bytes(buf)
    n_slots = len(owner)
    slots = np.flatnonzero(owner >= 0)
    group_first = [owner[slots]]
    group_ids = [slots]
    if len(long_):  # numbered by a dict, after the table's slots
        pieces = [text[a:b] for a, b in zip(starts[long_].tolist(), ends[long_].tolist())]
        seen: dict[bytes, int] = {}
        lid = np.fromiter(map(seen.setdefault, pieces, count()), dtype=np.int64, count=len(pieces))
        firsts = np.fromiter(seen.values(), dtype=np.int64, count=len(seen))  # increasing
        lcode = np.empty(len(pieces), dtype=np.int64)
        lcode[firsts] = np.arange(len(seen))
        gid[long_] = n_slots + lcode[lid]
        group_first.append(long_[firsts])
        group_ids.append(n_slots + np.arange(len(seen)))
    first = np.concatenate(group_first)
    groups = np.concatenate(group_ids)
    order = np.argsort(first)
    code_of = np.empty(n_slots + len(long_), dtype=np.int64)
    code_of[groups[order]] = np.arange(len(groups))
    at = first[order]
    uniq = [text[a:b] for a, b in zip(starts[at].tolist(), ends[at].tolist())]
    return uniq, code_of[gid]


def _hash_groups(
    rows: np.ndarray, key: np.ndarray, mid: np.ndarray, high: np.ndarray, length: np.ndarray,
    mixed: np.ndarray, wide: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Equal pieces among ``rows``, by linear probing in numpy: ``owner`` (slot -> the first
    row holding its piece, -1 for a free slot) and ``gid`` (row -> its piece's slot; rows
    not in ``rows`` are left for the caller). Two rows share a slot only when ``key`` and,
    for a ``wide`` piece, ``mid``, ``high`` and ``length`` are equal."""
    m = len(key)
    bits = max(12, (len(rows) // 2).bit_length())
    while True:
        n_slots = 1 << bits
        mask = n_slots - 1
        slot = ((mixed[rows] * _MIX[3]) >> np.uint64(64 - bits)).astype(np.int64)
        owner = np.full(n_slots, -1, dtype=np.int64)
        gid = np.empty(m, dtype=np.int64)
        pend, at = rows, slot
        used = 0
        while len(pend) and used <= n_slots // 2:
            free = owner[at] < 0
            claim = at[free]
            if len(claim):
                # the first row of each free slot claims it (reversed: the last write wins)
                owner[claim[::-1]] = pend[free][::-1]
                used = n_slots - int(np.count_nonzero(owner < 0)) if len(claim) > 64 else used + len(np.unique(claim))
            o = owner[at]
            same = key[o] == key[pend]
            check = np.flatnonzero(same & wide[pend])
            if len(check):
                oc, pc = o[check], pend[check]
                same[check] = (mid[oc] == mid[pc]) & (high[oc] == high[pc]) & (length[oc] == length[pc])
            gid[pend[same]] = at[same]
            pend, at = pend[~same], (at[~same] + 1) & mask
        if not len(pend):
            break
        bits += 2  # over half full: a table four times as large
    # each slot's owner is its piece's first row, unless numpy's repeated-index assignment
    # kept another write than the last one
    if len(rows) and bool((owner[gid[rows]] > rows).any()):
        first = np.full(n_slots, m, dtype=np.int64)
        np.minimum.at(first, gid[rows], rows)
        owner = np.where(owner >= 0, first, -1)
    return owner, gid


def _expand(scan: _Scan, table: _Table) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The term numbers of every occurrence of ``scan``'s pieces in order (int64), the
    number of terms before each occurrence (``len(occ) + 1`` offsets), and the distinct
    pieces' term numbers one after another (in ``scan.uniq`` order)."""
    piece_terms = [table.pieces[p] for p in scan.uniq]
    tt_len = np.fromiter(map(len, piece_terms), dtype=np.int64, count=len(piece_terms))
    tt = np.fromiter(chain.from_iterable(piece_terms), dtype=np.int64, count=int(tt_len.sum()))
    tt_ptr = np.zeros(len(piece_terms) + 1, dtype=np.int64)
    np.cumsum(tt_len, out=tt_ptr[1:])
    occ = scan.occ
    per_occ = tt_len[occ]
    occ_ptr = np.zeros(len(occ) + 1, dtype=np.int64)
    np.cumsum(per_occ, out=occ_ptr[1:])
    total = int(occ_ptr[-1])
    pos = np.arange(total, dtype=np.int64) - np.repeat(occ_ptr[:-1], per_occ)
    return tt[np.repeat(tt_ptr[occ], per_occ) + pos], occ_ptr, tt


_DENSE_RATIO = 8


def _vocab_ids(stream: np.ndarray, piece_terms: np.ndarray, table: _Table, vocab: dict[str, int]) -> np.ndarray:
    """``stream``'s terms as int32 ids of ``vocab``, unseen terms appended in order of first
    occurrence: the order in which ``piece_terms`` (the distinct pieces' terms, in the
    pieces' order of first occurrence) first meets them, as the stream does."""
    n = len(piece_terms)
    dense = len(stream) * _DENSE_RATIO > len(table.terms)  # a large batch: arrays over every term number
    if dense:
        first = np.full(len(table.terms), n, dtype=np.int64)
        np.minimum.at(first, piece_terms, np.arange(n, dtype=np.int64))
        present = np.flatnonzero(first < n)
        order = present[np.argsort(first[present])]
    else:  # a small one (an append): sorted arrays over its own terms
        present, at = np.unique(piece_terms, return_index=True)
        rank = np.argsort(at)
        order = present[rank]
    terms = list(map(table.terms.__getitem__, order.tolist()))  # first-seen order
    unseen = dict.fromkeys(filterfalse(vocab.__contains__, terms))  # a term may recur: once
    vocab.update(zip(unseen, range(len(vocab), len(vocab) + len(unseen))))
    ids = np.fromiter(map(vocab.__getitem__, terms), dtype=np.int64, count=len(terms))
    if dense:
        to_vocab = np.zeros(len(table.terms), dtype=np.int64)
        to_vocab[order] = ids
        return to_vocab[stream].astype(np.int32)
    by_number = np.empty(len(present), dtype=np.int64)
    by_number[rank] = ids
    return by_number[np.searchsorted(present, stream)].astype(np.int32)


def _term_lists(scan: _Scan, table: _Table) -> list[list[str]]:
    """Each text's terms, as lists of strings."""
    stream, occ_ptr, _ = _expand(scan, table)
    return _split_terms(stream, occ_ptr[scan.bounds], table)


def _split_terms(stream: np.ndarray, ptr: np.ndarray, table: _Table) -> list[list[str]]:
    flat = list(map(table.terms.__getitem__, stream.tolist()))
    b = ptr.tolist()
    return [flat[b[i] : b[i + 1]] for i in range(len(b) - 1)]


def _leads(scan: _Scan, occ_ptr: np.ndarray, table: _Table) -> np.ndarray:
    """Each text's lead length (terms before its lead mark), from the number of terms
    before each occurrence (``occ_ptr``)."""
    n = len(scan.bounds) - 1
    lead = np.empty(n, dtype=np.int64)
    rows = np.ones(n, dtype=bool)
    rows[list(scan.odd)] = False
    assert scan.marks is not None
    lead[rows] = occ_ptr[scan.marks] - occ_ptr[scan.bounds[:-1][rows]]
    for i, head in scan.odd.items():
        lead[i] = sum(len(table.pieces[p]) for p in head)
    return lead


def _clean_cut(text: str, cut: int) -> bool:
    """Whether no token can run across position ``cut`` of ``text`` (lower-cased or not) and
    lower-casing each side alone gives the whole lower-cased (no final-sigma context crosses
    it): it is the end, or a line break / space / ``!`` / ``?``, or a dot followed by a space
    or the end (where :func:`chronorank.index.core.lead_cut` ends a lead)."""
    if cut >= len(text):
        return True
    c = text[cut]
    if c.isspace() or c in "!?":
        return True
    return c == "." and (cut + 1 == len(text) or text[cut + 1].isspace())


#: Distinct pieces whose terms are remembered per (prefixes, stem) mode; past it the table
#: starts afresh (a piece's terms depend on the piece alone, so forgetting is harmless).
TOKEN_TABLE_MAX = 1 << 17
#: Characters that are never part of a token, stripped from a piece's ends before it is
#: looked at (a token starts and ends with a letter or digit, so its terms stay the same).
_EDGE = "._-+\u00ab\u00bb\u2013\u2014\u2018\u2019\u201c\u201d\u2026"


class _Table:
    """The analysed pieces of one (prefixes, stem) mode: ``pieces`` maps a piece (see
    :func:`_pieces`) to its terms' numbers, ``terms`` a number to its term (a term may have
    several numbers)."""

    __slots__ = ("pieces", "terms")

    def __init__(self) -> None:
        self.pieces: dict[bytes, tuple[int, ...]] = {}
        self.terms: list[str] = []


_tables: dict[tuple[bool, bool], _Table] = {}
_tables_lock = threading.Lock()


def _table(piece_lists: Iterable[Iterable[bytes]], prefixes: bool, stem: bool) -> _Table:
    """The table of a mode, holding every piece of ``piece_lists``. A piece's terms depend
    on the piece alone (its tokens, ``_token_terms``, then the stop-word filter and the
    stemmer word by word), so a batch's terms are its pieces' table entries chained: the
    Python work is done once per distinct piece, not once per token
    (benchmarks/term_speed.py)."""
    with _tables_lock:
        table = _tables.get((prefixes, stem))
        uniq = set(chain.from_iterable(piece_lists))
        missing = uniq if table is None else uniq.difference(table.pieces)
        if table is None or len(table.pieces) + len(missing) > TOKEN_TABLE_MAX:
            # a new table, not cleared: a concurrent reader keeps the complete one it holds
            table, missing = _Table(), uniq
            _tables[(prefixes, stem)] = table
        if missing:
            _fill(table, missing, prefixes, stem)
    return table


def _fill(table: _Table, pieces: Iterable[bytes], prefixes: bool, stem: bool) -> None:
    """Add each piece's terms to ``table``: a piece that is one plain word or number (once
    lower-cased, and stripped of the joiners and punctuation at its ends: ``"end."``) has
    that word's terms; any other goes through the token pattern, token by token."""
    plain: list[bytes] = []
    other: list[bytes] = []
    for piece in pieces:
        (plain if piece.isalnum() else other).append(piece)  # isalnum: ASCII letters and digits
    # plain pieces are lower-case ASCII words already: decoded in one call
    words = b" ".join(plain).decode("ascii").split()
    cores = [p.decode("utf-8", "surrogatepass").lower().strip(_EDGE) for p in other]
    single = [(p, c) for p, c in zip(other, cores) if c.isalnum()]
    multi = [(p, _TOKEN.findall(c)) for p, c in zip(other, cores) if not c.isalnum()]
    found = {tok for _, toks in multi for tok in toks}
    words.extend(c for _, c in single)
    words.extend(t for t in found if t.isalnum())
    word_term = _word_terms(words, stem)
    compound = _compound_terms([t for t in found if not t.isalnum()], prefixes, stem)
    # number the terms: each token's terms appended to the table's list (a term that recurs
    # under another number is one vocabulary entry: _vocab_ids goes by the strings)
    terms = table.terms
    base = len(terms)
    kept = [w for w, t in word_term.items() if t is not None]
    terms.extend([t for t in word_term.values() if t is not None])
    numbers: dict[str, tuple[int, ...]] = dict.fromkeys(word_term, ())
    numbers.update(zip(kept, zip(range(base, base + len(kept)))))  # zip(range): 1-tuples
    for tok, ts in compound.items():
        numbers[tok] = tuple(range(len(terms), len(terms) + len(ts)))
        terms.extend(ts)
    out = table.pieces
    out.update(zip(plain, map(numbers.__getitem__, words)))  # words begins with plain's words
    out.update((p, numbers[c]) for p, c in single)
    get_n = numbers.__getitem__
    out.update((p, tuple(chain.from_iterable(map(get_n, toks)))) for p, toks in multi)


def _word_terms(words: list[str], stem: bool) -> dict[str, str | None]:
    """The term of each plain word or number (``isalnum``): None for a stop word or a single
    letter, the stem of any other alphabetic word, a number or a word with digits as is.
    Each distinct word is stemmed once, by the stemmer without its cache (PyStemmer's cache
    costs more than it saves when no word repeats)."""
    uniq = list(dict.fromkeys(words))
    out: dict[str, str | None] = dict.fromkeys(uniq)
    out.update((w, w) for w in uniq if not w.isalpha())  # digits and mixed: always kept
    kept = [w for w in uniq if w.isalpha() and len(w) > 1 and w not in STOPWORDS]
    out.update(zip(kept, _batch_stemmer().stemWords(kept) if stem else kept))
    return out


def _compound_terms(tokens: list[str], prefixes: bool, stem: bool) -> dict[str, list[str]]:
    """The terms of compounds and versions (tokens with a joiner): ``_token_terms``, kept,
    alphabetic parts stemmed."""
    raw = []
    for tok in tokens:
        found: list[str] = []
        _token_terms(tok, prefixes, False, found)
        raw.append([t for t in found if t not in STOPWORDS and not (len(t) == 1 and t.isalpha())])
    if stem:
        words = list({w for terms in raw for w in terms if w.isalpha()})
        stems = dict(zip(words, _batch_stemmer().stemWords(words)))
        raw = [[stems.get(t, t) for t in terms] for terms in raw]
    return dict(zip(tokens, raw))


_batch_stem: Any = None


def _batch_stemmer() -> Any:
    """A stemmer without a cache, for the table (called under ``_tables_lock`` only: a
    PyStemmer instance must not be called concurrently)."""
    global _batch_stem
    if _batch_stem is None:
        mod = require("Stemmer", extra="index", package="PyStemmer")
        _batch_stem = mod.Stemmer("english", 0)
    return _batch_stem


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
