"""A store's query preparation: the index's (:mod:`chronorank.index.query_prep`) through the
store's own searches.

Every search: the anchor's subject (``anchor_subject``) and the keyword text without a
question frame's change verb (``keyword_text``), as the index prepares its query.

``fallback='client'`` (the store runs the index's ranking rules over its pool) also does what
needs the corpus, in extra keyword requests made only for the questions that need them:

- "before / after <a version or an event>" with no date is dated as the index dates it
  (:func:`chronorank.temporal.resolve_anchor`): the engine's BM25 of the anchor's words (its
  best ``ANCHOR_MATCHES``), for a version anchor restricted to the documents on the
  question's subject (``subject_mask`` of the engine's body and lead BM25 of the subject's
  words, its best ``ANCHOR_MATCHES``) -- one or two keyword requests;
- an acronym is spelled out as the corpus spells it (``spell_acronyms``), the phrase found
  over the candidate pool of the question as asked (its dense and keyword lanes): a
  pool-local estimate of the index's whole-corpus count, exact when the pool holds every
  document that writes the acronym or its phrase -- one request;
- a name with its number glued on ("jinja2") also searched as the bare name when more of
  that pool write the bare name (``glued_names``; the index counts the whole corpus) -- the
  same request, shared with the acronyms'.

Without the client fallback an undated anchor turns time off
(:func:`chronorank.temporal.without_undated_anchor`): a server-side search stays one engine
query plus its probe.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from chronorank.index.query_prep import (
    GLUED,
    anchor_scope,
    anchor_subject,
    dated_by_own_page,
    dated_in_subject,
    glued_names,
    spell_acronyms,
    subject_scores,
)
from chronorank.index.text import acronym_expansion, query_acronyms
from chronorank.index.version_conflict import TextRows
from chronorank.intent.rules import anchor_terms, keyword_text, name_numbers
from chronorank.stores.config import Lanes
from chronorank.temporal import PreparedQuery, resolve_anchor, without_undated_anchor
from chronorank.types import Intent, Ranking

__all__ = ["ANCHOR_MATCHES", "StoreQuery", "store_query"]

#: How many keyword matches of an anchor's words (and of the question's subject) date it.
ANCHOR_MATCHES = 1000

# a plain keyword / similarity search inside the engine: no time, no client-side rule
_PLAIN = {"strength": 0.0, "relative_recency": None, "topical_margin": None, "fusion": "blend",
          "combine": "gated_multiply", "missing_date": "keep", "kernel": "exponential", "fallback": "error"}


@dataclass(frozen=True)
class StoreQuery:
    """A store query prepared as the index prepares its own."""

    intent: Intent  # final: an anchor dated (client) or time off (server); topical_query = the topic
    topical: str  # the text embedded (acronyms spelled out)
    keywords: str  # the keyword lanes' text
    anchor_line: str = ""  # how an anchor was dated, for the explanation
    lead_keywords: str = ""  # the lead lane's text, when it differs (``intent.rules.name_numbers``)


Search = Callable[..., Ranking]


def store_query(pq: PreparedQuery, search: Search, lanes: Lanes, *, raw: bool = False, vector: Any = None) -> StoreQuery:
    """The store's query for ``pq`` (its intent parsed with anchors kept). ``search(text, k,
    **kw)`` is the store's own search at ``pq.now`` (called with ``raw=True`` inside: a
    keyword request is not prepared again). ``vector``: the caller's query vector, if any."""
    intent = pq.intent
    if raw:
        return StoreQuery(without_undated_anchor(intent), pq.topical, pq.topical)
    client = pq.config.fallback == "client"
    topical = anchor_subject(pq.topical, intent)
    line = ""
    if intent.anchor is not None and intent.target is None:
        if client and float(pq.config.index.keyword_weight) > 0:
            intent, line = _date_anchor(intent, topical, search, pq)
        else:
            intent = without_undated_anchor(intent)
    spelled = topical
    texts: list[str] | None = None
    if client and query_acronyms(topical):
        texts = _pool_texts(topical, search, lanes, vector)
        spelled = spell_acronyms(topical, lambda acr: acronym_expansion(acr, texts or []))
    if client and GLUED.search(topical):
        pool = texts if texts is not None else _pool_texts(topical, search, lanes, vector)
        spelled = glued_names(spelled, lambda bare, glued: _docs_with(bare, pool) > _docs_with(glued, pool))
    intent = replace(intent, topical_query=topical)
    keywords = keyword_text(spelled, intent.lang)
    lead = name_numbers(keywords, intent.lang or "en")
    return StoreQuery(intent, spelled, keywords, line, lead if lead != keywords else "")


def _docs_with(word: str, texts: list[str]) -> int:
    """How many of ``texts`` write ``word`` as a word (the pool's estimate of its document frequency)."""
    pat = re.compile(rf"(?<!\w){re.escape(word)}(?!\w)", re.IGNORECASE)
    return sum(1 for t in texts if pat.search(t))


def _plain(text: str) -> Intent:
    return Intent(query=text, time_sensitivity=0.0, mode="timeless", topical_query=text)


def _keyword_lane(n: int) -> Lanes:
    return Lanes(dense=0, keyword=n, windows=(), newest=0)


def _date_anchor(intent: Intent, subject: str, search: Search, pq: PreparedQuery) -> tuple[Intent, str]:
    anchor = intent.anchor
    assert anchor is not None
    words = anchor_terms(anchor, intent.lang)
    found = search(words, ANCHOR_MATCHES, intent=_plain(words), lanes=_keyword_lane(ANCHOR_MATCHES),
                   **_PLAIN, dense_weight=0.0, keyword_weight=1.0, lead_weight=0.0)
    ids = list(found.ids)
    match = np.asarray(found.signals.get("bm25", found.similarity), dtype=np.float64)
    start = np.asarray(found.time, dtype=np.float64)
    rest = anchor_scope(subject, words, intent.lang or "en")
    within = None
    if rest and match.size:
        # "before 2.0.0" in a question about requests is requests' 2.0.0 (as the index dates it)
        on = search(rest, ANCHOR_MATCHES, intent=_plain(rest), lanes=_keyword_lane(ANCHOR_MATCHES),
                    **_PLAIN, dense_weight=0.0, keyword_weight=1.0,
                    lead_weight=float(getattr(pq.config.index, "lead_weight", 0.0)))
        sig = [np.asarray(v, dtype=np.float64) for name, v in on.signals.items() if name in ("bm25", "lead")]
        score_of = dict(zip(on.ids, subject_scores(sig, len(on.ids)).tolist()))
        within = np.fromiter((score_of.get(d, 0.0) for d in ids), dtype=np.float64, count=len(ids))
    own = match
    if match.size:
        texts = [str(p.get("text") or "") if isinstance(p, Mapping) else "" for p in found.payloads or ()]
        if len(texts) == match.shape[0]:  # a version is dated by its own page, as the index dates it
            own = dated_by_own_page(match, anchor.text, intent.lang or "en", TextRows(texts))
    return resolve_anchor(intent, dated_in_subject(match, own, within), start, pq.now, ids)


def _pool_texts(topical: str, search: Search, lanes: Lanes, vector: Any) -> list[str]:
    """The texts of the question's candidate pool as asked (its dense and keyword lanes)."""
    n = lanes.dense + lanes.keyword
    if n == 0:
        return []
    found = search(topical, n, intent=_plain(topical), vector=vector,
                   lanes=Lanes(dense=lanes.dense, keyword=lanes.keyword, windows=(), newest=0), **_PLAIN)
    return [str(p.get("text") or "") for p in found.payloads or () if isinstance(p, Mapping)]
