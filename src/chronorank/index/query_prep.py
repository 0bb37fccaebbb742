"""A question's preparation before retrieval, shared by the index and the stores: the anchor's
subject (:func:`anchor_subject`), the acronyms spelled as the corpus spells them
(:func:`spell_acronyms`), a name's bare spelling beside its glued one (:func:`glued_names`) and the documents on the question's subject that date a version
anchor (:func:`subject_mask`). Pure; the corpus is read through what the caller passes (the
index's whole snapshot, a store's keyword matches or candidate pool)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import numpy as np

from chronorank.index.text import query_acronyms, query_weights
from chronorank.index.version_conflict import naming, versions_of, without_versions
from chronorank.intent.rules import anchor_terms
from chronorank.types import Intent

__all__ = ["GLUED", "anchor_scope", "anchor_subject", "dated_in_subject", "dated_by_own_page", "glued_names", "spell_acronyms", "subject_mask", "subject_words"]

#: A document is on the question's subject when its keyword match is at least this share of the best's.
SUBJECT_SHARE = 0.5


def anchor_subject(topical: str, intent: Intent) -> str:
    """A question that names no subject besides its anchor takes the anchor's event noun as
    its topic: "what changed after the 3.0 release" asks about releases, so the topical query
    is "what changed release", not "what changed" (which any page about a change matches).
    Only when the rest has at most one content term: "rate limits after the 2.0 release"
    keeps "rate limits". The anchor's identifying words ("3.0") stay out -- they date the
    anchor, and the question asks about what came after it."""
    if intent.anchor is None or len(query_weights(topical)) > 1:
        return topical
    ident = set(anchor_terms(intent.anchor, intent.lang).lower().split())
    noun = " ".join(w for w in intent.anchor.text.split() if w.lower() not in ident)
    return f"{topical} {noun}" if noun else topical


def spell_acronyms(topical: str, expansion: Callable[[str], str | None]) -> str:
    """The topical query with each acronym followed by the phrase the corpus spells it with
    ("the SLA" -> "the SLA (service level agreement)"; ``expansion(acronym)``:
    :func:`chronorank.index.text.acronym_expansion` over the corpus's texts), for both the
    keywords and the embedding."""
    found = query_acronyms(topical)
    out = topical
    for acr in found:
        phrase = expansion(acr)
        if phrase is not None and phrase not in topical.lower():
            m = re.search(rf"\b{acr}s?\b", out)
            if m is not None:
                out = f"{out[:m.end()]} ({phrase}){out[m.end():]}"
    return out


#: a name with its number glued on ("jinja2", "python3"): the name, then the number
GLUED = re.compile(r"(?<![\w.])([^\W\d_]{3,})(\d{1,2})(?![\w.])")


def glued_names(topical: str, bare_is_commoner: Callable[[str, str], bool]) -> str:
    """The topical query with each name written with its number glued on ("jinja2",
    "python3") followed by the bare name, when ``bare_is_commoner(bare, glued)``: the corpus
    writes the bare name in more documents. "jinja2" is the Jinja project ("jinja 2.10."), and
    its rare glued form alone would match only the few pages that happen to spell it so."""
    out = topical
    for m in reversed(list(GLUED.finditer(topical))):
        if len(query_weights(m.group(1))) == 1 and len(query_weights(m.group(0))) <= 1 \
                and bare_is_commoner(m.group(1), m.group(0)):
            out = f"{out[:m.end()]} ({m.group(1)}){out[m.end():]}"
    return out


def subject_words(subject: str, words: str) -> str:
    """The question's subject less the anchor's identifying ``words`` ("" when nothing is left)."""
    ident = set(words.lower().split())
    return " ".join(w for w in subject.split() if w.lower() not in ident).strip()


def anchor_scope(subject: str, words: str, lang: str = "en") -> str:
    """The words whose documents date a version anchor ("" for none: an event anchor, "the
    migration to OAuth", is its own subject). An anchor that names its own subject besides the
    version ("before pip 20.3") is dated by that name's documents, whatever the rest of the
    question is about ("how could you try the new resolver": pip 20.3 is pip's release, not
    the first resolver page naming 20.3); a bare version ("before 3.0") by the question's
    subject (:func:`subject_words`) less the versions it names ("jinja 2.x final version
    before 3.0": the 2.x pages are not where 3.0 happened)."""
    if not any(c.isdigit() for c in words):
        return ""
    name = " ".join(w for w in without_versions(words, lang).split() if not any(c.isdigit() for c in w))
    rest = subject_words(subject, words)
    return name or " ".join(w for w in rest.split() if not w[:1].isdigit())


def subject_mask(signals: Mapping[str, np.ndarray] | Iterable[np.ndarray], n: int) -> np.ndarray | None:
    """The documents on the question's subject from its keyword signals (body and lead BM25 of
    :func:`subject_words`, each relative to its best, summed): at least ``SUBJECT_SHARE`` x the
    best sum. None when no document matches."""
    total = subject_scores(signals, n)
    best = float(total.max()) if total.size else 0.0
    return None if best <= 0 else total >= SUBJECT_SHARE * best


def dated_in_subject(match: np.ndarray, own: np.ndarray, subject: np.ndarray | None) -> np.ndarray:
    """The anchor's keyword ``match`` kept to the question's subject (``subject``: each
    document's :func:`subject_scores`, None: no subject). ``own`` is
    :func:`dated_by_own_page` of the whole ``match`` (``match`` itself when no lead names the
    version). The pages that name the version in their lead are judged among themselves: of
    them, the ones at least ``SUBJECT_SHARE`` x the best of them on the subject ("jinja
    final version before 3.0": jinja 3.0.0's long entry says "jinja" less often per word than
    the short 2.x entries that mention 3.0, yet most of the x.3.0 pages); without such pages
    the match is kept to the subject's documents (:func:`subject_mask`)."""
    if subject is None or float(subject.max(initial=0.0)) <= 0:
        return own
    if own is not match:
        s = np.where(own > 0, subject, 0.0)
        top = float(s.max(initial=0.0))
        return np.where(s >= SUBJECT_SHARE * top, own, 0.0) if top > 0 else own
    within = subject >= SUBJECT_SHARE * float(subject.max())
    return np.where(within, match, 0.0) if (match[within] > 0).any() else match


def subject_scores(signals: Mapping[str, np.ndarray] | Iterable[np.ndarray], n: int) -> np.ndarray:
    """Each document's match for the question's subject: its keyword signals, each relative to
    its best, summed (0 where none matches)."""
    total = np.zeros(n, dtype=np.float64)
    for v in (signals.values() if isinstance(signals, Mapping) else signals):
        top = float(np.max(v)) if v.size else 0.0
        if top > 0:
            total += np.asarray(v, dtype=np.float64) / top
    return total


def dated_by_own_page(match: np.ndarray, anchor: str, lang: str, rows: Any) -> np.ndarray:
    """A version anchor's keyword ``match`` kept to the documents whose lead names that version
    ("pip 21.0."), when any does: a version is dated by its own page, not by an earlier page
    announcing it ("will be removed in pip 21.0"). ``rows``: the documents as
    :func:`chronorank.index.version_conflict.naming` reads them (the index's snapshot, or
    ``TextRows`` of a store's matches), in ``match``'s order."""
    asked = versions_of(anchor, "same", lang)
    if asked is None:
        return match
    hits = np.flatnonzero(match > 0)
    own = naming(rows, asked, lang, hits)[hits]
    if not own.any():
        return match
    keep = np.zeros(match.shape[0], dtype=bool)
    keep[hits[own]] = True
    return np.where(keep, match, 0.0)
