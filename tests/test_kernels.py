"""Decay kernels: values, half-lives, floors, registry, repr round trip, rendering."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chronorank.errors import InvalidInput, MissingDependency
from chronorank.kernels import (
    KERNELS,
    CallableKernel,
    Cliff,
    Constant,
    DelayedPeak,
    Exponential,
    Gaussian,
    Linear,
    Piecewise,
    PowerLaw,
    Weibull,
    ascii_curve,
    get_kernel,
    plot_kernel,
    register_kernel,
)
from chronorank.kernels.base import BaseKernel

# ---------------------------------------------------------------- closed forms


def test_exponential_formula():
    k = Exponential(half_life_days=30)
    assert k(60) == pytest.approx(0.25)
    assert k.rate == pytest.approx(math.log(2) / 30)


def test_weibull_formula():
    k = Weibull(half_life_days=90, shape=2)
    scale = 90 / math.log(2) ** 0.5
    assert k.scale == pytest.approx(scale)
    assert k(45) == pytest.approx(math.exp(-((45 / scale) ** 2)))


def test_power_law_formula():
    k = PowerLaw(half_life_days=180, beta=1)
    # beta=1: c = h / (2 - 1) = h
    assert k.scale == pytest.approx(180)
    assert k(540) == pytest.approx((1 + 540 / 180) ** -1)


def test_gaussian_formula():
    k = Gaussian(half_life_days=30)
    sigma = 30 / math.sqrt(2 * math.log(2))
    assert k(60) == pytest.approx(math.exp(-0.5 * (60 / sigma) ** 2))


def test_cliff_is_one_at_zero_and_sharp():
    k = Cliff(half_life_days=90, steepness=12)
    assert k(0) == pytest.approx(1.0)
    assert k(90) == pytest.approx(0.5, abs=1e-12)
    assert k(60) > 0.95 and k(120) < 0.05


def test_linear_formula_and_half_life():
    k = Linear(zero_at=100)
    assert k(25) == pytest.approx(0.75)
    assert k(150) == 0.0
    assert k.half_life() == pytest.approx(50)


def test_piecewise_reproduces_the_article():
    # 1.0 below 30 days, linear to 0.3 at 180, 0.3 after (the article's code)
    k = get_kernel("piecewise(points=[(0, 1.0), (30, 1.0), (180, 0.3)])")
    ages = np.array([0, 10, 30, 105, 180, 400])
    expected = [1.0, 1.0, 1.0, 1.0 - (105 - 30) * 0.7 / 150, 0.3, 0.3]
    np.testing.assert_allclose(k(ages), expected)
    assert k.half_life() == pytest.approx(30 + 0.5 / 0.7 * 150)
    assert Piecewise() == k  # the article's curve is the default


def test_piecewise_after_step():
    k = Piecewise(points=[(0, 1), (30, 1), (180, 0.3)], after=0.1)
    np.testing.assert_allclose(k([180, 181]), [0.3, 0.1])


def test_piecewise_half_life_none_when_jumping_over_half():
    k = Piecewise(points=[(0, 1), (100, 0.8)], after=0.1)
    assert k.half_life() is None


@pytest.mark.parametrize(
    "points, fragment",
    [
        ([], "non-empty"),
        ([(0, 1), (0, 0.5)], "increase strictly"),
        ([(0, 0.5), (10, 0.9)], "must not increase"),
        ([(0, 1.5)], "out of range"),
        ([(0, 1, 2)], "pair"),
        ("0,1", "non-empty list"),
    ],
)
def test_piecewise_validation(points, fragment):
    with pytest.raises(InvalidInput, match=fragment):
        Piecewise(points=points)


def test_delayed_peak_rises_then_decays():
    k = DelayedPeak(peak_days=10, shape=2, half_life_days=40)
    assert k(0) == 0.0
    assert k(5) == pytest.approx(0.25)
    assert k(10) == pytest.approx(1.0)
    assert k(40) == pytest.approx(0.5)
    assert k(20) > k(40) > k(80)


def test_delayed_peak_needs_half_life_after_peak():
    with pytest.raises(InvalidInput, match="greater than"):
        DelayedPeak(peak_days=30, half_life_days=20)


def test_constant():
    k = Constant()
    np.testing.assert_array_equal(k([0, 1e6]), [1.0, 1.0])
    assert k.half_life() is None


# ---------------------------------------------------------------- conventions


def test_nan_in_nan_out_and_negative_ages_are_zero():
    k = Exponential(half_life_days=10)
    out = k([np.nan, -5.0, 0.0, 10.0])
    assert np.isnan(out[0])
    np.testing.assert_allclose(out[1:], [1.0, 1.0, 0.5])
    assert out.dtype == np.float64


@settings(max_examples=60, deadline=None)
@given(
    hl=st.floats(1e-3, 1e5),
    shape=st.floats(0.2, 5.0),
    floor=st.sampled_from([0.0, 0.1, 0.3, 0.7]),
    ages=st.lists(st.one_of(st.floats(0.0, 1e12), st.just(math.inf), st.just(math.nan)), min_size=1, max_size=30),
)
def test_kernels_that_skip_the_clip_keep_the_range_and_nan(hl, shape, floor, ages):
    """A kernel with raw_in_unit_range=True skips the clip and the NaN mask in __call__:
    its raw decay must land in [0, 1] and carry NaN through on its own."""
    claimed = [c for c in (Exponential, Gaussian, PowerLaw, Weibull, Linear, Cliff, Constant, DelayedPeak)
               if c.raw_in_unit_range]
    assert {Exponential, Gaussian, PowerLaw, Weibull} <= set(claimed)
    a = np.array(ages)
    for cls in claimed:
        k = cls(half_life_days=hl, shape=shape, floor=floor) if cls is Weibull else cls(half_life_days=hl, floor=floor)
        raw = k._raw(a)
        nan = np.isnan(a)
        assert np.array_equal(np.isnan(raw), nan), cls
        assert ((raw[~nan] >= 0.0) & (raw[~nan] <= 1.0)).all(), cls
        w = k(a)
        assert ((w[~nan] >= floor) & (w[~nan] <= 1.0)).all(), cls


def test_scalars_lists_and_arrays():
    k = Exponential(half_life_days=10)
    assert float(k(10)) == pytest.approx(0.5)
    assert k([10, 20]).shape == (2,)
    assert k(np.zeros((2, 3))).shape == (2, 3)


def test_non_numeric_ages_rejected():
    with pytest.raises(InvalidInput, match="age_days"):
        Exponential()(["a year"])


def test_floor_below_half_keeps_the_real_half_life():
    k = Exponential(half_life_days=30, floor=0.2)
    assert k(30) == pytest.approx(0.5, abs=1e-12)
    assert k(1e9) == pytest.approx(0.2)


def test_floor_above_half_means_halfway_to_the_floor():
    k = Exponential(half_life_days=30, floor=0.6)
    assert k(30) == pytest.approx(0.6 + 0.4 / 2)
    assert k.half_life() == 30


@pytest.mark.parametrize(
    "factory, params, fragment",
    [
        (Exponential, {"half_life_days": 0}, "half_life_days=0"),
        (Exponential, {"half_life_days": -1}, "half_life_days=-1"),
        (Exponential, {"half_life_days": float("nan")}, "half_life_days=nan"),
        (Exponential, {"half_life_days": "30"}, "must be a number"),
        (Exponential, {"half_life_days": True}, "must be a number"),
        (Exponential, {"floor": 1.0}, "floor=1.0"),
        (Weibull, {"shape": 0}, "shape=0"),
        (PowerLaw, {"beta": -1}, "beta=-1"),
        (Cliff, {"steepness": 0}, "steepness=0"),
        (Linear, {"zero_at": 0}, "zero_at=0"),
    ],
)
def test_parameter_errors_name_param_value_and_range(factory, params, fragment):
    with pytest.raises(InvalidInput, match="expected|must be") as err:
        factory(**params)
    assert fragment in str(err.value)


def test_describe_gives_formula_and_half_life():
    text = Weibull(half_life_days=90, shape=2).describe()
    assert "weibull(half_life_days=90, shape=2)" in text
    assert "exp(-(age /" in text and "half-life 90" in text


# ---------------------------------------------------------------- registry


def test_default_kernel():
    assert get_kernel() == Exponential(half_life_days=180)
    assert get_kernel(None, half_life_days=7) == Exponential(half_life_days=7)


@pytest.mark.parametrize(
    "alias, cls",
    [
        ("exp", Exponential),
        ("powerlaw", PowerLaw),
        ("power", PowerLaw),
        ("logistic", Cliff),
        ("flat", Constant),
        ("none", Constant),
        ("gauss", Gaussian),
        ("piecewise_linear", Piecewise),
        ("delayed", DelayedPeak),
        ("POWER_LAW", PowerLaw),
    ],
)
def test_aliases(alias, cls):
    assert type(get_kernel(alias)) is cls


def test_spec_name_plus_params_and_overrides():
    assert get_kernel("weibull", half_life_days=90, shape=2) == Weibull(90, 2)
    assert get_kernel("weibull(half_life_days=90, shape=2)", shape=3) == Weibull(90, 3)
    assert get_kernel({"name": "exp", "half_life_days": 5}) == Exponential(5)


def test_instance_returned_as_is_or_replaced():
    k = Exponential(30)
    assert get_kernel(k) is k
    assert get_kernel(k, floor=0.1) == Exponential(30, floor=0.1)


def test_callable_wrapped():
    k = get_kernel(lambda a: np.exp(-a / 10))
    assert isinstance(k, CallableKernel)
    assert float(k(10)) == pytest.approx(math.exp(-1))


def test_piecewise_refuses_a_step_no_age_can_land_inside():
    with pytest.raises(InvalidInput, match=r"points\[1\] age 4.94066e-324 is within 1e-09 days of points\[0\]"):
        Piecewise(points=[(0, 1), (5e-324, 0)])


def test_unknown_kernel_lists_known_names():
    with pytest.raises(InvalidInput) as err:
        get_kernel("expontial")
    msg = str(err.value)
    assert "'expontial'" in msg and "exponential" in msg and "weibull" in msg and "piecewise" in msg


def test_unknown_parameter_is_named():
    with pytest.raises(InvalidInput) as err:
        get_kernel("weibull(half_life=90)")
    msg = str(err.value)
    assert "'half_life'" in msg and "half_life_days" in msg and "shape" in msg


def test_bad_kernel_argument():
    with pytest.raises(InvalidInput, match="spec string"):
        get_kernel(42)


def test_register_kernel():
    from dataclasses import dataclass
    from typing import ClassVar

    from chronorank.kernels.registry import ALIASES

    @dataclass(frozen=True, repr=False)
    class Halving(BaseKernel):
        name: ClassVar[str] = "halving_test"
        every_days: float = 10.0

        def _raw(self, age):
            return 0.5 ** np.floor(age / self.every_days)

        def formula(self):
            return f"0.5 ** floor(age / {self.every_days:g})"

    try:
        register_kernel("halving_test", Halving, aliases=("halves_test",))
        k = get_kernel("halves_test(every_days=5)")
        assert float(k(11)) == 0.25
        assert get_kernel(repr(k)) == k
        with pytest.raises(InvalidInput, match="already registered"):
            register_kernel("exponential", Halving)
    finally:
        KERNELS.pop("halving_test", None)
        ALIASES.pop("halves_test", None)


# ---------------------------------------------------------------- callable kernel


def test_callable_kernel_checks_range_and_shape():
    with pytest.raises(InvalidInput, match="in \\[0, 1\\]"):
        CallableKernel(lambda a: a + 2)([1.0, 2.0])
    with pytest.raises(InvalidInput, match="shape"):
        CallableKernel(lambda a: np.ones(3))([1.0, 2.0])
    with pytest.raises(InvalidInput, match="not callable"):
        CallableKernel(5)  # type: ignore[arg-type]


def test_callable_kernel_floor_and_nan():
    k = CallableKernel(lambda a: np.zeros_like(a), floor=0.25)
    out = k([np.nan, 3.0])
    assert np.isnan(out[0]) and out[1] == 0.25


# ---------------------------------------------------------------- properties

half_lives = st.floats(0.5, 5000)
floors_low = st.floats(0.0, 0.45)
floors_any = floors_low | st.floats(0.5, 0.95)


@st.composite
def kernels(draw, floor=floors_any, with_delayed=True):
    floor_v = draw(floor)
    h = draw(half_lives)
    choices = ["exponential", "weibull", "power_law", "cliff", "linear", "gaussian", "piecewise", "constant"]
    if with_delayed:
        choices.append("delayed_peak")
    name = draw(st.sampled_from(choices))
    if name == "exponential":
        return Exponential(h, floor=floor_v)
    if name == "weibull":
        return Weibull(h, draw(st.floats(0.1, 20)), floor=floor_v)
    if name == "power_law":
        return PowerLaw(h, draw(st.floats(0.1, 20)), floor=floor_v)
    if name == "cliff":
        return Cliff(h, draw(st.floats(0.1, 200)), floor=floor_v)
    if name == "linear":
        return Linear(2 * h, floor=floor_v)
    if name == "gaussian":
        return Gaussian(h, floor=floor_v)
    if name == "delayed_peak":
        peak = draw(st.floats(0.0, 0.9)) * h
        return DelayedPeak(peak, draw(st.floats(0.2, 10)), h, floor=floor_v)
    if name == "piecewise":
        n = draw(st.integers(1, 5))
        xs = []
        for x in sorted(set(draw(st.lists(st.floats(0, 2000), min_size=n, max_size=n)))):
            if not xs or x - xs[-1] >= 1e-9:  # Piecewise refuses finer steps (MIN_STEP_DAYS)
                xs.append(x)
        ys = sorted(draw(st.lists(st.floats(0, 1), min_size=len(xs), max_size=len(xs))), reverse=True)
        return Piecewise(points=list(zip(xs, ys)), floor=floor_v)
    return Constant(floor=floor_v)


ages = st.lists(st.floats(-100, 1e5, allow_nan=False), min_size=1, max_size=50)


@given(kernels(), ages)
def test_range_is_floor_to_one(k, a):
    w = k(np.array(a))
    assert np.all(w >= k.floor) and np.all(w <= 1.0)


@given(kernels(with_delayed=False), ages)
def test_non_increasing_with_age(k, a):
    w = k(np.sort(np.array(a)))
    assert np.all(np.diff(w) <= 1e-12)


@given(kernels(floor=floors_low))
def test_weight_at_half_life_is_one_half(k):
    hl = k.half_life()
    if hl is not None:
        assert abs(float(k(hl)) - 0.5) <= 1e-6


@given(kernels(floor=st.floats(0.5, 0.95)))
def test_high_floor_half_life_is_halfway(k):
    hl = k.half_life()
    if hl is not None and not isinstance(k, Piecewise):
        assert float(k(hl)) == pytest.approx(k.floor + (1 - k.floor) / 2, abs=1e-6)


@given(kernels(), st.floats(1e4, 1e6))
def test_floor_is_the_limit(k, half_lives_old):
    hl = k.half_life()
    w = float(k(half_lives_old * (hl or 1.0)))
    assert w >= k.floor
    if isinstance(k, (Exponential, Gaussian, Linear, Cliff)):
        assert w == pytest.approx(k.floor, abs=1e-6)


@given(kernels())
def test_repr_round_trips(k):
    again = get_kernel(repr(k))
    assert type(again) is type(k)
    probe = np.array([0.0, 1.0, 10.0, 100.0, 1000.0])
    np.testing.assert_allclose(again(probe), k(probe), rtol=1e-12, atol=1e-15)


@settings(max_examples=30)
@given(kernels())
def test_ascii_curve_marks_half_life(k):
    text = ascii_curve(k)
    assert text.splitlines()[0].startswith(repr(k))
    if k.half_life() is not None:
        assert "<- half-life" in text


# ---------------------------------------------------------------- rendering


def test_ascii_curve_rows():
    text = ascii_curve("exponential(half_life_days=10)", width=10, ages=[0, 10, 20])
    lines = text.splitlines()
    assert lines[0] == "exponential(half_life_days=10)  half-life=10 days"
    assert lines[2].endswith("1.0000  ##########")
    assert lines[3].endswith("0.5000  #####  <- half-life")
    assert lines[4].endswith("0.2500  ##")


def test_ascii_curve_bad_width():
    with pytest.raises(InvalidInput, match="width"):
        ascii_curve("exp", width=0)


def test_plot_kernel_writes_png(tmp_path):
    pytest.importorskip("matplotlib")
    out = plot_kernel(["exp(half_life_days=30)", "cliff(half_life_days=60)"], tmp_path / "k.png", doc_ages=[5, 50])
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_plot_kernel_without_matplotlib(monkeypatch, tmp_path):
    import builtins

    real_import = builtins.__import__

    def fake_import(name, *args, **kwargs):
        if name == "matplotlib" or name.startswith("matplotlib."):
            raise ImportError("no matplotlib")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", fake_import)
    import sys

    for mod in [m for m in sys.modules if m == "matplotlib" or m.startswith("matplotlib.")]:
        monkeypatch.delitem(sys.modules, mod)
    with pytest.raises(MissingDependency, match=r'chronorank\[plot\]'):
        plot_kernel("exp", tmp_path / "k.png")
