"""Adding a kernel is one class plus its registration, and it works in the reranker, the
index, fitting and both stores.

``Lorentz`` below is written the way a new kernel file would be: parameters, a check, and
its formula once, as an expression. ``LorentzNumpy`` is the same curve written the old way,
numpy in ``_raw``: the reference, which the stores can only score client-side. Every backend
must rank with the first exactly as with the second.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pytest
from store_cases import NOW, docs_fixture  # (conftest.py puts tests/stores on sys.path)

from chronorank import expr as ex
from chronorank.errors import InvalidInput
from chronorank.kernels import ALIASES, KERNELS, BaseKernel, get_kernel, register_kernel
from chronorank.kernels.base import check_number, compiles


@dataclass(frozen=True, repr=False)
class Lorentz(BaseKernel):
    """``r(age) = 1 / (1 + (age / width) ** 2)``, ``width = half_life_days / sqrt(1 / r_h - 1)``."""

    name: ClassVar[str] = "lorentz"
    raw_in_unit_range: ClassVar[bool] = True

    half_life_days: float = 60.0

    def _check(self) -> None:
        self._set("half_life_days", check_number(self.name, "half_life_days", self.half_life_days, low=0.0, low_open=True))

    @property
    def width(self) -> float:
        return self.half_life_days / math.sqrt(1.0 / self.target_raw - 1.0)

    def expr(self, age: ex.Expr) -> ex.Expr:
        return ex.div(1.0, ex.add(1.0, ex.power(ex.div(age, self.width), 2.0)))


@dataclass(frozen=True, repr=False)
class LorentzNumpy(BaseKernel):
    """The same curve in numpy only (no expression): the reference."""

    name: ClassVar[str] = "lorentz_numpy"

    half_life_days: float = 60.0

    @property
    def width(self) -> float:
        return self.half_life_days / math.sqrt(1.0 / self.target_raw - 1.0)

    def _raw(self, age: np.ndarray) -> np.ndarray:
        return 1.0 / (1.0 + (age / self.width) ** 2)

    def formula(self) -> str:
        return f"1 / (1 + (age / {self.width:g}) ** 2)"


@pytest.fixture
def lorentz() -> Iterator[None]:
    kernels, aliases = dict(KERNELS), dict(ALIASES)
    register_kernel("lorentz", Lorentz, aliases=("cauchy",))
    register_kernel("lorentz_numpy", LorentzNumpy)
    yield
    KERNELS.clear()
    KERNELS.update(kernels)
    ALIASES.clear()
    ALIASES.update(aliases)


SPEC, REF = "lorentz(half_life_days=30)", "lorentz_numpy(half_life_days=30)"


def test_the_kernel_is_its_formula(lorentz: None) -> None:
    k = get_kernel("cauchy(half_life_days=30, floor=0.2)")
    ages = np.array([0.0, 10.0, 30.0, 400.0, np.nan, -3.0])
    w = 30.0 / math.sqrt(1 / ((0.5 - 0.2) / 0.8) - 1)
    want = 0.2 + 0.8 / (1 + (np.array([0, 10, 30, 400, np.nan, 0]) / w) ** 2)
    np.testing.assert_allclose(k(ages), want, rtol=1e-15)
    assert k(30) == pytest.approx(0.5)
    assert k.formula() == f"1 / (1 + (age / {w:.6g}) ** 2)"
    assert repr(k) == "lorentz(half_life_days=30, floor=0.2)"
    assert compiles(k) and not compiles(get_kernel(REF))


def _rank(hits: Any) -> tuple[list[Any], list[float]]:
    return [h.id for h in hits], [float(h.score) for h in hits]


def _same(a: Any, b: Any) -> None:
    ids_a, scores_a = _rank(a)
    ids_b, scores_b = _rank(b)
    assert ids_a == ids_b
    np.testing.assert_allclose(scores_a, scores_b, rtol=0, atol=1e-9)


def test_reranker(lorentz: None) -> None:
    from chronorank import TemporalReranker

    cands = [{"id": d["id"], "text": d["text"], "score": 0.5 + 0.01 * i, "date": d.get("date")}
             for i, d in enumerate(docs_fixture())]
    plain = {"relative_recency": None, "range_slope": 0.0, "topical_margin": None}  # the kernel's own weights
    got = TemporalReranker(kernel=SPEC, gate=False, **plain).rerank("latest polars release", cands, now=NOW)
    want = TemporalReranker(kernel=REF, gate=False, **plain).rerank("latest polars release", cands, now=NOW)
    _same(got, want)
    dated = [h for h in got if not math.isnan(h.age_days)]
    w = 30.0
    np.testing.assert_allclose([h.decay for h in dated], [1 / (1 + (h.age_days / w) ** 2) for h in dated], rtol=1e-12)
    # the kernel moves documents: the ranking is not the similarity order
    assert [h.id for h in got] != [c["id"] for c in sorted(cands, key=lambda c: -c["score"])]


def test_index(lorentz: None, embedder: Any) -> None:
    from chronorank.index import TemporalIndex

    def search(kernel: str) -> Any:
        idx = TemporalIndex(embedder=embedder, config=f"index(kernel={kernel!r}, missing_date='keep')")
        idx.add(docs_fixture())
        return idx.search("latest polars release join speed", k=8, now=NOW)

    _same(search(SPEC), search(REF))


def test_fit(lorentz: None) -> None:
    from chronorank.eval.fit import score_space
    from chronorank.eval.synthetic import synthetic_benchmark
    from chronorank.timeparse import to_epoch

    corpus, queries = synthetic_benchmark(seed=2, similarity=True)
    times = {d["id"]: to_epoch(d["date"]) for d in corpus}
    fq = [{"query": q["query"], "similarity": q["similarity"], "ids": q["candidates"], "relevance": q["relevance"],
           "ages": np.array([(to_epoch(q["reference_date"]) - times[c]) / 86400 for c in q["candidates"]])}
          for q in queries]
    axes = {"half_life_days": [7, 30, 365]}
    space = {"kernels": {"lorentz": axes, "lorentz_numpy": axes}, "combine": ["gated_multiply", "multiply", "rrf"],
             "strength": [0.5, 1.0], "gate": [False]}
    table, matrix = score_space(fq, space, "ndcg@5")
    ours = [i for i, k in enumerate(table["kernel"]) if k.startswith("lorentz(")]
    refs = [i for i, k in enumerate(table["kernel"]) if k.startswith("lorentz_numpy(")]
    assert len(ours) == len(refs) == 3 * 3 * 2
    for i, j in zip(ours, refs):
        assert table["kernel"][i].replace("lorentz", "lorentz_numpy", 1) == table["kernel"][j]
        assert (table["combine"][i], table["strength"][i]) == (table["combine"][j], table["strength"][j])
        np.testing.assert_allclose(matrix[i], matrix[j], rtol=0, atol=1e-12)
    assert np.ptp(matrix[ours].mean(axis=1)) > 0  # the half-life matters: the kernel is used


def _server_equals_client_reference(store: Any) -> None:
    store.add(docs_fixture())
    query = "latest polars release join speed"
    with pytest.raises(InvalidInput, match="fallback='client'"):
        store.search(query, k=6, now=NOW, kernel=REF)  # numpy only: no server-side form
    server = store.search(query, k=6, now=NOW, kernel=SPEC)
    client = store.search(query, k=6, now=NOW, kernel=REF, fallback="client")
    assert [h.id for h in server] == [h.id for h in client]
    np.testing.assert_allclose([h.score for h in server], [h.score for h in client], rtol=0, atol=1e-6)
    np.testing.assert_allclose([h.decay for h in server], [h.decay for h in client], rtol=0, atol=1e-9)


CFG = "index(missing_date='keep', relative_recency=none, topical_margin=none, lead_weight=0)"


def test_qdrant(lorentz: None, embedder: Any) -> None:
    pytest.importorskip("qdrant_client")
    from chronorank.stores import QdrantStore

    _server_equals_client_reference(QdrantStore("lorentz", embedder=embedder, config=CFG, fallback="error"))


@pytest.mark.pg
def test_pgvector(lorentz: None, embedder: Any, pg: Any) -> None:
    from chronorank.stores import PgVectorStore

    store = PgVectorStore(pg.dsn, "lorentz", embedder=embedder, config=CFG, fallback="error")
    try:
        _server_equals_client_reference(store)
    finally:
        store.close()
