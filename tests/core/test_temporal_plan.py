"""One per-query temporal plan (issue 21, item 2): ``temporal.plan(intent, now, config)``.

The reference time, stated target, strength, range scale, future handling and undated fill
of a query are derived once, in :class:`chronorank.temporal.TemporalPlan`; ``apply_temporal``,
``temporal_geometry``, the reranker, the index, the fit grid and the stores read them from it.
``prepare_query`` is the one preamble of every search.
"""

from __future__ import annotations

import math
import time

import numpy as np
import pytest

from chronorank.errors import InvalidInput
from chronorank.index import IndexConfig
from chronorank.temporal import (
    STATED_TIME_WEIGHT,
    TemporalConfig,
    TemporalPlan,
    apply_temporal,
    plan,
    prepare_query,
    range_age_factor,
    temporal_geometry,
    without_undated_anchor,
)
from chronorank.types import DAY, Anchor, Intent, Interval

NOW = 1_700_000_000.0  # 2023-11-14, long before the wall clock: a past reference time


def _intent(mode: str, target: Interval | None = None, sensitivity: float = 0.7, **kw: object) -> Intent:
    return Intent(query="q", time_sensitivity=sensitivity, mode=mode, target=target, topical_query="q", **kw)


def test_recent_counts_from_now_at_the_intents_share_of_the_strength() -> None:
    p = plan(_intent("recent"), NOW, TemporalConfig(strength=0.5))
    assert (p.mode, p.reference_time, p.target, p.range, p.half_open) == ("recent", NOW, None, None, False)
    assert p.sensitivity == 0.7 and p.strength == 0.5 * 0.7
    assert plan(None, NOW).strength == 1.0 and plan(None, NOW).mode == "recent"


def test_an_as_of_target_in_the_past_ends_the_half_open_period() -> None:
    target = Interval(NOW - 10 * DAY, NOW - 9 * DAY)
    p = plan(_intent("as_of", target), NOW)
    assert p.reference_time == NOW - 9 * DAY and p.half_open and p.target == target
    assert p.strength == STATED_TIME_WEIGHT and p.marks_not_yet_valid
    later = plan(_intent("as_of", Interval(NOW - DAY, NOW + DAY)), NOW)  # ends after now: T = now
    assert later.reference_time == NOW and not later.half_open


def test_a_bounded_range_rescales_the_half_life_to_range_scale_times_its_length() -> None:
    target = Interval(NOW - 365 * DAY, NOW - 265 * DAY)
    cfg = TemporalConfig(kernel="exponential(half_life_days=180)", range_scale=0.1)
    p = plan(_intent("range", target), NOW, cfg)
    assert p.range == (target.start, target.end) and p.reference_time == target.end
    assert p.range_span_days == 100.0 and not p.marks_not_yet_valid
    assert p.age_factor() == 180 / (0.1 * 100.0) == range_age_factor(cfg.kernel, 0.1, 100.0)
    assert plan(_intent("range", target), NOW, TemporalConfig(range_scale=None)).age_factor() == 1.0
    since = plan(_intent("range", Interval(NOW - 5 * DAY, math.inf)), NOW)  # "since ...": up to now
    assert since.reference_time == NOW and since.range_span_days is None and since.age_factor() == 1.0
    before = plan(_intent("range", Interval(-math.inf, NOW - 5 * DAY)), NOW)
    assert before.reference_time == NOW - 5 * DAY and before.range_span_days is None


def test_a_recent_intent_with_a_target_keeps_now_and_no_stated_period() -> None:
    p = plan(_intent("recent", Interval(NOW - DAY, NOW)), NOW)
    assert p.target is None and p.reference_time == NOW


@pytest.mark.parametrize(("future", "now", "excluded"), [
    ("exclude", NOW, True), ("auto", NOW, True), ("auto", None, False), ("clamp", NOW, False),
    ("symmetric", NOW, False), ("not_yet_valid", NOW, False),
])
def test_future_handling(future: str, now: float | None, excluded: bool) -> None:
    at = time.time() if now is None else now
    p = plan(_intent("recent"), at, TemporalConfig(future=future))
    assert p.excludes_future is excluded
    assert p.symmetric is (future == "symmetric")
    assert p.marks_not_yet_valid is (future == "not_yet_valid")
    assert not plan(_intent("specific"), at, TemporalConfig(future="symmetric")).symmetric


@pytest.mark.parametrize(("policy", "client", "engine"), [
    ("keep", 1.0, 1.0), ("drop", 0.0, 0.0), ("neutral", 0.5, 0.3), ("penalise", 0.2, 0.05), ("raise", 0.5, 0.3),
])
def test_undated_fill(policy: str, client: float, engine: float) -> None:
    cfg = TemporalConfig(kernel="exponential(half_life_days=30, floor=0.05)", missing_date=policy)
    p = plan(None, NOW, cfg)
    assert p.undated_fill(np.array([0.2, 0.5, 0.9])) == client  # median / minimum of the dated
    assert p.undated_fill(neutral=0.3) == engine  # inside an engine: the store's weight / the floor
    assert p.undated_fill(np.zeros(0)) == (0.0 if policy == "drop" else 1.0)


