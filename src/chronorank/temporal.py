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
- ``range``: documents whose start lies inside the target are at distance 0; others are
  decayed by their distance to the interval, with the kernel's half-life rescaled to
  ``range_scale`` x the range's length when the range is bounded. ``range_slope = s``
  orders the inside newest first (the state at the range's end): weight 1 - s x (how far
  before the end the document starts, as a fraction of the range), and 1 - s times the
  kernel's weight outside, so at equal similarity nothing outside ranks above the range's
  oldest member.
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
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from chronorank.errors import InvalidInput
from chronorank.fusion import combine, resolve_strategy
from chronorank.types import DAY, Intent, format_epoch
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


def _default_kernel() -> Any:
    from chronorank.kernels import get_kernel

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
        from chronorank.kernels import get_kernel

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


def apply_temporal(
    similarity: np.ndarray | Sequence[float],
    times: np.ndarray | Sequence[float],
    *,
    intent: Intent | None = None,
    now: float,
    config: TemporalConfig | None = None,
    valid_from: np.ndarray | None = None,
    valid_to: np.ndarray | None = None,
    groups: np.ndarray | None = None,
    ids: Sequence[Any] | None = None,
) -> TemporalResult:
    """Score candidates by similarity and time under ``intent`` (see the module docstring).

    ``times``/``valid_from``/``valid_to`` are float64 epoch seconds with NaN for missing;
    ``groups`` are int version-chain codes (-1 = no chain). Returns the fused score, decay
    weight, age in days, and the masks the explanations are built from.
    """
    cfg = config or TemporalConfig()
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
    if not math.isfinite(now):
        raise InvalidInput(f"now must be a finite time, got {now!r}")
    geo = temporal_geometry(
        sim, t, intent=intent, now=now, config=cfg, valid_from=valid_from, valid_to=valid_to, groups=groups
    )
    weight = geo.weights(cfg.kernel)
    strength = cfg.strength * geo.sensitivity
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
        if policy == "neutral":
            fill = float(np.median(dated_w)) if dated_w.size else 1.0
        elif policy == "keep":
            fill = 1.0
        elif policy == "penalise":
            fill = float(dated_w.min()) if dated_w.size else 1.0
        else:  # drop
            fill = 0.0
            keep &= ~undated
        weight[undated] = fill
    if cfg.not_yet_valid == "exclude":
        keep &= ~nyv
    if excludes_future(cfg.future, now):
        with np.errstate(invalid="ignore"):
            keep &= ~(geo.start > now)
    if cfg.max_age_days is not None and cfg.use_temporal_filter:
        # the article's hard date-range filter: a blunt cut, kept as an option (its recall
        # cost is in benchmarks/validity_quality.py); undated documents are not cut
        with np.errstate(invalid="ignore"):
            keep &= ~(geo.start < geo.reference_time - cfg.max_age_days * DAY)

    score = combine(sim, weight, cfg.combine, strength) if n else np.zeros(0)
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
    )


def excludes_future(policy: str, now: float, wall: float | None = None) -> bool:
    """Whether documents dated after ``now`` are excluded: always under ``future='exclude'``;
    under ``'auto'`` when ``now`` is in the past, more than ``PAST_SKEW_S`` before the wall
    clock (``wall``, read when not given)."""
    if policy == "exclude":
        return True
    if policy != "auto":
        return False
    import time

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

    def age_factor(self, kernel: Any) -> float:
        """How much the kernel's age axis is stretched for this query (1 outside range mode)."""
        if self.range_span_days is None or self.range_scale is None:
            return 1.0
        hl = kernel.half_life() if hasattr(kernel, "half_life") else None
        if not hl:
            return 1.0
        return float(hl) / (self.range_scale * self.range_span_days)

    def weights(self, kernel: Any) -> np.ndarray:
        """Decay weight per candidate under ``kernel`` (NaN where undated)."""
        factor = self.age_factor(kernel)
        with np.errstate(invalid="ignore"):
            w = np.asarray(kernel(self.kernel_age * factor if factor != 1.0 else self.kernel_age), dtype=np.float64)
            if not (isinstance(self.multiplier, float) and self.multiplier == 1.0):
                w = w * self.multiplier
        return np.where(self.not_yet_valid, 0.0, w) if self.not_yet_valid.any() else w


