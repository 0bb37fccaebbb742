"""Language data for the intent parser: loading, compiling and language detection.

Everything language-specific lives in JSON files, one per language, named ``<code>.json``.
They are read from this package's folder (``chronorank/intent/lang/``) and then from every directory listed in
the environment variable ``CHRONORANK_INTENT_LANG_PATH`` (``os.pathsep``-separated) or
passed to :func:`add_language_dir`; a later file with the same code replaces an earlier
one. Files whose name starts with ``_`` are not languages: ``_common.json`` holds
language-neutral forms (ISO dates, version numbers) merged into every language.

A language file holds (all keys optional except ``code``):

- ``detect``: ``letters`` (a regex character-class body, e.g. ``"a-z"``) and ``stopwords``.
- ``holidays``: named days of the year (name -> [month, day]: "halloween" -> [10, 31]), read
  as ``{holiday}`` in the day forms of ``when``.
- ``months`` / ``seasons`` / ``numbers`` / ``ordinals`` / ``units`` / ``relatives`` /
  ``day_words``: word form -> value. List every inflected form ("марта", "марте").
- ``articles``, ``prepositions``: dropped from the topical query when left dangling.
- ``not_names``, ``edition_words``, ``period_words``: word lists used by the rules.
- ``triggers``: regex fragments; a query matching none of them (and no digit) skips
  the pattern pass (the fast path). Omit to always run the patterns.
- ``when``: calendar expressions ``{"unit": "day|month|season|quarter|half|year",
  "re": template, "bare": bool}``; ``bare`` forms may stand without a preposition.
- ``patterns``: ``{"kind": k, "re": template}``; the kinds are the rule handlers
  listed in :data:`KINDS`. Templates are regexes, matched case-insensitively, where a
  space means "some whitespace" and ``{placeholders}`` expand to the language's words.
- ``anchor`` and ``anchor_events``: the operand of "before / after / since / until X" when X
  is a version or an event ("the v2 change", "the migration to OAuth"): a template over
  ``{word}``, ``{version}`` and ``{event}`` (``anchor_events``, regex fragments), used by the
  ``before_anchor`` / ``after_anchor`` patterns as ``{anchor}``.
- ``frame_verbs``: regexes for a question's frame whose group 1 is a generic change verb
  ("*what changed* in the 2.0 release"): it names no topic, so the keyword lane drops it
  (:func:`chronorank.intent.rules.keyword_text`).
- ``frame_words``: regex fragments for the words a question about the newest of something
  is worded with that name no part of its topic ("release", "version", "update", "fix",
  "anything"): what is left of the question's keywords once the subject is set aside is its
  specific part (:func:`chronorank.intent.rules.facet_text`, the ranking's facet stage).
  Omit it and the stage reads no words of a question in that language.
- ``quantity_words``: regex fragments for words that make a number after them a quantity,
  not a version ("2.9 million", "7.0 magnitude"): the index's version-conflict rule
  (:mod:`chronorank.index.version_conflict`) skips such numbers.
- ``numbered_names``: regex fragments for names whose number is part of the name ("python
  3.11", "windows 11"): a number after one (or in a list after one: "python 3.7, 3.8 and 3.9")
  is the question's subject, not a version (:mod:`chronorank.index.version_conflict`).
- ``lexicon``: regex fragments per cue class: ``recent``, ``implicit_now``,
  ``historical``, ``timeless``, ``howto``, ``newest``, ``newest_of_line`` (a superlative that,
  next to versions only, asks for the newest release of their line: "the final 1.x"), ``lookup`` (a question asking which
  release did something, or naming an advisory id: time off when no time expression decides).
"""

from __future__ import annotations

import json
import os
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from chronorank._recache import compile_cached
from chronorank.errors import InvalidInput

LANG_PATH_ENV = "CHRONORANK_INTENT_LANG_PATH"
_BUILTIN_DIR = Path(__file__).parent  # this package's folder holds the shipped <code>.json files

