import dataclasses
import math
from datetime import datetime, timezone

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chronorank import TemporalReranker
from chronorank.errors import InvalidInput
from chronorank.types import DAY, Intent, Interval, Ranking

# the plain similarity x decay: the index defaults (relative recency, range slope, topical
# margin) off, for the tests of one formula at a time
PLAIN: dict = {"relative_recency": None, "range_slope": 0.0, "topical_margin": None}
NOW = "2026-06-01"
NOW_S = datetime(2026, 6, 1, tzinfo=timezone.utc).timestamp()

PRICING = [
    {"id": "p2021", "score": 0.84, "date": "2021-03-11", "text": "Pro plan: 12 dollars per seat."},
    {"id": "p2023", "score": 0.82, "date": "2023-08-02", "text": "Pro plan: 18 dollars per seat."},
    {"id": "p2026", "score": 0.79, "date": "2026-05-14", "text": "Pro plan: 25 dollars per seat."},
]


def epoch(s: str) -> float:
    return datetime.fromisoformat(s).replace(tzinfo=timezone.utc).timestamp()


class FixedIntent:
    """A gate that returns a fixed intent: isolates the temporal layer from the parser."""

    def __init__(self, mode, target=None, sensitivity=1.0):
        self.mode, self.target, self.sensitivity = mode, target, sensitivity

    def __call__(self, query):
        return self.sensitivity

    def intent(self, query, now):
        return Intent(query=query, time_sensitivity=self.sensitivity, mode=self.mode,
                      target=self.target, topical_query=query)


def test_fresh_pricing_page_wins_at_full_strength():
    r = TemporalReranker("exponential", half_life_days=180, gate=False, **PLAIN)
    ranking = r.rerank("what does the pro plan cost", PRICING, now=NOW)
    assert isinstance(ranking, Ranking)
    assert ranking.ranked_ids == ["p2026", "p2023", "p2021"]
    top = ranking[0]
    assert top.rank_before == 3 and top.rank_after == 1 and top.rank_delta == 2
    age = (NOW_S - epoch("2026-05-14")) / DAY
    assert top.age_days == pytest.approx(age)
    assert top.decay == pytest.approx(0.5 ** (age / 180))
    assert top.score == pytest.approx(0.79 * top.decay)
    assert top.payload is PRICING[2]


def test_dicts_dataclasses_and_columns_agree():
    @dataclasses.dataclass
    class Cand:
        id: str
        score: float
        date: str

    r = TemporalReranker("weibull(half_life_days=400, shape=1.5)", strength=0.7, gate=False)
    a = r.rerank("q", PRICING, now=NOW)
    b = r.rerank("q", [Cand(d["id"], d["score"], d["date"]) for d in PRICING], now=NOW)
    c = r.rerank("q", {"scores": [d["score"] for d in PRICING],
                       "times": [d["date"] for d in PRICING],
                       "ids": [d["id"] for d in PRICING]}, now=NOW)
    assert a.ranked_ids == b.ranked_ids == c.ranked_ids
    np.testing.assert_allclose([h.score for h in a], [h.score for h in c])
    assert type(a[0]) is type(b[0]) is type(c[0])


def test_strength_zero_keeps_similarity_order():
    r = TemporalReranker(strength=0.0, gate=False)
    assert r.rerank("q", PRICING, now=NOW).ranked_ids == ["p2021", "p2023", "p2026"]


def test_fixed_gate_scales_strength():
    # the raw formula: no topical margin (it flattens the similarity of a "recent" question)
    r = TemporalReranker("exponential(half_life_days=180)", strength=0.8, gate=0.5, topical_margin=None)
    ranking = r.rerank("q", PRICING, now=NOW)
    assert ranking.meta["effective_strength"] == pytest.approx(0.4)
    h = next(h for h in ranking if h.id == "p2021")
    assert h.score == pytest.approx(0.84 * (1 - 0.4 + 0.4 * h.decay))


def test_callable_gate_out_of_range_is_rejected():
    r = TemporalReranker(gate=lambda q: 1.7)
    with pytest.raises(InvalidInput, match=r"\[0, 1\]"):
        r.rerank("q", PRICING, now=NOW)


