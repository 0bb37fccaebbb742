"""Time sensitivity: the shipped model, its fitting and persistence, and what the ranking does with it."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from chronorank import TemporalReranker
from chronorank.errors import InvalidInput
from chronorank.index import HashingEmbedder, TemporalIndex
from chronorank.intent import LexicalGate, parse
from chronorank.intent.rules import sensitivity_features
from chronorank.intent.sensitivity import DIM, SensitivityModel, default_model, fit_sensitivity
from chronorank.stores.base import StoreConfig, plan_query
from chronorank.temporal import STATED_TIME_WEIGHT, intent_strength
from chronorank.timeparse import to_epoch
from chronorank.types import Intent, Interval

NOW = "2026-08-20T12:00:00Z"
GATE_DEV = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "gate-dev" / "queries.jsonl"


def ranked(ranking: object) -> list[str]:
    return [h.id for h in ranking]  # type: ignore[attr-defined]


def sens(query: str) -> float:
    return parse(query, now=NOW).time_sensitivity


def pairwise_auc(scores: np.ndarray, labels: np.ndarray) -> float:
    """P(score of a positive > score of a negative), ties half: every pair compared."""
    pos, neg = scores[labels == 1], scores[labels == 0]
    diff = pos[:, None] - neg[None, :]
    return float(((diff > 0).sum() + 0.5 * (diff == 0).sum()) / diff.size)


def test_gate_dev_dev_split_auc_at_least_0_85() -> None:
    if not GATE_DEV.exists():
        pytest.skip("needs ../shared/data/gate-dev (not shipped with the project)")
    rows = [json.loads(line) for line in GATE_DEV.read_text().splitlines() if line.strip()]
    dev = [r for r in rows if r["split"] == "dev"]
    scores = np.array([sens(r["query"]) for r in dev])
    labels = np.array([int(r["time_dependent"]) for r in dev])
    assert pairwise_auc(scores, labels) >= 0.85


# ------------------------------------------------------------------ behaviour on real phrasings

@pytest.mark.parametrize("query", [
    "how old is lionel messi", "what is the population of canada", "when is the next full moon",
    "who is the prime minister of japan", "who is nvidia's ceo", "current ceo of apple",
    "what's the population of france",
])
def test_answers_that_change_with_the_day_are_sensitive_and_recent(query: str) -> None:
    it = parse(query, now=NOW)
    assert it.time_sensitivity >= 0.5 and it.mode == "recent"
    assert intent_strength(it) == it.time_sensitivity


@pytest.mark.parametrize("query", ["who wrote hamlet", "when did world war 2 end",
                                   "how to boil an egg", "what is a linked list"])
def test_answers_that_never_change_are_not(query: str) -> None:
    it = parse(query, now=NOW)
    assert it.time_sensitivity < 0.2 and it.mode == "timeless"
    assert intent_strength(it) == 0.0


def test_a_fixed_count_of_nature_ranks_below_an_office_holder() -> None:
    assert sens("how many moons does mars have") < sens("who is the prime minister of japan")
    assert sens("how many bones are in the human body") < sens("how many people live in tokyo")


def test_a_cue_word_used_as_a_name_is_not_a_cue() -> None:
    # "Current" is a bank here: the rules read it as a name and the model does not see the cue
    assert sens("is Current a good bank") < sens("is the current rate good") - 0.3


def test_the_parser_scores_exactly_the_features_it_exposes() -> None:
    for q in ["who is the ceo of twitter", "inflation in 2023", "the Current bank app review", "курс доллара"]:
        assert default_model().score(sensitivity_features(q, now=NOW)) == pytest.approx(sens(q), abs=1e-12)
    assert LexicalGate()("who wrote hamlet") == pytest.approx(sens("who wrote hamlet"))


# ------------------------------------------------------------------ fitting and persistence

def test_fit_learns_separates_and_round_trips(tmp_path: Path) -> None:
    pos = ["who is the ceo of acme", "current price of gold", "latest release of numpy", "who leads the league"]
    neg = ["who wrote hamlet", "how to boil an egg", "what is a linked list", "when did the war end"]
    rows = [(sensitivity_features(q, now=NOW), 1.0) for q in pos] + [(sensitivity_features(q, now=NOW), 0.0)
                                                                      for q in neg]
    model = fit_sensitivity(rows, epochs=200)
    scores = [model.score(f) for f, _ in rows]
    assert min(scores[:4]) > 0.5 > max(scores[4:])
    path = tmp_path / "s.json"
    model.save(path)
    again = SensitivityModel.load(path)
    for f, _ in rows:
        assert again.score(f) == pytest.approx(model.score(f), abs=1e-3)


def test_fit_and_load_reject_bad_input(tmp_path: Path) -> None:
    names = sensitivity_features("x", now=NOW)
    with pytest.raises(InvalidInput, match="both kinds"):
        fit_sensitivity([(names, 1.0), (names, 1.0)])
    with pytest.raises(InvalidInput, match="sample_weight"):
        fit_sensitivity([(names, 1.0), (names, 0.0)], sample_weight=[1.0])
    with pytest.raises(InvalidInput, match="shape"):
        SensitivityModel(weights=np.zeros(3), bias=0.0)
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "something else"}')
    with pytest.raises(InvalidInput, match="not a chronorank.time_sensitivity/1 file"):
        SensitivityModel.load(bad)
    with pytest.raises(InvalidInput, match="query must be a str"):
        sensitivity_features(42)  # type: ignore[arg-type]
    assert default_model().weights.shape == (DIM,)


# ------------------------------------------------------------------ a stated time keeps its effect

def _with_sensitivity(it: Intent, value: float) -> Intent:
    return replace(it, time_sensitivity=value)


class _FixedSensitivityGate:
    """The rules' intent with a chosen sensitivity, as a custom gate would produce it."""

    def __init__(self, value: float) -> None:
        self.value = value

    def __call__(self, query: str) -> float:
        return self.value

    def intent(self, query: str, now: object = None) -> Intent:
        return _with_sensitivity(parse(query, now=now), self.value)


