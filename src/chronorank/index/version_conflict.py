"""The version-conflict topic rule: a page whose title names only other versions than the
question's ranks below the pages that name the asked one or none, in its own topic tier.

"what changed in the API 2.0 release" is about 2.0: "Release notes for version 3.0." and
"API v1 rate limits." share its words ("release", "API") but not its version, and a page
naming no version ("Webhooks.") may still be about it. So, within the on-topic set and
within the rest (:func:`chronorank.temporal.topic_first`: a tier is never left), every page
whose *lead* (first sentence, :func:`chronorank.index.lead.lead_cut`) names versions, none
of them compatible with the question's, moves below the lowest page of its tier that is
compatible or names none, in its own order.

Versions are the language's ``version`` patterns (the ones the intent parser matches:
"v2", "2.0", "3.9.0", "version 3"), less quantities ("2.9 million", "99.9%", "7.0-magnitude",
"$3.99": the language file's ``quantity_words``, a percent or currency sign, a hyphenated
word) and dotted dates ("2024.01.05"). They compare normalised and prefix-aware: trailing
zeros do not count ("v2" == "2" == "2.0" == "2.0.0") and a version written with one part or
ending in ".x" names a line that holds the releases it begins ("2" and "API v2" hold "2.3",
"2.x" holds "2.4.1"); one written with more parts is a release ("2.0" holds neither "2.3" nor
"2.0.1", "click 3.0." is not "3.0.9"). Compatible with the question:

- a plain version ("in the API 2.0 release", "in the v1 API"): the same version;
- an anchor "after / since X": X or a later version ("after the 3.0 release": 3.0 and 4.0,
  not 2.0); "before / until X": X or an earlier one. X itself stays: its page is where the
  change the question is framed by is told (the 3.0 release notes, the v2 pages "before the
  v2 change" compares with).

Measured with benchmarks/time_semantics.py and benchmarks/cross_domain.py (the figures are
in :func:`chronorank.ranking.conflicts_last`'s docstring, the stage itself; this module finds
the pages it moves, over the index's snapshot or over candidates' texts: :func:`text_conflicts`).
"""

from __future__ import annotations

import dataclasses
import re
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from chronorank.index.lead import lead_cut
from chronorank.intent.lang import get_language
from chronorank.ranking import Conflicts, conflicts_last  # the stage itself (it lived here)
from chronorank.types import Intent

__all__ = [
    "READ_GROW", "READ_K", "READ_MIN", "AskedVersions", "LeadMemo", "LeadVersions", "TextRows", "asked_versions",
    "conflict_note", "conflicts", "conflicts_last", "find_versions", "lead_versions", "naming", "text_conflicts",
    "versions_of", "without_versions",
]

_EPOCH = re.compile(r"\d{1,2}:\d")
_NUMBER = re.compile(r"\d+(?:\.(?:\d+|x))*", re.IGNORECASE)
#: a version tag that may follow a hyphen ("3.0-rc1", "2.0-beta")
_TAGS = r"(?:rc|alpha|beta|dev|post|lts|pre|preview|a|b)\d{0,3}(?!\w)"
_PATTERNS: dict[str, tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str] | None]] = {}


@dataclasses.dataclass(frozen=True)
class AskedVersions:
    """The versions a question names and how it relates to them."""

    keys: tuple[tuple[tuple[int, ...], int], ...]  # :func:`_key` of each
    relation: str  # "same", "before", "below" (strictly before) or "after"
    text: str  # the versions as the question writes them, for explanations


def _patterns(lang: str) -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str] | None]:
    """(the language's version patterns as one regex, what may not follow a version, what
    may not precede one: a name whose number is part of it, ``numbered_names``)."""
    hit = _PATTERNS.get(lang)
    if hit is None:
        language = get_language(lang)
        alts = [src for src, kind in zip(language.sources, language.kinds) if kind == "version"]
        words = [str(w) for w in language.data.get("quantity_words") or []]
        version = re.compile("|".join(f"(?:{a})" for a in alts) or r"(?!x)x", re.IGNORECASE)
        after = r"\s*%|-(?!" + _TAGS + r")[^\W\d_]"
        if words:
            after += r"|\s{1,3}(?:" + "|".join(words) + r")(?!\w)"
        hit = _PATTERNS[lang] = (version, re.compile(after, re.IGNORECASE), language.numbered)
        if len(_PATTERNS) > 16:
            _PATTERNS.clear()
    return hit


