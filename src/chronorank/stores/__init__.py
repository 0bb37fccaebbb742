"""Server-side temporal scoring on existing engines: Qdrant and PostgreSQL + pgvector.

``QdrantStore`` and ``PgVectorStore`` have the embedded index's surface
(``add`` / ``delete`` / ``search(query, k, now)``) and return the same ``Ranking`` of ``Hit``.
Their optional clients (qdrant-client, psycopg + pgvector) load only when a store is built.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["Lanes", "PgVectorStore", "QdrantStore", "Store", "StoreConfig"]

_EXPORTS = {
    "Lanes": "chronorank.stores.config",
    "Store": "chronorank.stores.base",
    "StoreConfig": "chronorank.stores.config",
    "QdrantStore": "chronorank.stores.qdrant",
    "PgVectorStore": "chronorank.stores.pgvector",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'chronorank.stores' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
