"""Query temporal intent: what time a query is about and how much its answer depends on it.

``parse(query, now=None, lang=None) -> Intent`` runs the rules engine over the language
data in ``intent/lang/*.json``; its time sensitivity comes from a small shipped model
(:mod:`chronorank.intent.sensitivity`). Gates score time sensitivity: :class:`LexicalGate`
(the default, deterministic: the parser's sensitivity), :class:`LearnedGate` (logistic regression, see
:func:`fit_gate`) and :class:`LLMGate` (any text-completion function, with fallback).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from chronorank.intent.lang import (
    LANG_PATH_ENV,
    add_language_dir,
    available_languages,
    detect_language,
    reload_languages,
)
from chronorank.intent.rules import parse

if TYPE_CHECKING:
    from chronorank.intent.learned import LearnedGate, fit_gate
    from chronorank.intent.lexical import LexicalGate
    from chronorank.intent.llm import LLMGate

# the gates load on first use: parsing a query needs none of them (~2.5 ms of every import)
_GATES = {"LearnedGate": "learned", "fit_gate": "learned", "LexicalGate": "lexical", "LLMGate": "llm"}


def __getattr__(name: str) -> Any:
    module = _GATES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value

__all__ = [
    "LANG_PATH_ENV",
    "LLMGate",
    "LearnedGate",
    "LexicalGate",
    "add_language_dir",
    "available_languages",
    "detect_language",
    "fit_gate",
    "parse",
    "reload_languages",
]
