"""fit: the vectorised search must equal a slow per-trial loop through the public pieces."""

from __future__ import annotations

import math

import numpy as np
import pytest

from chronorank.errors import InvalidInput
from chronorank.eval.fit import (
    PEER_EQUIVALENT_SPACE,
    FitQuery,
    _reranker_gate,  # the gate FitResult.build uses
    batched_combine,
    fit,
    fit_strength,
    score_space,
    suggest_half_life,
)
from chronorank.eval.metrics import evaluate
from chronorank.eval.synthetic import synthetic_benchmark
from chronorank.rerank import TemporalReranker
from chronorank.types import best_first

kernels = pytest.importorskip("chronorank.kernels")
fusion = pytest.importorskip("chronorank.fusion")


def _queries(seed=0, n=9, m=25):
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        c = m - (i % 4)  # ragged: exercises padding
        ages = rng.uniform(0, 900, c)
        ages[rng.random(c) < 0.1] = np.nan  # undated
        grades = np.zeros(c)
        grades[rng.choice(c, 3, replace=False)] = [3, 1, 2]
        out.append(FitQuery(query=f"q{i}", similarity=np.round(rng.random(c), 2), ages=ages, grades=grades,
                            ideal=np.sort(grades[grades > 0])[::-1], ids=[f"d{j}" for j in range(c)],
                            sensitivity=1.0, qid=f"q{i}"))
    return out


SPACE = {
    "kernels": {"exponential": {"half_life_days": [30, 365]}, "weibull": {"half_life_days": [90], "shape": [0.6, 3.0]}},
    "combine": ["gated_multiply", "multiply", "linear", "rrf"],
    "strength": [0.0, 0.5, 1.0],
    "gate": [False],
}


def _slow(queries, kernel, strategy, s, metric="ndcg@5"):
    k = kernels.get_kernel(kernel)
    run, qrels = {}, {}
    for q in queries:
        w = np.asarray(k(np.maximum(q.ages, 0)), dtype=float)
        w[np.isnan(w)] = np.median(w[~np.isnan(w)])
        final = fusion.combine(q.similarity, w, strategy, s)
        run[q.qid] = [q.ids[j] for j in best_first(final, np.arange(final.size), -q.ages, q.ids)]  # ties: TIE_RULE
        qrels[q.qid] = {d: g for d, g in zip(q.ids, q.grades) if g > 0}
    return evaluate(run, qrels, [metric])["mean"][metric]


def test_vectorised_equals_per_trial_loop():
    qs = _queries()
    table, matrix = score_space(qs, SPACE, "ndcg@5")
    assert matrix.shape == (4 * 4 * 3, len(qs))
    rng = np.random.default_rng(1)
    for row in rng.choice(matrix.shape[0], 20, replace=False):
        expected = _slow(qs, table["kernel"][row], table["combine"][row], table["strength"][row])
        assert table["score"][row] == pytest.approx(expected, abs=1e-12), (table["kernel"][row], table["combine"][row])


@pytest.mark.parametrize("gate", [False, True])
def test_grid_scores_what_the_reranker_ranks_when_scores_tie(gate):
    # the synthetic suite's BM25 scores tie on 96% of candidates: the grid must break those ties as
    # the engine does (TIE_RULE), not by candidate position, or it reports a score nobody gets
    from chronorank.eval import benchmark

    suite = benchmark.load_suite("synthetic")
    p = benchmark.prepare(suite)
    queries = [{"qid": q["qid"], "query": q["query"], "similarity": p.sims[i], "ages": (p.now[i] - p.times[i]) / 86400.0,
                "now": float(p.now[i]), "ids": p.ids[i], "relevance": q["relevance"]} for i, q in enumerate(suite.queries)]
    space = {"kernels": {"exponential": {"half_life_days": [30, 1460]}}, "combine": ["gated_multiply", "rrf"],
             "strength": [0.1, 1.0], "gate": [gate]}
    table, _ = score_space(queries, space)
    qrels = {q["qid"]: q["relevance"] for q in suite.queries}
    for row in range(len(table["score"])):
        rr = TemporalReranker(kernel=table["kernel"][row], combine=table["combine"][row], strength=table["strength"][row],
                              gate=_reranker_gate(gate), relative_recency=None, range_slope=0.0, topical_margin=None)
        run = {q["qid"]: [str(x) for x in rr.rerank_columns(q["query"], p.sims[i], p.times[i], ids=p.ids[i],
                                                             now=p.now[i]).ranked_ids]
               for i, q in enumerate(suite.queries)}
        engine = evaluate(run, qrels, ["ndcg@10"])["mean"]["ndcg@10"]
        assert table["score"][row] == pytest.approx(engine, abs=1e-9), (table["kernel"][row], table["combine"][row])


@pytest.mark.parametrize("strategy", ["gated_multiply", "multiply", "linear", "rrf"])
def test_batched_combine_matches_fusion_combine(strategy):
    """The fit grid renders each strategy's one expression with the strength broadcast over
    configurations: row by row it is ``combine``."""
    rng = np.random.default_rng(3)
    sim = np.round(rng.normal(0.3, 0.4, (5, 12)), 1)  # ties and negatives
    dec = np.round(rng.random((5, 12)), 1)
    s = np.array([0.0, 0.3, 1.0])[:, None, None]
    got = batched_combine(sim[None], dec[None], strategy, s)
    for a, sv in enumerate([0.0, 0.3, 1.0]):
        for r in range(5):
            assert np.allclose(got[a, r], fusion.combine(sim[r], dec[r], strategy, sv))


