"""A Qdrant client that counts its calls: each one is a round trip to a server."""

from __future__ import annotations

from collections import Counter
from typing import Any


class Counting:
    """The real client; every method call counted by name (with its ``exact=`` when given)."""

    def __init__(self, client: Any) -> None:
        self._inner = client
        self.calls: Counter[str] = Counter()
        self.log: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = []

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._inner, name)
        if not callable(attr) or name.startswith("_"):
            return attr

        def counted(*args: Any, **kwargs: Any) -> Any:
            self.calls[name + ("(exact)" if kwargs.get("exact") else "")] += 1
            self.log.append((name, args, kwargs))
            return attr(*args, **kwargs)

        return counted
