"""Delayed peak: weight rises to 1 at ``peak_days``, then decays exponentially."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

from chronorank import expr as ex
from chronorank.errors import InvalidInput
from chronorank.kernels.base import BaseKernel, check_number


@dataclass(frozen=True, repr=False)
class DelayedPeak(BaseKernel):
    """Rise then decay; for breaking events whose first reports are thinner than later analysis.

    ``r(age) = (age / peak_days) ** shape`` for ``age < peak_days`` and
    ``r(age) = exp(-rate * (age - peak_days))`` after, with
    ``rate = ln(1 / r_h) / (half_life_days - peak_days)``.

    ``half_life_days`` is counted from publication, like every other kernel: it is the age
    *after the peak* at which the weight has fallen back to 0.5, so it must exceed
    ``peak_days``. ``shape`` sets how fast the weight rises (1 = linear, < 1 = fast early rise).
    The weight is not monotonic; it equals the floor at age 0.
    """

    name: ClassVar[str] = "delayed_peak"
    # the switch at the peak is a test on an expression, which the engines only approximate
    # (a steep ramp): the stores keep client-side scoring for it
    engine: ClassVar[bool] = False

    peak_days: float = 7.0
    shape: float = 2.0
    half_life_days: float = 60.0

    def _check(self) -> None:
        self._set("peak_days", check_number(self.name, "peak_days", self.peak_days, low=0.0))
        self._set("shape", check_number(self.name, "shape", self.shape, low=0.0, high=100.0, low_open=True))
        self._set("half_life_days", check_number(self.name, "half_life_days", self.half_life_days, low=0.0, low_open=True))
        if self.half_life_days <= self.peak_days:
            raise InvalidInput(
                f"delayed_peak: half_life_days={self.half_life_days:g} must be greater than "
                f"peak_days={self.peak_days:g} (it is the age after the peak where the weight is 0.5); "
                f"e.g. half_life_days={max(2 * self.peak_days, 1):g}"
            )

    @property
    def rate(self) -> float:
        """Decay rate per day after the peak."""
        return math.log(1.0 / self.target_raw) / (self.half_life_days - self.peak_days)

    def expr(self, age: ex.Expr) -> ex.Expr:
        p = self.peak_days
        decay = ex.exp(ex.mul(-self.rate, ex.sub(age, p) if p else age))
        if p == 0:
            return decay
        rise = ex.power(ex.minimum(ex.div(age, p), 1.0), self.shape)
        return ex.where(ex.lt(age, p), rise, decay)