def test_a_non_finite_now_is_refused() -> None:
    for bad in (math.nan, math.inf, None):
        with pytest.raises(InvalidInput, match="now must be a finite time"):
            plan(None, bad)  # type: ignore[arg-type]


def _columns() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(3)
    sim = rng.random(60)
    times = NOW - rng.uniform(-30, 900, 60) * DAY
    times[::11] = np.nan
    valid_to = np.where(rng.random(60) < 0.3, times + 100 * DAY, np.nan)
    return sim, times, valid_to


@pytest.mark.parametrize("intent", [
    None, _intent("recent"), _intent("as_of", Interval(NOW - 200 * DAY, NOW - 199 * DAY)),
    _intent("range", Interval(NOW - 500 * DAY, NOW - 135 * DAY)), _intent("range", Interval(NOW - 90 * DAY, math.inf)),
    _intent("timeless"), _intent("specific"),
])
@pytest.mark.parametrize("cfg", [
    TemporalConfig(), TemporalConfig(relative_recency=0.85, range_slope=0.2, missing_date="penalise"),
    TemporalConfig(future="symmetric", missing_date="drop"), TemporalConfig(future="not_yet_valid"),
])
def test_apply_temporal_from_a_plan_equals_apply_temporal_from_its_parts(intent: Intent | None, cfg: TemporalConfig) -> None:
    sim, times, valid_to = _columns()
    p = plan(intent, NOW, cfg)
    a = apply_temporal(sim, times, intent=intent, now=NOW, config=cfg, valid_to=valid_to)
    b = apply_temporal(sim, times, plan=p, valid_to=valid_to)
    for name in ("score", "decay", "age_days", "keep", "not_yet_valid", "expired"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    assert a.reference_time == b.reference_time == p.reference_time
    assert a.effective_strength == b.effective_strength == p.strength
    geo = temporal_geometry(sim, times, plan=p, valid_to=valid_to)
    assert geo.reference_time == p.reference_time and geo.sensitivity == p.sensitivity
    assert geo.range_span_days == p.range_span_days


def test_the_plan_is_frozen() -> None:
    p = plan(None, NOW)
    with pytest.raises(AttributeError):
        p.reference_time = 0.0  # type: ignore[misc]
    assert isinstance(p, TemporalPlan)


# ---------------------------------------------------------------------- prepare_query


def test_prepare_query_checks_the_query_and_k() -> None:
    with pytest.raises(InvalidInput, match="give a non-empty string"):
        prepare_query("  ", 10, NOW, None, IndexConfig())
    with pytest.raises(InvalidInput, match="give a positive integer such as 10"):
        prepare_query("q", 0, NOW, None, IndexConfig())
    with pytest.raises(InvalidInput, match="give a positive integer"):
        prepare_query("q", True, NOW, None, IndexConfig())
    assert prepare_query("q", None, NOW, None, IndexConfig()).query == "q"  # k=None: not checked


def test_prepare_query_applies_overrides_resolves_now_and_parses_the_intent() -> None:
    base = IndexConfig()
    pq = prepare_query("what is the latest httpx release", 5, "2024-05-01", None, base, {"strength": 0.25})
    assert pq.config.temporal.strength == 0.25 and base.temporal.strength == 1.0
    assert pq.now == 1714521600.0
    assert pq.intent.mode == "recent" and pq.topical == pq.intent.topical_query.strip()
    same = prepare_query("q", 5, NOW, None, base, {})
    assert same.config is base  # no overrides: the caller's configuration itself
    given = _intent("specific")
    assert prepare_query("q", 5, NOW, given, base).intent is given


def test_the_topical_query_falls_back_to_the_query() -> None:
    it = Intent(query="x", time_sensitivity=0.0, mode="timeless", topical_query="  ")
    assert prepare_query("the question", 1, NOW, it, IndexConfig()).topical == "the question"


def test_stores_turn_time_off_for_an_undated_anchor() -> None:
    anchored = _intent("range", None, anchor=Anchor(relation="before", text="the v2 change"))
    off = prepare_query("q", 1, NOW, anchored, IndexConfig(), date_anchors=False).intent
    assert off.mode == "specific" and off.time_sensitivity == 0.05
    assert prepare_query("q", 1, NOW, anchored, IndexConfig()).intent is anchored  # the index dates it
    dated = _intent("range", Interval(NOW - DAY, NOW), anchor=Anchor(relation="after", text="v2"))
    assert without_undated_anchor(dated) is dated
