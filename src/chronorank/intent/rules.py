"""The rules engine: query text -> :class:`~chronorank.types.Intent`.

The patterns of a language (built from its JSON file by :mod:`chronorank.intent.lang`)
find every temporal expression left to right; at each token only the patterns whose
words can start there are tried, and each match is resolved against ``now`` by the
handler named by its pattern ``kind``.
The mode follows the strongest evidence: as-of > range > version > recency cue >
lexical cues; a period with a superlative recency cue ("the latest X in 2021") is as-of
its end. A query with no digit and no trigger word skips the regex pass.
"""

from __future__ import annotations

import dataclasses
import math
import re
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from chronorank.errors import InvalidInput, LanguageWarning
from chronorank.intent.lang import Language, detect_language, get_language
from chronorank.intent.sensitivity import default_model, feature_names
from chronorank.intent.unsupported import unsupported_language, unsupported_message
from chronorank.timeparse import civil as cal
from chronorank.timeparse import resolve_now
from chronorank.types import Anchor, Intent, Interval, Span

MAX_ANALYSED_CHARS = 2048
"""Only this many leading characters of a query are searched for temporal expressions."""

# sensitivity by kind of evidence
S_RECENT = 0.95
S_EXPLICIT = 0.9
S_SPECIFIC = 0.05
S_NAMED_YEAR = 0.1

_OPERATOR_CLASSES = ("as_of", "range", "recent")
_NAME_GUARDED = ("recent", "relative", "day", "past_n", "ago")
_WORD_RE = re.compile(r"[\w'’+#.-]+")
_TRAIL_PUNCT = " \t\n,;:-–—/"


@dataclass(frozen=True, slots=True)
class _Hit:
    start: int
    end: int
    kind: str          # pattern kind
    cls: str           # as_of | range | specific | recent | ignore
    interval: Interval | None
    strong: bool = True
    anchor: Anchor | None = None


@dataclass(frozen=True, slots=True)
class _When:
    start: float
    end: float
    unit: str
    year_explicit: bool


# --------------------------------------------------------------------------- calendar expressions

def _resolve_when(lang: Language, text: str, now: float, year_hint: int | None = None) -> _When | None:
    for form in lang.when_forms:
        m = form.regex.fullmatch(text.strip())
        if m is None:
            continue
        return _when_from_match(lang, form.unit, m.groupdict(), now, year_hint)
    return None


def _when_from_match(
    lang: Language, unit: str, g: dict[str, Any], now: float, year_hint: int | None
) -> _When | None:
    ref = cal.to_dt(now)
    year_s = g.get("w_year")
    year = int(year_s) if year_s else None
    explicit = year is not None
    if year is None:
        year = year_hint
    if unit == "year":
        if year is None:
            return None
        return _mk(cal.ts(year), cal.ts(year + 1), unit, explicit)
    if unit in ("quarter", "half"):
        if year is None:
            return None
        raw = g.get("w_quarter") or g.get("w_half")
        n = int(raw) if raw else lang.word_value(lang.ordinals, g.get("w_ord") or "")
        size = 3 if unit == "quarter" else 6
        if n is None or not 1 <= n <= 12 // size:
            return None
        y1, m1 = cal.add_months(year, 1 + (n - 1) * size, size)
        return _mk(cal.ts(year, 1 + (n - 1) * size), cal.ts(y1, m1), unit, explicit)
    if unit == "season":
        season = lang.seasons.get(" ".join((g.get("w_season") or "").lower().split()))
        if season is None:
            return None
        m0, length = season
        if year is None:  # the most recent such season that has begun
            year = ref.year
            start = cal.ts(year, m0)
            if start is None or start > now:
                year -= 1
        y1, m1 = cal.add_months(year, m0, length)
        return _mk(cal.ts(year, m0), cal.ts(y1, m1), unit, explicit)
    named = lang.holidays.get(" ".join((g.get("w_holiday") or "").lower().split()))
    month = named[0] if named else _month(lang, g)
    if month is None:
        return None
    if unit == "month":
        if year is None:
            year = ref.year if (ref.month >= month) else ref.year - 1
        y1, m1 = cal.add_months(year, month, 1)
        return _mk(cal.ts(year, month), cal.ts(y1, m1), unit, explicit)
    # a day
    day_s = g.get("w_day") or g.get("w_dd")
    day = named[1] if named else int(day_s) if day_s else None
    if day is None:
        return None
    if year is None:
        for back in range(0, 9):
            y = ref.year - back
            t = cal.ts(y, month, day)
            if t is not None and t <= now:
                return _mk(t, t + cal.DAY, unit, False)
        return None
    t = cal.ts(year, month, day)
    if t is None:  # "February 30": keep the month rather than fail
        y1, m1 = cal.add_months(year, month, 1)
        return _mk(cal.ts(year, month), cal.ts(y1, m1), "month", explicit)
    return _mk(t, t + cal.DAY, unit, explicit)


