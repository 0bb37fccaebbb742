"""Stores are context managers: ``with`` closes the connection, no ResourceWarning is left."""

from __future__ import annotations

import gc
import warnings
from typing import Any

import pytest
from store_cases import NOW, SERVER_STORES


@pytest.mark.parametrize("factory", SERVER_STORES, indirect=True)
def test_with_block_closes_the_store(factory: Any) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error", ResourceWarning)
        with factory() as store:
            store.add([{"id": "a", "text": "release notes", "date": "2024-01-01"}])
            assert store.search("release notes", k=1, now=NOW).ids == ["a"]
        if factory.kind == "pgvector":
            assert store._pool is None  # every pooled connection closed
        del store
        gc.collect()