def without_versions(text: str, lang: str = "en") -> str:
    """``text`` without what the language's version patterns match, and without the words
    they read as a version's prefix ("version 3.18" -> "", "pip 20.3" -> "pip")."""
    version = _patterns(lang)[0]
    return " ".join(w for w in version.sub(" ", text).split() if not version.fullmatch(f"{w} 1"))


def find_versions(text: str, lang: str = "en") -> list[str]:
    """The version numbers ``text`` names ("API v2 rate limits" -> ["2"]), in order."""
    version, after, named = _patterns(lang)
    out: list[str] = []
    for m in version.finditer(text):
        s, e = m.span()
        if s and text[s - 1] in "$€£¥₽":
            continue
        if after.match(text, e):
            continue
        if named is not None and named.search(text, max(0, s - 80), s):
            continue  # part of a name ("python 3.11", "python 3.7, 3.8 and 3.9"): its subject, not a version
        nums = _NUMBER.findall(m.group(0))
        if not nums:
            continue
        # a Debian epoch ("1:9.2p1-2") orders packagings, not releases: the version follows it
        num = nums[1] if len(nums) > 1 and _EPOCH.match(m.group(0)) else nums[0]
        parts = num.split(".")
        if len(parts) == 3 and any(len(p) == 4 and p[:2] in ("19", "20") for p in (parts[0], parts[2])):
            continue  # a dotted date ("2024.01.05", "01.10.2024"), not a version
        out.append(num)
    return out


def _key(num: str, line: bool = False) -> tuple[tuple[int, ...], int]:
    """(the parts without trailing zeros, the parts of the line it names or 0): a version
    written with one part or ending in ".x" names a line ("2" -> ((2,), 1), "2.4.x" ->
    ((2, 4), 2)); one with more parts a release ("2.0" -> ((2,), 0)), or a line when ``line``
    ("the newest 1.3" -> ((1, 3), 2))."""
    parts: list[int] = []
    for p in num.lower().split("."):
        if p == "x":
            line = True
            break
        parts.append(int(p))
    written = len(parts)
    line = line or written == 1
    while parts and parts[-1] == 0:
        parts.pop()
    return tuple(parts), written if line else 0


def _pad(a: tuple[int, ...], n: int) -> tuple[int, ...]:
    return a + (0,) * (n - len(a))


def _relation(q: tuple[tuple[int, ...], int], p: tuple[tuple[int, ...], int]) -> int:
    """-1 / 0 / 1: page version ``p`` before / the same as (or held by) / after ``q`` -- the
    definition that :func:`_compatible` evaluates over every distinct version at once."""
    (qa, qn), (pa, pn) = q, p
    n = max(len(qa), len(pa), qn, pn)
    if _pad(qa, n) == _pad(pa, n):
        return 0
    # a line holds the releases it begins ("2" holds "2.3", "2.x" holds "2.4.1")
    for line, other in ((q, p), (p, q)):
        if line[1] and _pad(other[0], line[1])[: line[1]] == _pad(line[0], line[1]):
            return 0
    return -1 if _pad(pa, n) < _pad(qa, n) else 1


def versions_of(text: str, relation: str = "same", lang: str = "en", lines: bool = False) -> AskedVersions | None:
    """The versions ``text`` names as an :class:`AskedVersions` with ``relation`` (each a line
    with ``lines``); None for none."""
    nums = find_versions(text, lang)
    if not nums:
        return None
    keys = tuple(dict.fromkeys(_key(n, lines) for n in nums))
    return AskedVersions(keys=keys, relation=relation, text=", ".join(dict.fromkeys(nums)))


