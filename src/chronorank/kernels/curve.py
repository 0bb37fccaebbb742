"""Render a kernel: an ASCII table with bars, or a matplotlib plot."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from chronorank.errors import InvalidInput, require
from chronorank.kernels.registry import get_kernel

__all__ = ["ascii_curve", "default_ages", "plot_kernel"]

_FALLBACK_AGES = (0.0, 7.0, 30.0, 90.0, 180.0, 365.0, 730.0, 1460.0)


def _kernel(kernel: Any) -> Any:
    return get_kernel(kernel)


def _nice(x: float) -> float:
    """Round to 3 significant digits so default ages print cleanly."""
    if x <= 0:
        return 0.0
    return float(f"{x:.4g}")


def default_ages(kernel: Any, max_age_days: float | None = None) -> np.ndarray:
    """Ages that show the shape: around the half-life, including the half-life itself."""
    hl = kernel.half_life()
    peak = getattr(kernel, "peak_days", None)
    extra = [hl] if hl is not None else []
    if peak:
        extra += [float(peak) / 2, float(peak)]
    if max_age_days is not None:
        if not (isinstance(max_age_days, (int, float)) and math.isfinite(max_age_days) and max_age_days > 0):
            raise InvalidInput(f"max_age_days={max_age_days!r} must be a positive number of days, e.g. 365")
        ages = np.linspace(0.0, float(max_age_days), 11)
        extra = [e for e in extra if e <= max_age_days]
    elif hl is not None and hl > 0:
        ages = np.array([0, 0.25, 0.5, 0.75, 1.25, 1.5, 2, 3, 4, 6], dtype=np.float64) * hl
        ages = np.array([_nice(a) for a in ages])
    else:
        ages = np.array(_FALLBACK_AGES)
    return np.unique(np.concatenate([ages, np.asarray(extra, dtype=np.float64)]))


def ascii_curve(kernel: Any, width: int = 50, ages: Sequence[float] | np.ndarray | None = None,
                max_age_days: float | None = None) -> str:
    """A header (spec and half-life) and one row per age: age, weight and a bar.

    ``kernel`` is anything :func:`~chronorank.kernels.get_kernel` accepts. The half-life row
    is marked. ``width`` is the bar length at weight 1.
    """
    k = _kernel(kernel)
    if isinstance(width, bool) or not isinstance(width, int) or not 1 <= width <= 1000:
        raise InvalidInput(f"width={width!r} must be an integer in [1, 1000], e.g. 50")
    if ages is None:
        a = default_ages(k, max_age_days)
    else:
        a = np.asarray(ages, dtype=np.float64)
        if a.ndim != 1 or a.size == 0 or not np.isfinite(a).all():
            raise InvalidInput(f"ages must be a non-empty list of finite day counts, got {ages!r}")
    w = np.asarray(k(a), dtype=np.float64)
    hl = k.half_life()
    hl_text = f"half-life={hl:g} days" if hl is not None else "half-life=none"
    lines = [f"{k!r}  {hl_text}", f"{'age (days)':>12}  {'weight':>7}"]
    for age, weight in zip(a, w):
        bar = "#" * int(round(float(weight) * width))
        mark = "  <- half-life" if hl is not None and math.isclose(age, hl, rel_tol=1e-9, abs_tol=1e-9) else ""
        lines.append(f"{age:>12.6g}  {weight:>7.4f}  {bar}{mark}")
    return "\n".join(lines)


def plot_kernel(kernel_or_list: Any, path: str | Path, max_age_days: float | None = None,
                doc_ages: Sequence[float] | np.ndarray | None = None) -> Path:
    """Plot one kernel or several to ``path`` (PNG, SVG, PDF by extension) with matplotlib.

    Half-lives are marked; ``doc_ages`` are drawn as points on the first kernel's curve.
    Needs the ``plot`` extra. Uses the Agg canvas directly, so the global matplotlib backend
    is left untouched. Returns the written path.
    """
    require("matplotlib", extra="plot")
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    items = kernel_or_list if isinstance(kernel_or_list, (list, tuple)) else [kernel_or_list]
    kernels = [_kernel(k) for k in items]
    if not kernels:
        raise InvalidInput("plot_kernel needs at least one kernel")
    if max_age_days is None:
        hls = [k.half_life() for k in kernels if k.half_life() is not None]
        max_age_days = 4.0 * max(hls) if hls else 730.0
    elif not (isinstance(max_age_days, (int, float)) and math.isfinite(max_age_days) and max_age_days > 0):
        raise InvalidInput(f"max_age_days={max_age_days!r} must be a positive number of days, e.g. 365")
    x = np.linspace(0.0, float(max_age_days), 600)
    fig = Figure(figsize=(7, 4), dpi=110)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    for k in kernels:
        (line,) = ax.plot(x, k(x), label=repr(k))
        hl = k.half_life()
        if hl is not None and hl <= max_age_days:
            ax.axvline(hl, color=line.get_color(), linestyle=":", linewidth=1)
    if doc_ages is not None:
        d = np.asarray(doc_ages, dtype=np.float64)
        ax.scatter(d, kernels[0](d), color="black", s=14, zorder=3, label="documents")
    ax.axhline(0.5, color="grey", linewidth=0.6)
    ax.set_xlabel("age (days)")
    ax.set_ylabel("weight")
    ax.set_ylim(-0.02, 1.05)
    ax.set_xlim(0, float(max_age_days))
    ax.legend(fontsize=8)
    ax.set_title("decay kernels" if len(kernels) > 1 else repr(kernels[0]), fontsize=9)
    fig.tight_layout()
    out = Path(path)
    fig.savefig(out)
    return out
