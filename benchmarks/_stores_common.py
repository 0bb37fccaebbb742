"""Helpers shared by the store benchmarks: a throw-away PostgreSQL and backend builders."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]


def start_pg() -> Any:
    """An embedded PostgreSQL 18 + pgvector (tests/stores/pg_server.py), or None."""
    sys.path.insert(0, str(REPO / "tests" / "stores"))
    try:
        from pg_server import PgServer

        return PgServer()
    except Exception as exc:  # noqa: BLE001
        print(f"pgvector skipped: {exc}", file=sys.stderr)
        return None