def test_fit_reports_fitted_and_heldout_and_builds():
    corpus, queries = synthetic_benchmark(seed=2, similarity=True)
    times = {d["id"]: d["date"] for d in corpus}
    from chronorank.eval.datasets import to_epoch

    fq = []
    for q in queries:
        now = to_epoch(q["reference_date"])
        ages = np.array([(now - to_epoch(times[c])) / 86400 for c in q["candidates"]])
        fq.append({"query": q["query"], "similarity": q["similarity"], "ages": ages, "ids": q["candidates"],
                   "relevance": q["relevance"], "sensitivity": 1.0})
    res = fit(fq, PEER_EQUIVALENT_SPACE, folds=4, progress=False)
    assert res.n_trials == 368 and res.folds == 4
    assert 0 <= res.heldout <= res.score + 1e-12 <= 1.0 + 1e-12
    assert res.score > 0.8  # decay fixes the "current" queries of the synthetic set
    assert res.spec.startswith("reranker(kernel=")
    from chronorank.spec import parse_spec

    name, params = parse_spec(res.spec)
    assert name == "reranker" and params["strength"] == res.strength
    rerank = pytest.importorskip("chronorank.rerank")
    assert isinstance(res.build(), rerank.TemporalReranker)


def test_fusion_weights_axis():
    qs = _queries(4)
    rng = np.random.default_rng(0)
    for q in qs:
        q.signals = {"vector": q.similarity, "keyword": rng.random(q.similarity.size)}
    space = dict(SPACE, weights=[{"vector": 1.0, "keyword": 1.0}, {"vector": 1.0, "keyword": 0.0}], combine=["gated_multiply"])
    table, matrix = score_space(qs, space, "ndcg@5")
    assert matrix.shape[0] == 2 * 4 * 1 * 3
    assert table["weights"][0] == {"vector": 1.0, "keyword": 1.0}


def test_gate_axis_uses_sensitivity():
    qs = _queries(5)
    for q in qs:
        q.sensitivity = 0.0  # gate on = no decay at all
    space = dict(SPACE, gate=[False, True], combine=["multiply"], strength=[1.0])
    table, matrix = score_space(qs, space, "ndcg@5")
    gated = [i for i, g in enumerate(table["gate"]) if g]
    base = _slow(qs, table["kernel"][0], "multiply", 0.0)
    assert all(table["score"][i] == pytest.approx(base) for i in gated)


def test_fit_strength_curve_and_plot(tmp_path):
    pytest.importorskip("matplotlib")
    curve = fit_strength(_queries(), "exponential(half_life_days=30)", resolution=5, plot=str(tmp_path / "s.png"))
    assert list(curve) == [0.0, 0.25, 0.5, 0.75, 1.0]
    assert (tmp_path / "s.png").stat().st_size > 1000


def test_bad_inputs():
    with pytest.raises(InvalidInput):
        fit([], SPACE)
    with pytest.raises(InvalidInput, match="strength"):
        fit(_queries(), dict(SPACE, strength=[2.0]), progress=False)
    with pytest.raises(InvalidInput, match="stale"):
        fit(_queries(), SPACE, metric="stale@5", progress=False)


def test_suggest_half_life_rule():
    days = np.arange(0, 101) * 86400.0  # ages 0..100 days from the newest
    # 25th percentile of ages 0..100 is 25 days
    assert suggest_half_life(days) == 25.0
    # ages 20 and 10 days: 25th percentile 12.5, two significant figures (half to even) -> 12
    assert suggest_half_life(["2024-01-01", None, "2024-01-11"], now="2024-01-21") == 12.0
    assert suggest_half_life([None]) == 180.0
    assert math.isfinite(suggest_half_life(days, percentile=50))


def test_ties_are_reported_and_go_to_the_gentlest_setting():
    # the relevant document is both the most similar and the newest: every setting scores 1.0
    fq = [FitQuery(query=f"q{i}", similarity=np.array([0.9, 0.5, 0.4]), ages=np.array([1.0, 400.0, 900.0]),
                   grades=np.array([3.0, 0.0, 0.0]), ideal=np.array([3.0]), ids=["new", "mid", "old"],
                   sensitivity=1.0, qid=f"q{i}") for i in range(4)]
    space = {"kernels": {"exponential": {"half_life_days": [30, 365]}, "weibull": {"half_life_days": [90]}},
             "combine": ["multiply"], "strength": [1.0, 0.25], "gate": [False]}
    res = fit(fq, space, folds=2, progress=False)
    assert res.score == 1.0 and res.ties == 6
    # lowest strength first, then the longest half-life; not the first trial in the grid
    assert (res.kernel, res.strength) == ("exponential(half_life_days=365)", 0.25)
    assert "6 configurations tie" in str(res) and "gentlest" in str(res)


def test_a_single_best_is_not_called_a_tie():
    res = fit(_queries(), PEER_EQUIVALENT_SPACE, folds=3, progress=False)
    assert res.ties == 1 and "tie" not in str(res)


def test_the_table_starts_with_the_chosen_configuration():
    fq = [FitQuery(query="q", similarity=np.array([0.9, 0.5]), ages=np.array([1.0, 400.0]),
                   grades=np.array([3.0, 0.0]), ideal=np.array([3.0]), ids=["new", "old"], sensitivity=1.0, qid="q")]
    space = {"kernels": {"exponential": {"half_life_days": [30, 365]}}, "combine": ["multiply"],
             "strength": [1.0, 0.5], "gate": [False]}
    res = fit(fq, space, folds=2, progress=False)
    first_row = res.table(4).splitlines()[2]
    assert first_row.startswith("| exponential(half_life_days=365) | multiply | 0.5 |"), res.table(4)