def test_now_is_pinned_not_the_wall_clock():
    r = TemporalReranker(gate=False)
    a = r.rerank("q", PRICING, now="2024-01-01")
    b = r.rerank("q", PRICING, now="2024-01-01")
    assert [h.score for h in a] == [h.score for h in b]
    # in 2024 the 2026 page does not exist yet: left out by default (future='auto'), and
    # clamped to age 0 under future='clamp'
    assert "p2026" not in a.ranked_ids
    c = TemporalReranker(gate=False, future="clamp").rerank("q", PRICING, now="2024-01-01")
    assert next(h for h in c if h.id == "p2026").decay == 1.0


def test_future_policies():
    docs = [{"id": "old", "score": 0.9, "date": "2026-01-01"},
            {"id": "future", "score": 0.8, "date": "2026-07-01"}]
    k = "exponential(half_life_days=30)"
    clamp = TemporalReranker(k, gate=False, future="clamp").rerank("q", docs, now=NOW)
    nyv = TemporalReranker(k, gate=False, future="not_yet_valid").rerank("q", docs, now=NOW)
    sym = TemporalReranker(k, gate=False, future="symmetric").rerank("q", docs, now=NOW)
    get = lambda rk: {h.id: h for h in rk}  # noqa: E731
    assert get(clamp)["future"].decay == 1.0
    assert get(nyv)["future"].decay == 0.0
    assert "not yet valid" in " ".join(get(nyv)["future"].notes)
    days_ahead = (epoch("2026-07-01") - NOW_S) / DAY
    assert get(sym)["future"].decay == pytest.approx(0.5 ** (days_ahead / 30))


@pytest.mark.parametrize("policy", ["neutral", "keep", "penalise", "drop", "raise"])
def test_missing_date_policies(policy):
    docs = PRICING + [{"id": "undated", "score": 0.5, "date": None}]
    r = TemporalReranker("exponential(half_life_days=365)", gate=False, missing_date=policy)
    if policy == "raise":
        with pytest.raises(InvalidInput, match="undated"):
            r.rerank("q", docs, now=NOW)
        return
    ranking = r.rerank("q", docs, now=NOW)
    by_id = {h.id: h for h in ranking}
    dated = [by_id[d["id"]].decay for d in PRICING]
    if policy == "drop":
        assert "undated" not in by_id and len(ranking) == 3
        return
    expected = {"neutral": float(np.median(dated)), "keep": 1.0, "penalise": min(dated)}[policy]
    assert by_id["undated"].decay == pytest.approx(expected)
    assert math.isnan(by_id["undated"].age_days)


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), "high", None])
def test_bad_scores_name_the_candidate(bad):
    docs = [dict(PRICING[0]), dict(PRICING[1], score=bad)]
    with pytest.raises(InvalidInput, match="p2023"):
        TemporalReranker(gate=False).rerank("q", docs, now=NOW)


def test_bad_score_policies_drop_and_zero():
    docs = [dict(PRICING[0]), dict(PRICING[1], score=float("nan")), dict(PRICING[2])]
    dropped = TemporalReranker(gate=False, bad_score="drop").rerank("q", docs, now=NOW)
    assert "p2023" not in dropped.ranked_ids and len(dropped) == 2
    zeroed = TemporalReranker(gate=False, bad_score="zero").rerank("q", docs, now=NOW)
    assert zeroed.ranked_ids[-1] == "p2023" and zeroed[-1].similarity == 0.0


def test_duplicate_ids_are_reported_not_merged():
    docs = PRICING + [dict(PRICING[0])]
    with pytest.raises(InvalidInput, match="p2021"):
        TemporalReranker(gate=False).rerank("q", docs, now=NOW)
    kept = TemporalReranker(gate=False, duplicates="keep").rerank("q", docs, now=NOW)
    assert len(kept) == 4


def test_empty_input_gives_empty_ranking():
    ranking = TemporalReranker(gate=False).rerank("q", [], now=NOW)
    assert len(ranking) == 0 and list(ranking) == []


def test_top_k_returns_best_k_in_order():
    rng = np.random.default_rng(0)
    n = 500
    scores = rng.random(n)
    times = NOW_S - rng.random(n) * 1000 * DAY
    r = TemporalReranker(gate=False)
    full = r.rerank_columns("q", scores, times, now=NOW)
    top = r.rerank_columns("q", scores, times, now=NOW, top_k=10)
    assert top.ranked_ids == full.ranked_ids[:10]


