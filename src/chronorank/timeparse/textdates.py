"""Dates a document states about itself: read from a date-named metadata field, its text
or its address, for documents that have no date field (:func:`infer_dates`).

One function serves the index's ``add()``, the reranker (candidates without a date) and the
stores' ingest. It is a few regex passes over the whole batch joined into one string (the
matches are sparse; only they are looked at in Python), then one numpy reduction over the
batch picks each document's date.

Precision first: a date is read only from a date-shaped expression the document states as
its own date.

* A cue word right before a date (``Effective date:``, ``Last updated``, ``Published on``,
  ``Опубликовано``, ``Дата вступления в силу`` ...) with a month name, a day and a four-digit
  year (``May 25, 2018``, ``25 May 2018``, ``3 марта 2024 г.``), an ISO date (``2018-05-25``),
  a numeric date (``25.05.2018`` day-first, ``05/25/2018`` month-first unless the first part
  is over 12) or a month and year (``May 2018``: the month). "Head" cue words (``dated``,
  ``date``, ``issued``, ``от``) count only in the first 200 characters: further down they
  name another document ("the letter dated ...", "письмо от ..."). Another cue word counts
  as a label (capitalised: "Last updated:", "Effective"), opening its line or sentence
  (after one word at most: "Originally published"), or in a sentence about the document
  itself ("This story was originally published on", "Настоящая политика вступает в силу");
  a lowercase cue inside another sentence is another thing's date ("a photo posted April 2,
  2020, to ...", "an article published April 16, 2005, in ...").
* A dated heading or dateline in the first 200 characters: a full date on a line of its own
  (``## 2021-04-05``, ``Tuesday, May 5, 2026``) or after a short place or name
  (``WASHINGTON, Jan. 6, 2021 --``, ``Jerry Mitchell | December 30, 2016``).
* A sign-off or header line stating an RFC 2822 date with its time and offset: a Debian-style
  changelog trailer (`` -- Name <mail>  Thu, 03 Mar 2022 12:00:00 +0100``) or an e-mail
  ``Date:`` header line, anywhere in the text; the offset is applied (precision: the second).
  Only the whole line counts: the same date in running text dates nothing.
* A date-named metadata field (``published``, ``created_at``, ``last_modified`` ...).
* The address or file path (``url``, ``source``, ``path``, ``file_path`` ... of the metadata):
  ``/2023/05/12/``, ``2023-05-12``, ``2023-05``, ``2023-q2`` (the quarter), or a year as a whole
  directory segment (``/2023/``, the year).
* A date stated in running text, with low confidence ("stated"): a full date the text calls
  now ("today is Wednesday, November 29th, 2023", "this morning, ...", "Сегодня, 3 марта
  2024 года") or names with its weekday ("on Sunday, September 25, 2022", "в среду, 6 марта
  2024 года"), the weekday checked against the calendar (a wrong one dates nothing; full
  weekday names only: "sun", "wed" are words too), not in a sentence about a later event
  ("will", "scheduled", "состоится"). Writers give a date its weekday, or call it today, when
  it is near the time of writing. Any stronger evidence wins over it.

Never: any other date mentioned in running text (in news articles, the full dates in running
text are other events' three times out of four, and only a quarter of the articles that state
a full date state one within 7 days of their own: ``benchmarks/date_inference.py``), a bare
year in the text (``© 2023``, "in 2019"), nor a number that is not date-shaped: versions
(``2.10.2020`` without a cue, ``v2019.05.12``), prices, quantities, phone numbers, "2.9
million", "99.9%". The words (months, weekdays with their ISO numbers, cue words, "now"
words, future words, self-references) are language data in ``timeparse/lang/<code>.json``
(English and Russian), every file's words used at once; ``_common.json`` names the metadata
fields.

Bounded work: a text longer than ``2 x READ_CHARS`` characters is read at its head and its
tail only (``READ_CHARS`` each, the tail from its first whole line): where a document states
its own date (a heading, a cue near the top, a sign-off at the end), so a huge document costs
what a page does.

Which date when a document states several: the kind with the highest confidence, then the
latest date of that kind (a page updated twice says so twice). The confidences are ranks, not
calibrated probabilities: a date-named field 1.0, a sign-off line 0.95 (above a cue word, so
that a ``Date:`` header's exact time beats the day its head cue "date" reads), a cue word 0.9,
a full date in the address 0.8, a dated heading 0.7, a month or quarter in the address 0.6, a
date stated in running text 0.4, a year segment 0.3. The ranking takes an inferred date as it
takes a given one; the explanation names a "stated" date's source and says it is of low
confidence (:func:`date_note`).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np

from chronorank.timeparse.batch import parse_times
from chronorank.timeparse.civil import ts

__all__ = ["CONFIDENCE", "INFERRED_KEY", "InferredDates", "date_note", "infer_date", "infer_dates"]

#: The metadata key the index and the stores keep an inferred date under (reserved: a
#: document's own value is replaced).
INFERRED_KEY = "date_inferred"

#: Confidence of each kind of evidence (ranks: the highest kind found dates the document).
CONFIDENCE = {"field": 1.0, "signoff": 0.95, "cue": 0.9, "url_day": 0.8, "heading": 0.7, "url_month": 0.6,
              "stated": 0.4, "url_year": 0.3}
HEAD_CHARS = 200  # a full date starting this close to the top is a dateline
_CONTEXT = 60  # characters before a date searched for a cue word
_SNIPPET = 80
_LANG_DIR = Path(__file__).parent / "lang"
_YEAR = r"(?:19|20)\d{2}"
_END = r"(?!\d|[.,]\d)"  # not followed by more digits: "2018.5", "2018,5" are not a year


_SP = r"[ \t\u00a0]{1,3}"  # spaces within a date: never a line break ("Oct. 27\n\n1985 -- ...")

# RFC 2822 dates are English by the standard, whatever the language of the text around them
_RFC_MONTHS = {m: i for i, m in enumerate(
    ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"), start=1)}
_RFC_DATE = re.compile(
    r"(?<![\w.:])(?P<day>[0-3]?\d)[ \t]+(?P<mon>jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[ \t]+"
    rf"(?P<year>{_YEAR})[ \t]+(?P<h>[0-2]\d):(?P<mi>[0-5]\d)(?::(?P<s>[0-5]\d|60))?[ \t]+"
    r"(?P<tz>[+-]\d{4}|UTC|UT|GMT|Z)(?![\w:])",
    re.IGNORECASE,
)
# what may stand before the date on its line: a Debian trailer's " -- Name <mail>" or "Date:",
# then an optional weekday; after it only an optional "(CET)" comment
_RFC_LEAD = re.compile(
    r"(?:[ \t]*--[ \t]+[^\n<>]*<[^\s<>]+>[ \t]+|Date:[ \t]*)(?:(?:mon|tue|wed|thu|fri|sat|sun),[ \t]*)?",
    re.IGNORECASE,
)
_RFC_TAIL = re.compile(r"[ \t]*(?:\([\w \t+\-]{1,40}\)[ \t]*)?\r?")


def _alt(words: Sequence[str]) -> str:
    items = sorted({" ".join(w.lower().split()) for w in words if w}, key=lambda w: (-len(w), w))
    return "(?:" + "|".join(re.escape(w).replace(r"\ ", _SP) for w in items) + ")"


@dataclass(frozen=True)
class _Grammar:
    months: dict[str, int]
    full: tuple[re.Pattern[str], ...]  # (mdy, dmy, iso): a date anywhere
    cued: re.Pattern[str]  # a cue word and a weak date (numeric, month + year)
    cue_tail: re.Pattern[str]  # a cue word right before a full date
    head_cues: frozenset[str]  # cue words that count only near the top ("от", "dated")
    self_ref: re.Pattern[str]  # "this story", "настоящий" ...: a sentence about the document itself
    stated_tail: re.Pattern[str]  # a "now" word and/or a weekday right before a full date
    weekdays: dict[str, int]  # name -> ISO weekday (1 = Monday)
    future: re.Pattern[str]  # "will", "scheduled", "состоится": a sentence about a later event
    urls: tuple[tuple[str, re.Pattern[str]], ...]
    date_fields: tuple[str, ...]
    url_fields: tuple[str, ...]


def _load() -> _Grammar:
    langs = [json.loads(p.read_text(encoding="utf-8")) for p in sorted(_LANG_DIR.glob("*.json"))
             if not p.name.startswith("_")]
    common = json.loads((_LANG_DIR / "_common.json").read_text(encoding="utf-8"))
    months: dict[str, int] = {}
    cues: list[str] = []
    head_cues: list[str] = []
    weekdays: dict[str, int] = {}
    self_refs: list[str] = []
    now_words: list[str] = []
    future_words: list[str] = []
    articles: list[str] = []
    suffixes: list[str] = []
    day_of: list[str] = []
    year_suffix: list[str] = []
    for lang in langs:
        months.update({str(k).lower(): int(v) for k, v in lang.get("months", {}).items()})
        cues += lang.get("cues", [])
        head_cues += lang.get("head_cues", [])
        weekdays.update({str(k).lower(): int(v) for k, v in lang.get("weekdays", {}).items()})
        if lang.get("self_refs"):  # "this ... policy" where nouns are listed, else the word alone
            nouns = lang.get("self_nouns")
            noun = rf"(?:{_SP}[^\W\d]+){{0,2}}{_SP}{_alt(nouns)}s?" if nouns else ""
            self_refs.append(_alt(lang["self_refs"]) + noun)
        now_words += lang.get("now_words", [])
        future_words += lang.get("future_words", [])
        if lang.get("day_article"):
            articles.append(lang["day_article"])
        for key, into in (("day_suffix", suffixes), ("day_of", day_of), ("year_suffix", year_suffix)):
            if lang.get(key):
                into.append(lang[key])
    mon = rf"(?P<mon>{_alt(list(months))})\.?"
    sfx = f"(?:{'|'.join(suffixes)})?" if suffixes else ""
    of = rf"(?:{_SP}(?:{'|'.join(day_of)}))?" if day_of else ""
    ys = f"(?:{'|'.join(year_suffix)})?" if year_suffix else ""
    day = rf"(?P<day>[0-3]?\d){sfx}"
    year = rf"(?P<year>{_YEAR}){ys}{_END}"
    flags = re.IGNORECASE
    mdy = re.compile(rf"(?<!\w){mon}{_SP}{day},?{_SP}{year}", flags)
    dmy = re.compile(rf"(?<![\w.,$€£₽]){day}{of}(?:{_SP}|-){mon},?(?:{_SP}|-){year}", flags)
    iso = re.compile(
        rf"(?<![\w.\-/+])(?P<year>{_YEAR})(?P<sep>[-/])(?P<mon>[01]\d)(?P=sep)"
        r"(?P<day>[0-3]\d)(?!\d|[.\-/]\d)"
    )
    wd = rf"(?:{_alt(list(weekdays))}\.?,?{_SP})?"
    gap = r"[ \t]{0,3}[:\-–—]?[ \t]{0,3}\n?[ \t]{0,3}"  # "Last updated:\nMarch 3, 2024" too
    lead = rf"(?<!\w)(?P<cue>{_alt(cues + head_cues)}){gap}(?:(?:on|from|с){_SP})?{wd}"
    cued = re.compile(
        lead + rf"(?:(?P<a>[0-3]?\d)(?P<sep>[./])(?P<b>[0-3]?\d)(?P=sep)(?P<nyear>{_YEAR}){ys}{_END}"
        rf"|{mon},?{_SP}(?P<myear>{_YEAR}){ys}{_END})",
        flags,
    )
    cue_tail = re.compile(lead + r"(?:\([ \t]?)?$", flags)
    # "today is Wednesday, November 29th, 2023", "on Sunday, September 25, 2022", "сегодня, 3 марта"
    now = rf"(?P<now>{_alt(now_words)})[ \t]{{0,3}}[,:\u2014\u2013-]?[ \t]{{0,3}}" if now_words else "(?!)"
    # full weekday names only: "sun", "sat", "wed", "mon" are words too
    article = f"(?:(?:{'|'.join(articles)}){_SP})?" if articles else ""
    named = rf"(?P<wd>{_alt([w for w in weekdays if len(w) > 3])}),?{_SP}{article}"
    stated_tail = re.compile(rf"(?<!\w)(?:{now})?(?:{named})?$", flags)
    # lowercase only: "Will Smith" is no future tense
    future = re.compile(rf"(?<!\w){_alt(future_words)}(?!\w)" if future_words else "(?!)")
    self_ref = re.compile(rf"(?<!\w)(?:{'|'.join(self_refs)})(?!\w)" if self_refs else "(?!)", flags)
    urls = (
        ("url_day", re.compile(rf"(?<!\d)(?P<year>{_YEAR})(?P<sep>[/_\-])(?P<mon>[01]\d)(?P=sep)(?P<day>[0-3]\d)(?!\d)")),
        ("url_month", re.compile(rf"(?<![\d.])(?P<year>{_YEAR})[/_\-](?P<mon>0[1-9]|1[0-2])(?=[/_\-.#?]|$)(?![/_\-]\d)")),
        ("url_month", re.compile(
            rf"(?<![a-z0-9])(?:(?P<year>{_YEAR})[_\-]?q(?P<q>[1-4])|q(?P<q2>[1-4])[_\-]?(?P<year2>{_YEAR}))(?![a-z0-9])",
            flags)),
        ("url_year", re.compile(rf"/(?P<year>{_YEAR})/(?!\d)")),  # not a malformed finer date
    )
    return _Grammar(months, (mdy, dmy, iso), cued, cue_tail, frozenset(" ".join(c.lower().split()) for c in head_cues),
                    self_ref, stated_tail, {" ".join(w.split()): n for w, n in weekdays.items()}, future, urls, tuple(common.get("date_fields", ())), tuple(common.get("url_fields", ())))


_grammar: _Grammar | None = None


def _get() -> _Grammar:
    global _grammar
    if _grammar is None:
        _grammar = _load()
    return _grammar


@dataclass(frozen=True)
class InferredDates:
    """Per document: ``time`` (epoch s, NaN = none found), ``kind`` (a key of
    :data:`CONFIDENCE`, "" = none), ``confidence`` (0 = none), ``snippet`` (the words the date
    was read from) and ``precision`` ("second", "day", "month", "quarter", "year")."""

    time: np.ndarray
    kind: list[str]
    confidence: np.ndarray
    snippet: list[str]
    precision: list[str]

    def __len__(self) -> int:
        return int(self.time.shape[0])

    def source(self, i: int) -> str:
        """Where document i's date came from: "field", "text", "url" or "" (none)."""
        k = self.kind[i]
        return "" if not k else "field" if k == "field" else "url" if k.startswith("url") else "text"

    def record(self, i: int) -> dict[str, Any] | None:
        """Document i's inferred date as a JSON-able dict (what the index keeps in the
        metadata as ``date_inferred``), or None."""
        t = float(self.time[i])
        if math.isnan(t):
            return None
        return {
            "date": datetime.fromtimestamp(t, tz=timezone.utc).strftime("%Y-%m-%d"),
            "source": self.source(i), "kind": self.kind[i], "confidence": float(self.confidence[i]),
            "precision": self.precision[i], "snippet": self.snippet[i],
        }

    def counts(self) -> dict[str, int]:
        """How many documents were dated, by source: ``{"field": .., "text": .., "url": ..}``."""
        out = {"field": 0, "text": 0, "url": 0}
        for i in np.flatnonzero(~np.isnan(self.time)).tolist():
            out[self.source(i)] += 1
        return out