KINDS = (
    "ignore", "start_of", "end_of", "as_of", "between", "since", "before", "after", "until",
    "ytd", "decade", "past_n", "ago", "relative", "day", "range", "named_year", "product_year",
    "version", "name_number", "old", "recent", "before_anchor", "after_anchor",
)
WHEN_UNITS = ("day", "month", "season", "quarter", "half", "year")
_SP = r"\s{1,3}"
_PLACEHOLDER = re.compile(r"\{([a-z_]+[0-9]?)\}")

_extra_dirs: list[Path] = []
_cache: tuple[dict[str, dict[str, Any]], dict[str, Any]] | None = None  # the files' data
_compiled: dict[str, Language] = {}  # code -> Language, compiled on first use
_detectors: dict[str, tuple[re.Pattern[str] | None, float, frozenset[str]]] | None = None
_lock = threading.RLock()


def _alt(words: Any) -> str:
    # longest first; ties alphabetically, so the pattern is the same in every process (a
    # set's order is not) and its compiled form can be cached (chronorank._recache)
    items = sorted({str(w).lower() for w in words if str(w)}, key=lambda w: (-len(w), w))
    if not items:
        return r"(?!x)x"
    return "(?:" + "|".join(re.escape(w).replace(r"\ ", _SP) for w in items) + ")"


def _frag_alt(frags: Any) -> str:
    items = [str(f).replace(" ", _SP) for f in frags if str(f)]
    if not items:
        return r"(?!x)x"
    return "(?:" + "|".join(items) + ")"


@dataclass
class WhenForm:
    unit: str
    template: str
    bare: bool
    regex: re.Pattern[str] = field(init=False, repr=False)
    has_year: bool = field(init=False)


@dataclass
class Language:
    """One language's compiled data (built by :func:`get_language`)."""

    code: str
    name: str
    data: dict[str, Any]
    months: dict[str, int]
    seasons: dict[str, tuple[int, int]]
    holidays: dict[str, tuple[int, int]]  # a named day -> (month, day): "halloween" -> (10, 31)
    numbers: dict[str, int]
    ordinals: dict[str, int]
    units: dict[str, str]
    relatives: dict[str, int]
    day_words: dict[str, int]
    articles: frozenset[str]
    prepositions: frozenset[str]
    not_names: frozenset[str]
    period_words: tuple[str, ...]
    stopwords: frozenset[str]
    letters: re.Pattern[str] | None
    detect_weight: float
    trigger: re.Pattern[str] | None
    when_forms: list[WhenForm]
    sources: list[str]  # pattern index -> regex source (compiled on first use)
    compiled: list[re.Pattern[str] | None]
    kinds: list[str]  # pattern index -> kind
    lexicon: dict[str, re.Pattern[str]]
    #: a name whose number is part of it, ending where a number follows ("python ", "python
    #: 3.7, "): search it over the text before a number (``numbered_names``)
    numbered: re.Pattern[str] | None
    stem_masks: dict[int, dict[str, int]]  # stem length -> stem -> bitmask of patterns
    digit_mask: int  # patterns that may start at a number
    anyword_mask: int  # patterns that may start at any word followed by a number

    _cand_cache: dict[tuple[str, bool], tuple[int, ...]] = field(default_factory=dict, repr=False)

    def candidate_patterns(self, token: str, next_token: str) -> tuple[int, ...]:
        """Indices, in order, of the patterns that may start at ``token`` (memoised)."""
        key = (token, next_token[:1].isdigit())
        hit = self._cand_cache.get(key)
        if hit is None:
            mask = self.candidates(token, next_token)
            hit = tuple(i for i in range(mask.bit_length()) if mask >> i & 1)
            if len(self._cand_cache) > 100_000:
                self._cand_cache.clear()
            self._cand_cache[key] = hit
        return hit

    def candidates(self, token: str, next_token: str) -> int:
        """Bitmask of the patterns that may start at ``token`` (a cheap, over-inclusive filter)."""
        mask = 0
        if token[0].isdigit():
            mask |= self.digit_mask
        if next_token[:1].isdigit():
            mask |= self.anyword_mask
        low = token.lower()
        for n, stems in self.stem_masks.items():
            bits = stems.get(low[:n])
            if bits and (n > 1 or len(token) == 1 or token[1:2].isdigit()):
                mask |= bits
        return mask

    def pattern(self, idx: int) -> re.Pattern[str]:
        pat = self.compiled[idx]
        if pat is None:
            pat = self.compiled[idx] = compile_cached(self.sources[idx], re.IGNORECASE)
        return pat

    def word_value(self, table: dict[str, int], text: str) -> int | None:
        key = " ".join(text.lower().split())
        return table.get(key)


