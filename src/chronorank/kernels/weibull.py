"""Weibull (stretched exponential) decay: ``shape`` < 1 gives a heavy tail, > 1 a shoulder."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

from chronorank import expr as ex
from chronorank.kernels.base import BaseKernel, check_number


@dataclass(frozen=True, repr=False)
class Weibull(BaseKernel):
    """``r(age) = exp(-(age / scale) ** shape)`` with ``scale = half_life_days / ln(1 / r_h) ** (1 / shape)``.

    ``shape = 1`` is the exponential kernel. ``r_h`` is the raw value at the half-life
    (0.5 without a floor).
    """

    name: ClassVar[str] = "weibull"
    raw_in_unit_range: ClassVar[bool] = True

    half_life_days: float = 180.0
    shape: float = 2.0

    def _check(self) -> None:
        self._set("half_life_days", check_number(self.name, "half_life_days", self.half_life_days, low=0.0, low_open=True))
        self._set("shape", check_number(self.name, "shape", self.shape, low=0.01, high=100.0))

    @property
    def scale(self) -> float:
        """Scale in days (the age where r = 1/e)."""
        return self.half_life_days / math.log(1.0 / self.target_raw) ** (1.0 / self.shape)

    def expr(self, age: ex.Expr) -> ex.Expr:
        return ex.exp(ex.neg(ex.power(ex.div(age, self.scale), self.shape)))