def date_note(info: Mapping[str, Any] | None) -> str:
    """The explanation of an inferred date: ``dated 2018-05-25 from 'Effective date: May 25, 2018'``
    (a date stated in running text says so: ``... in the running text (low confidence)``)."""
    if not info:
        return ""
    src = info.get("source")
    where = "the address " if src == "url" else "the field " if src == "field" else ""
    note = f"dated {info.get('date')} from {where}{info.get('snippet', '')!r}"
    return note + " in the running text (low confidence)" if info.get("kind") == "stated" else note


def infer_date(text: str, metadata: Mapping[str, Any] | None = None) -> dict[str, Any] | None:
    """One document's inferred date as :meth:`InferredDates.record` gives it, or None."""
    return infer_dates([text], [metadata]).record(0)


def infer_dates(
    texts: Sequence[str | None], metadata: Sequence[Mapping[str, Any] | None] | None = None,
) -> InferredDates:
    """Infer a date for each document from its metadata's date-named fields, its text and its
    address (the module docstring gives the rules). ``metadata[i]`` is document i's metadata
    (or None); its ``url`` / ``source`` / ``file_path`` ... is the address read."""
    g = _get()
    n = len(texts)
    metas: Sequence[Mapping[str, Any] | None] = metadata if metadata is not None else [None] * n
    if len(metas) != n:
        raise ValueError(f"got {n} texts but {len(metas)} metadata entries; pass one per document")
    docs: list[int] = []
    times: list[float] = []
    confs: list[float] = []
    snips: list[str] = []
    kinds: list[str] = []
    precs: list[str] = []

    def found(i: int, t: float | None, kind: str, snippet: str, precision: str) -> None:
        if t is not None:
            docs.append(i)
            times.append(t)
            confs.append(CONFIDENCE[kind])
            kinds.append(kind)
            snips.append(" ".join(snippet.split())[:_SNIPPET])
            precs.append(precision)

    _from_fields(g, metas, found)
    strs = [_ends(t) if isinstance(t, str) else "" for t in texts]
    _from_text(g, strs, found)
    _from_signoffs(strs, found)
    _from_urls(g, metas, found)
    t_out = np.full(n, np.nan)
    c_out = np.zeros(n)
    k_out = [""] * n
    s_out = [""] * n
    p_out = [""] * n
    if docs:
        d = np.asarray(docs, dtype=np.int64)
        order = np.lexsort((np.asarray(times), np.asarray(confs), d))  # by doc, confidence, time
        ds = d[order]
        last = order[np.r_[ds[1:] != ds[:-1], True]]  # each document's best: highest class, then latest
        t_out[d[last]] = np.asarray(times)[last]
        c_out[d[last]] = np.asarray(confs)[last]
        for j in last.tolist():
            k_out[docs[j]], s_out[docs[j]], p_out[docs[j]] = kinds[j], snips[j], precs[j]
    return InferredDates(t_out, k_out, c_out, s_out, p_out)