def _read(path: Path) -> dict[str, Any]:
    try:
        with path.open(encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError) as exc:
        raise InvalidInput(f"language file {path} could not be read as JSON: {exc}") from None
    if not isinstance(data, dict):
        raise InvalidInput(f"language file {path} must hold a JSON object, got {type(data).__name__}")
    return data


def _dirs() -> list[Path]:
    dirs = [_BUILTIN_DIR]
    env = os.environ.get(LANG_PATH_ENV, "")
    dirs.extend(Path(p) for p in env.split(os.pathsep) if p.strip())
    dirs.extend(_extra_dirs)
    return dirs


def add_language_dir(path: str | os.PathLike[str]) -> None:
    """Also read language files from ``path`` (takes effect immediately)."""
    p = Path(path)
    if not p.is_dir():
        raise InvalidInput(f"language directory {str(p)!r} does not exist; pass a folder of <code>.json files")
    _extra_dirs.append(p)
    reload_languages()


def reload_languages() -> None:
    """Forget compiled languages, so files and ``CHRONORANK_INTENT_LANG_PATH`` are read again."""
    global _cache, _detectors
    with _lock:
        _cache = None
        _detectors = None
        _compiled.clear()


def _raw_all() -> tuple[dict[str, dict[str, Any]], dict[str, Any]]:
    """Every language file's data by code, and ``_common``'s (read once)."""
    global _cache
    cache = _cache
    if cache is not None:
        return cache
    with _lock:
        if _cache is not None:
            return _cache
        raw: dict[str, dict[str, Any]] = {}
        common: dict[str, Any] = {}
        for d in _dirs():
            if not d.is_dir():
                continue
            for path in sorted(d.glob("*.json")):
                data = _read(path)
                if path.name.startswith("_"):
                    if path.stem == "_common":
                        common = data
                    continue
                code = str(data.get("code") or path.stem).lower()
                raw[code] = data
        _cache = (raw, common)
        return _cache


def _load_all() -> dict[str, Language]:
    """Every language, compiled."""
    return {code: get_language(code) for code in _raw_all()[0]}


def available_languages() -> list[str]:
    """Codes of the languages found (built-in and added)."""
    return sorted(_raw_all()[0])


def get_language(code: str) -> Language:
    """The language ``code``, compiled on first use: a process compiles only the languages
    its queries are in (Russian's patterns are ~5-9 ms that an English rerun of ``chronorank
    eval`` does not need; a broken file is reported when its language is first asked for)."""
    key = str(code).lower()
    lang = _compiled.get(key)
    if lang is not None:
        return lang
    raw, common = _raw_all()
    data = raw.get(key)
    if data is None:
        raise InvalidInput(
            f"unknown language {code!r}; known: {', '.join(sorted(raw))}. "
            f"Add a <code>.json file to a folder listed in {LANG_PATH_ENV}."
        )
    with _lock:
        lang = _compiled.get(key)
        if lang is None:
            lang = _compiled[key] = _compile(key, data, common)
    return lang


def _detector(data: dict[str, Any]) -> tuple[re.Pattern[str] | None, float, frozenset[str]]:
    """What :func:`detect_language` reads of a language (as :func:`_compile_unchecked` builds it)."""
    detect = data.get("detect") or {}
    letters = detect.get("letters")
    return (
        re.compile(f"[{letters}]", re.IGNORECASE) if letters else None,
        float(detect.get("weight", 1.0)),
        frozenset(str(w).lower() for w in detect.get("stopwords") or []),
    )


def _all_detectors() -> dict[str, tuple[re.Pattern[str] | None, float, frozenset[str]]]:
    global _detectors
    found = _detectors
    if found is None:
        found = _detectors = {code: _detector(data) for code, data in _raw_all()[0].items()}
    return found


