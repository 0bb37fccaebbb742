"""Piecewise-linear decay through (age, weight) points."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from chronorank import expr as ex
from chronorank.errors import InvalidInput
from chronorank.kernels.base import BaseKernel, check_number

ARTICLE_POINTS: tuple[tuple[float, float], ...] = ((0.0, 1.0), (30.0, 1.0), (180.0, 0.3))


MIN_STEP_DAYS = 1e-9  # ~0.1 ms: finer steps lose the half-life to rounding


def _points(value: Any) -> tuple[tuple[float, float], ...]:
    example = "points=[(0, 1), (30, 1), (180, 0.3)]"
    if isinstance(value, (str, bytes)) or not isinstance(value, (Sequence, np.ndarray)) or len(value) == 0:
        raise InvalidInput(f"piecewise: points={value!r} must be a non-empty list of (age_days, weight) pairs, e.g. {example}")
    out = []
    for i, pair in enumerate(value):
        if isinstance(pair, (str, bytes)) or not isinstance(pair, (Sequence, np.ndarray)) or len(pair) != 2:
            raise InvalidInput(f"piecewise: points[{i}]={pair!r} must be an (age_days, weight) pair, e.g. {example}")
        age = check_number("piecewise", f"points[{i}] age", pair[0], low=0.0)
        weight = check_number("piecewise", f"points[{i}] weight", pair[1], low=0.0, high=1.0)
        out.append((age, weight))
    for i in range(1, len(out)):
        if out[i][0] <= out[i - 1][0]:
            raise InvalidInput(
                f"piecewise: point ages must increase strictly, but points[{i}] age {out[i][0]:g} "
                f"follows {out[i - 1][0]:g}; sort the points by age"
            )
        if out[i][0] - out[i - 1][0] < MIN_STEP_DAYS:  # a step no float age can land inside
            raise InvalidInput(
                f"piecewise: points[{i}] age {out[i][0]:g} is within {MIN_STEP_DAYS:g} days of points[{i - 1}] "
                f"age {out[i - 1][0]:g}; space the points further apart (a vertical drop is two points "
                "a second apart, e.g. (30, 1), (30.00001, 0.2))"
            )
        if out[i][1] > out[i - 1][1]:
            raise InvalidInput(
                f"piecewise: weights must not increase with age, but points[{i}] weight {out[i][1]:g} "
                f"exceeds {out[i - 1][1]:g}; use delayed_peak or a callable for rising curves"
            )
    return tuple(out)


@dataclass(frozen=True, repr=False)
class Piecewise(BaseKernel):
    """Linear interpolation between ``(age_days, weight)`` points.

    ``r(age)`` is ``weight[0]`` before the first point, linear between points, and constant
    after the last point: the last weight, or ``after`` when given (a step down past the last
    point). The default is the reference article's curve: 1.0 up to 30 days, linear down to
    0.3 at 180 days, 0.3 after (``after=0.1`` gives the article's text version, 0.1 past 180 days).

    ``half_life()`` is where the weight crosses 0.5 on the interpolated curve, or None when
    it never does (or jumps over 0.5 at the ``after`` step).
    """

    name: ClassVar[str] = "piecewise"

    points: tuple[tuple[float, float], ...] = ARTICLE_POINTS
    after: float | None = None

    def _check(self) -> None:
        self._set("points", _points(self.points))
        if self.after is not None:
            last = self.points[-1][1]
            self._set("after", check_number(self.name, "after", self.after, low=0.0, high=last))

    @property
    def ages(self) -> np.ndarray:
        return np.array([p[0] for p in self.points], dtype=np.float64)

    @property
    def weights(self) -> np.ndarray:
        return np.array([p[1] for p in self.points], dtype=np.float64)

    @property
    def params(self) -> dict[str, Any]:
        out: dict[str, Any] = {"points": [tuple(p) for p in self.points]}
        if self.after is not None:
            out["after"] = self.after
        out["floor"] = self.floor
        return out

    def expr(self, age: ex.Expr) -> ex.Expr:
        curve = ex.interp(age, self.points)
        if self.after is None:
            return curve
        return ex.where(ex.gt(age, self.points[-1][0]), self.after, curve)

    def half_life(self) -> float | None:
        r = self.target_raw
        pts = self.points
        if pts[0][1] < r:
            return None
        for (x0, y0), (x1, y1) in zip(pts, pts[1:]):
            if y0 == r:
                return x0
            if y0 > r >= y1:
                return x0 + (y0 - r) / (y0 - y1) * (x1 - x0)
        if pts[-1][1] == r:
            return pts[-1][0]
        return None