#: A longer text is read at its first and last ``READ_CHARS`` characters (module docstring).
READ_CHARS = 1 << 16


def _ends(text: str) -> str:
    """``text``, or its head and tail (the tail from its first whole line) when it is long."""
    if len(text) <= 2 * READ_CHARS:
        return text
    tail = text[-READ_CHARS:]
    return text[:READ_CHARS] + "\n" + tail[tail.find("\n") + 1 :] if "\n" in tail else text[:READ_CHARS]


def _from_fields(g: _Grammar, metas: Sequence[Mapping[str, Any] | None], found: Any) -> None:
    rows: list[int] = []
    raw: list[Any] = []
    names: list[str] = []
    for i, m in enumerate(metas):
        if not m:
            continue
        for name in g.date_fields:
            v = m.get(name)
            if v is not None and v != "" and not isinstance(v, bool):
                rows.append(i)
                raw.append(v)
                names.append(name)
                break
    if not rows:
        return
    parsed = parse_times(raw)
    for i, v, name, t in zip(rows, raw, names, parsed.tolist()):
        if not math.isnan(t):
            found(i, t, "field", f"{name}: {v}", "day")


def _joined(strs: Sequence[str]) -> tuple[str, np.ndarray]:
    # "\x00" ends every document: no pattern matches it, so no match spans two documents
    starts = np.zeros(len(strs), dtype=np.int64)
    if strs:
        starts[1:] = np.cumsum(np.fromiter((len(s) + 1 for s in strs[:-1]), dtype=np.int64, count=len(strs) - 1))
    return "\x00".join(strs), starts


