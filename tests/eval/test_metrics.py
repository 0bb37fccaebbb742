"""Metrics: hand examples written as formulas, and ranx as an independent oracle."""

from __future__ import annotations

import math

import numpy as np
import pytest

from chronorank.errors import InvalidInput
from chronorank.eval.metrics import evaluate, group_means, parse_metric

DAY = 86400.0


def test_ndcg_hand_example():
    qrels = {"q": {"a": 3, "b": 1, "c": 2}}
    run = {"q": ["b", "x", "a"]}
    got = evaluate(run, qrels, ["ndcg@3"])["mean"]["ndcg@3"]
    dcg = 1 / math.log2(2) + 0 + 3 / math.log2(4)
    idcg = 3 / math.log2(2) + 2 / math.log2(3) + 1 / math.log2(4)
    assert got == pytest.approx(dcg / idcg)


def test_recall_precision_mrr_hit_hand_example():
    qrels = {"q": {"a": 3, "b": 1, "c": 2, "z": 0}}
    run = {"q": ["x", "z", "b", "y", "a"]}
    m = evaluate(run, qrels, ["recall@3", "precision@4", "mrr", "mrr@2", "hit_rate@2", "hit_rate@3"])["mean"]
    assert m["recall@3"] == pytest.approx(1 / 3)
    assert m["precision@4"] == pytest.approx(1 / 4)
    assert m["mrr"] == pytest.approx(1 / 3)
    assert m["mrr@2"] == 0.0
    assert m["hit_rate@2"] == 0.0
    assert m["hit_rate@3"] == 1.0


def test_score_map_run_sorted_by_score_then_id():
    qrels = {"q": {"b": 1}}
    m = evaluate({"q": {"a": 0.5, "b": 0.5, "c": 0.9}}, qrels, ["mrr"])["mean"]
    assert m["mrr"] == pytest.approx(1 / 3)  # order c, a, b


def test_query_without_relevant_scores_zero_and_missing_run_is_empty():
    m = evaluate({}, {"q": {"a": 0}, "r": {"a": 2}}, ["ndcg@5", "recall@5"])["mean"]
    assert m == {"ndcg@5": 0.0, "recall@5": 0.0}


def test_stale_superseded_and_old_irrelevant():
    t = {"v1": 0 * DAY, "v2": 10 * DAY, "v3": 20 * DAY, "other_old": 5 * DAY, "other_new": 30 * DAY, "undated": None}
    groups = {"v1": "doc", "v2": "doc", "v3": "doc", "other_old": "o", "other_new": "n"}
    qrels = {"q": {"v2": 3}}
    ref = {"q": 15 * DAY}  # v3 is not yet published at the reference time
    run = {"q": ["v2", "v1", "other_old", "other_new", "undated"]}
    m = evaluate(run, qrels, ["stale@5", "stale@2", "age@2"], times=t, reference_times=ref, groups=groups)["mean"]
    # v1: superseded by v2 (<= ref); other_old: grade 0 and older than v2; v2 itself not
    # superseded because v3 is after the reference time; other_new and undated are not stale.
    assert m["stale@5"] == pytest.approx(2 / 5)
    assert m["stale@2"] == pytest.approx(1 / 2)
    assert m["age@2"] == pytest.approx(((15 - 10) + (15 - 0)) / 2)


def test_stale_needs_times():
    with pytest.raises(InvalidInput, match="times"):
        evaluate({"q": ["a"]}, {"q": {"a": 1}}, ["stale@5"])


@pytest.mark.parametrize("bad", ["ndcg", "foo@3", "ndcg@0", "recall@"])
def test_bad_metric_names(bad):
    with pytest.raises(InvalidInput):
        parse_metric(bad)


def test_metric_repr_round_trips():
    for name in ["ndcg@10", "mrr", "hit_rate@5", "stale@5", "age@10", "mrr@3"]:
        assert str(parse_metric(str(parse_metric(name)))) == name


def test_group_means_by_kind():
    pq = {"a": {"ndcg@10": 1.0}, "b": {"ndcg@10": 0.0}, "c": {"ndcg@10": 0.5}}
    g = group_means(pq, {"a": "latest", "b": "latest"})
    assert g["latest"] == {"ndcg@10": 0.5, "queries": 2}
    assert g["all"] == {"ndcg@10": 0.5, "queries": 1}


def _random_case(seed: int):
    rng = np.random.default_rng(seed)
    docs = [f"d{i}" for i in range(30)]
    qrels, run = {}, {}
    for q in range(12):
        judged = rng.choice(30, size=rng.integers(1, 8), replace=False)
        qrels[f"q{q}"] = {docs[j]: int(rng.integers(0, 4)) for j in judged}
        scores = rng.permutation(30)[:20].astype(float)  # distinct scores: no ties to break
        run[f"q{q}"] = {docs[j]: float(s + 1) for j, s in zip(rng.permutation(30)[:20], scores)}
    # ranx needs at least one positive judgement per query
    for q in qrels:
        if not any(g > 0 for g in qrels[q].values()):
            qrels[q][next(iter(qrels[q]))] = 2
    return run, qrels


@pytest.mark.slow  # ranx compiles its numba kernels on first use (~40 s on 2 cores)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_against_ranx_oracle(seed):
    ranx = pytest.importorskip("ranx")
    run, qrels = _random_case(seed)
    names = ["ndcg@5", "ndcg@10", "recall@5", "recall@10", "precision@5", "mrr", "mrr@5", "hit_rate@3", "hit_rate@10"]
    ours = evaluate(run, qrels, names)["per_query"]
    r_qrels = ranx.Qrels({q: {d: g for d, g in rel.items() if g > 0} for q, rel in qrels.items()})
    r_run = ranx.Run(run)
    theirs = ranx.evaluate(r_qrels, r_run, names, return_mean=False, make_comparable=True)
    for name in names:
        expected = np.asarray(theirs[name])  # ranx reports queries in sorted qid order
        got = np.array([ours[q][name] for q in sorted(qrels)])
        assert np.allclose(got, expected, atol=1e-9), name
