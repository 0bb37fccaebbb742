"""The default gate: the rules engine's time sensitivity, deterministic and dependency-free."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from chronorank.errors import InvalidInput
from chronorank.intent.rules import parse
from chronorank.types import Intent


@dataclass(frozen=True)
class LexicalGate:
    """Gate ``query -> float`` in [0, 1] from cue words and temporal expressions.

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
