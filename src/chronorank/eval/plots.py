"""PNG figures for benchmarks and fits (matplotlib, Agg backend; ``chronorank[plot]``)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from chronorank.errors import require
from chronorank.eval.benchmark import KERNEL_ROWS
from chronorank.eval.datasets import epoch_seconds, to_epoch
from chronorank.kernels import get_kernel

__all__ = ["plot_metric", "plot_decay_curves", "plot_strength", "benchmark_plots"]


def _plt() -> Any:
    mpl = require("matplotlib", extra="plot")
    mpl.use("Agg")
    return require("matplotlib.pyplot", extra="plot", package="matplotlib")


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def plot_metric(suite: str, rows: Mapping[str, Any], metric: str, path: str | Path) -> Path:
    """Horizontal bars: ``metric`` per configuration for one suite."""
    plt = _plt()
    labels = [k for k, v in rows.items() if "mean" in v and v["mean"].get(metric) is not None]
    values = [rows[k]["mean"][metric] for k in labels]
    fig, ax = plt.subplots(figsize=(8, 0.35 * len(labels) + 1.2))
    ax.barh(range(len(labels)), values, color="#4c72b0")
    ax.set_yticks(range(len(labels)), [lbl[:60] for lbl in labels], fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel(metric)
    ax.set_title(f"{suite}: {metric} per configuration")
    for i, v in enumerate(values):
        ax.text(v, i, f" {v:.3f}", va="center", fontsize=7)
    fig.tight_layout()
    p = Path(path)
    fig.savefig(p, dpi=110, metadata={"Software": None})
    plt.close(fig)
    return p


def plot_decay_curves(
    kernels: Sequence[str], ages: np.ndarray, path: str | Path, *, title: str = "", relevant_ages: np.ndarray | None = None
) -> Path:
    """Each kernel's weight over age, with every document drawn at its age (rug marks)."""
    plt = _plt()
    a = np.asarray(ages, dtype=np.float64)
    a = a[~np.isnan(a)]
    hi = float(np.percentile(a, 99)) if a.size else 365.0
    x = np.linspace(0.0, max(hi, 1.0), 400)
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for spec in kernels:
        k = get_kernel(spec)
        ax.plot(x, k(x), label=repr(k), lw=1.4)
    ax.plot(a, np.full(a.shape, -0.04), "|", color="0.4", ms=8, alpha=0.35, label="documents")
    if relevant_ages is not None:
        r = np.asarray(relevant_ages, dtype=np.float64)
        r = r[~np.isnan(r)]
        ax.plot(r, np.full(r.shape, -0.09), "|", color="#c44e52", ms=8, label="relevant documents")
    ax.set_xlabel("age at the reference date (days)")
    ax.set_ylabel("decay weight")
    ax.set_ylim(-0.13, 1.05)
    ax.set_title(title or "decay curves")
    ax.legend(fontsize=7, loc="upper right")
    fig.tight_layout()
    p = Path(path)
    fig.savefig(p, dpi=110, metadata={"Software": None})
    plt.close(fig)
    return p


def plot_strength(curve: Mapping[float, float], path: str | Path, *, title: str = "", metric: str = "ndcg@10") -> Path:
    plt = _plt()
    xs = list(curve)
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.plot(xs, [curve[x] for x in xs], marker="o", ms=3)
    ax.set_xlabel("strength")
    ax.set_ylabel(metric)
    ax.set_title(title or "strength sweep")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    p = Path(path)
    fig.savefig(p, dpi=110, metadata={"Software": None})
    plt.close(fig)
    return p


def benchmark_plots(result: Mapping[str, Any], suites: Mapping[str, Any], directory: str | Path, metric: str = "ndcg@10") -> list[Path]:
    """Per suite: the metric per configuration, and decay curves over the documents' ages."""
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    out = []
    for name, s in result["suites"].items():
        out.append(plot_metric(name, s["rows"], metric, d / f"{_slug(name)}-{_slug(metric)}.png"))
        suite = suites[name]
        times = epoch_seconds(suite.corpus)
        ref = to_epoch(suite.queries[0].get("reference_date")) if suite.queries else float(np.nanmax(times))
        pos = {doc["id"]: i for i, doc in enumerate(suite.corpus)}
        rel_idx = [pos[r] for q in suite.queries for r, g in q["relevance"].items() if g >= 1 and r in pos]
        ages = (ref - times) / 86400.0
        out.append(plot_decay_curves(KERNEL_ROWS, ages, d / f"{_slug(name)}-decay-curves.png",
                                     title=f"{name}: kernels and document ages", relevant_ages=ages[rel_idx]))
    return out
