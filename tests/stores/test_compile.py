"""The renderers of one formula agree: each kernel's expression (and each fusion strategy's)
rendered to numpy, to the engines' form, to a Qdrant formula and to SQL gives the kernel's own
numbers (numpy 1e-9, Qdrant 1e-6, PostgreSQL 1e-9)."""

from __future__ import annotations

import numpy as np
import pytest

from chronorank.errors import InvalidInput
from chronorank.fusion import STRATEGIES, combine
from chronorank.kernels import KERNELS, get_kernel
from chronorank.kernels.base import compiles
from chronorank.stores import compile as cx
from chronorank.stores.base import combine_expr

SPECS = [
    "exponential(half_life_days=30)",
    "exponential(half_life_days=90, floor=0.2)",
    "gaussian(half_life_days=60)",
    "gaussian(half_life_days=60, floor=0.6)",
    "linear(zero_at=120)",
    "linear(zero_at=365, floor=0.1)",
    "weibull(half_life_days=90, shape=2)",
    "weibull(half_life_days=90, shape=0.5, floor=0.1)",
    "power_law(half_life_days=30, beta=1.5)",
    "power_law(half_life_days=30, beta=0.7, floor=0.3)",
    "cliff(half_life_days=90, steepness=10)",
    "cliff(half_life_days=30, steepness=40, floor=0.05)",
    "piecewise()",
    "piecewise(points=[(0, 1), (30, 1), (180, 0.3)], after=0.1)",
    "piecewise(points=[(0, 0.9), (10, 0.5), (100, 0.2)], floor=0.1)",
    "constant()",
]
AGES = np.array([0.0, 0.5, 1, 7, 29.999, 30, 30.001, 59, 60, 89, 90, 91, 179, 180, 181, 365, 1000, 1e4, 1e6])


@pytest.mark.parametrize("spec", SPECS)
def test_numpy_renderer_equals_kernel(spec: str) -> None:
    """The weight expression the stores compile, evaluated by numpy (and in the engines' form,
    with their overflow guards), is the kernel's own weight."""
    k = get_kernel(spec)
    got = cx.evaluate(cx.kernel_expr(k, cx.Var("age")), {"age": AGES})
    np.testing.assert_allclose(got, k(AGES), rtol=0, atol=1e-9)
    engine = cx.evaluate(cx.lower(cx.kernel_expr(k, cx.Var("age"))), {"age": AGES})
    np.testing.assert_allclose(engine, k(AGES), rtol=0, atol=1e-12)


def test_compilable_kernels_are_those_written_as_expressions() -> None:
    built_in = {n for n, cls in KERNELS.items() if compiles(cls)}
    assert built_in == set(cx.COMPILABLE_KERNELS)
    assert not compiles(get_kernel("delayed_peak()"))  # has an expression, not rendered for engines
    with pytest.raises(InvalidInput, match="fallback='client'"):
        cx.kernel_expr(get_kernel("delayed_peak()"), cx.Var("age"))


SIM = np.array([0.9, 0.4, 0.0, -0.3, 0.7, 0.2])
DECAY = np.array([0.1, 1.0, 0.5, 0.2, 0.0, 0.75])


@pytest.mark.parametrize("strategy", ["gated_multiply", "multiply"])
@pytest.mark.parametrize("strength", [0.0, 0.4, 1.0])
def test_fusion_renderers_agree(strategy: str, strength: float) -> None:
    """The stores' score expression is the strategy's own: in numpy it is ``combine``."""
    e = combine_expr(cx.Var("sim"), cx.Var("w"), strategy, strength)
    np.testing.assert_array_equal(cx.evaluate(e, {"sim": SIM, "w": DECAY}), combine(SIM, DECAY, strategy, strength))
    pos = np.abs(SIM)
    e = combine_expr(cx.Var("sim"), cx.Var("w"), strategy, strength, nonneg=True)
    np.testing.assert_array_equal(cx.evaluate(e, {"sim": pos, "w": DECAY}), combine(pos, DECAY, strategy, strength))


