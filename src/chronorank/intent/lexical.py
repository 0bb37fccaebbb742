"""The default gate: the rules engine's intent with its shipped time-sensitivity model.

Deterministic, numpy-only and offline. It is what ``TemporalReranker()`` and
``TemporalIndex()`` use (through :func:`chronorank.intent.parse`): on gate-dev's dev split
(real search questions) its AUC is 0.957 against 0.944 for :class:`LearnedGate`'s shipped
weights, and it is the better of the two on the project's own sets too
(``benchmarks/results/intent_eval.json``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from chronorank.errors import InvalidInput
from chronorank.intent.rules import parse
from chronorank.types import Intent


@dataclass(frozen=True)
class LexicalGate:
    """Gate ``query -> float`` in [0, 1]: how much the answer depends on when it is asked.

    ``lang`` pins the language (None detects it per query); ``now`` is the default
    reference time for :meth:`intent` (None = the wall clock).
    """

    lang: str | None = None
    now: Any = None

    def __post_init__(self) -> None:
        if self.lang is not None and not isinstance(self.lang, str):
            raise InvalidInput(f"lang must be a language code such as 'en', got {self.lang!r}")

    def __call__(self, query: str) -> float:
        return self.intent(query).time_sensitivity

    def intent(self, query: str, now: Any = None) -> Intent:
        return parse(query, now=self.now if now is None else now, lang=self.lang)