def _from_text(g: _Grammar, strs: Sequence[str], found: Any) -> None:
    if not any(strs):
        return
    big, starts = _joined(strs)
    windows = _windows(big)
    for pat in g.full:
        for m in _finditer(pat, big, windows):
            i = int(np.searchsorted(starts, m.start(), side="right")) - 1
            t = _ymd(g, m.group("year"), m.group("mon"), m.group("day"))
            if t is None:
                continue
            s = strs[i]
            a, b = m.start() - int(starts[i]), m.end() - int(starts[i])
            cue = g.cue_tail.search(s, max(0, a - _CONTEXT), a)
            if cue is not None and _cue_counts(g, s, cue.start("cue"), cue.group("cue")):
                found(i, t, "cue", s[cue.start():b], "day")
            elif a < HEAD_CHARS and _heading(s, a, b):
                found(i, t, "heading", s[a:b], "day")
            else:
                st = g.stated_tail.search(s, max(0, a - _CONTEXT), a)
                if (st is not None and (st.group("now") or st.group("wd")) and _weekday_fits(g, st.group("wd"), t)
                        and not _future(g, s, st.start(), b)):
                    found(i, t, "stated", s[st.start():b], "day")
    for m in _finditer(g.cued, big, windows):
        i = int(np.searchsorted(starts, m.start(), side="right")) - 1
        if not _cue_counts(g, strs[i], m.start("cue") - int(starts[i]), m.group("cue")):
            continue
        if m.group("nyear"):
            x, y = int(m.group("a")), int(m.group("b"))
            day, month = (x, y) if m.group("sep") == "." or x > 12 else (y, x)  # dots are day-first
            t, prec = _valid(int(m.group("nyear")), month, day), "day"
        else:
            t, prec = _valid(int(m.group("myear")), g.months.get(m.group("mon").lower(), 0), 1), "month"
        found(i, t, "cue", m.group(0), prec)


