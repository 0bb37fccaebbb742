"""The "fresh answer beyond the top-k" case, per store.

A 20k-document corpus (user vectors, dim 64) where the correct answer -- the only
document from the last 30 days about the query's topic -- sits at similarity rank >= 200,
behind hundreds of older near-duplicates. Scoring: exponential decay (half-life 90 days),
dense similarity only.

- plain: one similarity top-100 prefetch, then decay (what re-scoring a candidate set does);
- lanes: chronorank's lanes (dense 100 + last 30/180 days + newest 50);
- the embedded index scores every document exactly.

Usage: python benchmarks/store_lanes.py [--docs 20000] [--out benchmarks/results/store_lanes.json]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _stores_common import start_pg  # noqa: E402

DAY = 86400.0
NOW = 1_735_689_600.0  # 2025-01-01
CFG = ("index(dense_weight=1, keyword_weight=0, kernel='exponential(half_life_days=90)', missing_date='keep', "
       "relative_recency=none, topical_margin=none)")


def corpus(n: int, dim: int = 64, n_near: int = 400, seed: int = 7) -> tuple[list[dict[str, Any]], np.ndarray, np.ndarray, int]:
    rng = np.random.default_rng(seed)
    q = rng.normal(size=dim)
    q /= np.linalg.norm(q)

    def around(cos: np.ndarray) -> np.ndarray:
        noise = rng.normal(size=(cos.size, dim))
        noise -= np.outer(noise @ q, q)
        noise /= np.linalg.norm(noise, axis=1, keepdims=True)
        return cos[:, None] * q[None, :] + np.sqrt(1 - cos[:, None] ** 2) * noise

    vec = np.empty((n, dim))
    dates = np.empty(n)
    # old near-duplicates: very similar, 2-6 years old
    vec[:n_near] = around(rng.uniform(0.86, 0.95, n_near))
    dates[:n_near] = NOW - rng.uniform(730, 2190, n_near) * DAY
    # the answer: fresh, similar but less than every near-duplicate
    answer = n_near
    vec[answer] = around(np.array([0.84]))[0]
    dates[answer] = NOW - 10 * DAY
    # background: unrelated, any age (many recent ones, so "newest" alone is not enough)
    rest = n - n_near - 1
    vec[n_near + 1:] = around(rng.uniform(-0.2, 0.5, rest))
    dates[n_near + 1:] = NOW - rng.uniform(0, 2000, rest) * DAY
    vec = (vec / np.linalg.norm(vec, axis=1, keepdims=True)).astype(np.float32)
    from datetime import datetime, timezone

    docs = [{"id": f"d{i}", "text": "", "date": datetime.fromtimestamp(float(t), tz=timezone.utc).isoformat()}
            for i, t in enumerate(dates)]
    sim_rank = int((vec @ q.astype(np.float32) > vec[answer] @ q.astype(np.float32)).sum()) + 1
    return docs, vec, q.astype(np.float32), sim_rank


def run(n: int) -> dict[str, Any]:
    from chronorank.index import TemporalIndex
    from chronorank.stores import Lanes, PgVectorStore, QdrantStore

    docs, vec, q, sim_rank = corpus(n)
    answer = "d400"
    out: dict[str, Any] = {"docs": n, "answer_similarity_rank": sim_rank, "config": CFG, "stores": {}}
    print(f"answer similarity rank: {sim_rank}")

    def probe(name: str, search: Any) -> None:
        t = time.perf_counter()
        hits = search()
        ms = (time.perf_counter() - t) * 1000
        ids = [h.id for h in hits]
        rank = ids.index(answer) + 1 if answer in ids else None
        out["stores"][name] = {"answer_rank@10": rank, "found": rank is not None, "ms": round(ms, 1),
                               "top_note": list(hits[ids.index(answer)].notes) if rank else []}
        print(f"{name:28s} answer rank@10={rank}  {ms:.0f} ms")

    idx = TemporalIndex(embedder=None, config=CFG)
    idx.add(docs, vectors=vec)
    probe("index (exact)", lambda: idx.search("latest x", k=10, now=NOW, vector=q))

    lanes = Lanes(dense=100, keyword=0, windows=((30.0, 50), (180.0, 50)), newest=50)
    qs = QdrantStore("lanes", embedder=None, config=CFG)
    t = time.perf_counter()
    qs.add(docs, vectors=vec)
    print(f"qdrant local load {time.perf_counter() - t:.1f}s")
    probe("qdrant plain top-100", lambda: qs.search("latest x", k=10, now=NOW, vector=q, lanes=Lanes.plain(100), diagnose=False))
    probe("qdrant lanes", lambda: qs.search("latest x", k=10, now=NOW, vector=q, lanes=lanes))

    pg = start_pg()
    if pg is not None:
        try:
            ps = PgVectorStore(pg.dsn, "lanes", embedder=None, config=CFG)
            t = time.perf_counter()
            ps.add(docs, vectors=vec)
            print(f"pgvector load {time.perf_counter() - t:.1f}s")
            probe("pgvector plain top-100", lambda: ps.search("latest x", k=10, now=NOW, vector=q, lanes=Lanes.plain(100)))
            probe("pgvector lanes", lambda: ps.search("latest x", k=10, now=NOW, vector=q, lanes=lanes))
            probe("pgvector exact", lambda: ps.search("latest x", k=10, now=NOW, vector=q, method="exact"))
            ps.close()
        finally:
            pg.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--docs", type=int, default=20000)
    ap.add_argument("--out", default=str(Path(__file__).parent / "results" / "store_lanes.json"))
    a = ap.parse_args()
    res = run(a.docs)
    Path(a.out).write_text(json.dumps(res, indent=2))
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