def asked_versions(query: str, intent: Intent) -> AskedVersions | None:
    """The versions of a question: those of its anchor with the anchor's relation ("after the
    3.0 release" -> after 3.0), else every version it names ("in the API 2.0 release" -> 2.0;
    as lines when the question asks for the newest of them: "the newest sqlalchemy 1.3" holds
    1.3.24); None when it names none."""
    lang = intent.lang or "en"
    out = None if intent.anchor is None else versions_of(intent.anchor.text, intent.anchor.relation, lang)
    if out is not None:
        return out
    # not inside what the parser read as a time ("на 01.10.2024", "in Q3 2023")
    text = query
    for sp in intent.spans:
        if sp.kind != "version" and not sp.kind.endswith("_anchor") and query[sp.start:sp.end] == sp.text:
            text = text[:sp.start] + " " * (sp.end - sp.start) + text[sp.end:]
    return versions_of(text, "same", lang, lines=intent.mode == "recent")


@dataclasses.dataclass(frozen=True)
class LeadVersions:
    """Every document's lead versions, as the distinct versions of the corpus and, per mention,
    its document (``owner``) and which distinct version it is (``which``)."""

    named: np.ndarray  # per document: its lead names a version
    owner: np.ndarray  # per mention: the document's row
    which: np.ndarray  # per mention: the distinct version's row in ``parts``
    parts: np.ndarray  # per distinct version: its parts without trailing zeros, zero-padded
    lines: np.ndarray  # per distinct version: the parts of the line it names, or 0 (:func:`_key`)
    codes: np.ndarray | None = None  # per distinct version: its parts packed (_compatible_packed)


