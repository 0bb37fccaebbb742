"""Stateful test: random add/upsert/delete/search/save-load sequences against a brute-force model.

The index runs embedder-free on user-supplied vectors with keyword_weight=0 and strength=0,
so its score is exactly ``max(cos(q, v), 0)`` and the model is a dict of unit vectors. NOW is
in the past, so a document dated after it (9999-12-31) did not exist yet and is never returned.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import numpy as np
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from chronorank.errors import InvalidInput
from chronorank.index import TemporalIndex

DIM = 4
CONFIG = "index(dense_weight=1, keyword_weight=0, strength=0)"
NOW = "2026-01-01"

id_st = st.sampled_from([f"d{i}" for i in range(12)] + ["7", "x y", "ü", "\x01"])
vec_st = st.lists(st.integers(-3, 3), min_size=DIM, max_size=DIM).filter(lambda v: any(v))
date_st = st.one_of(st.none(), st.sampled_from(["2020-01-01", "2025-12-31T23:59:60Z", "1999", "9999-12-31"]))


def unit(v: list[int]) -> np.ndarray:
    a = np.asarray(v, dtype=np.float64)
    return a / np.linalg.norm(a)


class IndexMachine(RuleBasedStateMachine):
    @initialize()
    def setup(self) -> None:
        self.index = TemporalIndex(embedder=None, config=CONFIG)
        self.model: dict[str, tuple[np.ndarray, str]] = {}
        self.later: set[str] = set()  # ids dated after NOW
        self.tmp = Path(tempfile.mkdtemp(prefix="chronorank-stateful-"))
        self.saves = 0

    @rule(batch=st.lists(st.tuples(id_st, vec_st, st.text(max_size=12), date_st), min_size=1, max_size=5,
                         unique_by=lambda t: t[0]))
    def upsert(self, batch) -> None:
        docs = [{"id": i, "text": t, "date": d} for i, _, t, d in batch]
        n = self.index.add(docs, vectors=[v for _, v, _, _ in batch])
        assert n == len(batch)
        for i, v, t, d in batch:
            self.model[i] = (unit(v), t)
            (self.later.add if d == "9999-12-31" else self.later.discard)(i)

    @rule(batch=st.lists(st.tuples(id_st, vec_st), min_size=2, max_size=4))
    def add_batch_with_repeated_id_is_refused_whole(self, batch) -> None:
        batch = [*batch, batch[0]]
        before = self.index.ids
        try:
            self.index.add([{"id": i, "text": "t"} for i, _ in batch], vectors=[v for _, v in batch])
        except InvalidInput:
            pass
        else:
            raise AssertionError("a batch repeating an id must be refused")
        assert self.index.ids == before

    @rule(ids=st.lists(id_st, max_size=4))
    def delete(self, ids) -> None:
        removed = self.index.delete(ids)
        assert removed == len({i for i in ids if i in self.model})
        for i in ids:
            self.model.pop(i, None)
            self.later.discard(i)

    @precondition(lambda self: len(self.model) > 0)
    @rule(q=vec_st, k=st.integers(1, 20))
    def search(self, q, k) -> None:
        qv = unit(q)
        res = self.index.search("anything", k=k, now=NOW, vector=qv)
        ids = res.ranked_ids
        existed = {i: m for i, m in self.model.items() if i not in self.later}
        assert len(ids) == min(k, len(existed))
        assert set(ids) <= set(existed), "search returned a deleted, unknown or later-dated id"
        assert len(set(ids)) == len(ids)
        if not existed:
            return
        want = {i: max(float(v @ qv), 0.0) for i, (v, _) in existed.items()}
        best = max(want.values())
        assert abs(res[0].score - best) < 1e-5, (res[0].id, res[0].score, best)
        for h in res:
            assert abs(h.score - want[h.id]) < 1e-5
            assert h.payload["text"] == self.model[h.id][1]

    @precondition(lambda self: self.saves < 1)  # each save fsyncs: keep the suite fast
    @rule()
    def save_and_reload(self) -> None:
        self.saves += 1
        self.index.save(self.tmp / "idx")
        self.index = TemporalIndex.load(self.tmp / "idx", embedder=None)

    def teardown(self) -> None:
        if hasattr(self, "tmp"):
            shutil.rmtree(self.tmp, ignore_errors=True)

    @invariant()
    def ids_and_counts_match(self) -> None:
        if not hasattr(self, "index"):
            return
        assert len(self.index) == len(self.model)
        assert sorted(self.index.ids) == sorted(self.model)
        for i in self.model:
            assert i in self.index


IndexMachine.TestCase.settings = settings(
    max_examples=20, stateful_step_count=20, deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
TestIndexStateful = IndexMachine.TestCase
