"""Exception types and the optional-dependency guard."""

from __future__ import annotations

import importlib
from types import ModuleType


class ChronorankError(Exception):
    """Base class of every error chronorank raises on purpose."""


class InvalidInput(ChronorankError, ValueError):
    """A value at the public boundary is malformed; the message names field, value and a fix."""


class MissingDependency(ChronorankError, ImportError):
    """An optional dependency is not installed; the message carries the exact install line."""


class CorruptIndex(ChronorankError):
    """A saved index failed its format or checksum checks."""


class StoreError(ChronorankError):
    """The storage behind an index or a store failed (disk full, I/O error, a database error);
    the message says what failed and what state was left behind."""


class DateWarning(UserWarning):
    """Documents were indexed without a readable date, or a date was read one way of several
    (the message says which and how to choose); the CLI prints it as one line."""


class LanguageWarning(UserWarning):
    """A query seems written in a language chronorank has no language file for: its time words
    were not read (``Intent.unsupported`` names the language)."""


def require(module: str, extra: str, package: str | None = None) -> ModuleType:
    """Import an optional module or raise MissingDependency with the pip line that fixes it."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        pkg = package or module.split(".")[0]
        raise MissingDependency(
            f"{pkg!r} is needed for this feature but is not installed. "
            f'Install it with: pip install "chronorank[{extra}]"'
        ) from exc