# --------------------------------------------------------------------------- compiling

def _placeholders(lang: dict[str, Any], units_alt: str) -> dict[str, str]:
    """Placeholder name -> regex body (without the group)."""
    words = lambda key: _alt((lang.get(key) or {}).keys())  # noqa: E731
    num = r"\d{1,7}"
    nums = (lang.get("numbers") or {}).keys()
    return {
        "year": r"(?<![\d,])(?:1\d{3}|2\d{3})(?!\d|\.\d|,\d)",
        "month": words("months") + r"(?!\w)",
        "season": words("seasons") + r"(?!\w)",
        "holiday": words("holidays") + r"(?!\w)",
        "day": r"(?<!\d)(?:[12]\d|3[01]|0?[1-9])(?!\d)",
        "dd": r"(?<!\d)(?:[12]\d|3[01]|0?[1-9])(?!\d)",
        "mm": r"(?<!\d)(?:1[0-2]|0?[1-9])(?!\d)",
        "quarter": r"[1-4](?!\d)",
        "half": r"[12](?!\d)",
        "ord": words("ordinals") + r"(?!\w)",
        "num": "(?:" + num + "|" + _alt(nums) + r")(?!\w)",
        "intnum": r"\d{1,4}(?![\w.]*\d|\s{1,3}(?:" + units_alt + r")(?!\w))",
        "smallint": r"\d{1,2}(?![\w%$€£°]|[.,/:-]\w|\s{1,3}(?:" + units_alt + "|" + words("months") + r")(?!\w))",
        "unit": units_alt + r"(?!\w)",
        "rel": words("relatives") + r"(?!\w)",
        "dayword": words("day_words") + r"(?!\w)",
        "decade": r"(?<!\d)(?:1\d|20)?\d0(?!\d)",
        "nameword": r"[^\W\d_][\w+#]*",
        "edition": _alt(lang.get("edition_words") or []) + r"(?!\w)",
        # Debian-style too: an epoch, "p1", "+deb12u3", "~rc2" ("the 1:9.2p1 upload")
        "version": r"v\d{1,4}(?:\.\d{1,4})*(?![\w.]*\d)"
                   r"|(?<![\d.])(?:\d{1,2}:)?\d{1,4}(?:\.\d{1,4}){1,3}(?:p\d{1,3})?(?:[~+][\w.~+]*\d)?(?:-\d{1,3}(?:[a-z~+][\w.~+]*)?(?![.\d]))?(?![\d.]*\d)",
        "event": _frag_alt(lang.get("anchor_events") or []) + r"(?!\w)",
        "word": r"[^\W_][\w'’-]*",
    }


def _expand(template: str, ph: dict[str, str], when_alts: dict[str, str], prefix: str | None) -> str:
    """Expand ``{name}`` placeholders; named groups ``<prefix>_<name>`` when prefix is given."""
    text = template.replace(" ", _SP)

    def repl(m: re.Match[str]) -> str:
        name = m.group(1)
        base = name.rstrip("0123456789")
        body = when_alts.get(base) if base in when_alts else ph.get(base)
        if body is None:
            raise InvalidInput(f"unknown placeholder {{{name}}} in language template {template!r}")
        if prefix is None:
            return f"(?:{body})"
        return f"(?P<{prefix}_{name}>{body})"

    return _PLACEHOLDER.sub(repl, text)


def _compile(code: str, data: dict[str, Any], common: dict[str, Any]) -> Language:
    try:
        return _compile_unchecked(code, data, common)
    except re.error as exc:
        raise InvalidInput(f"language {code!r}: a pattern does not compile: {exc}") from None