class LeadMemo:
    """The lead versions of the rows read so far, for one language. A snapshot shares it with
    the snapshots appended to it (old rows keep their numbers), so a search after ``add()``
    reads only the new documents' leads, and a search reads only the candidates it needs
    (:func:`conflicts`): the regex work (~5-20 us a lead) is paid once per document, when a
    version question first needs it or when the index is saved, and a load restores it
    (:meth:`from_arrays`)."""

    def __init__(self) -> None:
        self.done = np.zeros(0, dtype=bool)
        self.owner: list[int] = []
        self.which: list[int] = []
        self.seen: dict[tuple[tuple[int, ...], int], int] = {}
        self.lock = threading.Lock()
        self.arrays: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None
        self.codes: np.ndarray | None = None  # _pack(parts) of ``arrays``, when it fits
        # (n,) -> LeadVersions and (n, keys, relation) -> (named, compatible) of this state
        self.cache: dict[Any, Any] = {}
        self.packed = False  # owner, which and seen still only in ``arrays`` (from_arrays)

    def _unpack(self) -> None:
        """owner, which and seen from ``arrays`` (a loaded memo fills them when it grows)."""
        if self.packed and self.arrays is not None:
            own, which, parts, lines = self.arrays
            self.owner = own.tolist()
            self.which = which.tolist()
            self.seen = {(_strip(row), int(line)): i for i, (row, line) in enumerate(zip(parts.tolist(), lines.tolist()))}
        self.packed = False

    def read(self, snap: Any, rows: np.ndarray, lang: str) -> None:
        """Read the leads of ``rows`` not read yet."""
        with self.lock:
            if self.done.size < len(snap):
                self.done = np.concatenate([self.done, np.zeros(len(snap) - self.done.size, dtype=bool)])
            need = rows[~self.done[rows]]
            if not need.size:
                return
            self._unpack()
            texts = getattr(snap.records, "texts", None)  # the columnar Records: no dict per row
            for r in np.unique(need).tolist():  # regex work: once per document
                text = snap.records[r]["text"] if texts is None else texts[r]
                for name in dict.fromkeys(find_versions(text[: lead_cut(text)], lang)):
                    self.owner.append(r)
                    self.which.append(self.seen.setdefault(_key(name), len(self.seen)))
            self.done[need] = True
            self.arrays = self.codes = None
            self.cache = {}

    def lead_versions(self, n: int) -> LeadVersions:
        """The rows read so far, as :class:`LeadVersions` over the first ``n`` rows (a row not
        read counts as naming none)."""
        with self.lock:
            hit = self.cache.get((n,))
            if hit is not None:
                return hit  # type: ignore[no-any-return]
            if self.arrays is None:
                width = max([1, *(max(len(k[0]), k[1]) for k in self.seen)])
                parts = np.array([_pad(k[0], width) for k in self.seen], dtype=np.int64).reshape(len(self.seen), width)
                lines = np.array([k[1] for k in self.seen], dtype=np.int64)
                self.arrays = (np.asarray(self.owner, dtype=np.int64), np.asarray(self.which, dtype=np.int64), parts, lines)
                self.codes = None
            arrays = self.arrays
            own, which, parts, lines = arrays
            if self.codes is None and _fits(parts, parts.shape[1]):
                self.codes = _pack(parts)
            codes = self.codes
        mine = own < n  # a longer snapshot appended to this one may have read more rows
        own, which = own[mine], which[mine]
        named = np.zeros(n, dtype=bool)
        named[own] = True
        out = LeadVersions(named, own, which, parts, lines, codes)
        with self.lock:
            if self.arrays is arrays:  # no lead read meanwhile (read() empties the cache)
                if len(self.cache) > 64:
                    self.cache = {}
                self.cache[(n,)] = out
        return out

    def compacted(self, keep: np.ndarray) -> LeadMemo:
        """This memo for the rows ``keep`` leaves (a replacement or a deletion renumbers them)."""
        out = LeadMemo()
        with self.lock:
            self._unpack()
            done = np.zeros(keep.shape[0], dtype=bool)
            done[: min(self.done.size, keep.shape[0])] = self.done[: keep.shape[0]]
            own = np.asarray(self.owner, dtype=np.int64)
            which = np.asarray(self.which, dtype=np.int64)
            seen = dict(self.seen)
        new_row = np.cumsum(keep) - 1
        mine = own < keep.shape[0]
        own, which = own[mine], which[mine]
        stay = keep[own]
        out.done = done[keep]
        out.owner = new_row[own[stay]].tolist()
        out.which = which[stay].tolist()
        out.seen = seen
        return out

    @classmethod
    def from_arrays(
        cls, n: int, owner: np.ndarray, which: np.ndarray, parts: np.ndarray, lines: np.ndarray,
    ) -> LeadMemo:
        """The memo of ``n`` rows, every lead read, from :meth:`arrays_of` (a saved index)."""
        out = cls()
        out.done = np.ones(n, dtype=bool)
        out.packed = True  # the lists are built when the memo grows (not at every load)
        out.arrays = (np.array(owner, dtype=np.int64), np.array(which, dtype=np.int64),
                      np.array(parts, dtype=np.int64), np.array(lines, dtype=np.int64))
        if _fits(out.arrays[2], out.arrays[2].shape[1]):
            out.codes = _pack(out.arrays[2])
        out.lead_versions(n)  # built at the load, not by the first version question
        return out

    def arrays_of(self, snap: Any, lang: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(owner, which, parts, lines) with every lead of ``snap`` read, for saving."""
        n = len(snap)
        self.read(snap, np.arange(n), lang)
        lv = self.lead_versions(n)
        return lv.owner, lv.which, lv.parts, lv.lines


def _strip(parts: list[int]) -> tuple[int, ...]:
    while parts and parts[-1] == 0:
        parts = parts[:-1]
    return tuple(parts)


def fingerprint(lang: str) -> str:
    """What a saved index's lead versions were read with: the language's version patterns
    (another chronorank that reads versions differently reads the leads again)."""
    import hashlib

    version, after, named = _patterns(lang)
    also = "" if named is None else named.pattern
    return hashlib.sha256(f"{version.pattern}\x00{after.pattern}\x00{_NUMBER.pattern}\x00{_EPOCH.pattern}\x00{also}".encode()).hexdigest()[:16]


def lead_versions(snap: Any, lang: str, rows: np.ndarray | None = None) -> LeadVersions:
    """The lead versions of ``rows`` (None = every document), read once per document and
    language (:class:`LeadMemo`); rows outside ``rows`` that no search has read yet count as
    naming none."""
    memo = snap.lead_memo.get(lang)
    if memo is None:
        memo = snap.lead_memo.setdefault(lang, LeadMemo())
    n = len(snap)
    memo.read(snap, np.arange(n) if rows is None else np.asarray(rows, dtype=np.int64), lang)
    return memo.lead_versions(n)


def _compatible(asked: AskedVersions, lv: LeadVersions) -> np.ndarray:
    """Per distinct page version: compatible with the question (see the module docstring);
    :func:`_relation` over every distinct version at once."""
    width = max([lv.parts.shape[1], *(max(len(q[0]), q[1]) for q in asked.keys)])
    parts = np.pad(lv.parts, ((0, 0), (0, width - lv.parts.shape[1])))
    if all(max(q[0], default=0) < (1 << _BITS) for q in asked.keys):
        if lv.codes is not None and width == lv.parts.shape[1]:  # packed once per index state
            return _compatible_packed(asked, lv.codes, lv.lines, width)
        if _fits(parts, width):
            return _compatible_packed(asked, _pack(parts), lv.lines, width)
    cols = np.arange(width)
    out = np.zeros(parts.shape[0], dtype=bool)
    for qa, qline in asked.keys:
        q = np.array(_pad(qa, width), dtype=np.int64)
        same = parts == q
        held = same.all(axis=1)
        if qline:  # the question names a line: it holds the releases it begins
            held |= same[:, :qline].all(axis=1)
        held |= (lv.lines > 0) & (same | (cols[None, :] >= lv.lines[:, None])).all(axis=1)
        first = np.argmax(~same, axis=1)  # the first differing part (0 where none differs: held)
        later = parts[np.arange(parts.shape[0]), first] > q[first]
        out |= _fit(asked.relation, held, later)
    return out


#: bits a version part takes in :func:`_compatible_packed` (the patterns read at most 4 digits)
_BITS = 14


def _fits(parts: np.ndarray, width: int) -> bool:
    return width * _BITS <= 62 and int(parts.max(initial=0)) < (1 << _BITS)


def _pack(parts: np.ndarray) -> np.ndarray:
    shifts = (_BITS * np.arange(parts.shape[1] - 1, -1, -1)).astype(np.int64)
    return (parts.astype(np.int64) << shifts).sum(axis=1)


def _fit(relation: str, held: np.ndarray, later: np.ndarray) -> np.ndarray:
    """Compatible with the question's relation: "below" is strictly before (the version itself
    not), for a "before X" whose day holds earlier releases than X (``index.core``)."""
    if relation == "below":
        return ~held & ~later
    return held | (later if relation == "after" else ~later if relation == "before" else False)


def _compatible_packed(asked: AskedVersions, code: np.ndarray, lines: np.ndarray, width: int) -> np.ndarray:
    """:func:`_compatible` with each version packed into one int64, its parts big-endian
    ``_BITS`` bits each: equal parts are equal codes, an equal prefix of ``j`` parts is an
    equal code shifted right by the other parts' bits, and the lexicographic order of the
    parts is the order of the codes (one 1-D pass per question version instead of several
    over every part; 64,000 distinct versions: ~5 ms -> well under 1 ms)."""
    shifts = (_BITS * np.arange(width - 1, -1, -1)).astype(np.int64)
    line_shift = _BITS * (width - np.where(lines > 0, lines, width)).astype(np.int64)
    out = np.zeros(code.shape[0], dtype=bool)
    for qa, qline in asked.keys:
        q = int((np.array(_pad(qa, width), dtype=np.int64) << shifts).sum())
        held = code == q
        if qline:  # the question names a line: it holds the releases it begins
            s = _BITS * (width - qline)
            held |= (code >> s) == (q >> s)
        held |= (lines > 0) & ((code >> line_shift) == (q >> line_shift))
        later = code > q
        out |= _fit(asked.relation, held, later)
    return out


#: a version question reads the leads of its on-topic set and of its best ``max(READ_K x k,
#: READ_MIN)`` candidates first, then READ_GROW times more at a time until its top k is
#: settled (:func:`conflicts`)
READ_K, READ_MIN, READ_GROW = 4, 1024, 4


def conflicts(
    snap: Any, rows: np.ndarray | None, asked: AskedVersions, lang: str,
    score: np.ndarray | None = None, live: np.ndarray | None = None, k: int | None = None,
    also: np.ndarray | None = None, tier: np.ndarray | None = None,
) -> np.ndarray:
    """Per candidate (``rows`` of the index, None = every document): its lead names versions
    and none of them is compatible with the question's.

    Given the candidates' ``score`` (tier order applied: every on-topic candidate, ``tier``,
    above the rest), ``live`` and the search's ``k``, the leads are read best candidates
    first (the on-topic set and ``also`` always), only as deep as the top k needs.
    :func:`conflicts_last` puts, within a tier that has a compatible candidate, the compatible
    ones first and the conflicting ones after them, each in score order. So a tier read whole
    is exact, and in a tier read in part its best candidates are settled once enough
    compatible ones score strictly above every unread one. Unread candidates read as
    compatible: below the k-th hit the order may differ from reading every lead, the top k
    never does. Each lead is read once per index (:class:`LeadMemo`, kept across appends),
    ~5-20 us a lead; a corpus where almost every lead names another version than the asked
    one (a changelog) is read whole by its first version question."""
    m = len(snap) if rows is None else int(np.asarray(rows).shape[0])
    want = None if k is None else max(READ_K * int(k), READ_MIN)
    memo = snap.lead_memo.get(lang)
    read_all = memo is not None and memo.done.size >= len(snap) and bool(memo.done[: len(snap)].all())
    if score is None or live is None or want is None or m <= want or read_all:
        named, ok = _lead_compatible(snap, asked, lang, rows)
        bad = named & ~ok
        return bad if rows is None else bad[rows]
    tiers = [np.ones(m, dtype=bool)] if tier is None else [tier, ~tier]
    always = [np.flatnonzero(x) for x in (tier, also) if x is not None]
    while True:
        full = want >= m
        read = np.arange(m) if full else np.argpartition(-score, want - 1)[:want]
        if always and not full:
            # sorted and distinct, as np.unique of them (a mask: no sort, no numpy.ma import)
            take = np.zeros(m, dtype=bool)
            for x in (read, *always):
                take[x] = True
            read = np.flatnonzero(take)
        doc = read if rows is None else np.asarray(rows)[read]
        named, ok = _lead_compatible(snap, asked, lang, doc)
        bad = np.zeros(m, dtype=bool)
        bad[read] = named[doc] & ~ok[doc]
        if full or _settled(score, live, bad, read, tiers, int(k)):  # type: ignore[arg-type]
            return bad
        want *= READ_GROW


def _settled(
    score: np.ndarray, live: np.ndarray, bad: np.ndarray, read: np.ndarray, tiers: list[np.ndarray], k: int,
) -> bool:
    """Whether the top ``k`` after :func:`conflicts_last` is known from the ``read`` rows."""
    unread = np.ones(score.shape[0], dtype=bool)
    unread[read] = False
    need = k
    for t in tiers:
        mine = live & t
        left = mine & unread
        if not left.any():  # read whole: exact
            need -= int(np.count_nonzero(mine))
            if need <= 0:
                return True
            continue
        top_left = float(np.max(score, where=left, initial=-np.inf))
        return int(np.count_nonzero(mine & ~unread & ~bad & (score > top_left))) >= need
    return True


def naming(snap: Any, asked: AskedVersions, lang: str, rows: np.ndarray | None = None) -> np.ndarray:
    """Per document: its lead names a version compatible with ``asked`` (read for ``rows``
    only, None = every document; the others read as False unless read before)."""
    return _lead_compatible(snap, asked, lang, rows)[1]


def _lead_compatible(
    snap: Any, asked: AskedVersions, lang: str, rows: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Per document: (its lead names a version, one of them is compatible with ``asked``),
    exact for ``rows`` (None = every document)."""
    lv = lead_versions(snap, lang, rows)
    memo = snap.lead_memo[lang]
    key = (lv.named.shape[0], asked.keys, asked.relation)
    hit = memo.cache.get(key)  # the same question again, or its search's second pool
    if hit is not None and hit[0] is lv.named:
        return hit  # type: ignore[no-any-return]
    ok_doc = np.zeros(lv.named.shape[0], dtype=bool)
    if lv.which.size:
        ok_doc[lv.owner[_compatible(asked, lv)[lv.which]]] = True
    with memo.lock:
        memo.cache[key] = (lv.named, ok_doc)
    return lv.named, ok_doc


