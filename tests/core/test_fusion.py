import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from chronorank.errors import InvalidInput
from chronorank.fusion import (
    STRATEGIES,
    SignalWeights,
    combine,
    competition_rank,
    weighted_rrf,
)

sims = arrays(np.float64, st.integers(1, 40), elements=st.floats(-1, 1, allow_nan=False))


def test_gated_multiply_formula():
    sim = np.array([0.8, 0.5])
    decay = np.array([0.25, 1.0])
    np.testing.assert_allclose(combine(sim, decay, "gated_multiply", 0.5), sim * (1 - 0.5 + 0.5 * decay))


def test_multiply_formula():
    sim = np.array([0.8, 0.5])
    decay = np.array([0.25, 1.0])
    np.testing.assert_allclose(combine(sim, decay, "multiply", 0.5), [0.8 * 0.25**0.5, 0.5])


def test_linear_formula_uses_min_max_similarity():
    sim = np.array([0.2, 0.6, 1.0])
    decay = np.array([1.0, 0.5, 0.0])
    np.testing.assert_allclose(
        combine(sim, decay, "linear", 0.25), 0.75 * np.array([0.0, 0.5, 1.0]) + 0.25 * decay
    )


def test_rrf_formula():
    sim = np.array([0.9, 0.5, 0.1])
    decay = np.array([0.1, 0.9, 0.5])
    expected = [1 / 61 + 0.5 / 63, 1 / 62 + 0.5 / 61, 1 / 63 + 0.5 / 62]
    np.testing.assert_allclose(combine(sim, decay, "rrf", 0.5), expected)


def test_negative_similarity_is_demoted_not_promoted():
    sim = np.array([-0.5])
    assert combine(sim, np.array([0.1]), "gated_multiply", 1.0)[0] < -0.5


@pytest.mark.parametrize("strategy", sorted(STRATEGIES))
@given(sim=sims, data=st.data())
@settings(max_examples=50, deadline=None)
def test_strength_zero_is_a_no_op(strategy, sim, data):
    decay = data.draw(arrays(np.float64, sim.shape, elements=st.floats(0, 1)))
    np.testing.assert_array_equal(combine(sim, decay, strategy, 0.0), sim)


@given(sim=sims, data=st.data(), s=st.floats(0, 1))
@settings(max_examples=50, deadline=None)
def test_lower_decay_never_raises_a_score(sim, data, s):
    decay = data.draw(arrays(np.float64, sim.shape, elements=st.floats(0, 1)))
    lower = decay * 0.5
    for strategy in ("gated_multiply", "multiply", "linear"):
        assert np.all(combine(sim, lower, strategy, s) <= combine(sim, decay, strategy, s) + 1e-12)


def test_unknown_strategy_lists_the_known_ones():
    with pytest.raises(InvalidInput, match="gated_multiply"):
        combine(np.ones(2), np.ones(2), "sum_of_squares", 0.5)


def test_strength_outside_unit_interval_is_rejected():
    with pytest.raises(InvalidInput, match="strength"):
        combine(np.ones(2), np.ones(2), "multiply", 1.5)


def test_competition_rank_shares_best_rank_on_ties():
    np.testing.assert_array_equal(competition_rank(np.array([3.0, 1.0, 3.0, 2.0])), [1, 4, 1, 3])


def test_weighted_rrf_formula_with_defaults():
    vec = np.array([0.9, 0.2, 0.5])
    kw = np.array([1.0, 3.0, 2.0])
    rec = np.array([10.0, 30.0, 20.0])
    fused = weighted_rrf({"vector": vec, "keyword": kw, "recency": rec})
    expected = [
        1.0 / 61 + 1.0 / 63 + 0.5 / 63,
        1.0 / 63 + 1.0 / 61 + 0.5 / 61,
        1.0 / 62 + 1.0 / 62 + 0.5 / 62,
    ]
    np.testing.assert_allclose(fused, expected)


def test_unset_weight_means_default_but_zero_means_off():
    sig = {"vector": np.array([0.9, 0.1]), "recency": np.array([1.0, 2.0])}
    unset = weighted_rrf(sig, SignalWeights(vector=1.0))
    zero = weighted_rrf(sig, SignalWeights(vector=1.0, recency=0.0))
    np.testing.assert_allclose(unset, [1 / 61 + 0.5 / 62, 1 / 62 + 0.5 / 61])
    np.testing.assert_allclose(zero, [1 / 61, 1 / 62])
    assert SignalWeights(recency=0.0).items_set() == {"recency": 0.0}
    assert SignalWeights().items_set() == {}


@given(n=st.integers(5, 80), k=st.integers(1, 5), seed=st.integers(0, 2**16))
@settings(max_examples=40, deadline=None)
def test_recency_only_weights_are_a_sliding_window(n, k, seed):
    rng = np.random.default_rng(seed)
    times = rng.permutation(n).astype(float)  # distinct times
    # the relevant documents are the oldest ones: a window must ignore relevance entirely
    vector = -times
    keyword = -times
    fused = weighted_rrf(
        {"vector": vector, "keyword": keyword, "recency": times},
        {"vector": 0, "keyword": 0, "recency": 1},
    )
    top = np.argsort(-fused, kind="stable")[:k]
    assert set(top) == set(np.argsort(-times)[:k])


def test_nan_signal_means_absent():
    fused = weighted_rrf({"vector": np.array([np.nan, 0.5])}, {"vector": 1.0})
    np.testing.assert_allclose(fused, [0.0, 1 / 61])


def test_negative_weight_is_rejected_with_the_signal_name():
    with pytest.raises(InvalidInput, match="recency"):
        weighted_rrf({"recency": np.ones(2)}, {"recency": -1})
