"""The ranking as one pipeline of named stages over columns (the temporal layer).

:func:`rank` is the ranking, and its body is the one place where the stages' order is
written. Every engine calls it: the index over its rows or its exact pool
(``index/core.py::_score_rows``), the reranker and so every rerank adapter, and the stores'
client-side step (``fallback='client'``) over their candidate pool. In the order a query
meets them:

1. ``shape``: :func:`shape_factor`, :func:`shaped`, :func:`cut_margin` -- the name-lookup
   mechanisms and the topic cut fade with the question's length;
2. ``burst``: :func:`may_be_current`, :func:`burst_scale`, :func:`current_event` -- a question
   whose best matches crowd the last days is about a current event (1 and 2 are
   :func:`prepare`, which the index runs once over its whole corpus before it pools);
3. ``flatten``: :func:`flatten_top` -- the topical cluster ties, time decides inside it;
4. ``title chains``: :func:`title_chains` -- pages with one title are versions of one page
   (a timeless question worded in the present);
5. ``time``: :func:`chronorank.temporal.apply_temporal` (decay, validity, periods, anchors);
6. ``topic first``: :func:`chronorank.temporal.topic_first` -- time reorders on-topic pages only
   (:func:`topic_decision` keeps the numbers for the explanation); ``facet``: :func:`facet_first`
   -- the on-topic pages matching the question's specific part rank first, so relative recency is
   measured within them (:func:`term_facet`: read word by word when the keyword score is a slope);
   on a page in sections (:func:`sectioned`), ``section chain``: :func:`section_chain` -- the best
   match's section (its versions) ranks first -- and ``in force``: :func:`in_force_first` -- its
   version in force at the asked instant (:func:`asked_instant`) leads it, or for "since X" the
   state now and the first change after X (:func:`chain_picks`, :func:`lead_chain`);
7. ``versions``: :func:`first_versions` + :func:`chronorank.temporal.versions_first` -- the
   first hit's other versions (and the anchor event's page) stay above pages much less similar;
8. ``across the boundary``: :func:`open_side`, :func:`across_boundary` -- a before / after
   question's first hit is followed by its version across the boundary;
9. ``version conflict``: :func:`conflicts_last` -- a page whose title names only versions the
   question rules out ranks below its tier (which pages do: ``index/version_conflict.py``,
   over the index's snapshot or over candidates' texts);
10. ``origin``: :func:`origin_first` -- a timeless question over release notes: the release
    that introduced what it asks about (the earliest strong match of the first hit's series
    naming it in one sentence) ranks first;
11. ``anchor page``: :func:`anchor_page_first` -- a before question's anchor page ranks first
    when it alone is a strong match (it says what came before it).

What only an engine knows comes in as explicit parameters of :func:`rank`: the index's pool
and its similarity bound, the anchor's event page (dated through the whole corpus) and a
before question's anchor page (the one that dated it, its title naming the version), lookups
of title codes, series keys and vectors, the version-conflict question, a top-k cut.
``meta["stages"]`` names the stages that ran. The burst stage is the index's only
(``Rules(burst_ratio=None)`` in the reranker and the stores): it compares the best matches
with the whole collection's ages, which a candidate pool does not hold.
Inputs are numpy columns: the fused similarity, the signals it was fused from when known
(``dense``, ``bm25``, ``lead``), times, validity, group codes, the texts (their leads give
series keys, title chains and the versions they name) and optional vectors. Pure, no I/O.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import math
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from chronorank.intent.lang import get_language
from chronorank.intent.rules import asks_past
from chronorank.temporal import (
    DEFAULT_TOPICAL_MARGIN,
    VERSION_CORE,
    Pool,
    TemporalPlan,
    TemporalResult,
    apply_temporal,
    median_of,
    near_tier,
    rank_first,
    topic_first,
    topic_gap,
    versions_first,
)
from chronorank.types import Intent, tied_at_cut

__all__ = [
    "Conflicts",
    "Prepared",
    "Ranked",
    "Rules",
    "STAGES",
    "TopicDecision",
    "across_boundary",
    "anchor_event",
    "anchor_page_first",
    "asked_instant",
    "chain_of",
    "chains_of",
    "burst_scale",
    "conflicts_last",
    "current_event",
    "cut_margin",
    "facet_first",
    "first_versions",
    "flatten_margin",
    "flatten_top",
    "in_force_first",
    "chain_picks",
    "lead_chain",
    "lead_cut",
    "may_be_current",
    "key_codes",
    "open_side",
    "origin_first",
    "prepare",
    "rank",
    "release_header",
    "section_chain",
    "section_key",
    "sectioned",
    "series_key",
    "shape_factor",
    "shaped",
    "term_facet",
    "title_chains",
    "title_codes",
    "title_key",
    "topic_decision",
]

#: The stages in order (what ``meta["stages"]`` names).
STAGES = ("shape", "burst", "flatten", "title chains", "time", "topic first", "facet", "section chain", "in force",
          "versions", "across the boundary", "version conflict", "origin", "anchor page")

#: The rules' defaults, read by ``IndexConfig`` too (one set of defaults for every engine).
DEFAULT_TIE_BREAK = 0.02
DEFAULT_SHORT_QUERY_TERMS = 6
DEFAULT_BURST_RATIO = 0.1
DEFAULT_TOPIC_FLOOR = 0.75
DEFAULT_TOPIC_LEAD_FLOOR = 0.5
DEFAULT_VERSION_FLOOR = 0.5
DEFAULT_LEAD_TOKENS = 12

#: The pool's cuts are order statistics of a strided sample of about this many documents.
POOL_SAMPLE = 2048


def shaped(cfg: Any, terms: int) -> Any:
    """The name-lookup mechanisms (lead field, ``idf_power``, topical margin) scaled by the
    query's shape: full strength up to ``short_query_terms`` distinct known terms, fading
    linearly to off at twice that. A short query names its subject ("latest httpx release":
    the document *about* httpx, its rarest term, its header); a long question describes an
    event in many ordinary words ("Police arrested 31 men this week believed to be ... Where
    was the event?"), where a title match or one rare word says little and the body decides.
    Topical query terms: release corpus 3-5, changelogs 2-4 (reworded 1-6, Russian 2-6),
    synthetic 3-4, news-dev questions 4-21 (median 10). Measured (benchmarks/cross_domain.py,
    MiniLM): news-dev fresh_only / fresh_vs_stale 0.762 / 0.664 -> 0.789 / 0.675 when it
    came; 0.782 / 0.670 -> 0.811 / 0.695 in the committed run, with ``current_event``
    (while tuning: 0.750 / 0.642 -> 0.784 / 0.665 at n = 6; n = 4: 0.792 / 0.675 but
    reworded changelogs 0.974 -> 0.970; n = 8: 0.773 / 0.652); release, changelogs (all
    three query sets) and synthetic unchanged.
    """
    f = shape_factor(cfg.short_query_terms, terms)
    if f == 1.0:
        return cfg
    margin = cfg.topical_margin
    if margin is not None:
        margin = None if f == 0 else 1.0 - f * (1.0 - margin)
    # the topic cut's floors fade towards no cut, with its margin (``cut_margin``)
    dense_floor = None if cfg.topic_floor is None or f == 0 else cfg.topic_floor * f
    lead_floor = None if cfg.topic_lead_floor is None or f == 0 else cfg.topic_lead_floor * f
    fused = {name: getattr(cfg, name) * f for name in ("lead_weight", "idf_power") if hasattr(cfg, name)}
    return dataclasses.replace(cfg, **fused, topical_margin=margin, topic_floor=dense_floor, topic_lead_floor=lead_floor)


def shape_factor(n: int | None, terms: int) -> float:
    """1 up to ``n`` distinct known query terms, fading linearly to 0 at ``2n`` (``shaped``)."""
    if n is None or terms <= n:
        return 1.0
    return max(0.0, (2 * n - terms) / n)


def cut_margin(cfg: Any, terms: int) -> float | None:
    """The topic cut's fused-similarity margin (:func:`chronorank.temporal.topic_first`) for a
    query of ``terms`` known terms: ``topical_margin`` x the shape factor, None (no cut) at 0.

    The cut fades with the query's shape towards *no cut*, as its dense and lead floors do
    (``shaped``), where the flattening margin fades towards *no flattening* (1). Using the
    flattening margin for the cut made it strictest just before it switched off: at 11 terms
    only documents within 0.92 x the best fused score, or 0.75 x the best cosine, could be
    moved by time, at 12 none was held back. news-dev (benchmarks/cross_domain.py, MiniLM,
    fresh_only / fresh_vs_stale, committed run): 0.788 / 0.692 -> 0.800 / 0.705 (similarity
    only 0.736 / 0.621 -> 0.740 / 0.631); while choosing: switching the cut off for every
    faded query 0.804 / 0.705, keeping the unfaded 0.5 0.794 / 0.711. Release, changelogs
    (all three query sets), synthetic, benchmarks/time_semantics.py (top-1 0.986, off-topic
    above 18) and benchmarks/index_quality.py do not move: their questions have at most
    ``short_query_terms`` known terms, where the cut is as it was.
    """
    m = cfg.topical_margin
    f = shape_factor(cfg.short_query_terms, terms)
    return None if m is None or f == 0 else m * f


def may_be_current(intent: Intent, now: float) -> bool:
    """Whether the burst test may make ``intent`` a current-event query: ``timeless`` with no
    time expression, ``recent``, or a period that runs up to the reference time ("this
    week", "this month": a range ending within a day of now or later)."""
    if intent.mode == "timeless":
        return not intent.spans
    if intent.mode == "recent":
        return True
    t = intent.target
    return intent.mode == "range" and t is not None and math.isfinite(t.start) and t.end >= now - 86400.0


def burst_scale(
    sim: np.ndarray, times: np.ndarray, now: float, share: float, past_only: bool, k: int = 10, rank: int = 3,
    cache: dict[Any, Any] | None = None,
) -> float | None:
    """The time scale (days) of a temporal burst, or None when the query shows none.

    A burst (a temporal profile of the query, after Jones & Diaz, 2007): the ``rank``-th
    newest of the ``k`` most similar dated documents is newer than the newest ``share`` of
    all dated ones (their age quantile ``share``). Its scale is the median age of those
    ``k``. A question with no usable time cue whose matches crowd the last days ("Which
    automaker recalled 2.9 million vehicles?") is about a current event; one whose matches
    spread like the collection ("how was the billing api originally introduced": four
    versions over three years) is not. Three of ten rather than the median: a news
    question's best matches mix this week's reports with older background stories on the
    same subject. news-dev (benchmarks/cross_domain.py, MiniLM; with ``current_event``):
    the median test at 0.5 gave 0.808 / 0.684, this one at ``share`` 0.05 / 0.1 / 0.2
    0.804 / 0.685, 0.811 / 0.695, 0.814 / 0.693 (rank 2 at 0.1: 0.811 / 0.696) -- but 0.2
    (and rank 2 at 0.1) turn the synthetic "originally" queries into bursts (0.904 ->
    0.860), and 0.3 the changelog "latest" ones (0.977 -> 0.955): 0.1 is the largest share
    that leaves release, changelogs (all three query sets) and synthetic unchanged. Around
    it the figure is flat: 4 of 20 0.807 / 0.695, 5 of 20 0.806 / 0.688, 2 of 5 0.812 /
    0.688. Not taken: letting ``specific`` queries burst too (0.814 / 0.703, nothing else
    moves; but a query that names an edition or version keeps its exact answer).

    Not taken: a second test against the subject's own history (the rank-th newest also newer
    than the newest ``share`` of the question's 100 best matches), for a project releasing
    every few weeks fills the collection's newest tenth whatever is asked about it ("tox
    support for pylock.toml lock files"). changelogs-user ``lookup`` 0.788 -> 0.815, but
    news-dev fresh_vs_stale 0.701 -> 0.694 (0.697 at a share of 0.2), past the cross-domain
    guard with the rest of the round.

    ``cache`` (the index state's ``derived`` dict, when ``times`` are all of its documents)
    keeps the collection's side -- which documents count, their age quantile -- for the last
    (now, past_only, share) asked: it does not depend on the query.
    """
    key = ("burst", now, past_only, share, k)
    hit = cache.get("burst") if cache is not None else None
    if hit is not None and hit[0] == key:
        ok, quantile = hit[1], hit[2]
    else:
        ok = times <= now if past_only else ~np.isnan(times)  # NaN <= now is False
        count = int(np.count_nonzero(ok))
        quantile = None
        if count >= 4 * k:
            quantile = quantile_linear((now - times[ok]) / 86400.0, share)
        if cache is not None:
            cache["burst"] = (key, ok, quantile)
    if quantile is None:
        return None
    top = best_matching(sim, ok, k) if sim.shape[0] > 4 * POOL_SAMPLE else None
    if top is None:
        matching = np.flatnonzero(ok & (sim > 0))  # the best k that match at all
        if matching.shape[0] < rank:
            return None
        top = matching[np.argpartition(-sim[matching], k - 1)[:k]] if matching.shape[0] > k else matching
    top_age = np.sort((now - times[top]) / 86400.0)
    if not float(top_age[rank - 1]) < quantile:
        return None
    return median_of(top_age)


def quantile_linear(values: np.ndarray, q: float) -> float:
    """``float(np.quantile(values, q))`` (method ``linear``, float64, no NaN, 0 <= q <= 1),
    with numpy's own arithmetic step for step -- bit-identical -- but without the
    ``numpy.ma`` that ``np.quantile`` imports (np.unique, its partition, asks ``np.ma``):
    ~7 ms of a cached rerun of ``chronorank eval`` (benchmarks/embed_cache.py)."""
    n = values.shape[0]
    virtual = (n - 1) * float(q)
    if virtual >= n - 1:
        return float(np.max(values))
    lo = math.floor(virtual)
    part = np.partition(values, (lo, lo + 1))
    a, b = float(part[lo]), float(part[lo + 1])
    gamma = virtual - lo
    diff = b - a
    return b - diff * (1 - gamma) if gamma >= 0.5 else a + diff * gamma


def best_matching(sim: np.ndarray, ok: np.ndarray, k: int) -> np.ndarray | None:
    """The ``k`` best positive ``sim`` where ``ok``, found among the documents above a sampled
    cut, when they are the only k best (no tie at the k-th); else None (ask every document)."""
    v = sample_kth(sim, 8 * k)
    if not v > 0:
        return None
    cand = np.flatnonzero(sim >= v)  # every document outside scores below v
    cand = cand[ok[cand]]
    if cand.shape[0] < k:
        return None
    order = np.argsort(-sim[cand], kind="stable")
    if cand.shape[0] > k and sim[cand[order[k - 1]]] == sim[cand[order[k]]]:
        return None  # tied at the k-th: which of them the whole corpus picks is its own affair
    return cand[order[:k]]


#: The shortest half-life a burst sets (days): a week, the cycle of news questions.
BURST_MIN_HALF_LIFE = 7.0


def current_event(intent: Intent, tcfg: Any, scale: float) -> tuple[Intent, Any]:
    """A burst query as a current-event one: ``recent`` at full time sensitivity (a period
    up to now becomes "now"), the kernel's half-life cut to half the burst's scale (at least
    ``BURST_MIN_HALF_LIFE``; never lengthened), and age counted from the reference time, not
    from the newest competitor (``relative_recency`` off: last month's report on the same
    subject is stale even when nothing as similar came after it).

    Measured on news-dev (benchmarks/cross_domain.py, MiniLM, fresh_only / fresh_vs_stale;
    before it the burst -- then a median-age test -- only switched a ``timeless`` query to
    ``recent`` at its own sensitivity, 0.789 / 0.675), adding one step at a time: full
    sensitivity 0.795 / 0.679; also for ``recent`` queries and up-to-now periods 0.805 /
    0.677; half-life 0.5 x scale 0.807 / 0.682; no relative recency 0.808 / 0.684; the
    share-of-collection burst test 0.811 / 0.695. Variants of the last: half-life 1 x scale
    (at least 3 days) 0.804 / 0.695, 1 x the third-newest match's age 0.816 / 0.688, a
    weibull(7, shape 1.5) at strength 0.75 0.815 / 0.705 (not taken: a fixed week-scale
    shape); half-life 0.3 / 0.7 x scale 0.814 / 0.691, 0.810 / 0.696. Release, changelogs
    (all three query sets) and synthetic show no burst and do not change. A period up to now
    that shows no burst keeps its range semantics: as ``recent`` with the period's length as
    half-life it scores 0.809 / 0.686. Forcing *every* news question to ``recent`` at full
    sensitivity gives 0.821 / 0.727 with the default kernel and 0.841 / 0.780 with that
    week-scale one: the rest of the gap is questions whose matches show no burst, and
    fresh_only is limited by similarity.
    Committed run: ``burst_ratio=none`` 0.787 / 0.669 -> 0.811 / 0.695, nothing else moves.
    """
    intent = dataclasses.replace(intent, mode="recent", target=None, time_sensitivity=1.0)
    kernel = tcfg.kernel
    hl = kernel.half_life() if hasattr(kernel, "half_life") else None
    changes: dict[str, Any] = {"relative_recency": None}
    short = max(0.5 * scale, BURST_MIN_HALF_LIFE)
    if hl and short < hl and hasattr(kernel, "half_life_days") and dataclasses.is_dataclass(kernel) and not isinstance(kernel, type):
        changes["kernel"] = dataclasses.replace(kernel, half_life_days=short)
    return intent, dataclasses.replace(tcfg, **changes)


def flatten_margin(sim: np.ndarray, margin: float) -> float:
    """The flattening margin of one query: ``margin``, raised to the floor of the near tier
    (:func:`chronorank.temporal.near_tier`, the documents above the widest step down from the
    best match within ``margin`` x the best), and 1 (nothing ties) when the best match stands
    alone above that step. Only documents about as good a match as the best one tie, so time
    decides among near-equals and never lifts a clearly worse match to the best one's level.

    The fixed margin tied every document within 0.5 x the best (0.5-0.75 for a question of 7-9
    terms): where every section of a policy shares its page title, the title's match alone put
    sibling sections in the tie, and the freshest won ("what are the rules on the changelog in
    the AUP right now" -> another service's AUP, fused 0.54 against the changelog's 0.85).
    Measured on policies-dev's train split (benchmarks/cross_domain.py, MiniLM; the dev split
    is only reported): nDCG@10 0.417 -> 0.587; the other domains in :mod:`chronorank.index.config`.
    Computed once per query over every candidate, so a pool and the whole corpus flatten alike.
    """
    live = sim > -np.inf
    top = float(np.max(sim, where=live, initial=-np.inf)) if live.any() else 0.0
    if not top > 0:
        return margin
    tier = near_tier(sim, live, margin)
    if tier is None:
        return 1.0
    return max(margin, float(np.min(sim, where=tier & live, initial=top)) / top)


#: :func:`sectioned` reads the titles of at most this many candidates sharing the best match's date
SECTION_PEERS = 64


def _most_similar(sim: np.ndarray, m: int) -> np.ndarray:
    """The positions of the ``m`` highest entries of ``sim`` (of tied ones at the ``m``-th, the
    first), in no stated order: read among the entries at or above a sampled bound
    (:func:`sample_kth`) rather than partitioning the whole corpus. The sample's order
    statistic scaled to ``m`` holds fewer than ``m`` entries about one time in three (a
    search's fused similarity, 100k documents); then its ``m``-th largest, which holds ``m``
    of the sample already."""
    n = sim.shape[0]
    if n <= m:
        return np.arange(n)
    cand = np.flatnonzero(sim >= sample_kth(sim, m))
    if cand.shape[0] < m:
        cand = np.flatnonzero(sim >= kth_largest(sim[:: max(1, n // POOL_SAMPLE)], m))
    if cand.shape[0] < m or cand.shape[0] > n // 4:  # the bound missed (or NaN, ties): every entry
        cand = np.flatnonzero(~np.isnan(sim))
        if cand.shape[0] < m:  # NaN last, as a partition of -sim puts it
            return np.argsort(-sim, kind="stable")[:m]
    s = sim[cand]
    kth = np.partition(s, s.shape[0] - m)[s.shape[0] - m]
    above = cand[s > kth]
    return np.concatenate([above, cand[s == kth][: m - above.shape[0]]])


def sectioned(titles_of: Callable[[np.ndarray], np.ndarray], times: np.ndarray, sim: np.ndarray) -> bool:
    """Whether the best match is a section of a page: two candidates share its title
    (``titles_of(positions)``: a code per position, equal for equal leads, -1 for none; as
    :func:`title_codes`) *and* one date. Versions of a page or releases of a project each have
    their own date; a page recorded in sections has one title and one date for all of them, so
    its title says which page, not which section (:func:`flatten_margin`). Read: the
    candidates dated as the best match (the ``SECTION_PEERS`` most similar of them), and the
    ``SECTION_PEERS`` most similar candidates -- a section's newest version is often the only
    one of its page recorded that day, while its siblings share their first record
    (:func:`section_peers`). Only the titles of the best match and of the peers whose date
    another peer shares are read (a pair can share a date only among those): most peers of a
    corpus dated to the second have a date of their own, and a title is a regex over a lead."""
    pos = section_peers(times, sim)
    if pos is None:
        return False
    when = times[pos]
    order = np.argsort(when, kind="stable")
    w = when[order]
    same = np.isfinite(w[1:]) & (w[1:] == w[:-1])  # NaN != NaN: an undated peer pairs with none
    if not same.any():
        return False
    twin = np.zeros(pos.shape[0], dtype=bool)
    twin[order[1:][same]] = True
    twin[order[:-1][same]] = True
    best = int(np.argmax(sim))
    read = pos[twin | (pos == best)]  # ascending, as pos
    codes = np.asarray(titles_of(read))
    code = codes[read == best][0]
    if code < 0:
        return False
    dated = np.sort(times[read[codes == code]])
    return bool((dated[1:] == dated[:-1]).any())  # finite: undated peers are not twins


def section_peers(times: np.ndarray, sim: np.ndarray) -> np.ndarray | None:
    """The positions :func:`sectioned` reads, ascending: the best match, the candidates dated
    as it (the ``SECTION_PEERS`` most similar of them) and the ``SECTION_PEERS`` most similar
    candidates; None when there is no candidate or the best match is undated."""
    if not sim.size:
        return None
    best = int(np.argmax(sim))
    when = times[best]
    if not np.isfinite(when):
        return None
    same = np.flatnonzero(times == when)
    if same.shape[0] > SECTION_PEERS:  # the best match is the most similar: always kept
        same = same[np.argsort(-sim[same], kind="stable")[:SECTION_PEERS]]
    near = _most_similar(sim, SECTION_PEERS)
    pos = np.sort(np.concatenate([same, near, [best]]))
    return pos[np.concatenate([[True], pos[1:] != pos[:-1]])]  # np.union1d would import numpy.ma


def topic_floors(
    signals: Mapping[str, np.ndarray], dense: float | None, lead: float | None, sections: bool,
) -> list[tuple[np.ndarray, float | None]]:
    """The ``others`` of :func:`chronorank.temporal.topic_first`: the dense and lead floors,
    none for a section of a page (:func:`sectioned`). Every section of a page shares its lead
    (the page's title) and, in its embedding, the page's subject (the sections of one policy:
    cosine 0.62-0.77 to one question), so either floor kept every sibling on topic and time
    picked the freshest; the fused near tier alone decides there. policies-dev train (MiniLM):
    0.572 -> 0.591 with the near tier for long questions too (``calibrated``)."""
    if sections:
        return []
    return [(signals[k], f) for k, f in (("dense", dense), ("lead", lead)) if k in signals]


def flatten_top(sim: np.ndarray, margin: float, tie_break: float) -> np.ndarray:
    """(1 - e) * min(1, s / (m * max)) + e * s / max: the topical cluster ties, time decides."""
    top = float(sim.max()) if sim.size else 0.0
    # no positive best match (or one so near 0 that scores divided by it overflow): nothing to flatten
    if top <= 0 or float(sim.min()) < -top * 1e300:
        return sim
    rel = sim / top
    flat = np.divide(rel, margin)
    np.minimum(flat, 1.0, out=flat)
    np.multiply(flat, 1.0 - tie_break, out=flat)
    return np.add(flat, np.multiply(rel, tie_break, out=rel), out=flat)


def topic_rule(
    margin: float | None, others: list[tuple[str, float]], versions: float | None = None,
    asked: Any = None,
) -> str:
    if margin is None:
        return ""
    dense = "".join(f", or {k} >= {floor:g} x the best {k}" for k, floor in others)
    kept = "" if versions is None else (
        "; the first hit's other versions (same group key, or the same first sentence but for the "
        f"words holding a digit, on topic or with text cosine >= {versions:g}) rank above every page "
        f"under {VERSION_CORE:g} x the best fused similarity, when the first hit is not or a version "
        "is the best match")
    if asked is not None:
        which = asked.text if asked.relation == "same" else f"{asked.relation} {asked.text}"
        kept += (f"; the question asks about version {which}: a page whose first sentence names only "
                 "other versions ranks below the pages of its tier (on topic, or not) that name it or none")
    return (f"on topic = fused similarity >= {margin:g} x the best candidate's{dense}, and above the widest "
            "step down in the fused similarities (or in the lead) from the best match -- a clearly worse "
            "match is off topic; time reorders "
            f"only within the on-topic set, which always ranks above the rest{kept}")


def facet_first(
    score: np.ndarray, on_topic: np.ndarray, words: np.ndarray, meaning: np.ndarray, live: np.ndarray,
    margin: float, titles: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray] | None:
    """The on-topic documents that also match the question's specific part rank first, so that
    time orders them among themselves: "werkzeug safe_join on windows: newest fix?" asks for
    the newest entry *about safe_join*, not the newest werkzeug release, which the subject
    ("werkzeug", every release's title) keeps on topic with it. Relative recency is measured
    within the set that matches the topic.

    The facet is the near tier of the keyword signal ``words`` (BM25) among the on-topic
    documents (:func:`chronorank.temporal.near_tier` at the topic cut's ``margin``; the rest
    below ``margin`` x its lowest), and only when the meaning signal (``meaning``, the dense
    cosine) agrees: the on-topic document of best meaning is in the tier. Words alone do not say which part of a question is specific: "what changed in the
    latest release of requests" splits requests' releases on the words "changed" and
    "release", and the releases that happen to say them are no better answers; there the
    dense cosine of the tier is no higher than the rest's. With ``titles`` (the lead signal)
    the facet is read among the subject's own documents (a title match of at least ``margin``
    x the best on topic: a page of another project that names the thing in its body, on topic
    by its cosine, is no part of it -- it ranks with the rest of the on-topic set), and some
    document left out of it has a title match as strong as the facet's weakest. A fresh page worded differently from the
    stale ones it replaced ("Announcing our 2026 prices" after two "Pro plan pricing" pages)
    loses the question's words *and* its title match: it is not another entry of the same
    subject, and relative recency still counts from it. Measured (benchmarks/cross_domain.py,
    default MiniLM index): changelogs-user ``latest`` 0.745 -> 0.763 (the safe_join question
    0.53 -> 1.00), nothing else of the default row moves but policies-dev *train* ``before``
    0.538 -> 0.548 and ``period`` 0.485 -> 0.483 (dev unchanged); benchmarks/time_semantics.py
    unchanged. Without the dense agreement (keywords alone) the facet split the releases of a
    project on "changed", "release", "version", "notes": changelogs reworded ``as_of`` 0.974 ->
    0.866, original ``latest`` 0.988 -> 0.942. The agreement asked first that *every* document
    of the tier be a better meaning than every other; an entry that names the specific part in
    one line of a long list of other changes has a diluted cosine ("tox support for pylock.toml
    lock files": the newer of the two entries naming pylock had a cosine below three siblings
    that do not), and the facet fell through to time over the whole project. The best meaning
    match in the tier is what says the question's meaning points at the specific part:
    changelogs-user ``lookup`` 0.788 -> 0.807, ``latest`` 0.766 -> 0.789 (the two questions
    that move: tox pylock, rich markdown), nothing else of the default row moves (the minimum
    tier cosine above the rest's median instead: reworded ``latest`` 0.988 -> 0.971).

    A facet may be one document: "what did the tzdata update say about Paraguay" names one
    entry among the tzdata entries its title keeps on topic (keywords 14 x the next one's,
    and the best cosine), so it ranks first and time orders the rest after it. The fused near
    tier's rule that a lone best match is no tier (one stale article above fresh ones) is about
    the topic, which a lone facet leaves as it is: it stays inside the on-topic set, and the
    dense and title tests below hold it. Measured with the three changes of issue 29's lookup
    work together (the lone facet, the best-cosine agreement, the subject's own documents; the
    stage now for ``recent`` questions naming no version): changelogs-user ``lookup`` 0.788 ->
    0.807, ``latest`` 0.766 -> 0.789, news-dev 0.758 -> 0.755 (fresh_only 0.804 -> 0.802,
    fresh_vs_stale 0.701 -> 0.698), policies-dev train ``period`` 0.639 -> 0.641 (dev
    unchanged); release, changelogs (three sets), synthetic unchanged. Returns ``(score, facet)`` with
    the facet above the rest of the on-topic set, that above the off-topic documents (each
    side in its own order), or None when there is no agreed facet.
    """
    on = on_topic & live
    if np.count_nonzero(on) < 3:
        return None
    # the subject's own entries: a title match >= margin x the best on topic
    mine = on if titles is None else on & (titles >= margin * float(np.max(titles, where=on, initial=-np.inf)))
    tier = near_tier(words, mine, margin)
    if tier is None:  # a lone best keyword match is a facet of one (the checks below still hold it)
        top = float(np.max(words, where=mine, initial=-np.inf))
        if not top > 0:
            return None
        tier = words >= top
    tier &= mine
    rest = mine & ~tier
    if not rest.any():
        return None
    floor = float(np.min(words, where=tier, initial=np.inf))
    if not float(np.max(words, where=rest, initial=-np.inf)) < margin * floor:
        return None
    if not float(np.max(meaning, where=tier, initial=-np.inf)) > float(np.max(meaning, where=rest, initial=-np.inf)):
        return None
    if titles is not None:
        low = float(np.min(titles, where=tier, initial=np.inf))
        # the facet's title is the subject's (each member >= margin x the best title on topic), and
        # some document left out of it has a title match as strong as the facet's weakest
        if not float(np.max(titles, where=rest, initial=-np.inf)) >= low:
            return None
    out = rank_first(score, tier, on)
    return rank_first(out, on, live), tier


#: :func:`term_facet`: a question's word that at most this share of the subject's documents
#: carry is part of its specific part (one most of them carry is the subject's own vocabulary)
FACET_SHARE = 0.5


def term_facet(
    on_topic: np.ndarray, hits: Callable[[np.ndarray], np.ndarray], meaning: np.ndarray, live: np.ndarray,
    margin: float, titles: np.ndarray | None = None,
) -> np.ndarray | None:
    """The subject's documents that carry the question's specific words, read word by word
    when the keyword score does not set them apart (:func:`facet_first` found no tier): "latest
    celery fix for redis" asks for the newest celery entry *about redis*, but every celery
    entry scores high on "celery" and "fix" repeated over a long list, so the keyword scores
    of the entries naming redis are a slope with the rest, not a tier above it.

    ``hits(positions)`` says which of the question's words (without the frame words a question
    about the newest is worded with, :func:`chronorank.intent.rules.facet_text`) each of those
    documents holds: a bool matrix, one row per word. The subject's documents are the on-topic
    ones with a title match of at least ``margin`` x the best on topic (as in
    :func:`facet_first`). A word most of them carry (above :data:`FACET_SHARE`: "celery",
    "python" in pip's entries... ) is the subject's vocabulary, one none carries says nothing;
    the others are the specific part, and the facet is the documents holding at least half of
    those words ("lock" and "file" of "fix related to the lock file": "related" alone is not
    the facet). Held only when the meaning signal agrees: the facet's mean ``meaning`` (dense
    cosine) is above the rest's, so a word the question uses in passing, which splits the
    subject's documents at random, sets nothing apart. Returns the facet (None: no specific
    word, or it holds every document of the subject or none, or the meaning disagrees).
    Only with a subject: some word of the question every one of the subject's documents holds
    (the project's name in each entry; a news question's "subject" articles share no such word,
    and there the stage split them at random: news-dev fresh_only 0.802 -> 0.767 without this
    test, with it 0.800). The index runs it for short questions only (``Prepared.calibrated``)
    and not for an anchored one ("since X": the anchor's stages decide).

    Measured (benchmarks/cross_domain.py, default MiniLM index, with ``en.json``'s "most
    recently" read as one recency cue): changelogs-user ``latest`` 0.827 -> 0.911 ("latest
    celery fix for redis" 0.61 -> 0.96, "what has pytest deprecated most recently" 0.60 ->
    0.96, "any security fixes in the latest scrapy versions?" 0.62 -> 1.00, "most recent
    poetry fix related to the lock file" 0.61 -> 1.00), ``lookup`` 0.807 -> 0.810, overall
    0.873 -> 0.889; news-dev fresh_only 0.8018 -> 0.7995 (one question: "the prime minister
    of which European nation stepped down this week", whose articles all say "prime
    minister"), fresh_vs_stale unchanged; release, changelogs (original, reworded, Russian),
    synthetic unchanged, policies-dev dev 0.7645 -> 0.7649 (validity 0.7716 -> 0.7720);
    benchmarks/time_semantics.py default row 0.985 (unchanged). Without the majority rule
    (every specific word held) "related" of "fix related to the lock file" made the facet
    three old entries (0.61 -> 0.40); without the frame words "did pytest ship anything
    recently?" split pytest's entries on "ship" and "anything" (changelogs original
    ``latest`` 0.988 -> 0.946).
    """
    on = on_topic & live
    if np.count_nonzero(on) < 3:
        return None
    mine = on if titles is None else on & (titles >= margin * float(np.max(titles, where=on, initial=-np.inf)))
    pos = np.flatnonzero(mine)
    if pos.shape[0] < 3:
        return None
    held = np.asarray(hits(pos), dtype=bool).reshape(-1, pos.shape[0])
    share = held.mean(axis=1)
    if not (share >= 1.0).any():  # no word names the subject (every one of its documents holds it)
        return None
    part = held[(share > 0) & (share <= FACET_SHARE)]
    if part.shape[0] == 0:
        return None
    got = 2 * part.sum(axis=0) >= part.shape[0]
    if got.all() or not got.any():
        return None
    m = np.asarray(meaning, dtype=np.float64)[pos]
    if not float(m[got].mean()) > float(m[~got].mean()):
        return None
    facet = np.zeros(on.shape[0], dtype=bool)
    facet[pos[got]] = True
    return facet


@dataclasses.dataclass(frozen=True)
class TopicDecision:
    """What the topic stage decided for one query, in numbers the explanation quotes: the
    best value of each signal among the candidates that may set it (``best``: ``fused`` and
    the engine's signals), the fused cut (``margin`` x the best), the calibrated near tiers'
    lowest values (``tiers``: ``fused`` and ``lead``; absent when the best match stands alone
    or the cut is not calibrated), the floors that keep a document on topic by another signal
    (``floors``: x that signal's best) and, when the facet stage ran, the lowest keyword score
    of the facet (``facet``)."""

    margin: float
    best: Mapping[str, float]
    tiers: Mapping[str, float]
    floors: Mapping[str, float]
    facet: float | None = None

    def reason(self, on: bool, fused: float, values: Mapping[str, float], facet: bool = False) -> str:
        """Why one document is on topic or not: the signal that decides, how far it is from the
        best match (its share of the best) and the cut it is held to."""

        def share(k: str, v: float) -> float:
            b = self.best.get(k, 0.0)
            return v / b if b > 0 else 0.0

        f = share("fused", fused)
        cut = f"cut {self.margin:g}"
        tier = self.tiers.get("fused")
        if tier is not None and self.best.get("fused", 0.0) > 0:
            cut += f"; the near tier above the widest step reaches down to {tier / self.best['fused']:.2f}"
        # "fused" when the engine fused it from signals it gave (the index); else the given score
        head = f"{'fused similarity' if len(self.best) > 1 else 'similarity'} {f:.2f} x the best ({cut})"
        lead_tier = self.tiers.get("lead")
        if not on:
            why = [head]
            why += [f"{k} {share(k, values[k]):.2f} x the best {k} (floor {fl:g})"
                    for k, fl in self.floors.items() if k in values]
            return "off topic: " + "; ".join(why) + " -- a clearly worse match, ranked below every on-topic one"
        fused_ok = f >= self.margin and (tier is None or fused >= tier or (
            lead_tier is not None and values.get("lead", -math.inf) >= lead_tier))
        if fused_ok:
            text = f"on topic by {head}"
            if lead_tier is not None and tier is not None and fused < tier:
                text = f"on topic by the lead's near tier (lead {share('lead', values['lead']):.2f} x the best lead)"
        else:
            by = [f"{k} {share(k, values[k]):.2f} x the best {k} (floor {fl:g})" for k, fl in self.floors.items()
                  if k in values and share(k, values[k]) >= fl]
            text = ("on topic by " + ", ".join(by) + f"; {head}") if by else (
                f"on topic as a version of the first hit; {head}")
        if self.facet is not None:
            b = values.get("bm25")
            text += ("; matches the question's specific part (keywords and meaning agree): time orders these first"
                     if facet else "; not in the set matching the question's specific part"
                     + ("" if b is None else f" (bm25 {share('bm25', b):.2f} x the best)"))
        return text


def _with_facet(
    decide: Callable[[], TopicDecision | None], words: np.ndarray, facet: np.ndarray,
) -> TopicDecision | None:
    """``decide()`` with the facet's lowest keyword score (:func:`facet_first`)."""
    decision = decide()
    return None if decision is None else dataclasses.replace(
        decision, facet=float(np.min(words, where=facet, initial=np.inf)))


def topic_decision(
    raw_sim: np.ndarray, signals: Mapping[str, np.ndarray], live: np.ndarray, judge: np.ndarray, margin: float,
    floors: Sequence[tuple[str, float | None]], lead_margin: float | None, calibrated: bool,
    outside: float = -math.inf,
) -> TopicDecision | None:
    """The :class:`TopicDecision` of :func:`chronorank.temporal.topic_first` called with these
    arguments (its near tiers recomputed), or None when no candidate may set the best."""
    ref = live & judge if (live & judge).any() else live
    if not ref.any():
        return None
    best = {"fused": float(np.max(raw_sim, where=ref, initial=-np.inf))}
    for k, v in signals.items():
        best[k] = float(np.max(v, where=ref, initial=-np.inf))
    tiers: dict[str, float] = {}
    if calibrated:
        t = near_tier(raw_sim, live, margin, judge, outside)
        if t is not None and (t & live).any():
            tiers["fused"] = float(np.min(raw_sim, where=t & live, initial=np.inf))
            if lead_margin and "lead" in signals:
                lt = near_tier(signals["lead"], live, lead_margin, judge)
                if lt is not None and (lt & live).any():
                    tiers["lead"] = float(np.min(signals["lead"], where=lt & live, initial=np.inf))
    return TopicDecision(margin=margin, best=best, tiers=tiers,
                         floors={k: f for k, f in floors if f is not None and k in signals})


def chain_of(
    keys: np.ndarray, times: np.ndarray, ids: Sequence[Any], pos: int,
) -> tuple[int, int, Any] | None:
    """Where position ``pos`` stands in its version chain, for the explanation: ``(position
    counted from the oldest, length, newest id)`` among the positions sharing its key in
    ``keys`` (an object array; "" or None: in no chain), ordered by ``times`` (undated first),
    then id; None for a document alone in its chain or in none."""
    key = keys[pos]
    if key is None or key == "":
        return None
    members = np.flatnonzero(keys == key)
    if members.shape[0] < 2:
        return None
    t = np.where(np.isnan(times[members]), -np.inf, times[members])
    names = np.array([str(ids[int(i)]) for i in members.tolist()])
    order = members[np.lexsort((names, t))]
    return int(np.flatnonzero(order == pos)[0]) + 1, int(order.shape[0]), ids[int(order[-1])]


def chains_of(
    keys: np.ndarray, times: np.ndarray, ids: Sequence[Any], positions: Sequence[int],
    groups: np.ndarray | None = None,
) -> list[tuple[str, int, int, str] | None]:
    """:func:`chain_of` for each of ``positions`` as ``(name, position, length, newest id)``:
    the chain is the group (``groups``: a code per position, -1 for none) when the document
    has one, else its series key (``keys``: :func:`series_key`, the key the versions stage
    reads)."""
    out: list[tuple[str, int, int, str] | None] = []
    gkeys = None
    if groups is not None:
        gkeys = groups.astype(object)
        gkeys[groups < 0] = None
    for p in positions:
        if groups is not None and gkeys is not None and gkeys[p] is not None:
            got, name = chain_of(gkeys, times, ids, p), f"group #{int(groups[p])}"
        else:
            got, name = chain_of(keys, times, ids, p), f"series {str(keys[p])!r}"
        out.append(None if got is None else (name, got[0], got[1], str(got[2])))
    return out


def open_side(intent: Intent) -> tuple[str, float] | None:
    """``("before", t)`` / ``("after", t)`` for a period with one open side, asked as before /
    until or after / since a date, a version or an event; None otherwise."""
    t = intent.target
    if intent.mode != "range" or t is None:
        return None
    kinds = {sp.kind for sp in intent.spans}
    if kinds & {"before", "before_anchor"} and not math.isfinite(t.start) and math.isfinite(t.end):
        return "before", t.end
    if kinds & {"after", "since", "after_anchor"} and math.isfinite(t.start):
        return "after", t.start
    return None


def across_boundary(
    score: np.ndarray, versions: np.ndarray, chain: np.ndarray, sim: np.ndarray, judge: np.ndarray,
    on_topic: np.ndarray, start: np.ndarray, live: np.ndarray, side: str, boundary: float,
) -> tuple[np.ndarray, int] | None:
    """The first hit's version next across the boundary of a before / after question ranks
    right after it: "how did login work before September 2024" asks what changed then, and the
    page that replaced the first hit (for "after": the one it replaced) says it.

    ``versions`` are the ones it may lift (``chain``, every version of the first hit, less those
    the question's versions rule out). The first hit must be on topic, on the asked side of the
    boundary and a strong match -- in the core of :func:`chronorank.temporal.versions_first`
    (similarity >= 0.8 x the best among ``judge``), or one of its versions is the best match:
    a weak first hit lifts nothing. The version is the earliest one starting at or after the
    boundary (before) or the latest one starting before it (after). Returns the new scores and
    the lifted position, or None when nothing moves.

    Measured on benchmarks/time_semantics.py (16 before / after / since / until questions):
    4 change -- "how did login work before September 2024" (the SSO page no longer above the
    v2 page: off-topic above on-topic 1 fewer) and three whose second and third pages are
    both graded 1 and swap ("refund policy before the July 2023 update": the 2023 update
    second, then the 2019 policy); top-1 unchanged. benchmarks/cross_domain.py has no such
    question that the topic rules apply to (news-dev's three are long enough to fade the
    cut): no default figure moves.
    """
    masked = np.where(live, score, -np.inf)
    first = int(np.argmax(masked))
    st = start[first]
    if not on_topic[first] or not math.isfinite(st) or (st >= boundary if side == "before" else st < boundary):
        return None
    ref = live & judge if (live & judge).any() else live
    best = int(np.argmax(np.where(ref, sim, -np.inf)))
    if not (sim[first] >= VERSION_CORE * float(sim[best]) or chain[best]):
        return None
    with np.errstate(invalid="ignore"):
        across = versions & live & ((start >= boundary) if side == "before" else (start < boundary))
    across[first] = False
    if not across.any():
        return None
    pick = np.flatnonzero(across)
    j = int(pick[np.argmin(start[pick])] if side == "before" else pick[np.argmax(start[pick])])
    rest = masked.copy()
    rest[[first, j]] = -np.inf
    second = float(rest.max())
    if score[j] > second:
        return None  # already right after the first hit
    top = float(score[first])
    out = np.array(score, dtype=np.float64, copy=True)
    out[j] = (top + second) / 2 if second < top else np.nextafter(top, -np.inf)
    return out, j


def anchor_page_first(
    score: np.ndarray, event: int | None, sim: np.ndarray, live: np.ndarray, side: tuple[str, float] | None,
) -> np.ndarray | None:
    """A before question's anchor page ranks first when it alone is a strong match: "how did
    requests treat Proxy-Authorization on HTTPS redirects before 2.31?" is answered by the 2.31
    page, which says what the versions before it did ("versions between 2.3.0 and 2.30.0 ...
    forward the header"), while no page before it says as much. The page announcing the anchor
    (``event``, its position) must be the best raw match of the live candidates and every other
    one under ``VERSION_CORE`` (0.8) x its similarity: a clearly worse match is not lifted above
    it by the period the question draws. A page that is one near-equal version among others
    (a policy section before its update, a release before the next) is not alone in that core,
    and the period decides as before. Only for "before": the anchor's page tells what it
    changed from, not what came after it. Returns the new scores, or None when nothing moves.

    Measured (benchmarks/cross_domain.py, MiniLM): changelogs-user ``before`` 0.784 -> 0.853
    (requests 2.31.0 from below rank 10 to first, the question above); policies-dev (dated
    anchors: no version page), news-dev, release, changelogs (all three query sets),
    synthetic and benchmarks/time_semantics.py (ndcg@10 0.9852) do not move. Not taken: the
    page kept with the first hit's versions as an event page (``event=``) instead: four
    "last release before X" questions lost their runner-up (1.000 -> 0.96) to it.
    """
    if event is None or side is None or side[0] != "before" or not live[event]:
        return None
    raw = np.where(live, sim, -np.inf)
    top = float(raw[event])
    raw[event] = -np.inf
    if not (top > 0 and float(raw.max(initial=-np.inf)) < VERSION_CORE * top):
        return None
    masked = np.where(live, score, -np.inf)
    if int(np.argmax(masked)) == event:
        return None
    out = np.array(score, dtype=np.float64, copy=True)
    best = float(masked.max())
    out[event] = best + max(abs(best), 1.0) * 1e-9
    return out


#: a word of a question or a text for :func:`origin_first`: letters and digits, joined by
#: ``.`` ``_`` ``-`` ("tmp_path", "httpx.stream", "proxy-authorization")
_HELD_WORD = re.compile(r"\w+(?:[.\-]\w+)*")
_SENTENCES = re.compile(r"(?<=[.!?])\s+|\n+")


def _held_words(text: str) -> set[str]:
    """The words a text holds, lower-cased, a plural's final "s" dropped ("notebooks"), a
    joined word with its parts too ("httpx.stream": also "httpx", "stream")."""
    out: set[str] = set()
    for w in _HELD_WORD.findall(text.lower()):
        for part in (w, *re.split(r"[.\-]", w)) if ("." in w or "-" in w) else (w,):
            out.add(part[:-1] if len(part) > 3 and part.endswith("s") and not part.endswith("ss") else part)
    return out


def release_header(text: str, tokens: int) -> bool:
    """Whether a page's title is a name followed by its version ("pytest 3.9.0.", "Apache
    Airflow 2.3.0."): the page *is* that release's notes, a change, not a version of a page
    about a topic ("API v2 rate limits.", whose version is not its last word)."""
    words = list(itertools.islice(_DIGIT_WORD.finditer(text, 0, lead_cut(text)), tokens))
    return len(words) >= 2 and any(c.isdigit() for c in words[-1].group(0)) \
        and not any(c.isdigit() for c in words[0].group(0))


def _names_in_one_sentence(text: str, words: set[str]) -> bool:
    """Whether one sentence of ``text``, with its title (first sentence), holds every word."""
    cut = lead_cut(text)
    title = _held_words(text[:cut])
    rest = words - title
    return not rest or any(rest <= _held_words(sent) for sent in _SENTENCES.split(text[cut:]))


def origin_first(
    score: np.ndarray, sim: np.ndarray, live: np.ndarray, start: np.ndarray, question: str, lang: str,
    keys: Callable[[np.ndarray], Sequence[str]], texts_of: Callable[[np.ndarray], Sequence[str]], tokens: int,
) -> tuple[np.ndarray, int] | None:
    """A timeless question over release notes ("tmp_path fixture in pytest, what does it give
    you", "werkzeug debugger PIN - what is it for") asks what a thing is or does, and the
    release that introduced it says so in one sentence ("Introduce tmp_path as a fixture
    providing a Path object"); the later releases that name it change or fix it, in shorter
    notes that match the question as well or better. So among the strong matches (raw
    similarity at least ``VERSION_CORE`` x the best) of the first hit's release series (the
    same title but for its version, :func:`series_key`; a title that is a name and a version,
    :func:`release_header`; at most the ``VERSION_POOL`` strongest), the earliest whose one
    sentence (with the title) holds every word of the question that the first hit holds ranks
    first. An older release that holds the words apart ("socket" in one note, "read timeout" in another) names something else, and a
    word only the first hit holds ("insecure" in a security question) leaves it first. The
    question's articles and prepositions (the language file's) are not its words. Returns the
    new scores and the lifted position, or None when nothing moves. Only with time on
    (``strength`` > 0): similarity alone is left as it is.

    Measured (benchmarks/cross_domain.py, MiniLM): changelogs-user ``timeless`` 0.740 -> 0.908
    (werkzeug 0.11, pytest 3.9.0, httpx 0.9.0 first); the other kinds, policies-dev (sections),
    news-dev (no release headers), release, changelogs (all three query sets), synthetic and
    benchmarks/time_semantics.py (ndcg@10 0.9852) do not move. Not taken: the earliest of the
    strong matches holding the words the fewest of them hold, anywhere in the text: an aiohttp
    1.3.0 note on websocket timeouts and sockets went above 3.3.0's "socket read timeout"
    (timeless 0.877); and plain idf (``idf_power`` 0) for timeless questions: timeless 0.806
    but lookup 0.807 -> 0.796 ("pytest insecure temporary directory vulnerability").
    """
    if not live.any():
        return None
    masked = np.where(live, score, -np.inf)
    first = int(np.argmax(masked))
    raw = np.where(live, sim, -np.inf)
    best = float(raw.max())
    if not (best > 0 and sim[first] >= VERSION_CORE * best and np.isfinite(start[first])):
        return None
    core = np.flatnonzero((raw >= VERSION_CORE * best) & (start < start[first]))  # NaN < t is False
    if not core.size:
        return None
    if core.size > VERSION_POOL:  # the VERSION_POOL strongest (ties by position): a vague question reads no more
        core = np.sort(core[np.argsort(-sim[core], kind="stable")[:VERSION_POOL]])
    head = texts_of(np.array([first]))[0]
    key = keys(np.array([first]))[0]
    if not key or not release_header(head, tokens):
        return None
    older = core[np.array(keys(core), dtype=object) == key]
    if not older.size:
        return None
    data = get_language(lang).data
    skip = set(data.get("articles") or ()) | set(data.get("prepositions") or ())
    asked = {w for w in _held_words(question) if w not in skip and not w.isdigit()} & _held_words(head)
    if not asked:
        return None
    naming = older[np.array([_names_in_one_sentence(t, asked) for t in texts_of(older)], dtype=bool)]
    if not naming.size:
        return None
    origin = int(naming[np.argmin(start[naming])])
    out = np.array(score, dtype=np.float64, copy=True)
    top = float(masked[first])
    out[origin] = top + max(abs(top), 1.0) * 1e-9
    return out, origin


def spared(bad: np.ndarray, mine: np.ndarray | None, score: np.ndarray, live: np.ndarray) -> np.ndarray:
    """``bad`` less the first hit's versions (``mine``: what it replaced and what replaced it,
    which "authentication in the v1 API" keeps next to the v1 page), when the first hit itself
    is not ruled out: a first hit naming only other versions than the asked ones is no reason
    to keep its versions ("the newest sqlalchemy 1.3" whose first hit is 2.0.47)."""
    if mine is None or not live.any():
        return bad
    first = int(np.argmax(np.where(live, score, -np.inf)))
    return bad if bad[first] else bad & ~mine


def conflicts_last(
    score: np.ndarray, conflict: np.ndarray, tier: np.ndarray | None, live: np.ndarray,
) -> tuple[np.ndarray, np.ndarray | None]:
    """Within each tier (``tier`` = the on-topic set, and the rest; None = one tier), the live
    candidates in ``conflict`` that score above the lowest other live one of their tier move to
    just below it, in their own order; nothing leaves its tier and nothing else moves. Returns
    ``(score, moved)``: ``moved`` is None (and ``score`` itself) when nothing moves.

    Measured: benchmarks/time_semantics.py (default index) off-topic above on-topic 4 -> 2
    (ts-56 "what changed in the API 2.0 release": "Release notes for version 3.0 / 4.0."
    no longer rank 2-3 above the v2 pages; ts-70 "what changed after the 3.0 release": the
    API 2.0 release note no longer ranks above the 3.0 release notes), top-1 0.986 -> 0.986,
    nDCG@10 0.989 -> 0.988 (ts-56's v1 pages, graded 1, go below the v2 ones). Without the
    first hit's versions exempt, 3 more questions failed ("authentication in the v1 API" put
    another v1 page above the v2 authentication page). benchmarks/cross_domain.py (MiniLM):
    no figure of the default row moves (release; changelogs, whose 60 "what changed in flask
    2.2.5" questions already score 1.000; news, whose two "versions" are "2.9 million" and
    "7.0-magnitude"; synthetic); of the ablation rows only "no lead field" moves, Russian
    changelogs 0.9259 -> 0.9266. Reading "на 01.10.2024" as version 1.10 had cost that row's
    as_of_date 0.938 -> 0.922: dotted dates and the parser's time spans are skipped.
    """
    out = score
    moved = np.zeros(score.shape[0], dtype=bool)
    tiers = [live] if tier is None else [tier & live, ~tier & live]
    for i, t in enumerate(tiers):
        bad = t & conflict
        good = t & ~conflict
        if not bad.any() or not good.any():
            continue
        low = float(np.min(out, where=good, initial=np.inf))
        move = bad & (out >= low)
        if not move.any():
            continue
        rest = live & ~move & (out < low)
        if tier is not None and i == 0:
            # the on-topic tier: no page of the other tier scores above topic_gap(low)
            # (rank_first), so the moved ones go between that bound, or the best page under low
            # if higher, and low. The same order as below the best page under low, and the same
            # scores whether or not the pages of the other tier were scored: the index's exact
            # search scores a pool of a large corpus (tests/index/test_exact_pool.py)
            below = max(float(np.max(out, where=rest, initial=-np.inf)), topic_gap(low))
        elif rest.any():
            below = float(np.max(out, where=rest, initial=-np.inf))
        else:
            below = 0.0 if low > 0 else low - 1.0
        lo, hi = float(out[move].min()), float(out[move].max())
        frac = (out - lo) / (hi - lo) if hi > lo else np.full(out.shape[0], 0.5)
        out = np.where(move, below + (low - below) * (0.05 + 0.9 * frac), out)
        moved |= move
    return (out, moved) if moved.any() else (score, None)


def sample_kth(x: np.ndarray, m: int) -> float:
    """About the ``m``-th largest of ``x``, from a strided sample of ~``POOL_SAMPLE`` (the
    sample's own order statistic, so at least that many entries of ``x`` are >= it)."""
    n = x.shape[0]
    smp = x[:: max(1, n // POOL_SAMPLE)]
    return kth_largest(smp, -(-m * smp.shape[0] // n))


def kth_largest(x: np.ndarray, j: int) -> float:
    j = min(max(1, j), x.shape[0])
    if j == 1:
        return float(x.max())
    return float(np.sort(x)[x.shape[0] - j])  # a partition is slow on the ties of sparse signals




#: The first hit's versions are looked for among this many best-scored candidates.
VERSION_POOL = 50
_DIGIT_WORD = re.compile(r"[^\W_]+(?:[._\-+][^\W_]+)*")


_SENTENCE_END = re.compile(r"[.!?](?=\s|$)|\n")


def lead_cut(text: str, scan: int = 400) -> int:
    """Where a text's lead ends: its first sentence or line, at most ``scan`` characters (the
    index's lead field, the stores', the series keys and the title chains)."""
    m = _SENTENCE_END.search(text, 0, scan)
    return m.start() if m else min(len(text), scan)


def series_key(text: str, tokens: int) -> str:
    """A page's title "but for version numbers": the words of its first sentence (at most
    ``tokens``) without the ones holding a digit, lower-cased ("API v2 rate limits." ->
    "api rate limits"; "aiohttp 3.9.0." -> "aiohttp")."""
    words = (m.group(0) for m in itertools.islice(_DIGIT_WORD.finditer(text, 0, lead_cut(text)), tokens))
    return " ".join(w for w in words if not any(c.isdigit() for c in w)).lower()


def section_key(text: str, tokens: int) -> str:
    """A section's identity on a page recorded in sections (:mod:`chronorank.sections`: the
    page's title, then the heading, then the body): the words of its first two sentences, at
    most ``tokens`` of each, lower-cased, without the words holding a digit ("Acme Terms. 4.
    Refunds. Refunds are ..." -> "acme terms | refunds"): every recording of the section keeps
    its title and heading, and renumbering the clauses keeps it."""
    cut = lead_cut(text)
    title = _words_of(text[:cut], tokens)
    rest = text[cut + 1:]
    head = _words_of(rest[: lead_cut(rest)], tokens)
    if not head:  # a clause number as its own sentence ("4. Refunds.")
        rest = rest[lead_cut(rest) + 1:]
        head = _words_of(rest[: lead_cut(rest)], tokens)
    return title + " | " + head


def _words_of(text: str, tokens: int) -> str:
    words = re.findall(r"\w+", text.lower())
    return " ".join(itertools.islice((w for w in words if not any(c.isdigit() for c in w)), tokens))


#: :func:`section_chain` reads the section keys of at most this many of the best matches
SECTION_POOL = 64


def section_chain(
    sim: np.ndarray, live: np.ndarray, keys_of: Callable[[np.ndarray], Sequence[str]],
    texts_of: Callable[[np.ndarray], Sequence[str]] | None = None,
) -> np.ndarray | None:
    """The best match's section -- every recording of it among the ``SECTION_POOL`` most
    similar live candidates (``keys_of(positions)``: their :func:`section_key`) -- on a page
    recorded in sections (:func:`sectioned`). The question names a section; the sections of
    its page share the title, and a fresher sibling is no answer to it however close its
    match: the best match's section ranks first and time picks the version inside it. Its
    versions are near-duplicates of the best match, so they are among its closest matches.
    ``texts_of`` (the candidates' texts) adds a version whose heading was renamed. None when no
    candidate is live."""
    if not live.any():
        return None
    masked = np.where(live, sim, -np.inf)
    best = int(np.argmax(masked))
    n = sim.shape[0]
    near = np.flatnonzero(live) if int(np.count_nonzero(live)) <= SECTION_POOL else \
        np.argpartition(-masked, SECTION_POOL - 1)[:SECTION_POOL]
    near = np.sort(near if (near == best).any() else np.append(near, best))  # not np.union1d: numpy.ma
    keys = np.array(list(keys_of(near)), dtype=object)
    key = keys[near == best][0]
    chain = np.zeros(n, dtype=bool)
    chain[near[keys == key]] = True
    if texts_of is not None:
        # a renamed heading ("Termination" -> "Term and termination"): the same title, half the
        # heading's words shared, and a body mostly of the same words
        title, _, head = key.partition(" | ")
        others = [i for i, k in zip(near.tolist(), keys.tolist()) if k != key and k.partition(" | ")[0] == title]
        if others:
            body = texts_of(np.array([best, *others]))
            mine = _body_words(body[0])
            words = set(head.split())
            for i, k, b in zip(others, (keys[near == i][0] for i in others), body[1:]):
                theirs = set(k.partition(" | ")[2].split())
                if 2 * len(words & theirs) >= min(len(words), len(theirs)) > 0:
                    other = _body_words(b)
                    if len(mine & other) >= RENAMED_BODY * len(mine | other):
                        chain[i] = True
    return chain


#: :func:`section_chain`: a renamed section's body shares at least this share of its words
#: (Jaccard) with the best match's
RENAMED_BODY = 0.5


def _body_words(text: str) -> set[str]:
    return set(re.findall(r"\w+", text[:4000].lower()))


def asked_instant(intent: Intent, now: float) -> float | None:
    """The instant whose state the question asks about: now for "now", the end of the day or
    period asked (what was in force at its end: a period's last version, the version of the
    day), the boundary of "before X" (in force just before it); None for a timeless question
    and for "after / since X" (the changes after X, not one state)."""
    side = open_side(intent)
    if side is not None:
        return side[1] if side[0] == "before" else None
    if intent.mode == "recent":
        return now
    t = intent.target
    if intent.mode in ("as_of", "range") and t is not None and math.isfinite(t.end):
        return min(t.end, now)
    return None


def in_force_first(
    score: np.ndarray, chain: np.ndarray, start: np.ndarray, live: np.ndarray, instant: float,
) -> tuple[np.ndarray, int] | None:
    """The version of the section (``chain``, from :func:`section_chain`) in force at
    ``instant`` -- the latest one starting before it -- ranks first of its versions; the others
    keep their order. The versions of one section are near-duplicates, so their similarities
    say nothing of which one is asked; soft time weights next to them let a version a few days
    after the asked day, or the one the change replaced, come first. Returns the new scores and
    the moved position, or None when nothing moves (no live version started before ``instant``,
    or it is first already)."""
    mine = chain & live
    with np.errstate(invalid="ignore"):
        before = mine & (start < instant)  # NaN (undated) is never in force
    if not before.any():
        return None
    pick = np.flatnonzero(before)
    latest = float(start[pick].max())
    cand = pick[start[pick] == latest]
    j = int(cand[np.argmax(score[cand])])
    out = lead_chain(score, chain, live, [j])
    return None if out is None else (out, j)


def chain_picks(chain: np.ndarray, start: np.ndarray, live: np.ndarray, intent: Intent, now: float) -> list[int]:
    """The versions of a section (``chain``) a since / after question asks for, in the order
    they lead it: the state now (the newest version started by ``now``) and the first change
    after the boundary (:func:`open_side`) -- "since X" asks for the changes after X, and both
    answer it; the versions before X, such as the one in force at it, follow. Empty for any
    other question (:func:`in_force_first` then decides by one instant)."""
    side = open_side(intent)
    if side is None or side[0] != "after":
        return []
    with np.errstate(invalid="ignore"):
        mine = np.flatnonzero(chain & live & (start <= now))  # NaN (undated) is never in force
    if mine.size < 2:
        return []
    order = mine[np.argsort(start[mine], kind="stable")]
    after = np.flatnonzero(start[order] >= side[1])
    picks = [int(order[-1])]
    if after.size and int(order[after[0]]) != picks[0]:
        picks.append(int(order[after[0]]))
    return picks


def lead_chain(score: np.ndarray, chain: np.ndarray, live: np.ndarray, picks: Sequence[int]) -> np.ndarray | None:
    """``picks`` (positions of ``chain``) rank first of its versions in that order, the others
    keeping theirs; None when they lead in that order already."""
    mine = np.flatnonzero(chain & live)
    if not mine.size:
        return None
    lead = mine[np.argsort(-score[mine], kind="stable")[: len(picks)]]
    if lead.tolist() == list(picks):
        return None
    out = np.array(score, dtype=np.float64, copy=True)
    level = float(score[mine].max())
    for j in reversed(picks):  # the last pick just above the chain's best, each earlier one above it
        level = np.nextafter(level, np.inf)
        out[j] = level
    return out


def first_versions(
    score: np.ndarray, live: np.ndarray, on_topic: np.ndarray, version_floor: float | None, *,
    groups: np.ndarray | None = None, keys: Callable[[np.ndarray], Sequence[str]] | None = None,
    vectors: Callable[[np.ndarray], np.ndarray | None] | None = None, event: int | None = None,
    top_k: Callable[..., np.ndarray] = tied_at_cut,
) -> np.ndarray | None:
    """The first hit (the best live score) and its versions, for :func:`chronorank.temporal.versions_first`;
    None when it has none.

    A version is a candidate of the first hit's version chain (``groups``), or one of the
    ``VERSION_POOL`` best-scored candidates whose first sentence is the first hit's but for the
    words holding a digit (``keys``: each position's :func:`series_key`; "API v1 rate limits." /
    "API v2 rate limits.", "aiohttp 3.9.0." / "aiohttp 3.10.1.") and that is on topic, or, when
    it is not, whose text is close to the first hit's (``vectors``: embedding cosine >=
    ``version_floor``): "how did login work before September 2024" keeps the v2 authentication
    page, which never says "login". The cosine test is only for pages the topic rule left out:
    a shared dateline ("CNN --", 613 of news-dev's 5,000 articles, pairwise cosine median 0.14)
    does not make an unrelated article a version, while changelog releases of one project
    (median 0.55) and the versions of one page (0.49-0.99 on benchmarks/data/time_semantics)
    pass it. The on-topic ones skip the test: half the release pairs of one changelog project
    are under 0.55, and splitting a project's releases reorders them among themselves.
    ``event`` (a position or None) is the page of the question's anchor event, kept with the
    versions. Measured: benchmarks/data/time_semantics off-topic-above-on-topic in the top 3
    18 -> 7, top-1 unchanged; benchmarks/cross_domain.py changelogs latest 0.987 -> 0.988,
    reworded 0.976 -> 0.977, release 0.997 (figures in :mod:`chronorank.index.config`).
    """
    n = score.shape[0]
    if not n or not live.any():
        return None
    masked = score if live.all() else np.where(live, score, -np.inf)
    first = int(np.argmax(masked))
    versions = np.zeros(n, dtype=bool)
    if groups is not None and groups[first] >= 0:
        versions |= groups == groups[first]
    # the VERSION_POOL best live scores (a set: ties at its cut by lowest position)
    pool = top_k(masked, VERSION_POOL, np.full(n, np.nan), range(n)) if n > VERSION_POOL else np.arange(n)
    pool = pool[live[pool] & (pool != first)]
    key = keys(np.array([first]))[0] if keys is not None else ""
    if key and pool.size and keys is not None:
        same = pool[np.array(keys(pool), dtype=object) == key]
        far = same[~on_topic[same]]
        if far.size and vectors is not None and version_floor is not None:
            got = vectors(np.concatenate([np.array([first]), far]))  # one lookup: a store asks its engine once
            if got is not None:
                v = got[0].astype(np.float64)
                m = got[1:].astype(np.float64)
                norms = np.linalg.norm(m, axis=1) * float(np.linalg.norm(v))
                cos = (m @ v) / np.where(norms > 0, norms, 1.0)
                versions[far[cos >= version_floor]] = True
        versions[same[on_topic[same]]] = True
    if event is not None:
        versions[event] = True
    versions &= live
    versions[first] = False
    if not versions.any():
        return None
    versions[first] = True
    return versions


def anchor_event(match: np.ndarray, whole: np.ndarray, start: np.ndarray) -> int:
    """The position of the anchor's *event page*, or -1: of the dated candidates that name the
    anchor's words (``match`` > 0) and its event noun too (``whole``, the match for the whole
    anchor, above ``match``), the best match for the whole anchor ("the 2.0 release" -> the API
    2.0 release note, not the v2 pages that only say "2.0"). Not only among the best matches of
    the words: "OAuth" is said twice by the v2 authentication page and once by the release note
    that reports the migration. The page reports the very change the question is framed by, so
    it is on the question's subject by construction (:func:`first_versions` keeps it with the
    first hit's versions): "rate limits after the 2.0 release" keeps the release note above the
    SLA pages that only share their meaning. Measured as one of the version-aware rules
    (:mod:`chronorank.index.config`: benchmarks/time_semantics.py off-topic above on-topic in
    the top 3 4 -> 0 for the three together, top-1 unchanged; benchmarks/cross_domain.py's
    default row does not move). The index matches by BM25 over its corpus, the reranker by the
    words each candidate's text holds."""
    ok = ~np.isnan(start) & (match > 0) & (whole > match + 1e-9)
    return int(np.argmax(np.where(ok, whole, -np.inf))) if ok.any() else -1


def title_chains(
    titles: np.ndarray, sim: np.ndarray, times: np.ndarray, margin: float | None, intent: Intent,
) -> np.ndarray | None:
    """Version chains read from titles, for a timeless question worded in the present.

    ``titles`` is a code per candidate, equal for candidates whose leads (first sentence, as
    index terms) are equal, -1 for none. Without a group key a timeless question ranks by
    similarity alone, and the stale copy of a page usually matches as well as the current one
    ("how do I export my data": both pages are titled "Exporting your data."). Pages about the
    question (similarity >= ``margin`` x the best) with one title are taken for versions of one
    page, ordered by date, so that the older ones count as replaced (``expired_factor``, as
    with a group key). Not for a question worded about the past ("how was X originally
    introduced": :func:`chronorank.intent.rules.asks_past`), and not for pages that share a
    title *and* a date (chunks of one page). Returns group codes (-1 = no chain) or None.
    Measured on benchmarks/data/time_semantics (timeless "how do I ..." questions over
    replaced pages; benchmarks/time_semantics.py).
    """
    if asks_past(intent.query, intent.lang):
        return None
    g = titles
    top = float(sim.max()) if sim.size else 0.0
    if top <= 0:
        return None
    g = np.where((sim >= (margin or 0.5) * top) & ~np.isnan(times), g, -1)
    live = g >= 0
    if not live.any():
        return None
    sizes = np.bincount(g[live])
    g = np.where(live & (sizes[np.where(live, g, 0)] > 1), g, -1)  # a title shared by >= 2
    shared = np.flatnonzero(g >= 0)
    if shared.size == 0:
        return None
    # one title, one date: chunks or copies of one page, not versions -- no chain
    order = shared[np.lexsort((times[shared], g[shared]))]
    same = (g[order[1:]] == g[order[:-1]]) & (times[order[1:]] == times[order[:-1]])
    g = np.where(np.isin(g, g[order[1:]][same]), -1, g)
    return g if (g >= 0).any() else None


@dataclasses.dataclass(frozen=True)
class Rules:
    """The ranking rules' settings (the index's ``IndexConfig`` fields of the same names, with
    the same defaults): what :func:`rank` reads besides the temporal policies."""

    topical_margin: float | None = DEFAULT_TOPICAL_MARGIN
    tie_break: float = DEFAULT_TIE_BREAK
    short_query_terms: int | None = DEFAULT_SHORT_QUERY_TERMS
    burst_ratio: float | None = DEFAULT_BURST_RATIO
    topic_floor: float | None = DEFAULT_TOPIC_FLOOR
    topic_lead_floor: float | None = DEFAULT_TOPIC_LEAD_FLOOR
    version_floor: float | None = DEFAULT_VERSION_FLOOR
    lead_tokens: int = DEFAULT_LEAD_TOKENS

    @classmethod
    def of(cls, config: Any, **changes: Any) -> Rules:
        """The rules of any configuration holding these fields (``IndexConfig``), else defaults."""
        got = {f.name: getattr(config, f.name) for f in dataclasses.fields(cls) if hasattr(config, f.name)}
        return cls(**{**got, **changes})


@dataclasses.dataclass(frozen=True)
class Prepared:
    """What the first two stages decide before any candidate is scored (:func:`prepare`): the
    question's shape and its time plan. :func:`rank` prepares them itself; the index prepares
    them once over its whole corpus (the burst compares the best matches with every document)
    and ranks its pool with them (``rank(prepared=...)``)."""

    rules: Rules  # shaped to the question's length (``shaped``)
    cut: float | None  # the topic cut's margin (``cut_margin``); None: no topic rule
    calibrated: bool  # the topic cut's near tier applies (a short question)
    intent: Intent  # final: a burst makes it a current event
    plan: TemporalPlan
    flatten: bool  # the topical cluster ties before time (``flatten_top``)
    stages: tuple[str, ...]  # "shape", "burst": those that ran
    sections: bool = False  # the best match is a section of a page (``sectioned``): its near tier decides


def prepare(
    sim: np.ndarray, times: np.ndarray, *, intent: Intent, now: float, config: Any, rules: Rules,
    terms: int | None = None, burst_cache: dict[Any, Any] | None = None,
    titles_of: Callable[[np.ndarray], np.ndarray] | None = None,
) -> Prepared:
    """The stages ``shape`` and ``burst`` and the ``flatten`` decision, over the candidates'
    fused similarity ``sim`` and ``times``: the rules scaled by the question's ``terms`` (None:
    a short question), the :class:`chronorank.temporal.TemporalPlan` of ``config``, made a
    current event's when the best matches crowd the last days, and whether the topical cluster
    is flattened before time. ``burst_cache``: the index's derived cache, when ``times`` are
    every document's (:func:`burst_scale`). ``titles_of``: the title codes of positions
    (:func:`title_codes`); with it a best match that is a section of a page (:func:`sectioned`)
    flattens its near tier only (:func:`flatten_margin`) and the topic cut's near tier decides
    for a question of any length (:func:`topic_floors`)."""
    stages: list[str] = []
    calibrated = terms is None or shape_factor(rules.short_query_terms, terms) == 1.0
    cut = rules.topical_margin if terms is None else cut_margin(rules, terms)
    if terms is not None:
        rules = shaped(rules, terms)
        stages.append("shape")
    tplan = TemporalPlan.of(intent, now, config)
    if rules.burst_ratio is not None and may_be_current(intent, now):
        scale = burst_scale(sim, times, now, rules.burst_ratio, tplan.excludes_future, cache=burst_cache)
        if scale is not None:
            intent, event_cfg = current_event(intent, tplan.config, scale)
            tplan = TemporalPlan.of(intent, now, event_cfg)
            stages.append("burst")
    flatten = (rules.topical_margin is not None and intent.mode in ("recent", "as_of", "range")
               and tplan.sensitivity > 0 and tplan.config.strength > 0)
    sections = titles_of is not None and (flatten or cut is not None) and sectioned(titles_of, times, sim)
    if sections:
        calibrated = True
        if flatten and rules.topical_margin is not None:
            # computed once over every candidate, so a pool and the whole corpus flatten alike
            rules = dataclasses.replace(rules, topical_margin=flatten_margin(sim, rules.topical_margin))
    return Prepared(rules=rules, cut=cut, calibrated=calibrated, intent=intent, plan=tplan, flatten=flatten,
                    stages=tuple(stages), sections=sections)


@dataclasses.dataclass
class Ranked:
    """What :func:`rank` returns: the final scores (-inf where a document is dropped) and what
    each stage decided, for the explanation."""

    score: np.ndarray
    res: TemporalResult
    sim: np.ndarray  # the similarity time was applied to (flattened or not)
    intent: Intent  # final (a burst makes it a current event)
    plan: TemporalPlan
    on_topic: np.ndarray | None
    versions: np.ndarray | None
    across: int | None
    stages: tuple[str, ...]  # the stages that ran
    raw_sim: np.ndarray | None = None  # the fused similarity as given
    conflict: np.ndarray | None = None  # moved below their tier by the version-conflict stage
    kept: int = 0  # candidates the temporal layer keeps
    prepared: Prepared | None = None
    decide: Callable[[], TopicDecision | None] | None = None  # the topic stage's decision, made when asked
    facet: np.ndarray | None = None  # the on-topic documents matching the question's specific part
    anchor_page: int | None = None  # the anchor's page ranked first (:func:`anchor_page_first`)
    origin: int | None = None  # the release ranked first as the one that introduced it (:func:`origin_first`)

    @property
    def topic(self) -> TopicDecision | None:
        """The topic stage's decision, for the explanation (its near tiers recomputed at the first ask)."""
        return None if self.decide is None else self.decide()


def _once(fn: Callable[[], TopicDecision | None]) -> Callable[[], TopicDecision | None]:
    """``fn``, called at the first call only (an explanation's numbers: most searches never ask)."""
    done: list[TopicDecision | None] = []

    def get() -> TopicDecision | None:
        if not done:
            done.append(fn())
        return done[0]
    return get


def key_codes(keys: Sequence[str]) -> np.ndarray:
    """One code per distinct non-empty key, numbered in order of first appearance (-1 for the empty key)."""
    seen: dict[str, int] = {}
    return np.array([seen.setdefault(k, len(seen)) if k else -1 for k in keys], dtype=np.int64)


_WORD = re.compile(r"\w+")


def title_key(text: str, tokens: int) -> str:
    """The first ``tokens`` words of a text's lead, lower-cased (:func:`title_codes`)."""
    return " ".join(m.group(0) for m in itertools.islice(_WORD.finditer(text[: lead_cut(text)].lower()), tokens))


def title_codes(texts: Sequence[str], tokens: int) -> np.ndarray:
    """A code per text, equal for texts whose leads' first ``tokens`` words are equal (-1: no
    lead): the title chains' key over texts (the index reads its own lead terms)."""
    return key_codes([title_key(x, tokens) for x in texts])


#: ``conflicts(score, live, also, tier) -> mask``: the candidates whose lead names only versions
#: the question rules out (``index/version_conflict.py``), given the scores in tier order, the
#: live ones, the first hit's versions and the on-topic tier (an engine may read only as deep
#: as its top k needs)
Conflicts = Callable[[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray], np.ndarray]


def rank(
    sim: np.ndarray, times: np.ndarray, *, intent: Intent, now: float, config: Any, rules: Rules,
    terms: int | None = None, signals: Mapping[str, np.ndarray] | None = None,
    valid_from: np.ndarray | None = None, valid_to: np.ndarray | None = None, groups: np.ndarray | None = None,
    ids: Sequence[Any] | None = None, texts: Sequence[str] | None = None,
    vectors: np.ndarray | Callable[[np.ndarray], np.ndarray | None] | None = None, live: np.ndarray | None = None,
    prepared: Prepared | None = None, pool: Pool | None = None, outside: float = -math.inf,
    event: int | None = None, anchor_page: int | None = None, titles: Callable[[], np.ndarray] | None = None,
    keys: Callable[[np.ndarray], Sequence[str]] | None = None, conflicts: Conflicts | None = None,
    top_k: Callable[..., np.ndarray] = tied_at_cut, sections: Callable[[np.ndarray], Sequence[str]] | None = None,
    texts_of: Callable[[np.ndarray], Sequence[str]] | None = None,
    facet_hits: Callable[[np.ndarray], np.ndarray] | None = None,
) -> Ranked:
    """The ranking: every stage, in order, over one candidate set's columns. The index runs it
    over its rows or its pool (``index/core.py::_score_rows``), the reranker (so every rerank
    adapter) and the stores' client-side step over their candidates.

    ``sim`` is the fused similarity (what the engine ranked by), ``signals`` the ones it was
    fused from when known (the topic cut needs ``bm25`` then, as in the index: with cosine
    alone one project's releases spread too wide for a cut relative to the best; ``dense`` /
    ``lead`` give its floors; None: unknown, the cut runs on ``sim``); ``terms`` the
    question's distinct known terms (its shape; None: short); ``texts`` the candidates' texts
    (their leads give the title chains, series keys and version conflicts when ``titles`` /
    ``keys`` / ``conflicts`` are not given); ``vectors`` their embeddings or a lookup by
    positions (the version cosine test); ``live`` the candidates that count (False: dropped
    before ranking). ``config`` is the :class:`chronorank.temporal.TemporalConfig`.

    What an engine knows beyond the columns, each optional:

    - ``prepared``: :func:`prepare` done already (the index: over its whole corpus, before
      choosing a pool); else it runs here over the candidates;
    - ``pool`` / ``outside``: the candidates are a pool of a larger set (the index's exact
      pool, ``temporal.Pool``), and every document outside it has a fused similarity below
      ``outside`` (the topic cut's near tier);
    - ``event``: the position of the question's anchor event page (kept with the first hit's
      versions);
    - ``anchor_page``: the position of a before question's anchor page (the page whose title
      names the anchor's version, :func:`anchor_page_first`);
    - ``titles`` (title codes, :func:`title_chains`), ``keys`` (series keys of positions,
      :func:`series_key`): lookups that replace reading ``texts``;
    - ``conflicts``: the version-conflict question (:data:`Conflicts`); None: the question
      names no version, or the engine has no texts;
    - ``top_k``: the engine's exact top-k cut (same result as ``tied_at_cut``);
    - ``facet_hits``: which of the question's specific words each of some positions holds
      (:func:`term_facet`); None: the facet is read from the keyword score alone.
    """
    sim = np.asarray(sim, dtype=np.float64)
    n = sim.shape[0]
    texts = None if texts is None else [str(x or "") for x in texts]
    # 1-2. shape, burst (and whether to flatten)
    titles_of = None
    if texts is not None:  # lookups over the texts, for what the engine did not give
        cands = texts

        def titles_of(pos: np.ndarray) -> np.ndarray:
            return title_codes([cands[i] for i in pos.tolist()], rules.lead_tokens)
        if titles is None:
            def titles() -> np.ndarray:
                return title_codes(cands, rules.lead_tokens)
        if keys is None:
            def keys(pos: np.ndarray) -> list[str]:  # only the positions first_versions asks about
                return [series_key(cands[i], rules.lead_tokens) for i in pos.tolist()]
        if sections is None:
            def sections(pos: np.ndarray) -> list[str]:  # only the positions section_chain asks about
                return [section_key(cands[i], rules.lead_tokens) for i in pos.tolist()]
        if texts_of is None:
            def texts_of(pos: np.ndarray) -> list[str]:
                return [cands[i] for i in pos.tolist()]
    prep = prepared if prepared is not None else prepare(
        sim, times, intent=intent, now=now, config=config, rules=rules, terms=terms, titles_of=titles_of)
    rules, intent, tplan, cut = prep.rules, prep.intent, prep.plan, prep.cut
    stages = list(prep.stages)
    raw_sim = sim
    # 3. flatten
    if prep.flatten and rules.topical_margin is not None:
        sim = flatten_top(sim, rules.topical_margin, rules.tie_break)
        stages.append("flatten")
    # 4. title chains
    chains = groups
    if groups is None and titles is not None and intent.mode == "timeless" and not intent.spans and n:
        chains = title_chains(titles(), raw_sim, times, rules.topical_margin, intent)
        if chains is not None:
            stages.append("title chains")
    # 5. time
    res = apply_temporal(sim, times, plan=tplan, valid_from=valid_from, valid_to=valid_to, groups=chains, ids=ids,
                         pool=pool)
    stages.append("time")
    keep = res.keep if live is None else res.keep & live
    score = np.asarray(res.score, dtype=np.float64)
    on_topic = versions = conflict = facet = lifted_anchor = None
    decide: Callable[[], TopicDecision | None] | None = None
    across: int | None = None
    # 6. topic first
    if cut is not None and n and (signals is None or "bm25" in signals):
        sig = signals or {}
        score, on_topic = topic_first(
            score, raw_sim, cut, keep, ~res.not_yet_valid,
            others=topic_floors(sig, rules.topic_floor, rules.topic_lead_floor, prep.sections),
            outside=outside,  # raw, as raw_sim (not flattened)
            tiers=[(sig["lead"], rules.topic_lead_floor)] if "lead" in sig and rules.topic_lead_floor
            and not prep.sections else [],
            calibrated=prep.calibrated,
        )
        stages.append("topic first")
        decide = _once(functools.partial(
            topic_decision, raw_sim, sig, keep, ~res.not_yet_valid, cut,
            [] if prep.sections else [("dense", rules.topic_floor), ("lead", rules.topic_lead_floor)],
            None if prep.sections else rules.topic_lead_floor, prep.calibrated, outside))
        # 6b. facet: time orders the documents that match the question's specific part first
        # for a "recent" question naming no version: a version is the specific part itself (the
        # versions and version-conflict stages; "1.x" / "version" in bodies are no facet), and a
        # period or as-of question's window is its time part (a facet put a 2015 entry spelling
        # "jinja2" above the 2017 ones asked for)
        if {"bm25", "dense"} <= sig.keys() and tplan.sensitivity > 0 and tplan.config.strength > 0 \
                and conflicts is None and intent.mode == "recent":
            lead = None if "lead" not in sig else np.asarray(sig["lead"], dtype=np.float64)
            got = facet_first(score, on_topic, np.asarray(sig["bm25"], dtype=np.float64),
                              np.asarray(sig["dense"], dtype=np.float64), keep, cut, lead)
            if got is None and facet_hits is not None and intent.anchor is None and prep.calibrated:
                # word by word, for a short question (an anchored "since X" one is the anchor's
                # stages'; a long one's many ordinary words are no specific part)
                words = term_facet(on_topic, facet_hits, sig["dense"], keep, cut, lead)
                if words is not None:
                    got = rank_first(rank_first(score, words, on_topic & keep), on_topic & keep, keep), words
            if got is not None:
                score, facet = got
                stages.append("facet")
                decide = _once(functools.partial(_with_facet, decide, sig["bm25"], facet))
    chain_led = False
    # 6b. section chain: on a page in sections, the best match's section first
    if prep.sections and sections is not None and n:
        chain = section_chain(raw_sim, np.ones(n, dtype=bool) if live is None else live, sections, texts_of)
        if chain is not None:
            score = rank_first(score, chain, keep)
            on_topic = chain
            stages.append("section chain")
            picks = chain_picks(chain, res.start, keep, intent, now)
            chain_led = bool(picks)  # the section's own versions answer; no lift across the boundary
            if picks:
                led = lead_chain(score, chain, keep, picks)
                if led is not None:
                    score = led
                    stages.append("in force")
            else:
                instant = asked_instant(intent, now)
                moved_first = None if instant is None else in_force_first(score, chain, res.start, keep, instant)
                if moved_first is not None:
                    score = moved_first[0]
                    stages.append("in force")
    if on_topic is not None and rules.version_floor is not None:
        # 7. versions: the first hit's (and the anchor event's page) stay above much less similar pages
        vec = vectors if vectors is None or callable(vectors) else (lambda pos: vectors[pos])  # type: ignore[index]
        mine = first_versions(score, keep, on_topic, rules.version_floor, groups=groups, keys=keys, vectors=vec,
                              event=event, top_k=top_k)
        if mine is not None:
            moved = versions_first(score, mine, raw_sim, keep, keep & ~res.not_yet_valid)
            if moved is not score:
                score, versions = moved, mine
                on_topic = on_topic | mine
                stages.append("versions")
        bad = None if conflicts is None else conflicts(score, keep, mine, on_topic)
        # 8. across the boundary: never to a version the question's own versions rule out
        side = open_side(intent)
        if side is not None and mine is not None and not chain_led:
            lifted = across_boundary(score, mine if bad is None else mine & ~bad, mine, raw_sim,
                                     keep & ~res.not_yet_valid, on_topic, res.start, keep, *side)
            if lifted is not None:
                score, across = lifted
                on_topic = on_topic.copy()
                on_topic[across] = True  # it ranks with the on-topic set now
                stages.append("across the boundary")
        # 9. version conflict
        if bad is not None:
            bad = spared(bad, mine, score, keep)
            if bad.any():
                score, conflict = conflicts_last(score, bad, on_topic, keep)
                if conflict is not None:
                    stages.append("version conflict")
    # 10. origin: a timeless question over release notes, the release that introduced what it asks about first
    origin = None
    if on_topic is not None and keys is not None and texts_of is not None and intent.mode == "timeless" \
            and not intent.spans and not prep.sections and tplan.config.strength > 0:
        got_origin = origin_first(score, raw_sim, keep, res.start, intent.topical_query or intent.query,
                                  intent.lang or "en", keys, texts_of, rules.lead_tokens)
        if got_origin is not None:
            score, origin = got_origin
            on_topic = on_topic.copy()
            on_topic[origin] = True
            stages.append("origin")
    # 11. the anchor's page: a before question's anchor page first when it alone is a strong match
    if on_topic is not None and anchor_page is not None:
        lifted_page = anchor_page_first(score, anchor_page, raw_sim, keep, open_side(intent))
        if lifted_page is not None:
            score, lifted_anchor = lifted_page, anchor_page
            on_topic = on_topic.copy()
            on_topic[anchor_page] = True
            stages.append("anchor page")
    kept = int(np.count_nonzero(keep))
    if kept < n:
        score = np.where(keep, score, -np.inf)
    return Ranked(score=score, res=res, sim=sim, intent=intent, plan=tplan, on_topic=on_topic, versions=versions,
                  across=across, stages=tuple(stages), raw_sim=raw_sim, conflict=conflict, kept=kept, prepared=prep,
                  decide=decide, facet=facet, anchor_page=lifted_anchor, origin=origin)