@given(
    scores=st.lists(st.floats(0, 1), min_size=0, max_size=30),
    seed=st.integers(0, 1000),
    strength=st.floats(0, 1),
    combine=st.sampled_from(["gated_multiply", "multiply", "linear", "rrf"]),
)
@settings(max_examples=60, deadline=None)
def test_rerank_returns_a_permutation(scores, seed, strength, combine):
    rng = np.random.default_rng(seed)
    times = NOW_S - rng.random(len(scores)) * 2000 * DAY
    times[rng.random(len(scores)) < 0.2] = np.nan
    r = TemporalReranker(strength=strength, combine=combine, gate=False)
    ranking = r.rerank_columns("q", scores, times, now=NOW)
    assert sorted(ranking.ranked_ids) == list(range(len(scores)))
    finals = [h.score for h in ranking]
    assert finals == sorted(finals, reverse=True)
    assert sorted(h.rank_before for h in ranking) == list(range(1, len(scores) + 1))


def test_explain_trace_and_records():
    r = TemporalReranker("power_law(half_life_days=180, beta=1)", gate=0.9)
    text = r.explain("what does the pro plan cost right now", PRICING, now=NOW)
    lines = text.splitlines()
    assert lines[0] == "query: 'what does the pro plan cost right now'"
    assert "power_law" in text and "half-life 180.0 days" in text
    assert "gate 0.9 x strength 1 = effective strength 0.9" in text
    assert "1. p2026  score " in text and "= similarity 0.7900 x (1 - 0.9 + 0.9 x time factor " in text
    assert "similarity rank 3 -> 1" in text and "days before now (" in text
    legend = lines[-1]
    assert legend.startswith("legend: ") and "time factor = " in legend and "effective strength = " in legend
    records = r.explain_records("q", PRICING, now=NOW)
    assert [rec["id"] for rec in records][0] == "p2026"
    assert {"similarity", "decay", "score", "age_days", "rank_before", "rank_after", "rank_delta",
            "age_from", "age_text", "time_on", "time_factor", "period", "on_topic"} <= set(records[0])
    assert records[0]["age_from"].startswith("now (") and records[0]["time_on"] is True


def test_as_of_intent_measures_from_the_target_and_excludes_later_documents():
    target = Interval(epoch("2023-12-31"), epoch("2024-01-01"))
    r = TemporalReranker("exponential(half_life_days=180)", gate=FixedIntent("as_of", target))
    ranking = r.rerank("how much was the pro plan at the end of 2023", PRICING, now=NOW)
    assert ranking.ranked_ids[0] == "p2023"
    later = next(h for h in ranking if h.id == "p2026")
    assert later.decay == 0.0 and later.rank_after == 3


def test_range_intent_prefers_documents_inside_the_range():
    target = Interval(epoch("2021-01-01"), epoch("2022-01-01"))
    r = TemporalReranker("exponential(half_life_days=90)", gate=FixedIntent("range", target), **PLAIN)
    ranking = r.rerank("pro plan price in 2021", PRICING[::-1], now=NOW)
    assert ranking.ranked_ids[0] == "p2021"
    assert ranking[0].decay == 1.0


@pytest.mark.parametrize("mode", ["specific", "timeless"])
def test_specific_and_timeless_intents_apply_no_decay(mode):
    r = TemporalReranker("exponential(half_life_days=30)", gate=FixedIntent(mode, sensitivity=0.0))
    ranking = r.rerank("q", PRICING, now=NOW)
    assert ranking.ranked_ids == ["p2021", "p2023", "p2026"]
    assert ranking.meta["effective_strength"] == 0.0
    assert [h.score for h in ranking] == [0.84, 0.82, 0.79]


def test_version_chain_supersession_note():
    docs = [dict(d, page="pricing") for d in PRICING]
    r = TemporalReranker("exponential(half_life_days=3650)", gate=False, group_key="page")
    ranking = r.rerank("q", docs, now=NOW)
    by_id = {h.id: h for h in ranking}
    assert by_id["p2021"].notes == ("superseded by p2023 on 2023-08-02",)
    assert by_id["p2023"].notes == ("superseded by p2026 on 2026-05-14",)
    assert by_id["p2026"].notes == ()
    assert ranking.ranked_ids[0] == "p2026"


