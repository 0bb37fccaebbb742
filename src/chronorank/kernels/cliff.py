"""Cliff: a logistic edge at the half-life, the smooth cousin of a date filter."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

from chronorank import expr as ex
from chronorank.kernels.base import BaseKernel, check_number


@dataclass(frozen=True, repr=False)
class Cliff(BaseKernel):
    """``r(age) = norm / (1 + exp(steepness * (age / midpoint - 1)))``, ``norm = 1 + exp(-steepness)``.

    ``norm`` makes ``r(0) = 1``. ``midpoint = half_life_days / (1 + ln(norm / r_h - 1) / steepness)``
    puts ``r = r_h`` exactly at the half-life (``midpoint`` is the half-life itself up to
    ``exp(-steepness)`` without a floor). Larger ``steepness`` gives a sharper edge: the weight
    falls from ~1 to ~0 over about ``4 / steepness`` half-lives.
    """

    name: ClassVar[str] = "cliff"

    half_life_days: float = 180.0
    steepness: float = 10.0

    def _check(self) -> None:
        self._set("half_life_days", check_number(self.name, "half_life_days", self.half_life_days, low=0.0, low_open=True))
        self._set("steepness", check_number(self.name, "steepness", self.steepness, low=0.0, high=1000.0, low_open=True))

    @property
    def norm(self) -> float:
        """``1 + exp(-steepness)``, the factor that makes the weight 1 at age 0."""
        return 1.0 + math.exp(-self.steepness)

    @property
    def midpoint(self) -> float:
        """Centre of the logistic in days."""
        return self.half_life_days / (1.0 + math.log(self.norm / self.target_raw - 1.0) / self.steepness)

    def expr(self, age: ex.Expr) -> ex.Expr:
        x = ex.mul(self.steepness, ex.sub(ex.div(age, self.midpoint), 1.0))
        # norm / (1 + e^x), computed in log space so large x does not overflow
        return ex.exp(ex.sub(math.log(self.norm), ex.softplus(x)))
