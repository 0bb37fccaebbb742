"""No decay: the baseline every comparison needs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from chronorank.kernels.base import BaseKernel


@dataclass(frozen=True, repr=False)
class Constant(BaseKernel):
    """``r(age) = 1``: every dated document weighs 1 (NaN ages still give NaN)."""

    name: ClassVar[str] = "constant"

    def half_life(self) -> float | None:
        return None

    def _raw(self, age: np.ndarray) -> np.ndarray:
        return np.ones_like(age)

    def formula(self) -> str:
        return "1"