def _from_signoffs(strs: Sequence[str], found: Any) -> None:
    """RFC 2822 dates that fill a trailer or a ``Date:`` line (the module docstring)."""
    if not any(strs):
        return
    big, starts = _joined(strs)
    for m in _finditer(_RFC_DATE, big, _windows(big)):
        i = int(np.searchsorted(starts, m.start(), side="right")) - 1
        s = strs[i]
        a, b = m.start() - int(starts[i]), m.end() - int(starts[i])
        line_a = s.rfind("\n", 0, a) + 1
        line_b = s.find("\n", b)
        if _RFC_LEAD.fullmatch(s, line_a, a) is None or _RFC_TAIL.fullmatch(s, b, len(s) if line_b < 0 else line_b) is None:
            continue
        day = _valid(int(m.group("year")), _RFC_MONTHS[m.group("mon").lower()], int(m.group("day")))
        hour, minute, sec = int(m.group("h")), int(m.group("mi")), int(m.group("s") or 0)
        if day is None or hour > 23:
            continue
        tz = m.group("tz")
        offset = 0 if tz[0] not in "+-" else (1 if tz[0] == "+" else -1) * (int(tz[1:3]) * 3600 + int(tz[3:5]) * 60)
        # the snippet keeps the date when a long name fills the line
        found(i, day + hour * 3600 + minute * 60 + min(sec, 59) - offset, "signoff",
              s[max(line_a, b - _SNIPPET):b].strip(), "second")


