"""Recall and latency of the optional ANN path (faiss HNSW + time lanes) against exact search.

    python benchmarks/ann_recall.py [--sizes 100000] [--queries 30] [--topics 200]

Synthetic corpus, dim 384, float32, L2-normalised: ``topics`` clusters (a document is its
topic's centroid plus Gaussian noise, cosine ~0.7 to the centroid, ~0 across topics), so a
topic holds n/topics documents that are all about equally on-topic; dates are exponential
ages (mean 365 days) before NOW; the text is the topic word plus filler words, so BM25
agrees with the dense signal on the topic. Queries are "latest", plain and "in <year>"
(as-of/range) questions about a topic, with a query vector near its centroid. With several
hundred equally on-topic documents a topic's freshest ones are usually *not* in the HNSW
top-100 -- the case the lanes exist for.

For each configuration (dense-only and the default hybrid) and each ``ann_k`` in (100,
1000), with and without the default lanes, it reports recall@10 of the final temporal
top-10 against exact ``TemporalIndex.search`` (same query, vector, now, intent), the HNSW
build time, p50 latencies (exact search, ``ann_search`` end to end, the candidate step
alone), candidate-pool sizes, and the raw HNSW recall@10 on cosine alone.
Writes ``benchmarks/results/ann_recall.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "ann_recall.json"
DIM = 384
DAY = 86400.0
NOW = 1_785_000_000.0  # 2026-07-25
FILLER = 5_000
QUERIES = ["what changed in the latest t{t} release", "t{t} notes", "t{t} in {y}"]


def synthetic(n: int, topics: int, seed: int = 0) -> tuple[list[dict], np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    centroids = rng.standard_normal((topics, DIM)).astype(np.float32)
    centroids /= np.linalg.norm(centroids, axis=1, keepdims=True)
    topic = rng.integers(0, topics, size=n)
    vecs = centroids[topic] + rng.standard_normal((n, DIM), dtype=np.float32) / np.sqrt(DIM).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    dates = NOW - rng.exponential(365.0, size=n) * DAY
    words = rng.integers(0, FILLER, size=(n, 8))
    docs = [
        {"id": f"doc{i}", "text": f"t{topic[i]} " + " ".join(f"w{w}" for w in words[i]), "date": float(dates[i])}
        for i in range(n)
    ]
    return docs, np.ascontiguousarray(vecs), centroids


def _p50(xs: list[float]) -> float:
    return round(1000 * statistics.median(xs), 2)


def bench(n: int, n_queries: int, topics: int) -> dict:
    from chronorank.index import IndexConfig, TemporalIndex
    from chronorank.index.ann import DEFAULT_LANES, ann_candidates, ann_search, lanes_for
    from chronorank.intent import parse as parse_intent

    docs, vecs, centroids = synthetic(n, topics)
    t0 = time.perf_counter()
    idx = TemporalIndex(embedder=None)
    idx.add(docs, vectors=vecs)
    add_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    lanes = lanes_for(idx)
    build_s = time.perf_counter() - t0
    rng = np.random.default_rng(1)
    queries = []
    for j in range(n_queries):
        t = int(rng.integers(0, topics))
        text = QUERIES[j % len(QUERIES)].format(t=t, y=int(rng.choice([2024, 2025])))
        qv = centroids[t] + 0.5 * rng.standard_normal(DIM).astype(np.float32) / np.sqrt(DIM)
        qv = (qv / np.linalg.norm(qv)).astype(np.float32)
        queries.append((text, qv, parse_intent(text, now=NOW)))
    # raw HNSW recall on cosine alone
    raw = []
    for _, qv, _ in queries:
        exact = set(np.argsort(-(vecs @ qv))[:10].tolist())
        raw.append(len(exact & set(lanes.ann(qv, 10).tolist())) / 10)
    lanes_180 = [(int(np.searchsorted(lanes.sorted_times, NOW - d * DAY)), d) for d in (30, 180)]
    out: dict = {
        "n": n,
        "topics": topics,
        "docs_per_topic": n // topics,
        "index_add_s": round(add_s, 2),
        "hnsw": {"m": lanes.m, "ef_construction": lanes.ef_construction, "ef_search": lanes.ef_search,
                 "slice_cap": lanes.slice_cap},
        "hnsw_build_s": round(build_s, 2),
        "hnsw_raw_recall_at_10_cosine": round(float(np.mean(raw)), 4),
        "rows_in_window": {f"{d}d": lanes.n_dated - a for a, d in lanes_180},
        "intent_modes": sorted({q[2].mode for q in queries}),
        "configs": {},
    }
    mat_vec = []
    for _, qv, _ in queries:
        t0 = time.perf_counter()
        _ = idx._snap.vectors @ qv
        mat_vec.append(time.perf_counter() - t0)
    out["full_dense_matvec_p50_ms"] = _p50(mat_vec)
    configs = {"dense_only": IndexConfig(keyword_weight=0.0, dense_weight=1.0), "default_hybrid": IndexConfig()}
    for cname, cfg in configs.items():
        idx.config = cfg
        exact_t, exact_top = [], []
        for text, qv, intent in queries:
            t0 = time.perf_counter()
            r = idx.search(text, 10, NOW, vector=qv, intent=intent)
            exact_t.append(time.perf_counter() - t0)
            exact_top.append(list(r.ids))
        rows: list[dict] = []
        for ann_k in (100, 1000):
            for lane_name, lane_spec, kw_k in (("none", (), 0), ("default", DEFAULT_LANES, 100)):
                rec: list[float] = []
                tot: list[float] = []
                cand_t: list[float] = []
                pool: list[int] = []
                per_kind: dict[str, list[float]] = {}
                for (text, qv, intent), ex in zip(queries, exact_top):
                    t0 = time.perf_counter()
                    cand, *_ = ann_candidates(idx, text, NOW, vector=qv, intent=intent, ann_k=ann_k,
                                              lanes=lane_spec, keyword_k=kw_k)
                    cand_t.append(time.perf_counter() - t0)
                    pool.append(int(cand.size))
                    t0 = time.perf_counter()
                    got = ann_search(idx, text, 10, NOW, vector=qv, intent=intent, ann_k=ann_k,
                                     lanes=lane_spec, keyword_k=kw_k)
                    tot.append(time.perf_counter() - t0)
                    r10 = len(set(got.ids) & set(ex)) / max(1, len(ex))
                    rec.append(r10)
                    per_kind.setdefault(intent.mode, []).append(r10)
                rows.append({
                    "ann_k": ann_k,
                    "lanes": lane_name if not lane_spec else repr(lane_spec),
                    "keyword_lane_k": kw_k if cfg.keyword_weight > 0 else 0,
                    "recall_at_10": round(float(np.mean(rec)), 4),
                    "recall_at_10_by_mode": {m: round(float(np.mean(v)), 4) for m, v in sorted(per_kind.items())},
                    "queries_with_full_recall": sum(r == 1.0 for r in rec),
                    "candidates_mean": round(float(np.mean(pool)), 1),
                    "candidate_step_p50_ms": _p50(cand_t),
                    "ann_search_p50_ms": _p50(tot),
                })
                print(f"n={n} {cname} ann_k={ann_k} lanes={lane_name}: {rows[-1]}", flush=True)
        out["configs"][cname] = {"exact_search_p50_ms": _p50(exact_t), "runs": rows}
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[100_000])
    ap.add_argument("--queries", type=int, default=30)
    ap.add_argument("--topics", type=int, default=200)
    args = ap.parse_args(argv)
    import faiss  # noqa: F401  (fail early with the plain ImportError)

    started = time.perf_counter()
    results = [bench(n, args.queries, args.topics) for n in args.sizes]
    report = {
        "command": "python benchmarks/ann_recall.py " + " ".join(sys.argv[1:] if argv is None else argv),
        "machine": {"python": platform.python_version(), "numpy": np.__version__, "faiss": faiss.__version__,
                    "cpus": os.cpu_count(), "platform": platform.platform()},
        "dim": DIM,
        "now": NOW,
        "recall": "recall@10 = |ANN top-10 ∩ exact top-10| / 10 per query, mean over queries; "
                  "same query, vector, intent and now",
        "latency": "p50 over the queries; ann_search = candidates + TemporalIndex.search(candidates=ids), "
                   "which today still runs the full dense mat-vec before restricting (see full_dense_matvec_p50_ms)",
        "results": results,
        "wall_s": round(time.perf_counter() - started, 1),
    }
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(report, indent=1) + "\n")
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
