"""Linear decay to zero at ``zero_at`` days."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from chronorank import expr as ex
from chronorank.kernels.base import BaseKernel, check_number


@dataclass(frozen=True, repr=False)
class Linear(BaseKernel):
    """``r(age) = max(0, 1 - age / zero_at)``.

    Parameterised by where it reaches the floor rather than by its half-life:
    ``half_life() = zero_at * (1 - r_h)``, i.e. ``zero_at / 2`` without a floor (and for
    floors >= 0.5, where it is the age at which r = 0.5).
    """

    name: ClassVar[str] = "linear"

    zero_at: float = 360.0

    def _check(self) -> None:
        self._set("zero_at", check_number(self.name, "zero_at", self.zero_at, low=0.0, low_open=True))

    def half_life(self) -> float | None:
        return self.zero_at * (1.0 - self.target_raw)

    def expr(self, age: ex.Expr) -> ex.Expr:
        return ex.maximum(0.0, ex.sub(1.0, ex.div(age, self.zero_at)))