def test_expired_document_is_demoted_by_time_since_expiry():
    docs = [
        {"id": "v1", "score": 0.9, "date": "2024-01-01", "valid_to": "2026-01-01"},
        {"id": "v1-long-ago", "score": 0.9, "date": "2024-01-01", "valid_to": "2024-06-01"},
    ]
    r = TemporalReranker("exponential(half_life_days=100)", gate=False, expired_factor=0.5, **PLAIN)
    by_id = {h.id: h for h in r.rerank("q", docs, now=NOW)}
    assert by_id["v1"].decay == pytest.approx(0.5 * 0.5 ** ((NOW_S - epoch("2026-01-01")) / DAY / 100))
    assert by_id["v1"].decay > by_id["v1-long-ago"].decay
    assert by_id["v1"].notes == ("expired on 2026-01-01",)


def test_relative_recency_counts_from_the_newest_topical_match():
    # a project whose newest release is two years old: without relative recency other,
    # fresher but less similar documents outrank it
    docs = [
        {"id": "proj-new", "score": 0.80, "date": "2024-05-01"},
        {"id": "proj-old", "score": 0.82, "date": "2023-01-01"},
        {"id": "other-fresh", "score": 0.40, "date": "2026-05-20"},
    ]
    plain = TemporalReranker("exponential(half_life_days=90)", gate=False, **PLAIN)
    # over the raw similarity (the topical margin's flattening would make other-fresh a competitor)
    rel = TemporalReranker("exponential(half_life_days=90)", gate=False, relative_recency=0.8, topical_margin=None)
    assert plain.rerank("q", docs, now=NOW).ranked_ids[0] == "other-fresh"
    ranking = rel.rerank("q", docs, now=NOW)
    assert ranking.ranked_ids[0] == "proj-new"
    assert ranking[0].decay == 1.0
    by_id = {h.id: h for h in ranking}
    # ages shown stay measured from now; the weight counts from the newest topical match
    assert by_id["proj-old"].decay == pytest.approx(0.5 ** ((epoch("2024-05-01") - epoch("2023-01-01")) / DAY / 90))


def test_hard_filter_removes_old_documents_and_the_switch_turns_it_off():
    docs = PRICING + [{"id": "undated", "score": 0.5, "date": None}]
    cut = TemporalReranker(gate=False, max_age_days=365).rerank("q", docs, now=NOW)
    assert set(cut.ranked_ids) == {"p2026", "undated"}  # undated documents are not cut
    off = TemporalReranker(gate=False, max_age_days=365, use_temporal_filter=False).rerank("q", docs, now=NOW)
    assert len(off) == 4


def test_hard_filter_follows_an_as_of_target():
    target = Interval(epoch("2023-12-31"), epoch("2024-01-01"))
    r = TemporalReranker(gate=FixedIntent("as_of", target), max_age_days=365, not_yet_valid="exclude")
    assert r.rerank("q", PRICING, now=NOW).ranked_ids == ["p2023"]


def test_as_of_a_day_excludes_a_release_dated_the_next_day():
    # "as of 30 Dec 2019" is the half-open day [30 Dec, 31 Dec): a release dated 31 Dec
    # did not exist yet, even though its midnight timestamp equals the target's end
    docs = [
        {"id": "0.10.0", "score": 0.80, "date": "2019-12-29"},
        {"id": "0.10.1", "score": 0.85, "date": "2019-12-31"},
    ]
    target = Interval(epoch("2019-12-30"), epoch("2019-12-31"))
    r = TemporalReranker("exponential(half_life_days=180)", gate=FixedIntent("as_of", target),
                         relative_recency=0.9)
    ranking = r.rerank("q", docs, now=NOW)
    assert ranking.ranked_ids == ["0.10.0", "0.10.1"]
    nxt = next(h for h in ranking if h.id == "0.10.1")
    assert nxt.decay == 0.0 and nxt.notes[0].startswith("not yet valid at 2019-12-31")
    # the later release must not serve as the newest competitor of the valid one either
    assert ranking[0].decay == 1.0