CANDIDATES = [
    {"id": "2020", "score": 0.60, "date": "2020-12-01"},
    {"id": "2021", "score": 0.80, "date": "2021-06-01"},
    {"id": "2023-a", "score": 0.78, "date": "2023-03-01"},
    {"id": "2023-b", "score": 0.70, "date": "2023-11-01"},
    {"id": "2026", "score": 0.79, "date": "2026-08-01"},
    {"id": "2026-last-week", "score": 0.60, "date": "2026-08-12"},
]


@pytest.mark.parametrize("query", ["release notes in 2023", "pricing as of March 2021",
                                   "what changed since 2024", "security advisories last week"])
def test_reranker_a_stated_time_keeps_its_effect_whatever_the_sensitivity(query: str) -> None:
    low = TemporalReranker(gate=_FixedSensitivityGate(0.01)).rerank(query, CANDIDATES, now=NOW)
    high = TemporalReranker(gate=_FixedSensitivityGate(0.99)).rerank(query, CANDIDATES, now=NOW)
    assert ranked(low) == ranked(high)
    np.testing.assert_array_equal([h.score for h in low], [h.score for h in high])
    # and that effect is the stated period's, not similarity alone
    plain = TemporalReranker(gate=0.0).rerank(query, CANDIDATES, now=NOW)
    assert ranked(low) != ranked(plain)


def test_reranker_without_a_stated_time_the_sensitivity_sets_the_pressure() -> None:
    # the control for the test above: a recency query does follow its sensitivity
    # (the raw formula: under the default topical margin every candidate here is on topic, so time
    # orders them at any sensitivity above 0)
    q = "latest release notes"
    low = TemporalReranker(gate=_FixedSensitivityGate(0.01), topical_margin=None).rerank(q, CANDIDATES, now=NOW)
    high = TemporalReranker(gate=_FixedSensitivityGate(0.99), topical_margin=None).rerank(q, CANDIDATES, now=NOW)
    assert ranked(low)[0] == "2021" and ranked(high)[0] in ("2026", "2026-last-week")


def test_index_and_stores_a_stated_time_keeps_its_effect_whatever_the_sensitivity() -> None:
    idx = TemporalIndex(embedder=HashingEmbedder(32))
    idx.add([{"id": c["id"], "text": f"release notes for acme {c['id']}", "date": c["date"]} for c in CANDIDATES])
    base = parse("acme release notes in 2023", now=NOW)
    assert base.mode == "range" and base.time_sensitivity < 0.5  # the year fixes the answer
    runs = [idx.search(base.query, k=6, now=NOW, intent=_with_sensitivity(base, v))
            for v in (0.01, base.time_sensitivity, 0.99)]
    assert ranked(runs[0]) == ranked(runs[1]) == ranked(runs[2])
    assert ranked(runs[0])[:2] in (["2023-a", "2023-b"], ["2023-b", "2023-a"])
    np.testing.assert_array_equal([h.score for h in runs[0]], [h.score for h in runs[2]])
    cfg = StoreConfig()
    now_s = to_epoch(NOW)
    strengths = {plan_query(_with_sensitivity(base, v), now_s, cfg).strength for v in (0.01, 0.5, 0.99)}
    assert len(strengths) == 1 and math.isclose(strengths.pop(), STATED_TIME_WEIGHT)


def test_intent_strength_per_mode() -> None:
    target = Interval(0.0, 86400.0)
    assert intent_strength(None) == 1.0
    assert intent_strength(Intent(query="q", time_sensitivity=0.3, mode="recent")) == 0.3
    assert intent_strength(Intent(query="q", time_sensitivity=0.3, mode="as_of", target=target)) == STATED_TIME_WEIGHT
    assert intent_strength(Intent(query="q", time_sensitivity=0.3, mode="range", target=target)) == STATED_TIME_WEIGHT
    # a range with no target falls back to the sensitivity; specific and timeless apply none
    assert intent_strength(Intent(query="q", time_sensitivity=0.3, mode="range")) == 0.3
    assert intent_strength(Intent(query="q", time_sensitivity=0.9, mode="specific")) == 0.0
    assert intent_strength(Intent(query="q", time_sensitivity=0.9, mode="timeless")) == 0.0