def _compile_unchecked(code: str, data: dict[str, Any], common: dict[str, Any]) -> Language:
    units = {str(k).lower(): str(v) for k, v in (data.get("units") or {}).items()}
    units_alt = _alt(units.keys())
    ph = _placeholders(data, units_alt)
    # "before / after X" where X is a version or an event: the operand's shape is language data
    ph["anchor"] = _expand(str(data.get("anchor") or r"(?!x)x"), ph, {}, None)

    when_specs = list(common.get("when") or []) + list(data.get("when") or [])
    # longer templates first so that alternation prefers the most specific form
    forms: list[WhenForm] = []
    for spec in when_specs:
        unit = str(spec.get("unit", "year"))
        if unit not in WHEN_UNITS:
            raise InvalidInput(f"language {code!r}: when unit {unit!r} is not one of {WHEN_UNITS}")
        forms.append(WhenForm(unit=unit, template=str(spec["re"]), bare=bool(spec.get("bare", False))))
    for f in forms:
        f.regex = compile_cached(_expand(f.template, ph, {}, "w"), re.IGNORECASE)
        f.has_year = "{year}" in f.template
    day_forms = [f for f in forms if f.unit == "day"]
    when_alts = {
        "when": "|".join(f"(?:{_expand(f.template, ph, {}, None)})" for f in forms),
        "date": "|".join(f"(?:{_expand(f.template, ph, {}, None)})" for f in day_forms) or r"(?!x)x",
        "bare": "|".join(f"(?:{_expand(f.template, ph, {}, None)})" for f in forms if f.bare) or r"(?!x)x",
    }

    lexicon_raw = data.get("lexicon") or {}
    pattern_specs = list(data.get("patterns") or []) + list(common.get("patterns") or [])
    # the versions from _common must come before a language's bare-number rules
    pattern_specs.sort(key=lambda s: 0 if s.get("kind") not in ("name_number", "old") else 1)
    if lexicon_raw.get("recent"):
        pattern_specs.append({"kind": "recent", "re": _frag_alt(lexicon_raw["recent"])})
    sources: list[str] = []
    kinds: list[str] = []
    tables = {
        "month": data.get("months") or {}, "season": data.get("seasons") or {},
        "holiday": data.get("holidays") or {},
        "num": data.get("numbers") or {}, "ord": data.get("ordinals") or {},
        "unit": units, "rel": data.get("relatives") or {}, "dayword": data.get("day_words") or {},
        "edition": {w: 1 for w in data.get("edition_words") or []},
    }
    when_literals = " ".join(f.template for f in forms)
    stem_masks: dict[int, dict[str, int]] = {}
    literal_memo: dict[Any, set[str]] = {}  # the tables live as long as this compile: ids stay unique
    digit_mask = anyword_mask = 0
    for i, spec in enumerate(pattern_specs):
        kind = str(spec.get("kind"))
        if kind not in KINDS:
            raise InvalidInput(f"language {code!r}: pattern kind {kind!r} is not one of {KINDS}")
        template = str(spec["re"])
        body = _expand(template, ph, when_alts, f"p{i}")
        sources.append(r"(?<!\w)(?:" + body + r")(?![^\W_])")
        kinds.append(kind)
        # which tokens may start this pattern (over-inclusive): its literal words, the words of
        # the tables its placeholders draw on, digits, and any word before a number
        names = {n.rstrip("0123456789") for n in _PLACEHOLDER.findall(template)}
        texts = [template]
        used = [tables[n] for n in names if n in tables]
        if names & {"when", "date", "bare"}:
            texts.append(when_literals)
            used += [tables["month"], tables["season"], tables["ord"], tables["holiday"]]
        for w in _literals(texts, used, literal_memo):
            stem_masks.setdefault(len(w), {}).setdefault(w, 0)
            stem_masks[len(w)][w] |= 1 << i
        if names - {"month", "season", "rel", "dayword", "edition", "unit", "nameword"} or "\\d" in template:
            digit_mask |= 1 << i
        if "nameword" in names or "[\\w" in template or "[A-Z]" in template:
            anyword_mask |= 1 << i
    lexicon = {
        k: compile_cached(r"(?<!\w)" + _frag_alt(v) + r"(?!\w)", re.IGNORECASE)
        for k, v in lexicon_raw.items()
        if k != "recent" and v
    }
    numbered_words = [str(w) for w in data.get("numbered_names") or []]
    # the name, then maybe a list of its numbers ("python 3.7, 3.8 and 3.9")
    numbered = compile_cached(
        r"(?<!\w)(?:" + "|".join(numbered_words) + r")\s{0,2}(?:\d[\d.x]*(?:\s*,\s*|\s+(?:and|or|to|и|или|до)\s+|\s*[-/]\s*))*$",
        re.IGNORECASE) if numbered_words else None
    letters, detect_weight, stopwords = _detector(data)
    triggers = data.get("triggers")
    trig_re = None
    if triggers:
        trig_re = compile_cached(r"(?<!\w)" + _frag_alt(triggers) + r"|\d", re.IGNORECASE)
    lw = lambda key: {str(k).lower(): int(v) for k, v in (data.get(key) or {}).items()}  # noqa: E731
    return Language(
        code=code,
        name=str(data.get("name", code)),
        data=data,
        months=lw("months"),
        seasons={str(k).lower(): (int(v[0]), int(v[1])) for k, v in (data.get("seasons") or {}).items()},
        holidays={str(k).lower(): (int(v[0]), int(v[1])) for k, v in (data.get("holidays") or {}).items()},
        numbers=lw("numbers"),
        ordinals=lw("ordinals"),
        units=units,
        relatives=lw("relatives"),
        day_words=lw("day_words"),
        articles=frozenset(str(w).lower() for w in data.get("articles") or []),
        prepositions=frozenset(str(w).lower() for w in data.get("prepositions") or []),
        not_names=frozenset(str(w).lower() for w in data.get("not_names") or []),
        period_words=tuple(str(w).lower() for w in data.get("period_words") or []),
        stopwords=stopwords,
        letters=letters,
        detect_weight=detect_weight,
        trigger=trig_re,
        when_forms=forms,
        sources=sources,
        compiled=[None] * len(sources),
        kinds=kinds,
        lexicon=lexicon,
        numbered=numbered,
        stem_masks={n: stem_masks[n] for n in sorted(stem_masks)},
        digit_mask=digit_mask,
        anyword_mask=anyword_mask,
    )