def _date_inside(lang: Language, text: str, now: float) -> _When | None:
    """The first calendar expression with a year (or a bare form) inside ``text``."""
    for form in lang.when_forms:
        if not (form.bare or form.has_year):
            continue
        m = form.regex.search(text)
        if m is not None:
            w = _when_from_match(lang, form.unit, m.groupdict(), now, None)
            if w is not None:
                return w
    return None


def _month(lang: Language, g: dict[str, Any]) -> int | None:
    if g.get("w_mm"):
        return int(g["w_mm"])
    name = g.get("w_month")
    if not name:
        return None
    return lang.months.get(name.lower().rstrip("."))


def _mk(a: float | None, b: float | None, unit: str, explicit: bool) -> _When | None:
    if a is None or b is None or not b > a:
        return None
    return _When(a, b, unit, explicit)


def _iv(a: float | None, b: float | None) -> Interval | None:
    if a is None or b is None or math.isnan(a) or math.isnan(b) or b < a:
        return None
    return Interval(float(a), float(b))


# --------------------------------------------------------------------------- handlers

def _group(m: re.Match[str], idx: int, name: str) -> str | None:
    try:
        return m.group(f"p{idx}_{name}")
    except IndexError:
        return None


def _number(lang: Language, text: str | None, default: int = 1) -> int | None:
    if not text:
        return default
    t = text.strip()
    if t.isdigit():
        n = int(t)
        return n if n <= 100_000 else None
    return lang.word_value(lang.numbers, t)


def _unit(lang: Language, text: str | None) -> str | None:
    if not text:
        return None
    return lang.units.get(" ".join(text.lower().split()))


class _Match:
    """One pattern match of kind ``kind`` and what its handler reads."""

    __slots__ = ("lang", "kind", "m", "idx", "now", "query", "s", "e", "ref")

    def __init__(self, lang: Language, kind: str, m: re.Match[str], idx: int, now: float, query: str) -> None:
        self.lang, self.kind, self.m, self.idx, self.now, self.query = lang, kind, m, idx, now, query
        self.s, self.e = m.span()
        self.ref = cal.to_dt(now)

    def group(self, name: str) -> str | None:
        return _group(self.m, self.idx, name)

    def when(self, name: str = "when", hint: int | None = None) -> _When | None:
        text = self.group(name)
        return None if text is None else _resolve_when(self.lang, text, self.now, hint)

    def hit(self, cls: str, interval: Interval | None, **kw: Any) -> _Hit:
        return _Hit(self.s, self.e, self.kind, cls, interval, **kw)


def _h_mark(c: _Match) -> _Hit | None:  # ignore, recent: the kind is the class
    return c.hit(c.kind, None)


def _h_point(c: _Match) -> _Hit | None:  # start_of, end_of, as_of
    w = c.when("when") or c.when("date")
    if w is None:
        return None
    if c.kind == "start_of":
        return c.hit("as_of", _iv(w.start, w.start + cal.DAY))
    if c.kind == "end_of":
        return c.hit("as_of", _iv(w.end - cal.DAY, w.end))
    return c.hit("as_of", _iv(w.start, w.end))