def test_range_puts_the_newest_in_force_first_and_later_pages_below():
    target = Interval(epoch("2023-01-01"), epoch("2024-01-01"))
    docs = [
        {"id": "jan", "score": 0.90, "date": "2023-01-10"},
        {"id": "dec", "score": 0.80, "date": "2023-12-20"},
        {"id": "next-jan", "score": 0.90, "date": "2024-01-03"},  # just after the period
    ]
    flat = TemporalReranker(gate=FixedIntent("range", target), **PLAIN).rerank("q", docs, now=NOW)
    # a page published after the period ranks below every page in force during it, however
    # similar; without range_slope similarity orders the pages published inside the period
    assert flat.ranked_ids == ["jan", "dec", "next-jan"]
    ranking = TemporalReranker(gate=FixedIntent("range", target), range_slope=0.2).rerank("q", docs, now=NOW)
    # with it the newest inside comes first (the state at the period's end)
    assert ranking.ranked_ids == ["dec", "jan", "next-jan"]
    by_id = {h.id: h for h in ranking}
    assert by_id["dec"].decay == pytest.approx(1 - 0.2 * (epoch("2024-01-01") - epoch("2023-12-20")) / (365 * DAY))
    assert by_id["jan"].decay == pytest.approx(1 - 0.2 * (epoch("2024-01-01") - epoch("2023-01-10")) / (365 * DAY))
    assert 0.2 <= by_id["next-jan"].decay < 0.4


# the versions of one page: each in force until the next one (group key)
VERSIONS = [
    {"id": "v2019", "score": 0.95, "date": "2019-05-01", "key": "p"},
    {"id": "v2021", "score": 0.90, "date": "2021-03-11", "key": "p"},
    {"id": "v2023", "score": 0.93, "date": "2023-07-01", "key": "p"},
    {"id": "v2025", "score": 0.94, "date": "2025-02-01", "key": "p"},
]


@pytest.mark.parametrize(("year", "expected", "bands"), [
    # 2022: v2021 in force all year; later versions below it (nearest first); v2019 replaced before
    (2022, ["v2021", "v2023", "v2025", "v2019"], [0, 2, 2, 3]),
    # 2023: v2023 in force at the year's end, v2021 during its first half
    (2023, ["v2023", "v2021", "v2025", "v2019"], [0, 1, 2, 3]),
])
def test_a_period_ranks_what_was_in_force_during_it(year, expected, bands):
    target = Interval(epoch(f"{year}-01-01"), epoch(f"{year + 1}-01-01"))
    r = TemporalReranker(gate=FixedIntent("range", target), group_key="key")
    ranking = r.rerank(f"the page in {year}", VERSIONS, now=NOW)
    assert ranking.ranked_ids == expected
    band = ranking.meta["band"]
    assert [int(band[ranking.order[p]]) for p in range(4)] == bands
    records = ranking.explain_records()
    assert records[0]["period"] == "in force at the period's end"
    assert records[0]["age_from"].startswith("the period's end")
    after = next(rec for rec in records if rec["period"] is None)
    assert "days after the period" in after["age_text"] and "-" not in after["age_text"].split(",")[1]


def _by_the_tie_rule(r) -> list[int]:
    """Every input position, best first, by a plain sort: score, then newer (undated last), then id."""
    return sorted(range(len(r.score)), key=lambda i: (-r.score[i], -r.time[i] if r.time[i] == r.time[i] else math.inf,
                                                      r.ids[i]))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(0, 1).map(lambda x: round(x, 1)), min_size=1, max_size=5000), st.integers(0, 40))
def test_top_hits_agree_with_a_full_sort(sims, k):
    """The sampled top-k cut and the batched rank-before agree with sorting everything."""
    n = len(sims)
    rng = np.random.default_rng(n)
    docs = [{"id": f"d{i}", "score": s, "date": f"20{10 + i % 15}-0{1 + i % 9}-1{i % 9}"} for i, s in enumerate(sims)]
    rng.shuffle(docs)
    ranking = TemporalReranker(gate=0.7).rerank("q", docs, now=NOW)
    full = ranking.rank_before  # (a fresh ranking below, so the lazy paths run)
    again = TemporalReranker(gate=0.7).rerank("q", docs, now=NOW)
    hits = again[:k]
    order = _by_the_tie_rule(again)[: min(k, n)]
    assert [h.id for h in hits] == [docs[i]["id"] for i in order]
    assert [h.rank_before for h in hits] == [int(full[i]) for i in order]
    assert list(again.ids) == [d["id"] for d in docs]