_REGEX_NOISE = re.compile(r"\\.|\{[a-z_]+[0-9]?\}|\{\d+(?:,\d*)?\}|\(\?[-a-zA-Z]*:|\(\?<?[=!]|\[[^\]]*\]")
_LITERAL = re.compile(r"[^\W\d_]+")


def _literals(templates: list[str], tables: list[Any], memo: dict[Any, set[str]] | None = None) -> set[str]:
    """Every literal word run in the templates and every word form in the tables, lower-cased.
    ``memo`` (one language's compile) keeps each template's and table's words: most patterns
    draw on the same month, ordinal and "when" tables (a third of a language's compile)."""
    memo = {} if memo is None else memo
    found: set[str] = set()
    for t in templates:
        words = memo.get(t)
        if words is None:
            words = memo[t] = {w.lower() for w in _LITERAL.findall(_REGEX_NOISE.sub(" ", t))}
        found |= words
    for table in tables:
        words = memo.get(id(table))
        if words is None:
            words = memo[id(table)] = {w.lower() for key in table for w in _LITERAL.findall(str(key))}
        found |= words
    return found


# --------------------------------------------------------------------------- detection

_WORD = re.compile(r"[^\W\d_]+")


def detect_language(text: str, default: str = "en") -> str:
    """The code of the language ``text`` is most likely in.

    Score = ``detect.weight`` x share of letters in the language's alphabet + half the
    share of its stopwords;
    ties go to ``default``. Works on the first 2,000 characters.
    """
    if not isinstance(text, str):
        return default
    sample = text[:2000]
    words = _WORD.findall(sample.lower())
    langs = _all_detectors()
    if not words:
        return default if default in langs else next(iter(sorted(langs)), default)
    n_letters = sum(len(w) for w in words)
    best, best_score = default, -1.0
    for code in sorted(langs, key=lambda c: c != default):
        letters, weight, stopwords = langs[code]
        score = 0.0
        if letters is not None:
            score += weight * len(letters.findall(sample)) / n_letters
        if stopwords:
            score += 0.5 * sum(w in stopwords for w in words) / len(words)
        if score > best_score + 1e-9:
            best, best_score = code, score
    return best