def _h_period(c: _Match) -> _Hit | None:  # between, range
    text2 = c.group("when2")
    y2 = c.group("year2")
    if text2 is not None or y2 is not None:
        w2 = _resolve_when(c.lang, text2, c.now) if text2 is not None else (
            _mk(cal.ts(int(y2)), cal.ts(int(y2) + 1), "year", True) if y2 else None
        )
        if w2 is None:
            return None
        hint = cal.to_dt(w2.start).year if w2.year_explicit else None
        y1 = c.group("year")
        w1 = c.when("when", hint) if y1 is None else _mk(cal.ts(int(y1)), cal.ts(int(y1) + 1), "year", True)
        if w1 is None or w2.end <= w1.start:
            return None
        return c.hit("range", _iv(w1.start, w2.end))
    w = c.when("when") or c.when("bare")
    if w is None:
        return None
    if c.group("bare") is not None and w.unit == "year":
        y = cal.to_dt(w.start).year
        if not 1900 <= y <= c.ref.year + 5:
            return None
    # a single named day is a point in time: "which version would I get 1 December 2018"
    return c.hit("as_of" if w.unit == "day" else "range", _iv(w.start, w.end))


def _h_from(c: _Match) -> _Hit | None:  # since, after
    w = c.when()
    if w is None:
        return None
    a = w.start if c.kind == "since" else w.end
    return c.hit("range", _iv(a, max(c.now, a)))


def _h_to(c: _Match) -> _Hit | None:  # before, until
    w = c.when()
    if w is None:
        return None
    return c.hit("range", _iv(-math.inf, w.start if c.kind == "before" else w.end))


def _h_anchor(c: _Match) -> _Hit | None:  # before_anchor, after_anchor
    # "before the v2 change", "since the migration to OAuth", "after the July 2023 update"
    text = " ".join((c.group("anchor") or "").split())
    relation = "before" if c.kind == "before_anchor" else "after"
    try:
        subject_end = c.m.end(f"p{c.idx}_word")  # "upgrading <itsdangerous> from 2.0": the subject
    except IndexError:
        subject_end = -1
    if subject_end > c.s:
        c.s = subject_end + len(c.query[subject_end:c.e]) - len(c.query[subject_end:c.e].lstrip())
    w = _date_inside(c.lang, text, c.now)
    if w is not None:  # an event named with its date: the date is the anchor
        iv = _iv(-math.inf, w.start) if relation == "before" else _iv(w.start, max(c.now, w.start))
        return None if iv is None else c.hit("range", iv)
    return c.hit("range", None, anchor=Anchor(text, relation))  # type: ignore[arg-type]


def _h_ytd(c: _Match) -> _Hit | None:
    return c.hit("range", _iv(cal.ts(c.ref.year), c.now))


def _h_decade(c: _Match) -> _Hit | None:
    raw = c.group("decade") or ""
    if not raw.isdigit():
        return None
    d = int(raw)
    if d < 100:
        d += 2000 if 2000 + d <= c.ref.year else 1900
    if d % 10 or not 1000 <= d <= 2990:
        return None
    return c.hit("range", _iv(cal.ts(d), cal.ts(d + 10)))