_YEAR_AT = re.compile(rf"(?<!\d){_YEAR}(?!\d)")
_BEFORE, _AFTER = 100, 24  # every accepted form lies within these many characters of its year


def _windows(big: str) -> np.ndarray:
    """Every accepted date holds a four-digit year: the stretches around the years (merged
    where they overlap) are all the patterns need to scan, a small part of most texts."""
    ys = np.fromiter((m.start() for m in _YEAR_AT.finditer(big)), dtype=np.int64)
    if not ys.size:
        return np.zeros((0, 2), dtype=np.int64)
    lo = np.maximum(ys - _BEFORE, 0)
    hi = np.minimum(ys + _AFTER, len(big))
    new = np.r_[True, lo[1:] > np.maximum.accumulate(hi)[:-1]]
    ends = np.maximum.accumulate(hi)[np.r_[np.flatnonzero(new)[1:] - 1, ys.size - 1]]
    return np.stack([lo[new], ends], axis=1)


def _finditer(pat: re.Pattern[str], big: str, windows: np.ndarray) -> Any:
    # lookbehinds still see the text before a window; a match cannot cross two (see _windows)
    for lo, hi in windows.tolist():
        yield from pat.finditer(big, lo, hi)


_SENTENCE_END = re.compile(r"[.!?;(\n][\s\"'\u201d\u00bb)]*(?=\S)")