@pytest.mark.parametrize("n", [5000, 20000])
def test_top_hits_agree_with_a_full_sort_on_large_inputs(n):
    rng = np.random.default_rng(n)
    sims = np.round(rng.random(n), 2)  # many ties
    days = rng.integers(0, 3000, n)
    docs = [{"id": f"d{i}", "score": float(sims[i]), "date": float(NOW_S - days[i] * DAY)} for i in range(n)]
    ranking = TemporalReranker(gate=0.7).rerank("q", docs, now=NOW)
    full = TemporalReranker(gate=0.7).rerank("q", docs, now=NOW).rank_before
    order = _by_the_tie_rule(ranking)[:25]
    hits = ranking[:25]
    assert [h.id for h in hits] == [f"d{i}" for i in order]
    assert [h.rank_before for h in hits] == [int(full[i]) for i in order]


def test_ids_of_dict_candidates_behave_like_a_list():
    ranking = TemporalReranker(gate=False).rerank("q", PRICING, now=NOW)
    assert ranking.ids == ["p2021", "p2023", "p2026"] and list(ranking.ids) == ranking.ids
    assert ranking.ids[-1] == "p2026" and ranking.ids[:2] == ["p2021", "p2023"] and len(ranking.ids) == 3


def test_as_of_a_period_that_ends_later_counts_from_now():
    target = Interval(epoch("2026-01-01"), epoch("2027-01-01"))  # "the newest ... this year"
    r = TemporalReranker("exponential(half_life_days=180)", gate=FixedIntent("as_of", target))
    ranking = r.rerank("q", PRICING, now=NOW)
    assert ranking.meta["now"] == NOW_S and ranking.ranked_ids[0] == "p2026"
    assert ranking[0].age_days == pytest.approx((NOW_S - epoch("2026-05-14")) / DAY)


def test_top_hits_with_nan_scores_still_fill_the_page():
    n = 10_000
    rng = np.random.default_rng(3)
    score = rng.random(n)
    score[::3] = np.nan  # what a careless callable kernel can produce
    z = np.zeros(n)
    ranking = Ranking(ids=list(range(n)), payloads=None, score=score, similarity=rng.random(n),
                      decay=z, age_days=z, time=z, rank_before=None)
    assert [h.id for h in ranking[:10]] == np.argsort(-score, kind="stable")[:10].tolist()


def test_iterating_slicing_and_indexing_build_the_same_hits():
    """Hits are built in blocks when a ranking is iterated or sliced; one at a time when
    indexed. All three give equal, immutable hits, notes and rank-before included."""
    rng = np.random.default_rng(7)
    n = 700  # past the first block and the growing ones
    docs = [
        {"id": f"d{i}", "score": float(np.round(rng.random(), 2)), "group": f"g{i % 40}",
         "date": f"20{10 + i % 15}-{1 + i % 12:02d}-{1 + i % 28:02d}"}
        for i in range(n)
    ]
    r = TemporalReranker(gate=0.7, group_key="group")
    iterated = list(r.rerank("q", docs, now=NOW))
    sliced = r.rerank("q", docs, now=NOW)[:]
    fresh = r.rerank("q", docs, now=NOW)
    indexed = [fresh[i] for i in range(len(fresh))]
    assert iterated == sliced == indexed and len(iterated) == n
    assert sum(bool(h.notes) for h in iterated) == n - 40  # all but each chain's newest are superseded
    assert sorted(h.rank_before for h in iterated) == list(range(1, n + 1))
    assert [h.rank_after for h in iterated] == list(range(1, n + 1))
    assert iterated[0].payload is docs[int(fresh.order[0])]
    with pytest.raises(dataclasses.FrozenInstanceError):
        iterated[0].score = 2.0  # type: ignore[misc]


