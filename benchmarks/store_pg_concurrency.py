"""PgVectorStore: 8 concurrent ``asearch`` calls against the same 8 one after the other.

The corpus of ``store_speed.py`` (random unit vectors, dim 384, synthetic texts, dates over 5
years) in one embedded PostgreSQL 18 + pgvector (tests/stores/pg_server.py). Each round runs,
in turn (so the machine's load falls on all alike): the 8 searches sequentially, the 8 through
``asyncio.gather`` on a store with ``pool_size=8`` (each on its own pooled connection), and the
same gather on a store with ``pool_size=1`` (one connection: the calls queue, as before the
pool). Exact scoring (``method="exact"``, a scan of every row) gives each search enough server
work to overlap; ``max_parallel_workers_per_gather = 0`` keeps one search on one server process,
so the gain measures the pool, not PostgreSQL's parallel scan. The gain is bounded by the CPU
cores the server gets (``cpu_count`` below).

Usage: nice -n 10 python benchmarks/store_pg_concurrency.py [--docs 20000] [--rounds 5]
Writes benchmarks/results/store_pg_concurrency.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _stores_common import start_pg  # noqa: E402
from store_speed import NOW, synth  # noqa: E402

CFG = "index(missing_date='keep')"
CALLS = 8


def run(n: int, rounds: int) -> dict[str, Any]:
    from chronorank.stores import PgVectorStore

    docs, vec, qtext, qv = synth(n)
    pg = start_pg()
    if pg is None:
        return {"skipped": "embedded PostgreSQL could not start"}
    dsn = pg.dsn + "?options=-cmax_parallel_workers_per_gather%3D0"
    out: dict[str, Any] = {"docs": n, "calls": CALLS, "rounds": rounds, "method": "exact", "config": CFG,
                           "cpu_count": os.cpu_count(), "python": platform.python_version()}
    try:
        with PgVectorStore(dsn, "conc", embedder=None, config=CFG) as build:
            build.add(docs, vectors=vec)
        pooled = PgVectorStore(dsn, "conc", embedder=None, config=CFG, method="exact", pool_size=CALLS)
        single = PgVectorStore(dsn, "conc", embedder=None, config=CFG, method="exact", pool_size=1)
        args = [(qtext[i], qv[i]) for i in range(CALLS)]

        def sequential() -> list[Any]:
            return [pooled.search(q, k=10, now=NOW, vector=v) for q, v in args]

        def gathered(store: Any) -> list[Any]:
            async def go() -> list[Any]:
                return list(await asyncio.gather(*(store.asearch(q, k=10, now=NOW, vector=v) for q, v in args)))
            return asyncio.run(go())

        rows = {"sequential (8 x search)": sequential,
                "concurrent, pool_size=8 (gather of 8 asearch)": lambda: gathered(pooled),
                "concurrent, pool_size=1 (gather of 8 asearch)": lambda: gathered(single)}
        expected = [r.ids for r in sequential()]
        for fn in rows.values():  # warm-up: every pooled connection opened, the same answers
            assert [r.ids for r in fn()] == expected
        times: dict[str, list[float]] = {name: [] for name in rows}
        for _ in range(rounds):
            for name, fn in rows.items():
                t = time.perf_counter()
                fn()
                times[name].append(time.perf_counter() - t)
        res = {name: {"median_s": round(statistics.median(ts), 3), "min_s": round(min(ts), 3)}
               for name, ts in times.items()}
        seq = res["sequential (8 x search)"]["median_s"]
        res["ratio sequential / concurrent pool_size=8"] = round(
            seq / res["concurrent, pool_size=8 (gather of 8 asearch)"]["median_s"], 2)
        res["ratio sequential / concurrent pool_size=1"] = round(
            seq / res["concurrent, pool_size=1 (gather of 8 asearch)"]["median_s"], 2)
        out["results"] = res
        pooled.close()
        single.close()
    finally:
        pg.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--docs", type=int, default=20000)
    ap.add_argument("--rounds", type=int, default=5)
    a = ap.parse_args()
    out = run(a.docs, a.rounds)
    print(json.dumps(out, indent=1))
    path = Path(__file__).resolve().parent / "results" / "store_pg_concurrency.json"
    path.write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
