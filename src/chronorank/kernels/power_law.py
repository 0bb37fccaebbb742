"""Power-law (hyperbolic) decay: a heavy tail, old documents keep some weight."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

from chronorank import expr as ex
from chronorank.errors import InvalidInput
from chronorank.kernels.base import BaseKernel, check_number


@dataclass(frozen=True, repr=False)
class PowerLaw(BaseKernel):
    """``r(age) = (1 + age / scale) ** -beta`` with ``scale = half_life_days / (r_h ** (-1 / beta) - 1)``.

    ``r_h`` is the raw value at the half-life (0.5 without a floor). Larger ``beta`` gives a
    faster fall after the half-life and a thinner tail.
    """

    name: ClassVar[str] = "power_law"
    raw_in_unit_range: ClassVar[bool] = True

    half_life_days: float = 180.0
    beta: float = 1.0

    def _check(self) -> None:
        self._set("half_life_days", check_number(self.name, "half_life_days", self.half_life_days, low=0.0, low_open=True))
        self._set("beta", check_number(self.name, "beta", self.beta, low=0.01, high=100.0))
        scale = self.scale
        if not (math.isfinite(scale) and scale > 0):
            raise InvalidInput(
                f"power_law: beta={self.beta:g} with floor={self.floor:g} has no finite scale; "
                "raise beta or move the floor away from 0.5"
            )

    @property
    def scale(self) -> float:
        """Scale in days ``c`` of ``(1 + age / c) ** -beta``."""
        try:
            denom = math.expm1(math.log(1.0 / self.target_raw) / self.beta)
        except OverflowError:
            return 0.0
        return self.half_life_days / denom

    def expr(self, age: ex.Expr) -> ex.Expr:
        # (1 + age / scale) ** -beta, through log1p: exact for young documents
        return ex.exp(ex.mul(-self.beta, ex.log1p(ex.div(age, self.scale))))