def _h_count(c: _Match) -> _Hit | None:  # past_n, ago, relative
    now, ref = c.now, c.ref
    unit = _unit(c.lang, c.group("unit"))
    if unit is None:
        return None
    if c.kind == "relative":
        rel = c.lang.word_value(c.lang.relatives, c.group("rel") or "")
        if rel is None:
            return None
        if unit == "hour":
            return c.hit("range", _iv(now - 3600.0, now)) if rel <= 0 else None
        b = cal.unit_bounds(unit, ref, rel)
        return None if b is None else c.hit("range", _iv(*b))
    n = _number(c.lang, c.group("num"))
    if n is None:
        return None
    if c.kind == "past_n":
        back: float | None = now - n * 3600.0 if unit == "hour" else cal.shift_back(now, unit, n)
        return None if back is None else c.hit("range", _iv(back, now))
    if unit == "hour":
        return c.hit("range", _iv(now - (n + 1) * 3600.0, now - (n - 1) * 3600.0))
    b = cal.unit_bounds(unit, ref, -n)
    return None if b is None else c.hit("range", _iv(*b))


def _h_day(c: _Match) -> _Hit | None:
    off = c.lang.word_value(c.lang.day_words, c.group("dayword") or "")
    b = None if off is None else cal.unit_bounds("day", c.ref, off)
    return None if b is None else c.hit("range", _iv(*b))


def _h_named_year(c: _Match) -> _Hit | None:
    y = int(c.group("year") or 0)
    iv = _iv(cal.ts(y), cal.ts(y + 1))
    if _period_follows(c.lang, c.query, c.e):
        return _Hit(c.s, c.e, "range", "range", iv)
    return c.hit("specific", iv)


def _h_product_year(c: _Match) -> _Hit | None:
    s, e = c.s, c.e
    y = int(c.group("year") or 0)
    word = c.query[s:e].split()[0].lower().rstrip(".")
    if _is_plain_word(c.lang, word) or _period_follows(c.lang, c.query, e):
        # not a product name: the year is an ordinary bare year
        ys = c.m.start(f"p{c.idx}_year")
        if not 1900 <= y <= c.ref.year + 5:
            return None
        return _Hit(ys, e, "range", "range", _iv(cal.ts(y), cal.ts(y + 1)))
    return c.hit("specific", None)


def _h_specific(c: _Match) -> _Hit | None:  # version
    return c.hit("specific", None)


def _h_name_number(c: _Match) -> _Hit | None:
    word = (c.group("nameword") or "").lower()
    if _is_plain_word(c.lang, word) or len(word) < 2:
        return None
    return c.hit("specific", None, strong=False)


def _h_old(c: _Match) -> _Hit | None:
    return c.hit("specific", None, strong=False)


#: pattern kind (``lang.KINDS``) -> its handler: the match -> a hit, or None to drop it
_HANDLERS: dict[str, Callable[[_Match], _Hit | None]] = {
    "ignore": _h_mark, "recent": _h_mark,
    "start_of": _h_point, "end_of": _h_point, "as_of": _h_point,
    "between": _h_period, "range": _h_period,
    "since": _h_from, "after": _h_from,
    "before": _h_to, "until": _h_to,
    "before_anchor": _h_anchor, "after_anchor": _h_anchor,
    "ytd": _h_ytd, "decade": _h_decade,
    "past_n": _h_count, "ago": _h_count, "relative": _h_count,
    "day": _h_day, "named_year": _h_named_year, "product_year": _h_product_year,
    "version": _h_specific, "name_number": _h_name_number, "old": _h_old,
}


def _handle(lang: Language, kind: str, m: re.Match[str], idx: int, now: float, query: str) -> _Hit | None:
    handler = _HANDLERS.get(kind)
    return None if handler is None else handler(_Match(lang, kind, m, idx, now, query))


def _period_follows(lang: Language, query: str, end: int) -> bool:
    """A period word ("season", "release notes") within three words after ``end``."""
    after = query[end:end + 60].lower()
    return any(
        re.match(r"\W{0,3}(?:[\w'-]+\s+){0,3}?" + re.escape(w) + r"\b", after) for w in lang.period_words
    )


def _is_plain_word(lang: Language, word: str) -> bool:
    return (
        word in lang.not_names or word in lang.prepositions or word in lang.articles
        or word in lang.months or word in lang.units or word in lang.numbers
        or word in lang.relatives or word in lang.stopwords or word in lang.ordinals
        or word in lang.seasons
    )