def _cue_counts(g: _Grammar, s: str, at: int, cue: str) -> bool:
    """Whether the cue word at ``s[at:]`` names the document's own date. "dated", "от" ...
    count only in the first lines. Another cue counts as a label (capitalised: "Last
    updated:", "Effective"), opening its line or sentence (after one word at most:
    "Originally published"), or in a sentence about the document itself ("This story was
    originally published on"); a lowercase cue inside another sentence names something else
    ("a photo posted April 2, 2020, to ...", "an article published April 16, 2005, in ...")."""
    if " ".join(cue.lower().split()) in g.head_cues:
        return at < HEAD_CHARS
    if cue[:1].isupper():
        return True
    lo = max(0, at - 4 * _CONTEXT)
    ends = [m.end() for m in _SENTENCE_END.finditer(s, lo, at)]
    start = ends[-1] if ends else lo if lo else 0
    if len(s[start:at].split()) <= 1:  # it opens its sentence: "Originally published", "_Last updated"
        return True
    return g.self_ref.search(s, start, at) is not None


_SENTENCE_STOP = re.compile(r"[.!?](?=\s)|\n")


def _future(g: _Grammar, s: str, a: int, b: int) -> bool:
    """Whether the sentence around ``s[a:b]`` speaks of a later event ("The awards are
    scheduled for Sunday, Feb. 4, 2024", "... will be crowned on Saturday, May 6, 2023")."""
    lo = max(0, a - 4 * _CONTEXT)
    ends = [m.end() for m in _SENTENCE_END.finditer(s, lo, a)]
    stop = _SENTENCE_STOP.search(s, b, b + 4 * _CONTEXT)
    return g.future.search(s, ends[-1] if ends else lo, stop.start() if stop else min(len(s), b + 4 * _CONTEXT)) is not None


def _weekday_fits(g: _Grammar, name: str | None, t: float) -> bool:
    # a weekday named with a date must be that date's (1970-01-01 was a Thursday, ISO 4)
    return name is None or g.weekdays.get(" ".join(name.lower().split())) == (int(t // 86400) + 3) % 7 + 1


def _heading(s: str, a: int, b: int) -> bool:
    """The date is a line of its own (after markup or a weekday: "## 2021-04-05", "Tuesday,
    May 5, 2026"), or a dateline: a place or a name ending in a comma, a bar or a dash, at most
    40 characters, no digit and no bracket ("WASHINGTON, Jan. 6, 2021 -- ..."); after it only a
    dash, a bar or the end of the line."""
    line_a = s.rfind("\n", 0, a) + 1
    line_b = s.find("\n", b)
    before = s[line_a:a].strip().lstrip("#*_>-–— \t")
    after = s[b:len(s) if line_b < 0 else line_b].strip(" \t*_")
    if after and after[0] not in "-–—|":
        return False
    return not before or (
        len(before) <= 40 and before[-1] in ",|-–—" and not any(c.isdigit() or c in "()[]" for c in before)
    )


def _from_urls(g: _Grammar, metas: Sequence[Mapping[str, Any] | None], found: Any) -> None:
    rows: list[int] = []
    addrs: list[str] = []
    for i, meta in enumerate(metas):
        if not meta:
            continue
        for name in g.url_fields:
            v = meta.get(name)
            if isinstance(v, str) and v:
                rows.append(i)
                addrs.append(v)
                break
    if not rows:
        return
    big, starts = _joined(addrs)
    for kind, pat in g.urls:
        for m in pat.finditer(big):
            j = int(np.searchsorted(starts, m.start(), side="right")) - 1
            gd = m.groupdict()
            year = int(gd.get("year") or gd.get("year2") or 0)
            if kind == "url_day":
                t, prec = _valid(year, int(gd["mon"]), int(gd["day"])), "day"
            elif gd.get("q") or gd.get("q2"):
                t, prec = _valid(year, 3 * int(gd.get("q") or gd.get("q2") or 1) - 2, 1), "quarter"
            elif kind == "url_month":
                t, prec = _valid(year, int(gd["mon"]), 1), "month"
            else:
                t, prec = _valid(year, 1, 1), "year"
            found(rows[j], t, kind, m.group(0), prec)


def _ymd(g: _Grammar, year: str, mon: str, day: str) -> float | None:
    month = int(mon) if mon.isdigit() else g.months.get(mon.lower().rstrip("."), 0)
    return _valid(int(year), month, int(day))


def _valid(year: int, month: int, day: int) -> float | None:
    if not (1 <= month <= 12 and 1 <= day <= 31):
        return None
    return ts(year, month, day)
