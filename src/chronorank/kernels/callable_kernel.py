"""Wrap any vectorised callable ``age_days -> weights`` as a kernel."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from chronorank.errors import InvalidInput
from chronorank.kernels.base import ArrayLike, BaseKernel, as_ages


@dataclass(frozen=True, repr=False)
class CallableKernel(BaseKernel):
    """A user function as a kernel.

    ``fn`` is called once per batch with a float64 array of ages (clipped at 0, NaN replaced
    by 0 and restored afterwards) and must return an array of the same shape with values in
    ``[0, 1]``; anything else raises InvalidInput. Wrap scalar functions with
    ``np.vectorize``. The floor applies as for every kernel. ``half_life()`` is None: the
    function is opaque. Its repr, ``callable(fn='module.name')``, is informative only and
    does not parse back through ``get_kernel``.
    """

    name: ClassVar[str] = "callable"

    fn: Callable[[np.ndarray], Any]

    def _check(self) -> None:
        if not callable(self.fn):
            raise InvalidInput(f"callable kernel: fn={self.fn!r} is not callable; pass a function age_days -> weights")

    @property
    def params(self) -> dict[str, Any]:
        fn = self.fn
        label = f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', type(fn).__name__)}"
        return {"fn": label, "floor": self.floor}

    def half_life(self) -> float | None:
        return None

    def __call__(self, age_days: ArrayLike) -> np.ndarray:
        a = as_ages(age_days)
        nan = np.isnan(a)
        clean = np.where(nan, 0.0, np.maximum(a, 0.0))
        try:
            raw = np.asarray(self.fn(clean), dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise InvalidInput(
                f"callable kernel {self.params['fn']} failed on an array of {clean.size} ages "
                f"({type(exc).__name__}: {exc}); it must be vectorised (wrap it with np.vectorize)"
            ) from exc
        if raw.shape != clean.shape:
            raise InvalidInput(
                f"callable kernel {self.params['fn']} returned shape {raw.shape} for ages of shape "
                f"{clean.shape}; it must return one weight per age"
            )
        bad = ~((raw >= 0.0) & (raw <= 1.0))
        if bad.any():
            i = int(np.flatnonzero(bad.ravel())[0])
            raise InvalidInput(
                f"callable kernel {self.params['fn']} returned {raw.ravel()[i]!r} at age "
                f"{clean.ravel()[i]:g} days; weights must be in [0, 1] (clip them, e.g. np.clip(w, 0, 1))"
            )
        out = self.floor + (1.0 - self.floor) * raw if self.floor else raw
        if nan.any():
            out = np.where(nan, np.nan, out)
        return out

    def formula(self) -> str:
        return f"{self.params['fn']}(age)"