@pytest.mark.parametrize("strategy", sorted(set(STRATEGIES) - {"gated_multiply", "multiply"}))
def test_strategies_comparing_candidates_stay_client_side(strategy: str) -> None:
    assert not STRATEGIES[strategy].engine
    with pytest.raises(InvalidInput, match="cannot run inside the engine"):
        combine_expr(cx.Var("sim"), cx.Var("w"), strategy, 0.5)


def test_uncompilable_kernel_is_a_clear_error() -> None:
    k = get_kernel(lambda age: np.ones_like(age))
    with pytest.raises(InvalidInput, match="fallback='client'"):
        cx.kernel_expr(k, cx.Var("age"))


@pytest.mark.parametrize("engine", ["local", "edge"])
@pytest.mark.parametrize("spec", SPECS)
def test_qdrant_formula_matches_kernel(spec: str, engine: str, tmp_path) -> None:  # noqa: ANN001
    """Qdrant evaluates the rendered formula over a payload field: local mode (qdrant-client's
    Python emulation) and Qdrant's Rust engine in process (qdrant-edge-py)."""
    qc = pytest.importorskip("qdrant_client")
    m = qc.models
    if engine == "edge":
        pytest.importorskip("qdrant_edge", reason="qdrant-edge-py is not installed (pip install 'chronorank[qdrant-edge]')")
        from chronorank.stores.qdrant_edge import EdgeClient

        client = EdgeClient(tmp_path)
    else:
        client = qc.QdrantClient(":memory:")
    client.create_collection("k", vectors_config=m.VectorParams(size=2, distance=m.Distance.COSINE))
    client.upsert("k", points=[m.PointStruct(id=i, vector=[1.0, 0.0], payload={"age": float(a)}) for i, a in enumerate(AGES)])
    k = get_kernel(spec)
    formula = cx.to_qdrant(cx.kernel_expr(k, cx.Var("age")), {"age": "age"})
    res = client.query_points(
        "k", prefetch=[m.Prefetch(query=[1.0, 0.0], limit=100)], query=m.FormulaQuery(formula=formula), limit=100,
        with_payload=True,
    ).points
    got = {p.payload["age"]: p.score for p in res}
    want = k(AGES)
    for a, w in zip(AGES, want):
        assert got[float(a)] == pytest.approx(w, abs=1e-6), (spec, a)
    client.close()


@pytest.mark.pg
@pytest.mark.parametrize("spec", SPECS)
def test_sql_matches_kernel(spec: str, pg) -> None:  # noqa: ANN001
    """PostgreSQL evaluates the rendered SQL over a column."""
    psycopg = pytest.importorskip("psycopg")
    k = get_kernel(spec)
    sql = cx.to_sql(cx.kernel_expr(k, cx.Var("age")), {"age": "a"})
    with psycopg.connect(pg.dsn) as conn:
        rows = conn.execute(f"SELECT a, {sql} FROM unnest(%s::float8[]) AS a", (AGES.tolist(),)).fetchall()
    got = np.array([r[1] for r in rows])
    np.testing.assert_allclose(got, k(AGES), rtol=0, atol=1e-9)


@pytest.mark.pg
@pytest.mark.parametrize("strategy", ["gated_multiply", "multiply"])
def test_sql_matches_fusion(strategy: str, pg) -> None:  # noqa: ANN001
    psycopg = pytest.importorskip("psycopg")
    sql = cx.to_sql(combine_expr(cx.Var("sim"), cx.Var("w"), strategy, 0.4), {"sim": "s", "w": "w"})
    with psycopg.connect(pg.dsn) as conn:
        rows = conn.execute(f"SELECT {sql} FROM unnest(%s::float8[], %s::float8[]) AS t(s, w)",
                            (SIM.tolist(), DECAY.tolist())).fetchall()
    np.testing.assert_allclose([r[0] for r in rows], combine(SIM, DECAY, strategy, 0.4), rtol=0, atol=1e-12)
