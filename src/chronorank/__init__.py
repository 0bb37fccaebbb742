"""chronorank: time-aware retrieval for RAG.

The public API. Names are resolved lazily so that ``import chronorank`` loads numpy and
nothing optional.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

# public name -> defining module
_EXPORTS: dict[str, str] = {
    # time
    "parse_time": "chronorank.timeparse",
    "parse_span": "chronorank.timeparse",
    "parse_times": "chronorank.timeparse",
    "TimeSpan": "chronorank.timeparse",
    "to_epoch": "chronorank.timeparse",
    "resolve_now": "chronorank.timeparse",
    # kernels
    "get_kernel": "chronorank.kernels",
    "register_kernel": "chronorank.kernels",
    "Kernel": "chronorank.kernels",
    "ascii_curve": "chronorank.kernels",
    "plot_kernel": "chronorank.kernels",
    # fusion
    "combine": "chronorank.fusion",
    "weighted_rrf": "chronorank.fusion",
    "SignalWeights": "chronorank.fusion",
    # reranking
    "TemporalReranker": "chronorank.rerank",
    # types
    "Hit": "chronorank.types",
    "Ranking": "chronorank.types",
    "Intent": "chronorank.types",
    "Interval": "chronorank.types",
    # intent
    "parse_intent": "chronorank.intent",
    "LexicalGate": "chronorank.intent",
    "LearnedGate": "chronorank.intent",
    "LLMGate": "chronorank.intent",
    "fit_gate": "chronorank.intent",
    # index
    "TemporalIndex": "chronorank.index",
    # stores
    "QdrantStore": "chronorank.stores",
    "PgVectorStore": "chronorank.stores",
    # eval
    "fit": "chronorank.eval.fit",
    "suggest_half_life": "chronorank.eval.fit",
    # errors
    "ChronorankError": "chronorank.errors",
    "InvalidInput": "chronorank.errors",
    "MissingDependency": "chronorank.errors",
}

__all__ = ["__version__", *_EXPORTS]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'chronorank' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name if name != "parse_intent" else "parse")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