def _looks_like_name(query: str, s: int, e: int, titleish: bool) -> bool:
    """A cue word used as (part of) a proper name: "Now TV", "is Current a good bank"."""
    if titleish:
        return False
    first = query[s]
    if not first.isupper():
        return False
    before = query[:s].rstrip()
    sentence_start = not before or before[-1] in ".!?:;\"'«(\n"
    if not sentence_start:
        return True
    nxt = re.match(r"\s+([^\W\d_][\w]*)", query[e:e + 40])
    return bool(nxt and len(nxt.group(1)) >= 2 and (nxt.group(1).isupper() or nxt.group(1)[0].isupper()))


# --------------------------------------------------------------------------- lexical cues

def _asks_newest(lang: Language, text: str, recent: list[_Hit], period: Interval | None) -> bool:
    """A superlative recency cue ("latest", "newest") next to a period with an end."""
    pat = lang.lexicon.get("newest")
    if pat is None or period is None or not math.isfinite(period.end):
        return False
    return any(pat.search(text[h.start:h.end]) is not None for h in recent)


def _newest_of_line(lang: Language, text: str, specific: list[_Hit]) -> bool:
    """A superlative ("newest", "final", "last") next to versions only: the question asks for
    the newest release of the line they name, not for the release they name."""
    pat = lang.lexicon.get("newest_of_line")
    return (pat is not None and all(h.kind == "version" and h.interval is None for h in specific)
            and pat.search(text) is not None)


def _has_cue(lang: Language, text: str, classes: tuple[str, ...]) -> bool:
    return any(c in lang.lexicon and lang.lexicon[c].search(text) is not None for c in classes)


# --------------------------------------------------------------------------- parse


_last_now: tuple[str, float] | None = None


def _resolve_now(now: Any = None) -> float:
    """Epoch seconds for ``now`` (:func:`chronorank.timeparse.resolve_now`). Numbers pass
    straight through and the last string resolved is remembered, since a batch of queries
    usually shares one reference time."""
    global _last_now
    if isinstance(now, float) and math.isfinite(now):
        return now
    if isinstance(now, str):
        last = _last_now
        if last is not None and last[0] == now:
            return last[1]
    value = float(resolve_now(now))
    if isinstance(now, str):
        _last_now = (now, value)
    return value


def parse(query: str, now: Any = None, lang: str | None = None) -> Intent:
    """Parse the temporal intent of ``query`` relative to ``now`` (None = the wall clock).

    ``lang`` is a language code (``"en"``, ``"ru"``, ...); None detects it.
    """
    if not isinstance(query, str):
        raise InvalidInput(f"query must be a str, got {type(query).__name__}; pass the query text")
    now_s = _resolve_now(now)
    code = detect_language(query) if lang is None else lang
    language = get_language(code)
    intent = _parse(query, now_s, language)
    if lang is None and intent.mode in ("timeless", "specific"):
        other = unsupported_language(query)
        if other is not None:
            warnings.warn(unsupported_message(query, other), LanguageWarning, stacklevel=2)
            intent = dataclasses.replace(intent, unsupported=other)
    return intent


def sensitivity_features(query: str, now: Any = None, lang: str | None = None) -> list[str]:
    """The features the time-sensitivity model scores for ``query`` (to fit it on your own)."""
    if not isinstance(query, str):
        raise InvalidInput(f"query must be a str, got {type(query).__name__}; pass the query text")
    out: list[str] = []
    code = detect_language(query) if lang is None else lang
    _parse(query, _resolve_now(now), get_language(code), features_out=out)
    return out


