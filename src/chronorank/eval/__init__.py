"""Evaluation: docs/format.md loaders, metrics, synthetic data, benchmarks and fitting.

Submodules are imported on first use so that ``import chronorank.eval`` stays light.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS: dict[str, str] = {
    "load_corpus": "chronorank.eval.datasets",
    "load_queries": "chronorank.eval.datasets",
    "load_benchmark": "chronorank.eval.datasets",
    "tdw_release_benchmark": "chronorank.eval.datasets",
    "evaluate": "chronorank.eval.metrics",
    "METRICS": "chronorank.eval.metrics",
    "synthetic_benchmark": "chronorank.eval.synthetic",
    "run_benchmark": "chronorank.eval.benchmark",
    "fit": "chronorank.eval.fit",
    "fit_strength": "chronorank.eval.fit",
    "suggest_half_life": "chronorank.eval.fit",
    "FitResult": "chronorank.eval.fit",
    "compare_weights": "chronorank.eval.weights",
    "fetch_release_corpus": "chronorank.eval.fetch",
}

__all__ = list(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'chronorank.eval' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