def test_an_anchor_is_dated_through_the_candidates_texts():
    docs = [
        {"id": "v1", "score": 0.80, "date": "2022-06-01", "text": "API v1 login with a session token."},
        {"id": "v2", "score": 0.82, "date": "2024-09-16", "text": "API v2 login with OAuth tokens."},
        {"id": "notice", "score": 0.30, "date": "2024-09-16", "text": "The v2 change is live."},
    ]
    r = TemporalReranker()
    ranking = r.rerank("how did login work before the v2 change", docs, now="2026-08-20")
    assert ranking.ranked_ids[0] == "v1"
    intent = ranking.meta["intent"]
    assert intent.target is not None and intent.target.end == epoch("2024-09-16")
    assert "dated 2024-09-16" in ranking.meta["anchor"]
    # columns carry no text: the anchor cannot be dated, and time is switched off rather than guessed
    cols = r.rerank("how did login work before the v2 change",
                    {"scores": [0.8, 0.82], "times": ["2022-06-01", "2024-09-16"]}, now="2026-08-20")
    assert cols.meta["intent"].mode == "specific" and cols.ranked_ids[0] == 1


def test_topical_margin_keeps_time_from_lifting_an_off_topic_candidate():
    docs = [
        {"id": "pro-2021", "score": 0.90, "date": "2021-03-11"},
        {"id": "pro-2023", "score": 0.88, "date": "2023-08-02"},
        {"id": "refund-2026", "score": 0.30, "date": "2026-08-01"},  # another topic, but fresh
    ]
    q = "what is the current price of the pro plan"
    loose = TemporalReranker("exponential(half_life_days=30)", **PLAIN).rerank(q, docs, now="2026-08-20")
    assert loose.ranked_ids[0] == "refund-2026"  # time alone lifts the fresh off-topic page
    strict = TemporalReranker("exponential(half_life_days=30)", topical_margin=0.5).rerank(q, docs, now="2026-08-20")
    assert set(strict.ranked_ids[:2]) == {"pro-2021", "pro-2023"} and strict.ranked_ids[2] == "refund-2026"
    assert list(strict.meta["on_topic"]) == [True, True, False]
    assert strict[2].score < min(h.score for h in strict[:2])
    assert "on topic = similarity >= 0.5" in strict.explain()


def test_versions_first_moves_only_the_pages_much_less_similar_below_the_versions():
    from chronorank.temporal import VERSION_CORE, versions_first

    score = np.array([0.9, 0.5, 0.3, 0.8, 0.2])
    versions = np.array([True, False, True, False, False])  # the first hit and an older version
    sim = np.array([1.0, 0.95, 0.9, 0.4, 0.1])  # 1 is as similar as the first hit: the core
    live = np.ones(5, dtype=bool)
    out = versions_first(score, versions, sim, live)
    # page 3 (0.4 < VERSION_CORE x 1.0) goes between the lowest version (0.3) and the next page (0.2)
    assert VERSION_CORE * 1.0 > 0.4
    assert out[3] == pytest.approx(0.2 + (0.3 - 0.2) * 0.5)
    assert list(np.argsort(-out)) == [0, 1, 2, 3, 4]
    assert out[[0, 1, 2, 4]].tolist() == score[[0, 1, 2, 4]].tolist()  # nothing else moves
    # versions that are all weak matches lift nothing: the score comes back as it was
    weak = versions_first(score, versions, np.array([0.5, 1.0, 0.4, 0.45, 0.1]), live)
    assert weak is score


def test_the_first_hits_version_chain_stays_above_a_less_similar_page(monkeypatch):
    docs = [
        {"id": "sla-2020", "score": 0.90, "date": "2020-01-15", "doc": "sla"},
        {"id": "sla-2025", "score": 0.88, "date": "2025-03-03", "doc": "sla"},
        {"id": "incident", "score": 0.60, "date": "2025-06-01", "doc": "incident"},  # less similar, in 2025
    ]
    q = "SLA uptime in 2025"
    keyed = TemporalReranker(topical_margin=0.5, group_key="doc")
    # the 2020 SLA was replaced inside the period, the incident report published in it: time
    # alone (the similarity flattened, no topic tier: margin 0.5 holds all three) ranks the
    # report above it
    flat = TemporalReranker(topical_margin=None, group_key="doc", **{k: v for k, v in PLAIN.items() if k != "topical_margin"})
    assert list(flat.rerank(q, docs, now="2026-08-20").ranked_ids)[:2] == ["sla-2025", "incident"]
    ranked = keyed.rerank(q, docs, now="2026-08-20")
    assert ranked.ranked_ids == ["sla-2025", "sla-2020", "incident"]
    assert 0 < ranked[2].score < ranked[1].score
    assert list(ranked.meta["on_topic"]) == [True, True, False]  # the near tier: 0.60 is a step down from 0.88
    assert "other versions (same group key" in ranked.explain()


