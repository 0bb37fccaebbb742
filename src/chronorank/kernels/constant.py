"""No decay: the baseline every comparison needs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from chronorank import expr as ex
from chronorank.kernels.base import BaseKernel


@dataclass(frozen=True, repr=False)
class Constant(BaseKernel):
    """``r(age) = 1``: every dated document weighs 1 (NaN ages still give NaN)."""

    name: ClassVar[str] = "constant"

    def half_life(self) -> float | None:
        return None

    def expr(self, age: ex.Expr) -> ex.Expr:
        return ex.Const(1.0)