class _TextRecords:
    """Texts read as the records :class:`LeadMemo` reads (``texts``, ``[i]["text"]``)."""

    def __init__(self, texts: list[str]) -> None:
        self.texts = texts

    def __getitem__(self, i: int) -> dict[str, str]:
        return {"text": self.texts[i]}


class TextRows:
    """Candidates' texts as the rows :func:`conflicts` reads (the reranker's and the stores'
    candidates: no snapshot, each lead read once for this set)."""

    def __init__(self, texts: Sequence[str]) -> None:
        self.records = _TextRecords([str(x or "") for x in texts])
        self.lead_memo: dict[str, LeadMemo] = {}

    def __len__(self) -> int:
        return len(self.records.texts)


def text_conflicts(query: str, intent: Intent, texts: Sequence[str] | None) -> Conflicts | None:
    """The version-conflict question of ``query`` over candidates' ``texts``, for
    :func:`chronorank.ranking.rank` (``conflicts=``); None when the question names no version
    or there are no texts. Every lead is read (a candidate set is small), only when the stage runs."""
    if texts is None:
        return None
    asked = asked_versions(query, intent)
    if asked is None:
        return None
    rows, lang = TextRows(texts), intent.lang or "en"

    def bad(score: np.ndarray, live: np.ndarray, also: np.ndarray | None, tier: np.ndarray) -> np.ndarray:
        return conflicts(rows, None, asked, lang)

    return bad