def test_a_temporal_config_object_is_held_as_given_and_ranks_as_its_keywords() -> None:
    from chronorank.index.config import IndexConfig
    from chronorank.temporal import TemporalConfig

    cfg = TemporalConfig(kernel="weibull(half_life_days=90, shape=2)", strength=0.7, relative_recency=0.8)
    by_object = TemporalReranker(config=cfg)
    by_keywords = TemporalReranker(kernel="weibull(half_life_days=90, shape=2)", strength=0.7, relative_recency=0.8)
    assert by_object.config is cfg
    sim = np.array([0.9, 0.85, 0.8, 0.7])
    times = np.array(["2020-01-01", "2024-06-01", "2024-11-20", "2023-01-01"])
    got = by_object.rerank_columns("latest release notes", sim, times, ids=list("abcd"), now="2025-01-01")
    want = by_keywords.rerank_columns("latest release notes", sim, times, ids=list("abcd"), now="2025-01-01")
    assert list(got.ranked_ids) == list(want.ranked_ids)
    np.testing.assert_array_equal(got.score, want.score)
    # an index's policies, shared as one object
    index_cfg = IndexConfig()
    assert TemporalReranker(config=index_cfg.temporal).config is index_cfg.temporal


def test_config_and_a_policy_keyword_together_are_refused_by_name() -> None:
    from chronorank.temporal import TemporalConfig

    with pytest.raises(InvalidInput, match=r"config= and strength= both set"):
        TemporalReranker(config=TemporalConfig(), strength=0.5)
    with pytest.raises(InvalidInput, match=r"config= and kernel= both set"):
        TemporalReranker(config=TemporalConfig(), kernel="exponential", half_life_days=30)
    with pytest.raises(InvalidInput, match=r"give a chronorank.temporal.TemporalConfig"):
        TemporalReranker(config={"strength": 0.5})  # type: ignore[arg-type]


def test_vectors_and_signals_of_the_wrong_shape_are_refused_by_name() -> None:
    rr = TemporalReranker()
    sim, times = [0.9, 0.8, 0.7], ["2024-01-01", "2023-01-01", "2022-01-01"]
    with pytest.raises(InvalidInput, match=r"vectors has shape \(2, 4\); give one embedding row per candidate \(3 rows\)"):
        rr.rerank_columns("latest api", sim, times, vectors=np.ones((2, 4)), now="2025-01-01")
    with pytest.raises(InvalidInput, match=r"signals\['bm25'\] has shape \(2,\); give one value per candidate \(3\)"):
        rr.rerank_columns("latest api", sim, times, signals={"bm25": [1.0, 2.0]}, now="2025-01-01")


def test_the_version_conflict_stage_runs_over_the_candidates_texts() -> None:
    """'what changed in the API 2.0 release': a page whose title names only version 3.0 moves
    below the on-topic pages that name 2.0 or none, as in the index (``ranking.conflicts_last``)."""
    cands = [
        {"id": "r3", "score": 0.95, "date": "2025-01-01", "text": "Release notes for version 3.0. Changes to the API."},
        {"id": "r2", "score": 0.90, "date": "2024-01-01", "text": "API 2.0 release. What changed in the API."},
        {"id": "wh", "score": 0.88, "date": "2024-02-01", "text": "Webhooks. The API release sends events."},
    ]
    got = TemporalReranker().rerank("what changed in the API 2.0 release", cands, now="2025-06-01")
    assert "version conflict" in got.meta["stages"]
    assert list(got.ranked_ids)[-1] == "r3"
    # without texts the stage cannot run: the similarity order decides
    plain = TemporalReranker().rerank_columns("what changed in the API 2.0 release", [c["score"] for c in cands],
                                              [c["date"] for c in cands], ids=[c["id"] for c in cands], now="2025-06-01")
    assert "version conflict" not in plain.meta["stages"]