def _parse(query: str, now: float, lang: Language, features_out: list[str] | None = None) -> Intent:
    text = query[:MAX_ANALYSED_CHARS]
    if len(query) > MAX_ANALYSED_CHARS and query[MAX_ANALYSED_CHARS].isalnum():
        # never analyse half a word: "20244" cut to "2024" would read as a year
        text = re.sub(r"[^\W_]+\Z", "", text)
    hits: list[_Hit] = []
    name_spans: list[tuple[int, int]] = []  # cue words read as proper names ("the Current bank")
    if text and (lang.trigger is None or lang.trigger.search(text)):
        titleish: bool | None = None
        for idx, m in _matches(lang, text):
            kind = lang.kinds[idx]
            try:
                hit = _handle(lang, kind, m, idx, now, text)
            except (ValueError, OverflowError, IndexError):
                hit = None
            if hit is None:
                continue
            if kind in _NAME_GUARDED and text[hit.start].isupper():
                if titleish is None:
                    words = _WORD_RE.findall(text)
                    caps = sum(1 for w in words if w[:1].isupper())
                    titleish = len(words) >= 3 and caps / len(words) >= 0.6
                if _looks_like_name(text, hit.start, hit.end, titleish):
                    name_spans.append((hit.start, hit.end))
                    continue
            hits.append(hit)

    spans = tuple(Span(h.start, h.end, query[h.start:h.end], h.kind) for h in hits if h.cls != "ignore")
    by = {c: [h for h in hits if h.cls == c] for c in ("as_of", "range", "specific", "recent")}
    target: Interval | None = None
    anchor: Anchor | None = None
    strong_specific = [h for h in by["specific"] if h.strong]
    line = False
    if by["as_of"]:
        mode, sens, target = "as_of", S_EXPLICIT, by["as_of"][0].interval
    elif by["range"] and _asks_newest(lang, text, by["recent"], by["range"][0].interval):
        # "the latest X in 2021", "most recent X before July 2017": the newest as of the
        # period's end, not every document inside the period
        mode, sens, target = "as_of", S_EXPLICIT, by["range"][0].interval
    elif by["range"]:
        mode, sens, target = "range", S_EXPLICIT, by["range"][0].interval
        anchor = by["range"][0].anchor
    elif strong_specific and _newest_of_line(lang, text, strong_specific):
        # "the newest 12.x", "final flask 1.x release": the newest release of that line
        mode, sens = "recent", S_RECENT
        line = True
    elif strong_specific:
        mode = "specific"
        named = [h for h in strong_specific if h.interval is not None]
        target = named[0].interval if named else None
        sens = S_NAMED_YEAR if named else S_SPECIFIC
    elif by["recent"]:
        mode, sens = "recent", S_RECENT
    elif by["specific"] and not _has_cue(lang, text, ("historical",)):
        mode, sens = "specific", S_SPECIFIC
    else:
        sens, mode = 0.0, "timeless"  # the model below decides
    # how much the answer depends on when it is asked: the shipped model over the words and
    # what was found above (see intent/sensitivity.py); a stated target keeps its effect
    # whatever this says (temporal.intent_strength). Where only words decided the mode
    # (no expression, or a weak "old"/"name 2" reading), it follows the model too.
    weak = not (by["as_of"] or by["range"] or strong_specific or by["recent"])
    features = feature_names(text, lang, [h.kind for h in hits if h.cls != "ignore"], name_spans)
    if features_out is not None:
        features_out.extend(features)
    sens = default_model().score(features)
    if line:
        # the superlative asks for the newest of the line in so many words, however the rest
        # of the question is worded ("what *was* the final flask 1.x release": the model reads
        # a past question as timeless)
        sens = max(sens, S_RECENT)
    if weak:
        mode = "recent" if sens >= 0.5 else ("specific" if mode == "specific" else "timeless")
        if _has_cue(lang, text, ("lookup",)):
            # "which release deprecated X", "added in which version", a CVE id: the page that
            # names the thing answers, whenever it was published -- time off, not "recent"
            # (and no current-event burst); the sensitivity (the gate) is unchanged
            mode = "specific"
    topical = topical_query(query, [h for h in hits if h.cls in _OPERATOR_CLASSES], lang)
    return Intent(
        query=query,
        time_sensitivity=float(sens),
        mode=mode,  # type: ignore[arg-type]
        target=target,
        topical_query=topical,
        spans=spans,
        lang=lang.code,
        anchor=anchor,
    )


