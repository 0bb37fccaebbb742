"""Fuzz subsample: the invariants of parse_time/parse_times/intent.parse on generated inputs.

``benchmarks/reliability.py`` runs the same loop for 10 minutes; here a fixed corpus runs
in every suite and a 20 s random run is marked slow.
"""

from __future__ import annotations

import random

import pytest
from reliability_support import (
    ADVERSARIAL_DATES,
    QUERY_TEMPLATES,
    big_input,
    check_intent_query,
    check_time_value,
    run_fuzz,
    time_limit,
)


@pytest.mark.parametrize("s", ADVERSARIAL_DATES, ids=lambda s: repr(s[:30]))
def test_adversarial_corpus(s):
    with time_limit(5):
        check_time_value(s)
        for t in QUERY_TEMPLATES:
            check_intent_query(t.format(x=s))


@pytest.mark.parametrize("seed", range(5))
def test_one_megabyte_inputs_do_not_hang(seed):
    s = big_input(random.Random(seed))
    assert len(s) >= 1 << 20
    with time_limit(20):
        check_time_value(s)
        check_intent_query(s)


@pytest.mark.slow
def test_random_fuzz_subsample():
    stats = run_fuzz(20.0, seed=random.randrange(1 << 30), per_input_s=10.0, big_every=0)
    assert stats["inputs"] > 1000
    assert stats["crashes"] == [], stats["crashes"]
