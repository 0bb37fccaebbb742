"""The temporal layer: intent + kernel + validity -> decay weights -> fused scores.

Pure and columnar: every input is an array over the candidates (or the whole corpus, for
the index), nothing here does I/O. The reranker, the index and the stores' client-side
fallback all call :func:`apply_temporal`, so they rank identically.

How a query's intent is applied (T is the reference time):

- ``recent``: T = now; effective strength = strength x time_sensitivity.
- a stated target (``as_of`` / ``range``): effective strength = strength x
  :data:`STATED_TIME_WEIGHT`, whatever the time sensitivity (:func:`intent_strength`).
- ``as_of``: T = end of the target (the state *as of* that day/month/year; now, when the
  target ends later); documents that start at or after T are not yet valid.
- ``range`` ("in 2022", "before the v2 change", "since March"): what was *in force* during
  the period, in four bands that never overlap (:func:`_in_force_range`): in force at the
  period's end first, then in force during it but replaced before its end, then published
  after it, then replaced before it began; within a band the kernel orders by distance,
  its half-life rescaled to ``range_scale`` x the range's length when the range is bounded;
  ``range_slope`` orders the pages published inside the period newest first.
- ``specific`` / ``timeless``: effective strength 0 -- no pressure towards recency.

A document's start is ``valid_from`` when present, else its date. A document whose
validity ended before T (explicit ``valid_to``, or superseded by the next version in its
chain) is decayed by how long ago it ended, times ``expired_factor``.

Documents dated after the reference time (``future``): ``auto`` (the default) treats a
reference time in the past -- more than ``PAST_SKEW_S`` (60 s of clock skew) before the
wall clock -- as the world as it was then: a document that starts after it did not exist
yet and is excluded. At the present (live use, ``now`` = the wall clock, give or take the
60 s) ``auto`` is ``clamp``: a future date counts as age 0. ``exclude`` always excludes them;
``not_yet_valid`` gives them weight 0; ``symmetric`` decays them by their distance ahead.
On news-dev (5,000 articles, questions from 2022-2023, the pool holding articles written
after each question) excluding them moved the default index from 0.699 / 0.583 to
0.745 / 0.635 nDCG@10 (fresh_only / fresh_vs_stale), and with the rest of today's default
0.761 / 0.631 (``future='clamp'``) -> 0.789 / 0.675 (benchmarks/cross_domain.py); the
release, changelog and synthetic sets have no document after their reference dates and do
not change. The skew allowance sits in the "is it past?" test, not in the comparison with
each document: a day-precision date (midnight) one second after a reference time at
23:59:59 belongs to the next day (news-dev 0.790 / 0.675 strict against 0.787 / 0.670 with
60 s or a day of slack per document).

Hard filter (``max_age_days=N``, switched per pipeline by ``use_temporal_filter``): documents
that start more than N days before the reference time are removed outright, as a date-range
filter in a vector store would; off by default because it deletes old documents that are
still right.

Relative recency (``relative_recency=r``): for ``recent`` and ``as_of`` queries a
document's age is counted not from T but from the newest document (valid at T) that
matches the query at least r times as well as it does. A document is stale when something
about as relevant is newer, so the newest release of a project that stopped releasing two
years ago still counts as fresh, while an old near-duplicate of a fresh page does not.
Computed for all candidates at once with one sort and a running maximum.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, NamedTuple

import numpy as np

from chronorank import expr as ex
from chronorank.errors import InvalidInput
from chronorank.fusion import combine, resolve_strategy
from chronorank.intent import parse as parse_intent
from chronorank.kernels import get_kernel
from chronorank.timeparse import resolve_now
from chronorank.types import DAY, Intent, Interval, format_epoch
from chronorank.validity import build_chains

MISSING_POLICIES = ("neutral", "keep", "penalise", "drop", "raise")
FUTURE_POLICIES = ("auto", "clamp", "not_yet_valid", "symmetric", "exclude")
#: ``future='auto'``: a reference time counts as past when it is more than this many seconds
#: before the wall clock (clock skew between the caller and this machine).
PAST_SKEW_S = 60.0
NOT_YET_VALID_POLICIES = ("zero", "exclude")
_MISSING_ALIASES = {"penalize": "penalise", "median": "neutral", "ignore": "keep"}


STATED_TIME_WEIGHT = 0.9
"""Share of the strength an ``as_of`` / ``range`` intent with a target applies, whatever its
time sensitivity: the weight the rules gave every stated time before the sensitivity model,
so the ranking of such queries is unchanged by it."""


def intent_strength(intent: Intent | None) -> float:
    """How much of the configured strength ``intent`` applies (the one formula for all paths).

    0 for ``specific`` and ``timeless``; :data:`STATED_TIME_WEIGHT` for ``as_of`` / ``range``
    with a target -- "who won the world cup in 2018" does not depend on when it is asked
    (low sensitivity), yet its ranking follows 2018; the time sensitivity otherwise.
    No intent means full strength.
    """
    if intent is None:
        return 1.0
    if intent.mode in ("specific", "timeless"):
        return 0.0
    if intent.mode in ("as_of", "range") and intent.target is not None:
        return STATED_TIME_WEIGHT
    return float(intent.time_sensitivity)


#: The ranking defaults of every engine: the index (``IndexConfig``), the reranker
#: (``TemporalReranker()``, and so every rerank adapter) and the stores read these three names,
#: so ``TemporalReranker()`` ranks a pool as ``TemporalIndex()`` ranks it. Chosen on the
#: changelog and release benchmarks (the measurements: ``chronorank.index.config``).
#: ``relative_recency``: see "Relative recency" above.
DEFAULT_RELATIVE_RECENCY = 0.85
#: ``range_slope``: inside a period the newest page comes first (:func:`_in_force_range`).
DEFAULT_RANGE_SLOPE = 0.2
#: ``topical_margin``: time never lifts a candidate below this share of the best similarity
#: over one above it (:func:`topic_first`).
DEFAULT_TOPICAL_MARGIN = 0.5


def _default_kernel() -> Any:
    return get_kernel("exponential(half_life_days=180)")


@dataclass(frozen=True)
class TemporalConfig:
    """Every policy of the temporal layer as an explicit, validated parameter."""

    kernel: Any = field(default_factory=_default_kernel)
    strength: float = 1.0
    combine: str = "gated_multiply"
    missing_date: str = "neutral"
    future: str = "auto"
    not_yet_valid: str = "zero"
    expired_factor: float = 0.5
    relative_recency: float | None = None
    range_slope: float = 0.0
    range_scale: float | None = 0.1
    max_age_days: float | None = None
    use_temporal_filter: bool = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "kernel", get_kernel(self.kernel))
        object.__setattr__(self, "combine", resolve_strategy(self.combine))
        md = _MISSING_ALIASES.get(self.missing_date, self.missing_date)
        object.__setattr__(self, "missing_date", md)
        _check_choice("missing_date", md, MISSING_POLICIES)
        _check_choice("future", self.future, FUTURE_POLICIES)
        _check_choice("not_yet_valid", self.not_yet_valid, NOT_YET_VALID_POLICIES)
        _check_unit("strength", self.strength)
        _check_unit("expired_factor", self.expired_factor)
        _check_unit("range_slope", self.range_slope)
        if self.relative_recency is not None:
            _check_unit("relative_recency", self.relative_recency)
        if self.max_age_days is not None and not (
            isinstance(self.max_age_days, (int, float)) and self.max_age_days > 0
        ):
            raise InvalidInput(f"max_age_days must be a positive number of days or None, got {self.max_age_days!r}")
        if not isinstance(self.use_temporal_filter, bool):
            raise InvalidInput(f"use_temporal_filter must be True or False, got {self.use_temporal_filter!r}")
        if self.range_scale is not None and not (
            isinstance(self.range_scale, (int, float)) and self.range_scale > 0
        ):
            raise InvalidInput(f"range_scale must be a positive number or None, got {self.range_scale!r}")

    def spec(self) -> str:
        """The configuration as one spec string (the same grammar as kernels)."""
        rr = "none" if self.relative_recency is None else f"{self.relative_recency:g}"
        return (
            f"temporal(kernel={repr(self.kernel)!r}, strength={self.strength:g}, combine={self.combine!r}, "
            f"missing_date={self.missing_date!r}, future={self.future!r}, "
            f"not_yet_valid={self.not_yet_valid!r}, expired_factor={self.expired_factor:g}, "
            f"relative_recency={rr}, "
            f"range_slope={self.range_slope:g}, "
            f"range_scale={'none' if self.range_scale is None else format(self.range_scale, 'g')}, "
            f"max_age_days={'none' if self.max_age_days is None else format(self.max_age_days, 'g')}, "
            f"use_temporal_filter={str(self.use_temporal_filter).lower()})"
        )


def _check_choice(name: str, value: str, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        raise InvalidInput(f"{name}={value!r} is not a known policy; use one of {list(allowed)}")


def _check_unit(name: str, value: float) -> None:
    if not (isinstance(value, (int, float)) and 0.0 <= value <= 1.0):
        raise InvalidInput(f"{name} must be a number in [0, 1], got {value!r}")


@dataclass(frozen=True)
class TemporalPlan:
    """One query's temporal setting, resolved once from ``(intent, now, config)``
    (:func:`plan`): what every consumer -- :func:`apply_temporal` (the reranker, the index,
    a store's client-side scoring), :func:`temporal_geometry` (the fit grid) and a store's
    compiled expression (``stores.base.plan_query``) -- reads instead of deriving it again.

    ``reference_time`` is T (see the module docstring): now for ``recent``; the end of an
    ``as_of`` target that ends at or before now (``half_open``: a document starting at T is
    not yet valid); the end of a ``range`` target, or now when it ends later.
    """

    config: TemporalConfig
    intent: Intent | None
    now: float
    mode: str
    reference_time: float
    #: the stated period in effect: an ``as_of`` / ``range`` intent's target, else None
    target: Interval | None
    half_open: bool
    #: :func:`intent_strength` of the intent, and ``config.strength`` times it
    sensitivity: float
    strength: float
    #: a bounded range's length in days (the kernel's half-life is rescaled to
    #: ``config.range_scale`` x it); None otherwise
    range_span_days: float | None
    #: documents starting after ``now`` are removed (:func:`excludes_future`)
    excludes_future: bool
    #: outside a range, documents starting after T weigh 0 (``as_of``, ``future='not_yet_valid'``)
    marks_not_yet_valid: bool
    #: ``future='symmetric'`` on a ``recent`` query: a future document decays by its distance ahead
    symmetric: bool

    @classmethod
    def of(cls, intent: Intent | None, now: float, config: TemporalConfig | None = None) -> TemporalPlan:
        """The plan of ``intent`` at ``now`` (epoch seconds) under ``config`` (default settings
        when None); :func:`plan` is the same call."""
        cfg = config if config is not None else TemporalConfig()
        if now is None or not math.isfinite(now):
            raise InvalidInput(f"now must be a finite time, got {now!r}")
        now = float(now)
        mode = intent.mode if intent is not None else "recent"
        given = intent.target if intent is not None else None
        target = given if mode in ("as_of", "range") else None
        sensitivity = intent_strength(intent)
        half_open = False
        span: float | None = None
        if mode == "range" and target is not None:
            ref = min(target.end, now) if math.isfinite(target.end) else now
            lo, hi = target.start, target.end
            if math.isfinite(lo) and math.isfinite(hi) and hi > lo:
                span = (hi - lo) / DAY
        elif mode == "as_of" and target is not None and math.isfinite(target.end) and target.end <= now:
            # the target is half-open [start, end): "as of 30 Dec" ends at 31 Dec 00:00,
            # and a release dated 31 Dec did not exist yet
            ref, half_open = target.end, True
        else:
            ref = now
        in_range = mode == "range" and target is not None
        return cls(
            config=cfg, intent=intent, now=now, mode=mode, reference_time=float(ref), target=target,
            half_open=half_open, sensitivity=sensitivity, strength=cfg.strength * sensitivity,
            range_span_days=span, excludes_future=excludes_future(cfg.future, now),
            marks_not_yet_valid=not in_range and (mode == "as_of" or cfg.future == "not_yet_valid"),
            symmetric=cfg.future == "symmetric" and mode == "recent",
        )

    @property
    def range(self) -> tuple[float, float] | None:
        """``(start, end)`` of a ``range`` intent's period (either side may be infinite), else None."""
        if self.mode == "range" and self.target is not None:
            return self.target.start, self.target.end
        return None

    @property
    def range_scale(self) -> float | None:
        return self.config.range_scale

    def age_factor(self, kernel: Any = None) -> float:
        """How much ``kernel``'s (default: the config's) age axis is stretched for this query
        (:func:`range_age_factor`)."""
        k = self.config.kernel if kernel is None else kernel
        return range_age_factor(k, self.config.range_scale, self.range_span_days)

    def undated_fill(self, dated: np.ndarray | None = None, neutral: float = 1.0) -> float:
        """The weight of an undated document under ``missing_date``: ``keep`` 1, ``drop`` 0;
        given the dated candidates' weights, ``neutral`` is their median and ``penalise``
        their minimum (1 when none is dated); without them -- inside an engine, which cannot
        compare candidates -- ``neutral`` is the ``neutral`` argument and ``penalise`` the
        kernel's floor. ``raise`` is the caller's to raise (it knows which candidate)."""
        policy = self.config.missing_date
        if policy == "keep":
            return 1.0
        if policy == "drop":
            return 0.0
        if dated is None:
            return float(getattr(self.config.kernel, "floor", 0.0)) if policy == "penalise" else float(neutral)
        if not dated.size:
            return 1.0
        return float(dated.min()) if policy == "penalise" else median_of(dated)


def median_of(values: np.ndarray) -> float:
    """``float(np.median(values))`` of a 1-D array, bit for bit (float32 / float64: the middle
    value, or the two middle ones' sum halved in the array's dtype, as ``np.mean`` does; NaN if
    any is), without what ``np.median`` imports on its first call: ``numpy.ma``, ~7 ms of a
    cached rerun of ``chronorank eval`` (benchmarks/embed_cache.py). Other dtypes: np.median."""
    if values.ndim != 1 or values.dtype not in (np.float32, np.float64) or not values.shape[0]:
        return float(np.median(values))
    if np.isnan(values).any():
        return math.nan
    h = values.shape[0] // 2
    if values.shape[0] % 2:
        return float(np.partition(values, h)[h])
    part = np.partition(values, (h - 1, h))
    return float((part[h - 1] + part[h]) / 2)


def range_age_factor(kernel: Any, range_scale: Any, span_days: Any) -> Any:
    """A bounded period rescales the kernel's half-life to ``range_scale`` x its length
    (``span_days``): ages are multiplied by half-life / (range_scale x span_days); 1 without
    a bounded period, a scale or a half-life. Broadcasts over arrays (the fit grid: one period
    per query, NaN where a query has none) and then returns an array."""
    if span_days is None or range_scale is None:
        return 1.0
    hl = kernel.half_life() if hasattr(kernel, "half_life") else None
    if np.ndim(span_days) or np.ndim(range_scale):
        span = np.multiply(range_scale, span_days)
        none = np.isnan(span)
        return np.where(none | (not hl), 1.0, (hl or 1.0) / np.where(none, 1.0, span))
    if not hl:
        return 1.0
    return float(hl) / (range_scale * span_days)


def plan(intent: Intent | None, now: float, config: TemporalConfig | None = None) -> TemporalPlan:
    """The :class:`TemporalPlan` of one query: reference time, target, strength, range scale,
    future handling and missing-date fill, derived once from ``intent`` at ``now``."""
    return TemporalPlan.of(intent, now, config)


@dataclass(frozen=True)
class PreparedQuery:
    """A query checked and resolved for a search (:func:`prepare_query`)."""

    query: str
    now: float  # epoch seconds
    intent: Intent
    config: Any  # the caller's configuration with this call's overrides applied
    topical: str  # the intent's topical query, or the query itself


def check_query(query: Any, k: Any = None) -> None:
    """A search's query must be a non-empty string and ``k`` (when given) a positive integer."""
    if not isinstance(query, str) or not query.strip():
        raise InvalidInput(f"query={query!r}; give a non-empty string.")
    if k is not None and (isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1):
        raise InvalidInput(f"k={k!r}; give a positive integer such as 10.")


def prepare_query(
    query: Any,
    k: Any = None,
    now: Any = None,
    intent: Intent | None = None,
    config: Any = None,
    overrides: Mapping[str, Any] | None = None,
    *,
    date_anchors: bool = True,
) -> PreparedQuery:
    """The preamble every search runs (the index, its ANN path, Qdrant, PostgreSQL): check
    ``query`` and ``k`` (None: not checked), apply this call's ``overrides`` to ``config``
    (anything with ``replace(**changes)``), resolve ``now`` (:func:`chronorank.timeparse.resolve_now`),
    parse the intent unless given, and take its topical query.

    ``date_anchors=False``: "before / after <a version or an event>" with no
    target cannot be dated through the corpus in one engine query, so time is off for it
    (``specific``) rather than wrong; pass an intent with a target
    (``TemporalIndex.search(...).meta["intent"]``) to apply it.
    """
    check_query(query, k)
    cfg = config.replace(**overrides) if overrides else config
    now_s = float(resolve_now(now))
    if intent is None:
        intent = parse_intent(query, now=now_s)
    if not date_anchors:
        intent = without_undated_anchor(intent)
    topical = (intent.topical_query or "").strip() or query
    return PreparedQuery(query=query, now=now_s, intent=intent, config=cfg, topical=topical)


def without_undated_anchor(intent: Intent) -> Intent:
    """``intent`` with time off (``specific``) when it is "before / after <a version or an
    event>" with no target yet: what cannot date the anchor through the corpus (a store, in
    one engine query) leaves time out rather than applying it wrong."""
    if intent.anchor is None or intent.target is not None:
        return intent
    from dataclasses import replace

    return replace(intent, mode="specific", time_sensitivity=min(intent.time_sensitivity, 0.05))


@dataclass
class TemporalResult:
    """Columns produced by :func:`apply_temporal`, aligned to the input order."""

    score: np.ndarray
    decay: np.ndarray
    age_days: np.ndarray
    start: np.ndarray
    keep: np.ndarray  # False for documents removed by a policy (drop / exclude)
    effective_strength: float
    reference_time: float
    anchor_time: np.ndarray | float
    mode: str
    expired: np.ndarray
    not_yet_valid: np.ndarray
    undated: np.ndarray
    successor: np.ndarray
    end: np.ndarray
    ids: Sequence[Any] | None = None
    band: np.ndarray | None = None  # range intents: BAND_* per candidate (-1 undated)
    unsure: np.ndarray | None = None  # with a Pool: candidates whose anchor it cannot prove

    def note(self, i: int) -> tuple[str, ...]:
        """Why document i got its weight, in words (built on demand, never for every row)."""
        out: list[str] = []
        if self.undated[i]:
            out.append("undated: weight from the missing-date policy")
        if self.not_yet_valid[i]:
            out.append(
                f"not yet valid at {format_epoch(self.reference_time)} "
                f"(starts {format_epoch(self.start[i])})"
            )
        if self.expired[i]:
            j = int(self.successor[i])
            if j >= 0:
                who = self.ids[j] if self.ids is not None else f"#{j}"
                out.append(f"superseded by {who} on {format_epoch(self.end[i])}")
            else:
                out.append(f"expired on {format_epoch(self.end[i])}")
        return tuple(out)

    def notes_of(self, rows: Sequence[int]) -> list[tuple[str, ...]]:
        """``[note(i) for i in rows]``, looking only at the rows that have something to say."""
        r = np.asarray(rows, dtype=np.int64)
        flagged = (self.undated[r] | self.not_yet_valid[r] | self.expired[r]).tolist()
        return [self.note(i) if f else () for i, f in zip(r.tolist(), flagged)]


@dataclass(frozen=True)
class Pool:
    """The candidates are a pool of a larger set (the index's exact search scores the top of
    its corpus): what :func:`competitive_anchor` needs of the whole set to give each pooled
    candidate the set's anchor, or to say that it cannot (``TemporalResult.unsure``).

    ``size``: candidates in the set (it decides exact or binned, as for the set); ``low``: the
    set's lowest similarity; ``outside``: no candidate outside the pool has a higher one;
    ``newest``: reference time -> no candidate outside the pool that starts at or before it
    starts later than this (a reference time not in it: no bound).
    """

    size: int
    low: float
    outside: float
    newest: Mapping[float, float] = field(default_factory=dict)


def apply_temporal(
    similarity: np.ndarray | Sequence[float],
    times: np.ndarray | Sequence[float],
    *,
    intent: Intent | None = None,
    now: float | None = None,
    config: TemporalConfig | None = None,
    valid_from: np.ndarray | None = None,
    valid_to: np.ndarray | None = None,
    groups: np.ndarray | None = None,
    ids: Sequence[Any] | None = None,
    plan: TemporalPlan | None = None,
    pool: Pool | None = None,
) -> TemporalResult:
    """Score candidates by similarity and time under ``intent`` (see the module docstring).

    ``times``/``valid_from``/``valid_to`` are float64 epoch seconds with NaN for missing;
    ``groups`` are int version-chain codes (-1 = no chain). Returns the fused score, decay
    weight, age in days, and the masks the explanations are built from. ``plan`` is the
    query's :class:`TemporalPlan` when the caller has built it (``intent``, ``now`` and
    ``config`` are then read from it); otherwise it is built from them. ``pool``: the
    candidates are a pool of a larger set (:class:`Pool`); ``unsure`` then marks those whose
    scores may differ from the set's.
    """
    sim = np.asarray(similarity, dtype=np.float64)
    t = np.asarray(times, dtype=np.float64)
    n = sim.shape[0]
    if t.shape != (n,):
        raise InvalidInput(f"times has shape {t.shape} but similarity has {n} rows; pass one time per candidate")
    if n and not np.isfinite(sim).all():
        bad = int(np.flatnonzero(~np.isfinite(sim))[0])
        who = ids[bad] if ids is not None else f"#{bad}"
        raise InvalidInput(
            f"similarity of candidate {who!r} is {sim[bad]!r}; scores must be finite numbers "
            "(drop or fix that candidate, e.g. replace NaN with 0.0)"
        )
    p = plan if plan is not None else TemporalPlan.of(intent, now, config)  # type: ignore[arg-type]
    cfg = p.config
    geo = temporal_geometry(sim, t, plan=p, valid_from=valid_from, valid_to=valid_to, groups=groups, pool=pool)
    weight = geo.weights(cfg.kernel)
    strength = p.strength
    undated, nyv = geo.undated, geo.not_yet_valid

    keep = np.ones(n, dtype=bool)
    if undated.any():
        weight = np.asarray(weight, dtype=np.float64).copy()
        dated_w = weight[~undated]
        policy = cfg.missing_date
        if policy == "raise":
            bad = int(np.flatnonzero(undated)[0])
            who = ids[bad] if ids is not None else f"#{bad}"
            raise InvalidInput(
                f"candidate {who!r} has no usable date; give it a date or choose "
                "missing_date='neutral', 'keep', 'penalise' or 'drop'"
            )
        if policy == "drop":
            keep &= ~undated
        weight[undated] = p.undated_fill(dated_w)
    if cfg.not_yet_valid == "exclude":
        keep &= ~nyv
    if p.excludes_future:
        with np.errstate(invalid="ignore"):
            keep &= ~(geo.start > p.now)
    if cfg.max_age_days is not None and cfg.use_temporal_filter:
        # the article's hard date-range filter: a blunt cut, kept as an option (its recall
        # cost is in benchmarks/validity_quality.py); undated documents are not cut
        with np.errstate(invalid="ignore"):
            keep &= ~(geo.start < geo.reference_time - cfg.max_age_days * DAY)

    score = combine(sim, weight, cfg.combine, strength) if n else np.zeros(0)
    if geo.validity is not None and cfg.strength > 0:
        score = combine(score, geo.validity, "multiply", 1.0)  # time is off, validity is not
    return TemporalResult(
        score=score,
        decay=np.asarray(weight, dtype=np.float64),
        age_days=geo.display_age,
        start=geo.start,
        keep=keep,
        effective_strength=strength,
        reference_time=geo.reference_time,
        anchor_time=geo.anchor,
        mode=geo.mode,
        expired=geo.expired,
        not_yet_valid=nyv,
        undated=undated,
        successor=geo.successor,
        end=geo.end,
        ids=ids,
        band=geo.band,
        unsure=geo.unsure,
    )


def excludes_future(policy: str, now: float, wall: float | None = None) -> bool:
    """Whether documents dated after ``now`` are excluded: always under ``future='exclude'``;
    under ``'auto'`` when ``now`` is in the past, more than ``PAST_SKEW_S`` before the wall
    clock (``wall``, read when not given)."""
    if policy == "exclude":
        return True
    if policy != "auto":
        return False

    return now < (time.time() if wall is None else wall) - PAST_SKEW_S


@dataclass
class Geometry:
    """Everything about the candidates' time that does not depend on the kernel.

    ``kernel_age`` is what the kernel sees (days); outside a bounded range it is rescaled
    per kernel (see ``range_span_days``). ``multiplier`` carries the expired-version factor
    and the in-range slope; ``sensitivity`` is 0 for specific and timeless intents. Fitting
    evaluates many kernels over one geometry per query.
    """

    mode: str
    sensitivity: float
    reference_time: float
    anchor: np.ndarray | float
    start: np.ndarray
    end: np.ndarray
    successor: np.ndarray
    kernel_age: np.ndarray
    display_age: np.ndarray
    multiplier: np.ndarray | float  # 1.0 when nothing scales the weights
    expired: np.ndarray
    not_yet_valid: np.ndarray
    undated: np.ndarray
    range_span_days: float | None = None
    range_scale: float | None = None
    offset: np.ndarray | float = 0.0  # added after the multiplier (the in-force bands of a range)
    band: np.ndarray | None = None  # range intents: BAND_* per candidate
    validity: np.ndarray | None = None  # timeless intents: factor for ended / replaced versions
    unsure: np.ndarray | None = None  # with a Pool: candidates whose anchor it cannot prove

    def age_factor(self, kernel: Any) -> float:
        """How much the kernel's age axis is stretched for this query (1 outside range mode)."""
        return range_age_factor(kernel, self.range_scale, self.range_span_days)

    def weights(self, kernel: Any) -> np.ndarray:
        """Decay weight per candidate under ``kernel`` (NaN where undated)."""
        factor = self.age_factor(kernel)
        with np.errstate(invalid="ignore"):
            w = np.asarray(kernel(self.kernel_age * factor if factor != 1.0 else self.kernel_age), dtype=np.float64)
            if not (isinstance(self.multiplier, float) and self.multiplier == 1.0):
                w = w * self.multiplier
            if not (isinstance(self.offset, float) and self.offset == 0.0):
                w = w + self.offset
        return np.where(self.not_yet_valid, 0.0, w) if self.not_yet_valid.any() else w


def temporal_geometry(
    similarity: np.ndarray,
    times: np.ndarray,
    *,
    intent: Intent | None = None,
    now: float | None = None,
    config: TemporalConfig | None = None,
    valid_from: np.ndarray | None = None,
    valid_to: np.ndarray | None = None,
    groups: np.ndarray | None = None,
    plan: TemporalPlan | None = None,
    pool: Pool | None = None,
) -> Geometry:
    """Reference time, ages, validity and supersession of every candidate under ``intent``
    (the reference time and the policies from ``plan``, built from ``intent``, ``now`` and
    ``config`` when not given)."""
    p = plan if plan is not None else TemporalPlan.of(intent, now, config)  # type: ignore[arg-type]
    cfg = p.config
    sim = similarity
    t = times
    n = t.shape[0]
    start = t if valid_from is None else np.where(np.isnan(valid_from), t, valid_from)
    chains = build_chains(start, groups)
    if valid_to is None:
        end = chains.derived_end
    else:
        explicit_end = np.asarray(valid_to, dtype=np.float64)
        end = np.where(np.isnan(explicit_end), chains.derived_end, explicit_end)
    # without validity ends or chains nothing can expire: the expiry work is skipped
    ends = valid_to is not None or groups is not None

    mode = p.mode
    sensitivity = p.sensitivity

    undated = np.isnan(start)
    nyv = np.zeros(n, dtype=bool)
    expired = np.zeros(n, dtype=bool)
    mult: np.ndarray | float = 1.0
    offset: np.ndarray | float = 0.0
    band: np.ndarray | None = None
    validity: np.ndarray | None = None
    span: float | None = None
    unsure: np.ndarray | None = None
    with np.errstate(invalid="ignore"):
        ref = p.reference_time
        if p.range is not None:
            lo, _ = p.range
            kernel_age, offset, mult, band, unsure = _in_force_range(sim, start, end, lo, ref, cfg, pool)
            display_age = (ref - start) / DAY
            # Outside the period the kernel's half-life is rescaled to range_scale x its
            # length: "in March" tolerates days, "in 2021" tolerates weeks.
            span = p.range_span_days
            anchor: np.ndarray | float = ref
            expired = (band == BAND_REPLACED) & ~undated
        else:
            # an as-of target is half-open: a document starting at T did not exist yet
            future = start >= ref if p.half_open else start > ref
            if p.marks_not_yet_valid:
                nyv = future
            anchor = ref
            if cfg.relative_recency is not None and mode in ("recent", "as_of") and n:
                past = np.where(future, np.nan, start) if future.any() else start
                anchor, unsure = _anchor(sim, past, ref, cfg.relative_recency, pool)
            if ends:
                expired = ~np.isnan(end) & (end <= ref) & ~undated
                base = np.where(expired, end, start)
                mult = np.where(expired, cfg.expired_factor, 1.0)
                # ages shown to users are measured from the reference time, not the anchor
                display_age = np.where(future, (ref - start) / DAY, (ref - base) / DAY)
            else:
                base = start
                display_age = (ref - start) / DAY
            age = (anchor - base) / DAY
            if p.symmetric:
                age = np.where(future, (start - ref) / DAY, age)
            kernel_age = np.maximum(age, 0.0)
            if mode == "timeless" and ends and expired.any():
                # time is off, validity is not: a version whose validity ended (valid_to, or
                # the next version of its chain) is demoted by expired_factor -- a question that
                # does not ask for the past wants what holds now. Supersession *inferred* from
                # a newer similar page is not used here: "how was X originally introduced"
                # (gate: timeless) wants the first revision (synthetic timeless 0.599 -> 0.552)
                validity = np.where(expired, cfg.expired_factor, 1.0)
    return Geometry(
        mode=mode, sensitivity=sensitivity, reference_time=float(ref), anchor=anchor,
        start=start, end=end, successor=chains.successor, kernel_age=kernel_age,
        display_age=np.asarray(display_age, dtype=np.float64), multiplier=mult,
        expired=expired, not_yet_valid=nyv, undated=undated,
        range_span_days=span, range_scale=cfg.range_scale, offset=offset, band=band, validity=validity,
        unsure=unsure,
    )


def competitive_anchor(sim: np.ndarray, start: np.ndarray, ref: float, ratio: float) -> np.ndarray:
    """For each candidate: the newest start (<= ref) among candidates with sim >= ratio x its own.

    Falls back to ``ref`` where no such dated candidate exists. Exact (one sort) for up to
    ``EXACT_ANCHOR_MAX`` candidates; above that the similarity range is cut into 4096 bins
    and a running maximum over bins answers every candidate in O(n), including at most one
    bin's width (1/4096 of the range) of slightly less similar competitors.
    """
    return _anchor(sim, start, ref, ratio)[0]


def _anchor(
    sim: np.ndarray, start: np.ndarray, ref: float, ratio: float, pool: Pool | None = None
) -> tuple[np.ndarray, np.ndarray | None]:
    """:func:`competitive_anchor`, and with a ``pool`` the candidates whose anchor may differ
    from the whole set's (``unsure``): those with a competitor outside the pool (its
    similarity can reach their threshold, or their threshold's bin) whose newest competitor
    in the pool is older than ``pool.newest`` says an outside one can be. The pool is scored
    as the set would be: the set's size picks exact or binned, the set's lowest similarity
    sets the bins (the highest is in the pool)."""
    with np.errstate(invalid="ignore"):
        usable = np.where(start <= ref, start, -np.inf)  # NaN <= ref is False: undated too
    n = sim.shape[0] if pool is None else pool.size
    covered: np.ndarray | None = None
    if n <= EXACT_ANCHOR_MAX:
        threshold = np.where(sim >= 0, ratio * sim, sim / ratio if ratio > 0 else -np.inf)
        order = np.argsort(-sim, kind="stable")
        sim_sorted = sim[order]
        newest = np.maximum.accumulate(usable[order])
        # how many candidates have sim >= threshold (sim_sorted is descending)
        count = np.searchsorted(-sim_sorted, -threshold, side="right")
        anchor = newest[np.maximum(count - 1, 0)]
        if pool is not None:
            covered = threshold > pool.outside
    else:
        lo, hi = (float(sim.min()) if pool is None else pool.low), float(sim.max())
        if lo >= 0 and ratio > 0:  # no negative similarity: the same values, one pass
            threshold = np.multiply(sim, ratio)
        else:
            threshold = np.where(sim >= 0, ratio * sim, sim / ratio if ratio > 0 else -np.inf)
        scale = (ANCHOR_BINS - 1) / (hi - lo) if hi > lo else 0.0
        # in place: the same operations as ((sim - lo) * scale) etc., without temporaries
        buf = np.subtract(sim, lo)
        bins = np.multiply(buf, scale, out=buf).astype(np.int64)
        bin_newest = np.full(ANCHOR_BINS, -np.inf)
        np.maximum.at(bin_newest, bins, usable)
        newest_above = np.maximum.accumulate(bin_newest[::-1])[::-1]
        t = np.subtract(threshold, lo, out=threshold)
        np.multiply(t, scale, out=t)
        np.floor(t, out=t)
        tbin = np.clip(t, 0, ANCHOR_BINS - 1, out=t).astype(np.int64)
        anchor = newest_above[tbin]
        if pool is not None:
            # the bin an outside candidate can reach, by the same operations as ``bins``
            out_bin = np.multiply(np.subtract(np.array([pool.outside]), lo), scale).astype(np.int64)[0]
            covered = tbin > out_bin
        elif np.isfinite(newest_above).all():
            return anchor, None
    unsure = None
    if pool is not None and covered is not None:
        unsure = ~covered & ~(anchor >= pool.newest.get(ref, np.inf))
    return np.where(np.isfinite(anchor), anchor, ref), unsure


#: Documents matching an anchor at least this share of the best match date it.
ANCHOR_MATCH_SHARE = 0.8


def anchor_row(match: np.ndarray, start: np.ndarray, share: float = ANCHOR_MATCH_SHARE) -> int:
    """The document that dates an anchor (:func:`resolve_anchor`): of the dated ones matching
    it at least ``share`` x the best, the earliest (then the lowest position); -1 for none."""
    m = np.asarray(match, dtype=np.float64)
    dated = ~np.isnan(start)
    best = float(m[dated].max()) if dated.any() and m.size else 0.0
    if best <= 0:
        return -1
    rows = np.flatnonzero(dated & (m >= share * best))
    return int(rows[np.argmin(start[rows])])


def resolve_anchor(
    intent: Intent, match: np.ndarray, start: np.ndarray, now: float, ids: Sequence[Any] | None = None,
    share: float = ANCHOR_MATCH_SHARE,
) -> tuple[Intent, str]:
    """Turn "before / after <a version or an event>" into a period, through the corpus.

    ``match`` scores every document against the anchor's words (BM25 in the index, word
    overlap in the reranker); the documents scoring at least ``share`` x the best are the
    ones that date the anchor, and the earliest of their starts is when it happened ("the v2
    change" = when the first v2 page appeared). Returns the intent with ``target`` set
    (``[-inf, t)`` for before, ``[t, now)`` for after) and a line for the explanation; with
    no dated match the intent becomes ``specific`` (no pressure in time) and says so.
    """
    anchor = intent.anchor
    if anchor is None or intent.target is not None:
        return intent, ""
    first = anchor_row(match, start, share)
    if first < 0:
        return (replace(intent, mode="specific", time_sensitivity=min(intent.time_sensitivity, 0.05)),
                f"{anchor.relation} {anchor.text!r}: no dated document names it, so time is off")
    # an event is dated to its day: a page published that morning belongs to it, not before it
    t = math.floor(float(start[first]) / DAY) * DAY
    target = Interval(-math.inf, t) if anchor.relation == "before" else Interval(t, max(now, t))
    who = ids[first] if ids is not None else f"#{first}"
    line = f"{anchor.relation} {anchor.text!r}: dated {format_epoch(t)} by {who}, the earliest document naming it"
    return replace(intent, target=target), line


def near_tier(
    similarity: np.ndarray, live: np.ndarray, margin: float, judge: np.ndarray | None = None,
    outside: float = -math.inf,
) -> np.ndarray | None:
    """The documents about as good a match as the best one, calibrated per query from the
    candidates' own similarities: those above the widest gap in the sorted similarities,
    from the best down to the first one below ``margin`` x the best (the gap to it
    included). A match clearly worse than the best -- the widest step down, wherever it is --
    is never about the question as much as the ones above that step.

    Versions of one section are near-duplicates, so the step under them is the widest for a
    question about that section ("what does the Copilot section say now": its versions, not
    the fresh sibling sections at 0.7-0.9 of its similarity); every release of one project
    shares the name a question asks about, so "the latest httpx release" keeps them all.
    ``judge``: the candidates that may set the best (as in :func:`topic_first`); ``outside``:
    the best similarity of candidates left out of a pool (the index's exact search), so a
    pool decides as the whole set. None when no candidate may set the best.
    """
    sim = np.asarray(similarity, dtype=np.float64)
    ref = live if judge is None or not (live & judge).any() else live & judge
    if not ref.any():
        return None
    vals = sim[ref]
    best = float(vals.max())
    if best <= 0:
        return None
    within = vals >= margin * best
    above = -np.sort(-vals[within])
    floor = max(float(np.max(vals, where=~within, initial=-np.inf)), outside)
    seq = np.append(above, floor if math.isfinite(floor) and floor < margin * best else margin * best)
    step = int(np.argmax(seq[:-1] - seq[1:]))  # the first of the widest steps
    if step == 0:
        return None  # a lone best match is no tier: one stale article above the fresh ones
    return sim >= float(seq[step])


def topic_first(
    score: np.ndarray, similarity: np.ndarray, margin: float, keep: np.ndarray | None = None,
    judge: np.ndarray | None = None, others: Sequence[tuple[np.ndarray, float | None]] = (),
    outside: float = -math.inf, tiers: Sequence[tuple[np.ndarray, float]] = (), calibrated: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """Time reorders documents about the question; it never lifts one that is not.

    A candidate is *on topic* when its similarity is at least ``margin`` x the best
    candidate's (the index's ``topical_margin``, the same cut inside which time decides), or
    when one of the ``others`` ``(signal, floor)`` pairs (the index's dense cosine and lead)
    has the signal at least floor x its best: a fresh page worded differently from the stale
    one it replaced keeps its meaning (dense) or its title (lead) when it loses the keywords.
    Off-topic scores are scaled down, keeping their order, until the best of them sits just
    below the lowest on-topic score. ``keep`` marks the candidates that count (not removed);
    ``judge`` the ones whose similarity may set "the best": for an as-of question a page that
    did not exist yet at the asked time must not decide what the topic is (it stays on topic
    itself, ranked by its zero weight). The on-topic set is bounded by :func:`near_tier`
    (``outside``: see there) -- joined by the near tier of each ``tiers`` ``(signal, margin)``
    pair (the index's lead field: every release of the project a question names shares its
    title, whatever its body's length) -- so a clearly worse match is off topic whatever its
    dense signal says, and time orders near-equals only. Measured (benchmarks/cross_domain.py,
    default MiniLM index; the numbers are in the README's cross-domain table and
    :mod:`chronorank.index.config`). Only with ``calibrated=True`` (the index, for short
    questions; the reranker does not ask for it yet). Off (the index:
    for a long question, whose many ordinary words make the similarities a slope with no
    telling step -- news-dev fresh_only / fresh_vs_stale 0.799 / 0.705 -> 0.778 / 0.664 with
    it). Returns ``(score, on_topic)``.
    """
    sim = np.asarray(similarity, dtype=np.float64)
    live = np.ones(sim.shape[0], dtype=bool) if keep is None else keep
    ref = live if judge is None else live & judge
    top = float(np.max(sim, where=ref, initial=-np.inf)) if ref.any() else 0.0
    if top <= 0:
        return score, np.ones(sim.shape[0], dtype=bool)
    on = (sim >= margin * top) & live
    tier = near_tier(sim, live, margin, judge, outside) if calibrated else None
    for signal, cut in tiers if tier is not None else ():
        near = near_tier(signal, live, cut, judge)
        if near is not None:
            tier |= near
    if tier is not None:
        on &= tier  # the fused cut only: a page the dense or lead floor keeps stays reachable
    for other, floor in others:
        if floor is None:
            continue
        sec = np.asarray(other)
        if sec.dtype != np.float32:
            sec = np.asarray(sec, dtype=np.float64)
        best2 = float(np.max(sec, where=ref, initial=-np.inf)) if ref.any() else 0.0
        if best2 > 0:
            on |= (sec >= _at_least(floor * best2, sec.dtype)) & live
    return rank_first(score, on, live), on


def _at_least(x: float, dtype: Any) -> Any:
    """The smallest ``dtype`` value v with v >= x: for v of that dtype, ``v >= x`` (compared
    in float64) holds exactly when ``v >= _at_least(x, dtype)``, so a float32 signal is
    compared without a float64 copy of it."""
    if dtype != np.float32:
        return x
    v = np.float32(x)
    return np.nextafter(v, np.float32(np.inf)) if float(v) < x else v


def rank_first(score: np.ndarray, first: np.ndarray, live: np.ndarray | None = None) -> np.ndarray:
    """Every live candidate in ``first`` ranks above every other live one, each side in its
    own order: the others' scores are scaled down (or, at or below 0, shifted) until the best
    of them sits at :func:`topic_gap` of the lowest score in ``first``; one already at or under
    it keeps its score. So afterwards no other score is above ``topic_gap(floor)``, a bound the
    version-conflict rule relies on (``index/version_conflict.conflicts_last``)."""
    live = np.ones(score.shape[0], dtype=bool) if live is None else live
    on = first & live
    off = np.logical_xor(on, live)  # ~first & live
    if not off.any() or not on.any():
        return score
    floor = float(np.min(score, where=on, initial=np.inf))
    worst = float(np.max(score, where=off, initial=-np.inf))
    if worst > topic_gap(floor):
        # the same values as np.where(off, score * factor, score), without the temporaries
        out = np.asarray(score).astype(np.result_type(score, 1.0))  # a copy, of the dtype np.where gave
        if floor > 0:
            np.multiply(out, floor * TOPIC_GAP / worst, out=out, where=off)
        else:
            np.subtract(out, worst - floor, out=out, where=off)
            np.subtract(out, 1.0, out=out, where=off)
        score = out
    return score


#: An off-topic document's best score ends at this fraction of the lowest on-topic score.
TOPIC_GAP = 0.999


def topic_gap(floor: float) -> float:
    """The highest score :func:`rank_first` leaves a document outside ``first`` when the lowest
    score in ``first`` is ``floor``: ``TOPIC_GAP x floor``, or ``floor - 1`` at or below 0."""
    return floor * TOPIC_GAP if floor > 0 else floor - 1.0
#: :func:`versions_first`: the pages with at least this share of the best similarity are the
#: *core*, which the first hit's versions never jump over; the first hit must be in it, or one
#: of its versions must be the best match.
VERSION_CORE = 0.8


def versions_first(
    score: np.ndarray, versions: np.ndarray, similarity: np.ndarray, live: np.ndarray,
    judge: np.ndarray | None = None,
) -> np.ndarray:
    """The first hit's other versions rank above every page much less about the question.

    Time demotes a page's other versions (replaced, out of force, published after the period,
    not yet valid) below pages on a neighbouring subject that happen to be in force: "SLA
    uptime in 2025" put an incident report between the 2025 SLA and the older SLAs, "privacy
    policy as of March 2023" the acceptable-use policy above the 2024 privacy policy.
    ``versions`` marks the first hit (the best live score) and its versions. The *core* is
    the live pages with similarity >= ``VERSION_CORE`` x the best (among ``judge``): when the
    first hit is in it, or the best match of all is one of its versions, every page outside
    both the core and the versions that scores above the lowest version is moved to just
    below it, in its own order; nothing else moves. So time still orders the versions and the
    pages about as similar as the best ("the latest release of airflow": the helm-chart
    series, fused 0.86 of the best, keeps its second place; with no core the release set fell
    0.997 -> 0.984), and a first hit that is a weak match lifts nothing (attrs for "everything
    that changed in werkzeug over the course of 2021", 0.65 of the best; pip for "if I ran pip
    install Werkzeug on 21 March 2023", 0.74; requests for "the newest urllib3 release as of
    May 11, 2016" with the lead field off, 0.58): lifting their versions buried the right
    project (reworded changelog queries 0.976 -> 0.968 with no core; the lead-off ablation's
    changelog latest 0.865 -> 0.831 when any version in the core was enough). Measured with benchmarks/time_semantics.py and
    benchmarks/cross_domain.py (figures in :mod:`chronorank.index.config`). Returns ``score``
    itself when nothing moves.
    """
    sim = np.asarray(similarity, dtype=np.float64)
    ref = live if judge is None or not (live & judge).any() else live & judge
    kept = versions & live
    if not ref.any() or not kept.any():
        return score
    core = sim >= VERSION_CORE * float(sim[ref].max())
    first = int(np.argmax(np.where(live, score, -np.inf)))
    best = int(np.argmax(np.where(live, sim, -np.inf)))
    if not (core[first] or versions[best]):
        return score
    low = float(score[kept].min())
    move = live & ~versions & ~core & (score >= low)
    if not move.any():
        return score
    rest = live & ~move & (score < low)
    below = float(score[rest].max()) if rest.any() else (0.0 if low > 0 else low - 1.0)
    lo, hi = float(score[move].min()), float(score[move].max())
    frac = (score - lo) / (hi - lo) if hi > lo else np.full(score.shape[0], 0.5)
    # strictly between the next page down and the lowest version, in the moved pages' order
    return np.where(move, below + (low - below) * (0.05 + 0.9 * frac), score)


#: Range intents put every candidate in one band (see :func:`_in_force_range`).
BAND_AT_END, BAND_ENDED_INSIDE, BAND_AFTER, BAND_REPLACED, BAND_UNKNOWN = 0, 1, 2, 3, 4  # names: types.BAND_NAMES
#: (base, width) of each band's weight: base + width x kernel(age). The bands do not overlap,
#: so at equal (flattened) similarity every document in force at the period's end ranks above
#: one replaced inside it, which ranks above one published after it, above one already replaced.
BAND_WEIGHTS = ((0.55, 0.45), (0.4, 0.15), (0.2, 0.2), (0.0, 0.2))
#: Within the first band, pages carried in from before a bounded period stay below this and
#: pages published inside it take [1 - range_slope, 1].
BAND_AT_END_SPLIT = 0.8


def _in_force_range(
    sim: np.ndarray, start: np.ndarray, end: np.ndarray, lo: float, ref: float, cfg: TemporalConfig,
    pool: Pool | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]:
    """Kernel age, offset, multiplier and band of every candidate for a period ``[lo, ref)``.

    A period question asks what was *in force* during it, so a document's validity
    ``[start, end)`` (``end`` from ``valid_to`` or the next version; NaN = still valid) is
    compared with the period:

    - in force at the period's end (``start < ref`` and no end before ``ref``): the age from
      the period's end, or with ``relative_recency`` from the newest about-as-similar page
      that started before it -- without version chains a newer page on the same subject is
      what replaced it;
    - in force during it but replaced before its end: age = how long before the end;
    - published after the period: age = how long after;
    - replaced before the period began: age = how long before its start.

    Weight = base + width x kernel(age) of the band (``BAND_WEIGHTS``): the bands never
    overlap. For a bounded period the first band is split: pages published inside it weigh
    1 - range_slope x (how far before the end they start, as a fraction of the period), pages
    carried in from before it at most ``BAND_AT_END_SPLIT`` -- when they are known to be in
    force (a validity end after the period, or ``relative_recency`` to compare them with newer
    pages); otherwise ``BAND_UNKNOWN``, weighted as the lowest band by their distance to the
    period. Undated candidates get band -1 (the missing-date policy decides).

    The bands are :func:`in_force_bands`, the expressions the stores render for the engines;
    here numpy evaluates each band's test, then its age and base over the candidates in it.
    The last item is :func:`_anchor`'s ``unsure`` (None without a pool or without relative
    recency).
    """
    n = start.shape[0]
    compared = cfg.relative_recency is not None
    anchor: np.ndarray | float = ref
    unsure: np.ndarray | None = None
    if cfg.relative_recency is not None and n:
        # without version chains a newer page on the same subject is what replaced an older
        # one: ages in this band count from the newest about-as-similar page before the end
        anchor, unsure = _anchor(sim, np.where(start < ref, start, np.nan), ref, cfg.relative_recency, pool)
    # values are computed over each band's own candidates, which have every input they read
    bands = in_force_bands(lo, ref, cfg.range_slope, compared=compared, anchor=ex.Var("anchor", None), default=None)
    inputs: dict[str, Any] = {"start": start, "end": end, "anchor": anchor}
    age, base = np.zeros(n), np.zeros(n)  # undated: age 0, base 0, width 1, band -1
    width, band = np.ones(n), np.full(n, -1, dtype=np.int64)
    for b, test in zip(bands, ex.evaluate_tests([b.test for b in bands], inputs)):
        rows = np.flatnonzero(test)
        if rows.size:  # each band's age and base over the candidates in it
            sub = {name: v[rows] if np.ndim(v) else v for name, v in inputs.items()}
            age[rows], base[rows] = ex.evaluate(b.age, sub), ex.evaluate(ex._e(b.base), sub)
            width[rows], band[rows] = b.width, b.band
    return ex.evaluate(kernel_age(ex.Var("age", None)), {"age": age}), base, width, band, unsure


class InForceBand(NamedTuple):
    """One band of :func:`in_force_bands`: a candidate passing ``test`` (0/1) weighs
    ``base + width x kernel(kernel_age(age) x the range age factor)``."""

    band: int  # BAND_*
    test: ex.Expr
    age: ex.Expr  # epoch seconds, before the clip at 0 (:func:`kernel_age`)
    base: ex.Num
    width: float


def kernel_age(age: ex.Num) -> ex.Expr:
    """A band's age in seconds as the kernel reads it: days, never negative."""
    return ex.div(ex.maximum(age, 0.0), DAY)


def in_force_bands(
    lo: float, ref: float, slope: float, *, compared: bool = False, anchor: ex.Num | None = None,
    default: float | None = 0.0,
) -> list[InForceBand]:
    """The in-force bands of a period ``[lo, ref)`` as expressions over the inputs ``start``
    and ``end`` (epoch s; missing = undated / still valid): each a 0/1 test (a product of
    conditions on ``start`` and ``end``) with its age, base and width. Written once:
    :func:`_in_force_range` evaluates them with numpy, the stores render
    ``sum of test x (base + width x kernel(age))`` for Qdrant and PostgreSQL. A dated
    candidate passes exactly one test, an undated one none.

    ``compared``: relative recency compares a page carried in from before a bounded period
    with newer pages, so it is not put in ``BAND_UNKNOWN``. ``anchor``: where the first band's
    ages count from (default ``ref``; the numpy path's competitive anchors). ``default``
    stands in for a missing ``start`` or ``end`` in the values (the engines' NULLs: a product
    with a failed test must stay finite); None keeps NaN.
    """
    start, end = ex.Var("start", default), ex.Var("end", default)
    conds: dict[tuple[str, str, float], ex.Cond] = {}

    def cond(name: str, op: str, value: float = 0.0) -> ex.Cond:
        # one object per condition, shared by the bands: ex.evaluate_tests computes it once
        return conds.setdefault((name, op, value), ex.Cond(name, op, value))

    before, after = cond("start", "lt", ref), cond("start", "ge", ref)
    in_force_at_end = ex.mul(before, ex.one_minus(cond("end", "lt", ref)))  # no end, or none before T
    since = ex.sub(ref if anchor is None else anchor, start)
    (b0, w0), (b1, w1), (b2, w2), (b3, w3) = BAND_WEIGHTS
    bands: list[tuple[int, ex.Expr, ex.Expr, ex.Num, float]] = []  # band, test, age, base, width
    if math.isfinite(lo):
        # in force at the end *and* published inside the period: the top of the band, newest
        # first by range_slope (what changed in 2025 = the 2025 releases, the last one first);
        # a page carried in from before the period keeps the lower part of the band
        frac = ex.clamp(ex.div(ex.sub(ref, start), ref - lo), 0.0, 1.0) if ref > lo else ex.Const(1.0)
        new = ex.mul(in_force_at_end, cond("start", "ge", lo))
        bands.append((BAND_AT_END, new, since, ex.sub(1.0, ex.mul(slope, frac)), 0.0))
        split = BAND_AT_END_SPLIT - b0
        replaced = ex.mul(before, cond("end", "le", lo))
        # a period starting at or after T (one in the future): a page in force at T whose
        # validity ends before the period begins is both in force at the end and replaced
        # before the start; it takes the replaced band and age, and the carried-in weights
        both: list[ex.Expr] = []
        if lo >= ref:
            both = [ex.one_minus(cond("end", "le", lo))]
            bands.append((BAND_REPLACED, ex.mul(replaced, cond("end", "ge", ref)), ex.sub(lo, end), b0, split))
            replaced = ex.mul(replaced, cond("end", "lt", ref))
        if compared:
            carried = ex.mul(in_force_at_end, cond("start", "lt", lo), *both)
            bands.append((BAND_AT_END, carried, since, b0, split))
        else:
            # a page from before the period with no validity end and nothing to compare it with
            # is not known to be in force: the lowest band, by its distance to the period (the
            # reranker's changelog as_of 0.848 -> 0.800 nDCG@10 when it counted as in force)
            carried = ex.mul(before, cond("end", "ge", ref), cond("start", "lt", lo), *both)
            unknown = ex.mul(before, cond("end", "empty"), cond("start", "lt", lo))
            bands.append((BAND_AT_END, carried, since, b0, split))
            bands.append((BAND_UNKNOWN, unknown, ex.sub(lo, start), b3, w3))
        inside = ex.mul(before, cond("end", "gt", lo), cond("end", "lt", ref))
        bands.append((BAND_REPLACED, replaced, ex.sub(lo, end), b3, w3))
    else:
        bands.append((BAND_AT_END, in_force_at_end, since, b0, w0))
        inside = ex.mul(before, cond("end", "lt", ref))
    bands.append((BAND_ENDED_INSIDE, inside, ex.sub(ref, end), b1, w1))
    bands.append((BAND_AFTER, after, ex.sub(start, ref), b2, w2))
    return [InForceBand(*b) for b in bands]


EXACT_ANCHOR_MAX = 20_000
ANCHOR_BINS = 4096