_TOKEN_RE = re.compile(r"[^\W_]+")


def _matches(lang: Language, text: str) -> list[tuple[int, re.Match[str]]]:
    """Leftmost non-overlapping pattern matches; at one position the first pattern in order wins.

    Only the patterns whose words can start at a token are tried there.
    """
    toks = [(m.start(), m.group()) for m in _TOKEN_RE.finditer(text)]
    out: list[tuple[int, re.Match[str]]] = []
    pos_done = 0
    for i, (pos, tok) in enumerate(toks):
        if pos < pos_done:
            continue
        cands = lang.candidate_patterns(tok, toks[i + 1][1] if i + 1 < len(toks) else "")
        if not cands:
            continue
        starts = (pos - 1, pos) if pos > pos_done and text[pos - 1] in "'’" else (pos,)
        found = None
        for start in starts:
            for idx in cands:
                m = lang.pattern(idx).match(text, start)
                if m is not None and m.end() > start:
                    found = (idx, m)
                    break
            if found is not None:
                break
        if found is not None:
            out.append(found)
            pos_done = found[1].end()
    return out


def topical_query(query: str, removed: list[_Hit], lang: Language) -> str:
    """``query`` without the operator spans, dangling articles and prepositions."""
    if not removed:
        return " ".join(query.split()) if len(query) <= MAX_ANALYSED_CHARS else query.strip()
    cuts: list[tuple[int, int]] = []
    for h in sorted(removed, key=lambda h: h.start):
        s, e = h.start, h.end
        # an article right before the operator: "the latest release" -> "release"
        m = re.search(r"(?:^|(?<=\s))([\w']+)\s+$", query[max(0, s - 40):s])
        if m and m.group(1).lower() in lang.articles:
            s = s - (len(query[max(0, s - 40):s]) - m.start(1))
        # a preposition left dangling: "news from <op>" at the end or before punctuation
        m = re.search(r"(?:^|(?<=\s))([\w']+)\s+$", query[max(0, s - 40):s])
        rest = query[e:e + 40]
        nxt = re.match(r"\s*([\w']+)", rest)
        dangling = nxt is None or nxt.group(1).lower() in lang.prepositions
        if m and dangling and m.group(1).lower() in lang.prepositions:
            s = s - (len(query[max(0, s - 40):s]) - m.start(1))
        cuts.append((s, e))
    out: list[str] = []
    pos = 0
    for s, e in cuts:
        if s < pos:
            s = pos
        out.append(query[pos:s])
        out.append(" ")
        pos = max(pos, e)
    out.append(query[pos:])
    text = " ".join("".join(out).split())
    text = re.sub(r"\s+([,.;:?!])", r"\1", text)
    text = re.sub(r"([,;:])(?=[,;:.?!]|$)", "", text)
    text = text.strip(_TRAIL_PUNCT)
    # a preposition or article stranded at an end where an operator was cut
    words = text.split(" ")
    small = lang.prepositions | lang.articles
    if not query[cuts[-1][1]:].strip(_TRAIL_PUNCT + "?!."):
        while len(words) > 1 and words[-1].lower() in small:
            words.pop()
    if not query[:cuts[0][0]].strip(_TRAIL_PUNCT):
        while len(words) > 1 and words[0].lower() in small:
            words.pop(0)
    text = " ".join(words).strip(_TRAIL_PUNCT)
    if not any(ch.isalnum() for ch in text):
        return " ".join(query.split())
    return text


