"""A store's query preparation: the index's (:mod:`chronorank.index.query_prep`) through the
store's own searches.

Every search: the anchor's subject (``anchor_subject``) and the keyword text without a
question frame's change verb (``keyword_text``), as the index prepares its query.

``fallback='client'`` (the store runs the index's ranking rules over its pool) also does what
needs the corpus, in requests made only for the questions that need them and handed to the
store together (:class:`KeywordRequest`, :class:`PoolRequest`; QdrantStore sends them as one
batched request):

- "before / after <a version or an event>" with no date is dated as the index dates it
  (:func:`chronorank.temporal.resolve_anchor`): the engine's BM25 of the anchor's words (its
  best ``ANCHOR_MATCHES``), for a version anchor dated within the question's subject
  (``anchor_scope``, ``dated_in_subject`` over ``subject_scores`` of the engine's body and
  lead BM25 of the subject's words, its best ``ANCHOR_MATCHES``);
- an acronym is spelled out as the corpus spells it (``spell_acronyms``), the phrase found
  over the candidate pool of the question as asked (its dense and keyword lanes): a
  pool-local estimate of the index's whole-corpus count, exact when the pool holds every
  document that writes the acronym or its phrase;
- a name with its number glued on ("jinja2") also searched as the bare name when more of
  that pool write the bare name (``glued_names``; the index counts the whole corpus) -- the
  same pool, shared with the acronyms'.

Without the client fallback an undated anchor turns time off
(:func:`chronorank.temporal.without_undated_anchor`): a server-side search stays one engine
query plus its probe.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
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

__all__ = [
    "ANCHOR_MATCHES", "Found", "KeywordRequest", "PoolRequest", "Request", "StoreQuery", "plain_intent",
    "plain_overrides", "searched", "store_query",
]

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


@dataclass(frozen=True)
class KeywordRequest:
    """The best ``n`` BM25 matches of ``words`` (no time, no filter but the index's own: what
    starts after now is left out), with the lead's BM25 where ``lead_weight`` > 0."""

    words: str
    n: int
    lead_weight: float = 0.0


@dataclass(frozen=True)
class PoolRequest:
    """The documents of the dense and keyword lanes of ``text`` (``vector``: the caller's query vector)."""

    text: str
    lanes: Lanes
    vector: Any = None


@dataclass
class Found:
    """What a request found, best first: ids, the BM25 (and lead BM25) signal, start times, texts."""

    ids: list[str]
    bm25: np.ndarray
    start: np.ndarray
    texts: list[str]
    lead: np.ndarray | None = None


Request = KeywordRequest | PoolRequest
#: the store's answer to a list of requests, in order
Fetch = Callable[[Sequence[Request]], list[Found]]
Search = Callable[..., Ranking]


def searched(search: Search) -> Fetch:
    """A :data:`Fetch` by the store's own search (``search(text, k, **kw)`` at the query's time,
    called with ``raw=True``): one search per request."""

    def fetch(reqs: Sequence[Request]) -> list[Found]:
        out = []
        for r in reqs:
            if isinstance(r, KeywordRequest):
                got = search(r.words, r.n, intent=plain_intent(r.words), lanes=_keyword_lane(r.n), **_PLAIN,
                             dense_weight=0.0, keyword_weight=1.0, lead_weight=r.lead_weight)
            else:
                lanes = Lanes(dense=r.lanes.dense, keyword=r.lanes.keyword, windows=(), newest=0)
                got = search(r.text, r.lanes.dense + r.lanes.keyword, intent=plain_intent(r.text), vector=r.vector,
                             lanes=lanes, **_PLAIN)
            texts = [str(p.get("text") or "") if isinstance(p, Mapping) else "" for p in got.payloads or ()]
            sig = got.signals
            out.append(Found(
                ids=list(got.ids), bm25=np.asarray(sig.get("bm25", got.similarity), dtype=np.float64),
                start=np.asarray(got.time, dtype=np.float64), texts=texts,
                lead=np.asarray(sig["lead"], dtype=np.float64) if "lead" in sig else None))
        return out

    return fetch


