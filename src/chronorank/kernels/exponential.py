"""Exponential decay: a constant fraction of weight is lost per day."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

from chronorank import expr as ex
from chronorank.kernels.base import BaseKernel, check_number


@dataclass(frozen=True, repr=False)
class Exponential(BaseKernel):
    """``r(age) = exp(-rate * age)`` with ``rate = ln(1 / r_h) / half_life_days``.

    ``r_h`` is the raw value solved for at the half-life (0.5 without a floor, so
    ``rate = ln 2 / half_life_days``); see :mod:`chronorank.kernels.base`.
    """

    name: ClassVar[str] = "exponential"
    raw_in_unit_range: ClassVar[bool] = True

    half_life_days: float = 180.0

    def _check(self) -> None:
        self._set("half_life_days", check_number(self.name, "half_life_days", self.half_life_days, low=0.0, low_open=True))

    @property
    def rate(self) -> float:
        """Decay rate per day."""
        return math.log(1.0 / self.target_raw) / self.half_life_days

    def expr(self, age: ex.Expr) -> ex.Expr:
        return ex.exp(ex.mul(-self.rate, age))