def anchor_terms(anchor: Anchor, lang: str = "en") -> str:
    """The words of an anchor that name *which* event or version ("v2", "OAuth"), without
    the generic event nouns ("change", "release") that many documents share; all of them
    when nothing else is left."""
    events = get_language(lang).data.get("anchor_events") or []
    if not events:
        return anchor.text
    pat = re.compile(r"(?<!\w)(?:" + "|".join(events) + r")(?!\w)", re.IGNORECASE)
    rest = " ".join(pat.sub(" ", anchor.text).split())
    return rest if any(ch.isalnum() for ch in rest) else anchor.text


def keyword_text(topical: str, lang: str = "en") -> str:
    """The topical query for the keyword lane: without the generic change verb of a question
    frame (the language file's ``frame_verbs``: "what changed in the API 2.0 release" ->
    "what in the API 2.0 release"). The verb carries no topic, yet the pages that happen to
    say it get its idf -- rare outside changelogs, so with ``idf_power=3`` an undated "why our
    pricing changed" page outscored the 2.0 release note 62 to 27. The dense lane keeps the
    whole question."""
    frames = get_language(lang).data.get("frame_verbs") or []
    for f in frames:
        m = re.search(f, topical, re.IGNORECASE)
        if m is not None and m.lastindex:
            return " ".join(f"{topical[:m.start(1)]} {topical[m.end(1):]}".split())
    return topical


def facet_text(keywords: str, lang: str = "en") -> str | None:
    """The keyword text without the language file's ``frame_words`` (the words a question
    about the newest of something is worded with: "release", "version", "fix", "anything"),
    for the ranking's facet stage (:func:`chronorank.ranking.term_facet`): "newest requests
    security fix" -> "requests security", "latest celery fix for redis" -> "celery for redis".
    None for a language without the list (the stage then reads no words), or when nothing
    is left."""
    words = get_language(lang).data.get("frame_words") or []
    if not words:
        return None
    pat = re.compile(r"(?<!\w)(?:" + "|".join(words) + r")(?!\w)", re.IGNORECASE)
    rest = " ".join(pat.sub(" ", keywords).split())
    return rest if any(ch.isalnum() for ch in rest) else None


_NAME_NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)*(?![\w.]*\w)")


def name_numbers(text: str, lang: str = "en") -> str:
    """``text`` without the numbers that are part of a name (the language file's
    ``numbered_names``: "python 2.7", "HTTP/2", "python 3.7, 3.8 and 3.9"). For the lead
    lane: a page's lead names its own release ("scrapy 2.7.0."), so "which sphinx dropped
    python 2.7" matched every 2.7.0 title there; the name's number stays in the body lane
    and the embedding, where "dropped python 2.7" is said."""
    named = get_language(lang).numbered
    if named is None or not any(c.isdigit() for c in text):
        return text
    out = text
    for m in reversed(list(_NAME_NUMBER.finditer(text))):
        if named.search(text, max(0, m.start() - 80), m.start()):
            out = out[:m.start()] + out[m.end():]
    return " ".join(out.split())


def asks_past(query: str, lang: str = "en") -> bool:
    """Whether a question is worded about the past ("how *was* X *originally* introduced",
    "what did it cost"): the language file's ``past_markers``. A question without them asks
    about what holds now, even when nothing in it is a time cue ("how does pagination work")."""
    words = get_language(lang).data.get("past_markers") or []
    if not words:
        return False
    return re.search(r"(?<!\w)(?:" + "|".join(words) + r")(?!\w)", query, re.IGNORECASE) is not None


def with_sensitivity(query: str, now: Any, sensitivity: float) -> Intent:
    """The rules' intent with a model's time sensitivity; where no temporal cue decided the
    mode (recent or timeless), the sensitivity decides it too (>= 0.5 means recent)."""
    base = parse(query, now=now)
    mode = base.mode
    if not base.spans and mode in ("recent", "timeless"):
        mode = "recent" if sensitivity >= 0.5 else "timeless"
    return Intent(
        query=base.query, time_sensitivity=sensitivity, mode=mode, target=base.target,
        topical_query=base.topical_query, spans=base.spans, lang=base.lang, anchor=base.anchor,
    )