def temporal_geometry(
    similarity: np.ndarray,
    times: np.ndarray,
    *,
    intent: Intent | None,
    now: float,
    config: TemporalConfig,
    valid_from: np.ndarray | None = None,
    valid_to: np.ndarray | None = None,
    groups: np.ndarray | None = None,
) -> Geometry:
    """Reference time, ages, validity and supersession of every candidate under ``intent``."""
    cfg = config
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

    mode = intent.mode if intent is not None else "recent"
    target = intent.target if intent is not None else None
    sensitivity = intent_strength(intent)

    undated = np.isnan(start)
    nyv = np.zeros(n, dtype=bool)
    expired = np.zeros(n, dtype=bool)
    mult: np.ndarray | float = 1.0
    span: float | None = None
    with np.errstate(invalid="ignore"):
        if mode == "range" and target is not None:
            ref = min(target.end, now) if math.isfinite(target.end) else now
            lo, hi = target.start, target.end
            dist = np.where(start < lo, lo - start, np.where(start >= hi, start - hi, 0.0))
            if not math.isfinite(hi):
                dist = np.where(start >= hi, 0.0, dist)
            kernel_age = dist / DAY
            display_age = (ref - start) / DAY
            # Outside a bounded range the kernel's half-life is rescaled to range_scale x the
            # range's length: "in March" tolerates days, "in 2021" tolerates weeks.
            if math.isfinite(lo) and math.isfinite(hi) and hi > lo:
                span = (hi - lo) / DAY
                if cfg.range_slope:
                    inside = (start >= lo) & (start < hi)
                    frac = np.clip((hi - start) / (hi - lo), 0.0, 1.0)
                    # newest in the range first (the state at its end), and nothing outside
                    # the range above its oldest member: outside documents take 1 - slope too
                    mult = np.where(inside, 1.0 - cfg.range_slope * frac, 1.0 - cfg.range_slope)
            anchor: np.ndarray | float = ref
        else:
            if mode == "as_of" and target is not None and math.isfinite(target.end) and target.end <= now:
                # the target is half-open [start, end): "as of 30 Dec" ends at 31 Dec 00:00,
                # and a release dated 31 Dec did not exist yet
                ref = target.end
                future = start >= ref
            else:
                ref = now
                future = start > ref
            if mode == "as_of" or cfg.future == "not_yet_valid":
                nyv = future
            anchor = ref
            if cfg.relative_recency is not None and mode in ("recent", "as_of") and n:
                anchor = competitive_anchor(sim, np.where(future, np.nan, start), ref, cfg.relative_recency)
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
            if cfg.future == "symmetric" and mode == "recent":
                age = np.where(future, (start - ref) / DAY, age)
            kernel_age = np.maximum(age, 0.0)
    return Geometry(
        mode=mode, sensitivity=sensitivity, reference_time=float(ref), anchor=anchor,
        start=start, end=end, successor=chains.successor, kernel_age=kernel_age,
        display_age=np.asarray(display_age, dtype=np.float64), multiplier=mult,
        expired=expired, not_yet_valid=nyv, undated=undated,
        range_span_days=span, range_scale=cfg.range_scale,
    )


def competitive_anchor(sim: np.ndarray, start: np.ndarray, ref: float, ratio: float) -> np.ndarray:
    """For each candidate: the newest start (<= ref) among candidates with sim >= ratio x its own.

    Falls back to ``ref`` where no such dated candidate exists. Exact (one sort) for up to
    ``EXACT_ANCHOR_MAX`` candidates; above that the similarity range is cut into 4096 bins
    and a running maximum over bins answers every candidate in O(n), including at most one
    bin's width (1/4096 of the range) of slightly less similar competitors.
    """
    usable = np.where(np.isnan(start) | (start > ref), -np.inf, start)
    threshold = np.where(sim >= 0, ratio * sim, sim / ratio if ratio > 0 else -np.inf)
    n = sim.shape[0]
    if n <= EXACT_ANCHOR_MAX:
        order = np.argsort(-sim, kind="stable")
        sim_sorted = sim[order]
        newest = np.maximum.accumulate(usable[order])
        # how many candidates have sim >= threshold (sim_sorted is descending)
        count = np.searchsorted(-sim_sorted, -threshold, side="right")
        anchor = newest[np.maximum(count - 1, 0)]
    else:
        lo, hi = float(sim.min()), float(sim.max())
        scale = (ANCHOR_BINS - 1) / (hi - lo) if hi > lo else 0.0
        bins = ((sim - lo) * scale).astype(np.int64)
        bin_newest = np.full(ANCHOR_BINS, -np.inf)
        np.maximum.at(bin_newest, bins, usable)
        newest_above = np.maximum.accumulate(bin_newest[::-1])[::-1]
        tbin = np.clip(np.floor((threshold - lo) * scale), 0, ANCHOR_BINS - 1).astype(np.int64)
        anchor = newest_above[tbin]
    return np.where(np.isfinite(anchor), anchor, ref)


EXACT_ANCHOR_MAX = 20_000
ANCHOR_BINS = 4096