def conflict_note(text: str, asked: AskedVersions, lang: str) -> str:
    """The explanation note of a demoted page: "names only version 3.0; the question asks
    about 2.0" ("... asks about after 3.0" for an anchor)."""
    names = list(dict.fromkeys(find_versions(text[: lead_cut(text)], lang)))
    which = "version" if len(names) == 1 else "versions"
    asks = asked.text if asked.relation == "same" else f"{asked.relation} {asked.text}"
    return f"names only {which} {', '.join(names)}; the question asks about {asks}: ranked below the pages that name it or none"


def version_event(snap: Any, anchor_text: str, lang: str, start: np.ndarray, when: float) -> int:
    """The row of the page announcing the version an anchor names, or -1: a dated page whose
    lead names that version (normalised: "the v2 change" -> "API 2.0 release.") and one of
    the language's event nouns (``anchor_events``: release, launch, migration ...), published
    on the day the anchor was dated (``when``, epoch s); the earliest such page, then the
    lowest row. Its title says it *is* the change the question is framed by, even when it
    shares no word with the anchor ("v2" and "change" are not in "API 2.0 release.")."""
    asked = versions_of(anchor_text, "same", lang)
    if asked is None:
        return -1
    events = get_language(lang).data.get("anchor_events") or []
    if not events:
        return -1
    day = np.floor(when / 86400.0)
    with np.errstate(invalid="ignore"):
        that_day = np.flatnonzero(np.floor(start / 86400.0) == day)  # NaN == day is False
    rows = that_day[naming(snap, asked, lang, that_day)[that_day]]
    if not rows.size:
        return -1
    noun = re.compile(r"(?<!\w)(?:" + "|".join(events) + r")(?!\w)", re.IGNORECASE)
    hits = [int(r) for r in rows.tolist() if noun.search(snap.records[int(r)]["text"], 0, lead_cut(snap.records[int(r)]["text"]))]
    if not hits:
        return -1
    return min(hits, key=lambda r: (float(start[r]), r))
