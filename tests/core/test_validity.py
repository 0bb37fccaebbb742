import numpy as np
import pytest

from chronorank.errors import InvalidInput
from chronorank.validity import build_chains, group_codes, infer_groups

BASE = ("Pricing guide for the Pro plan. Each seat costs {p} dollars per month, billed yearly, "
        "with single sign-on, audit logs and priority support included for every workspace.")


def test_chains_link_each_version_to_the_next_by_start_time():
    starts = np.array([30.0, 10.0, 20.0, 5.0, np.nan])
    groups = np.array([0, 0, 0, 1, 0])
    ch = build_chains(starts, groups)
    assert ch.successor.tolist() == [-1, 2, 0, -1, -1]
    assert ch.derived_end[1] == 20.0 and ch.derived_end[2] == 30.0
    assert np.isnan(ch.derived_end[0]) and np.isnan(ch.derived_end[3])


def test_group_codes_skip_missing_keys():
    assert group_codes(["a", None, "b", "a", ""]).tolist() == [0, -1, 1, 0, -1]


def test_near_duplicate_texts_form_one_chain_and_others_stay_alone():
    texts = [BASE.format(p=p) for p in (12, 18, 25)] + [
        "Release notes: the CLI gained a --json flag and faster startup.",
        "How to reset your password from the account settings page.",
    ]
    codes = infer_groups(texts, threshold=0.5)
    assert codes[0] == codes[1] == codes[2] != -1
    assert codes[3] == -1 and codes[4] == -1


def test_threshold_is_a_parameter():
    texts = [BASE.format(p=12), BASE.format(p=18)]
    assert infer_groups(texts, threshold=0.5)[0] != -1
    assert (infer_groups(texts, threshold=1.0) == -1).all()  # not identical


def test_vectors_group_by_cosine():
    rng = np.random.default_rng(0)
    base = rng.standard_normal(16)
    a = base / np.linalg.norm(base)
    b = a + 0.01 * rng.standard_normal(16)
    c = rng.standard_normal(16)
    v = np.stack([a, b / np.linalg.norm(b), c / np.linalg.norm(c)])
    codes = infer_groups(vectors=v, threshold=0.95)
    assert codes[0] == codes[1] != -1 and codes[2] == -1


def test_many_documents_stay_fast_and_exact_duplicates_join():
    rng = np.random.default_rng(1)
    words = [f"w{i}" for i in range(3000)]
    texts = [" ".join(rng.choice(words, 40)) for _ in range(3000)]
    texts[2999] = texts[17]
    codes = infer_groups(texts, threshold=0.9)
    assert codes[17] == codes[2999] != -1
    assert (codes != -1).sum() == 2


def test_bad_threshold_is_rejected():
    with pytest.raises(InvalidInput, match="threshold"):
        infer_groups(["a"], threshold=0)