def plain_overrides(lead_weight: float | None = None) -> dict[str, Any]:
    """The settings of a plain keyword / similarity search (no time, no client-side rule); with
    ``lead_weight``, keyword only."""
    if lead_weight is None:
        return dict(_PLAIN)
    return {**_PLAIN, "dense_weight": 0.0, "keyword_weight": 1.0, "lead_weight": float(lead_weight)}


def store_query(pq: PreparedQuery, fetch: Fetch, lanes: Lanes, *, raw: bool = False, vector: Any = None) -> StoreQuery:
    """The store's query for ``pq`` (its intent parsed with anchors kept). ``fetch`` answers the
    preparation's requests (all of one question in one call). ``vector``: the caller's query
    vector, if any."""
    intent = pq.intent
    if raw:
        return StoreQuery(without_undated_anchor(intent), pq.topical, pq.topical)
    client = pq.config.fallback == "client"
    topical = anchor_subject(pq.topical, intent)
    reqs: list[Request] = []
    words = rest = ""
    if intent.anchor is not None and intent.target is None:
        if client and float(pq.config.index.keyword_weight) > 0:
            words = anchor_terms(intent.anchor, intent.lang)
            reqs.append(KeywordRequest(words, ANCHOR_MATCHES))
            rest = anchor_scope(topical, words, intent.lang or "en")
            if rest:  # "before 2.0.0" in a question about requests is requests' 2.0.0
                reqs.append(KeywordRequest(rest, ANCHOR_MATCHES, float(getattr(pq.config.index, "lead_weight", 0.0))))
        else:
            intent = without_undated_anchor(intent)
    acronyms = client and bool(query_acronyms(topical))
    glued = client and GLUED.search(topical) is not None
    if (acronyms or glued) and lanes.dense + lanes.keyword > 0:
        reqs.append(PoolRequest(topical, lanes, vector))
    found = fetch(reqs) if reqs else []
    line = ""
    if words:
        intent, line = _date_anchor(intent, found[0], found[1] if rest else None, pq)
    texts = found[-1].texts if reqs and isinstance(reqs[-1], PoolRequest) else []
    spelled = topical
    if acronyms:
        spelled = spell_acronyms(topical, lambda acr: acronym_expansion(acr, texts))
    if glued:
        spelled = glued_names(spelled, lambda bare, glued: _docs_with(bare, texts) > _docs_with(glued, texts))
    intent = replace(intent, topical_query=topical)
    keywords = keyword_text(spelled, intent.lang)
    lead = name_numbers(keywords, intent.lang or "en")
    return StoreQuery(intent, spelled, keywords, line, lead if lead != keywords else "")


def _docs_with(word: str, texts: list[str]) -> int:
    """How many of ``texts`` write ``word`` as a word (the pool's estimate of its document frequency)."""
    pat = re.compile(rf"(?<!\w){re.escape(word)}(?!\w)", re.IGNORECASE)
    return sum(1 for t in texts if pat.search(t))


def plain_intent(text: str) -> Intent:
    """A question without time: a plain keyword / similarity search's intent."""
    return Intent(query=text, time_sensitivity=0.0, mode="timeless", topical_query=text)


def _keyword_lane(n: int) -> Lanes:
    return Lanes(dense=0, keyword=n, windows=(), newest=0)


def _date_anchor(intent: Intent, found: Found, on: Found | None, pq: PreparedQuery) -> tuple[Intent, str]:
    anchor = intent.anchor
    assert anchor is not None
    ids = found.ids
    match = found.bm25
    start = found.start
    within = None
    if on is not None and match.size:
        sig = [on.bm25] + ([on.lead] if on.lead is not None else [])
        score_of = dict(zip(on.ids, subject_scores(sig, len(on.ids)).tolist()))
        within = np.fromiter((score_of.get(d, 0.0) for d in ids), dtype=np.float64, count=len(ids))
    own = match
    if match.size and len(found.texts) == match.shape[0]:
        # a version is dated by its own page, as the index dates it
        own = dated_by_own_page(match, anchor.text, intent.lang or "en", TextRows(found.texts))
    return resolve_anchor(intent, dated_in_subject(match, own, within), start, pq.now, ids)
