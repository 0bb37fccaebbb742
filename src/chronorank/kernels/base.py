"""The kernel protocol and the shared machinery of the built-in kernels.

A kernel maps document age in days to a weight in ``[floor, 1]``. Every built-in kernel
computes a *raw* decay ``r(age)`` in ``[0, 1]`` and returns

    weight = floor + (1 - floor) * r(age)

so the weight never falls below ``floor``. Ages are treated as ``max(age, 0)`` (a
document dated in the future counts as brand new; future-date policies live in the
reranker), and NaN ages give NaN weights.

Half-life convention. ``half_life_days`` is the real half-life of the *output*:

* ``floor < 0.5``: the weight is exactly 0.5 at ``half_life_days``. Each kernel solves its
  constants so that ``r(half_life_days) = (0.5 - floor) / (1 - floor)``.
* ``floor >= 0.5``: the weight can never reach 0.5, so ``half_life_days`` is the age at
  which the decaying part is halved, ``r(half_life_days) = 0.5``; the weight there is
  ``floor + (1 - floor) / 2``, halfway between 1 and the floor.

Each built-in kernel writes ``r(age)`` once, as an expression (:meth:`BaseKernel.expr`, in
:mod:`chronorank.expr`): numpy evaluates it for every call, ``formula()`` prints it, and the
stores render it to SQL and Qdrant formulas (:mod:`chronorank.stores.compile`). Derived
constants (``rate``, ``scale``, ...) are exposed as properties for the JavaScript port.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol, runtime_checkable

import numpy as np

from chronorank import expr as ex
from chronorank.errors import InvalidInput
from chronorank.spec import format_spec

__all__ = ["AGE", "ArrayLike", "BaseKernel", "Kernel", "as_ages", "check_number", "compiles"]

#: the input of a kernel's expression: age in days, already >= 0 (NaN stays NaN)
AGE = ex.Var("age", None)

ArrayLike = float | int | Sequence[float] | np.ndarray


@runtime_checkable
class Kernel(Protocol):
    """Anything that maps ages in days to weights in ``[floor, 1]``, vectorised."""

    @property
    def name(self) -> str: ...

    @property
    def floor(self) -> float: ...

    def __call__(self, age_days: ArrayLike) -> np.ndarray: ...

    def half_life(self) -> float | None: ...

    def describe(self) -> str: ...


def as_ages(age_days: Any) -> np.ndarray:
    """``age_days`` as a float64 array (scalars give a 0-d array); InvalidInput otherwise."""
    try:
        return np.asarray(age_days, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        shown = repr(age_days)
        shown = shown if len(shown) <= 80 else shown[:80] + "..."
        raise InvalidInput(
            f"age_days must be a number or an array of numbers (days), got {shown}; "
            "convert dates to ages with (now - t) / 86400 first"
        ) from exc


def _range_text(low: float | None, high: float | None, low_open: bool, high_open: bool) -> str:
    if low is not None and high is not None:
        return f"{'(' if low_open else '['}{low:g}, {high:g}{')' if high_open else ']'}"
    if low is not None:
        return f"{'>' if low_open else '>='} {low:g}"
    if high is not None:
        return f"{'<' if high_open else '<='} {high:g}"
    return "a finite number"


def check_number(
    kernel: str,
    param: str,
    value: Any,
    *,
    low: float | None = None,
    high: float | None = None,
    low_open: bool = False,
    high_open: bool = False,
) -> float:
    """``value`` as a finite float inside the range, or InvalidInput naming param and range."""
    rng = _range_text(low, high, low_open, high_open)
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise InvalidInput(
            f"{kernel}: {param}={value!r} must be a number in {rng}, "
            f"e.g. {kernel}({param}={low if low is not None and not low_open else 1:g})"
        )
    v = float(value)
    ok = math.isfinite(v)
    if ok and low is not None:
        ok = v > low if low_open else v >= low
    if ok and high is not None:
        ok = v < high if high_open else v <= high
    if not ok:
        raise InvalidInput(f"{kernel}: {param}={value!r} is out of range; expected {rng}")
    return v


def _display(value: Any) -> Any:
    """Integral floats shown as ints, so repr reads ``half_life_days=90``, not ``90.0``."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return int(value)
    if isinstance(value, (list, tuple)):
        return type(value)(_display(v) for v in value)
    return value


