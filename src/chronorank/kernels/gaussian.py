"""Gaussian decay: flat for young documents, then a fast fall."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

from chronorank import expr as ex
from chronorank.kernels.base import BaseKernel, check_number


@dataclass(frozen=True, repr=False)
class Gaussian(BaseKernel):
    """``r(age) = exp(-0.5 * (age / sigma) ** 2)`` with ``sigma = half_life_days / sqrt(2 ln(1 / r_h))``.

    ``r_h`` is the raw value at the half-life (0.5 without a floor).
    """

    name: ClassVar[str] = "gaussian"
    raw_in_unit_range: ClassVar[bool] = True

    half_life_days: float = 180.0

    def _check(self) -> None:
        self._set("half_life_days", check_number(self.name, "half_life_days", self.half_life_days, low=0.0, low_open=True))

    @property
    def sigma(self) -> float:
        """Standard deviation in days."""
        return self.half_life_days / math.sqrt(2.0 * math.log(1.0 / self.target_raw))

    def expr(self, age: ex.Expr) -> ex.Expr:
        return ex.exp(ex.mul(-0.5, ex.power(ex.div(age, self.sigma), 2.0)))