@dataclass(frozen=True, repr=False)
class BaseKernel:
    """Base of the built-in kernels: validation, floor, NaN handling, repr and params.

    Subclasses write the raw decay once in :meth:`expr` (numpy, ``formula()`` and the stores
    render it), and validate their own parameters in :meth:`_check`. A kernel without a closed
    form may implement :meth:`_raw` (numpy, on ages already clipped at 0) and :meth:`formula`
    instead: it then runs in the reranker, the index and fitting, and the stores need
    ``fallback='client'`` for it.
    """

    name: ClassVar[str] = "kernel"
    # True where _raw maps ages in [0, inf] into [0, 1] and NaN to NaN by itself: the call
    # then skips the clip and the NaN mask (a test holds every kernel that claims it)
    raw_in_unit_range: ClassVar[bool] = False
    # False where the expression is not rendered for the engines (the stores then need
    # fallback='client'); a kernel without an expression never is
    engine: ClassVar[bool] = True

    floor: float = field(default=0.0, kw_only=True)

    def __post_init__(self) -> None:
        self._set("floor", check_number(self.name, "floor", self.floor, low=0.0, high=1.0, high_open=True))
        self._check()

    # -- hooks ---------------------------------------------------------------------------
    def _check(self) -> None:
        """Validate and normalise parameters (use :meth:`_set` to store converted values)."""

    def expr(self, age: ex.Expr) -> ex.Expr:
        """The raw decay r(age) as an expression of ``age`` (days, >= 0), constants substituted."""
        raise NotImplementedError

    def _raw(self, age: np.ndarray) -> np.ndarray:
        out = ex.evaluate(self._raw_tree, {"age": age})
        return out if out.shape == age.shape else np.broadcast_to(out, age.shape).copy()

    def formula(self) -> str:
        """The closed form of the raw decay r(age), with the constants substituted."""
        return ex.to_text(self._raw_tree)

    @functools.cached_property
    def _raw_tree(self) -> ex.Expr:
        return self.expr(AGE)

    def weight_expr(self, age: ex.Expr) -> ex.Expr:
        """The weight ``floor + (1 - floor) * r(age)`` as an expression (``age`` >= 0)."""
        raw = self.expr(age)
        return raw if self.floor == 0.0 else ex.add(self.floor, ex.mul(1.0 - self.floor, raw))

    # -- shared --------------------------------------------------------------------------
    def _set(self, attr: str, value: Any) -> None:
        object.__setattr__(self, attr, value)

    @property
    def target_raw(self) -> float:
        """The raw value r solved for at the half-life (see the module docstring)."""
        f = self.floor
        return (0.5 - f) / (1.0 - f) if f < 0.5 else 0.5

    def __call__(self, age_days: ArrayLike) -> np.ndarray:
        a = as_ages(age_days)
        if self.raw_in_unit_range:
            with np.errstate(all="ignore"):
                out = np.asarray(self._raw(np.maximum(a, 0.0)), dtype=np.float64)
            # (the floor's affine map can round a hair above 1: the minimum keeps the range)
            return np.minimum(self.floor + (1.0 - self.floor) * out, 1.0) if self.floor else out
        nan = np.isnan(a)
        a = np.maximum(a, 0.0)
        with np.errstate(all="ignore"):
            out = np.asarray(self._raw(a), dtype=np.float64)
        if self.floor:
            out = self.floor + (1.0 - self.floor) * out
        out = np.clip(out, self.floor, 1.0)
        if nan.any():
            out = np.where(nan, np.nan, out)
        return out

    def half_life(self) -> float | None:
        """Age in days at which the weight is 0.5 (floor < 0.5; see module docstring)."""
        value = getattr(self, "half_life_days", None)
        return None if value is None else float(value)

    @property
    def params(self) -> dict[str, Any]:
        """Constructor parameters, ``floor`` last."""
        out = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name != "floor"}
        out["floor"] = self.floor
        return out

    @functools.cached_property
    def spec(self) -> str:
        """The spec string (same as ``repr``); ``get_kernel(k.spec) == k``. Kept once built:
        every search names its kernel in ``Ranking.meta`` (the parameters are frozen)."""
        shown = {k: _display(v) for k, v in self.params.items() if not (k == "floor" and v == 0)}
        return format_spec(self.name, shown)

    def __repr__(self) -> str:
        return self.spec

    def describe(self) -> str:
        """A readable summary: spec, formula with constants, floor rule and half-life."""
        hl = self.half_life()
        lines = [
            self.spec,
            f"  r(age) = {self.formula()}",
            "  weight = r(age)" if self.floor == 0 else f"  weight = {self.floor:g} + {1 - self.floor:g} * r(age)",
            f"  range [{self.floor:g}, 1]",
        ]
        if hl is None:
            lines.append("  half-life: none (the weight never crosses 0.5)")
        elif self.floor >= 0.5:
            lines.append(
                f"  half-life {hl:g} days: r = 0.5 there, weight "
                f"{self.floor + (1 - self.floor) / 2:g} (halfway to the floor {self.floor:g})"
            )
        else:
            lines.append(f"  half-life {hl:g} days: weight 0.5 at age {hl:g}")
        return "\n".join(lines)


def compiles(kernel: Any) -> bool:
    """Whether the stores can render ``kernel`` (an instance or class) for their engines:
    it writes its formula as an expression and does not opt out (``engine = False``)."""
    cls = kernel if isinstance(kernel, type) else type(kernel)
    fn = getattr(cls, "expr", None)
    if fn is None or fn is BaseKernel.expr or not callable(getattr(cls, "weight_expr", None)):
        return False
    return bool(getattr(cls, "engine", True))
