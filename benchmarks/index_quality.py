"""Retrieval quality of the embedded index on the two shared benchmarks.

    python benchmarks/index_quality.py [--embedder default|hashing|none] [--quick]

- tdw-rag release corpus: 13 "what changed in the latest release of <project>" queries,
  reference date = the snapshot's ``fetched_at`` (``chronorank.eval.datasets.tdw_release_benchmark``);
- ../shared/data/changelogs: 196 queries of kinds latest / as_of / version / as_of_date,
  reference date 2026-08-20, the whole corpus as the candidate pool.

Every configuration is one setting for all queries (``kind`` is only used to group the
metrics afterwards). Document vectors are cached under ``~/.cache/chronorank-bench``.
Writes ``benchmarks/results/index_quality.json``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
CACHE = Path.home() / ".cache" / "chronorank-bench"

GRID = {
    "default": None,
    "rrf(1,1)": "index(fusion='rrf', dense_weight=1, keyword_weight=1)",
    "blend(0.5,0.5)": "index(fusion='blend', dense_weight=0.5, keyword_weight=0.5)",
    "blend(0.3,0.7)": "index(fusion='blend', dense_weight=0.3, keyword_weight=0.7)",
    "bm25 only": "index(fusion='blend', dense_weight=0, keyword_weight=1)",
    "dense only": "index(fusion='blend', dense_weight=1, keyword_weight=0)",
    "no time (strength=0)": "index(strength=0)",
}


class _Cached:
    def __init__(self, inner, tag: str) -> None:  # noqa: ANN001
        self.inner, self.name, self.tag = inner, inner.name, tag

    @property
    def dim(self) -> int:
        return self.inner.dim

    def embed(self, texts):  # noqa: ANN001
        if len(texts) < 50:
            return self.inner.embed(texts)
        key = hashlib.sha256("\x00".join([self.name, *texts]).encode()).hexdigest()[:24]
        p = CACHE / f"{self.tag}-{key}.npy"
        if p.exists():
            return np.load(p)
        CACHE.mkdir(parents=True, exist_ok=True)
        out = self.inner.embed(texts)
        np.save(p, out)
        return out


def _datasets() -> dict[str, tuple[list, list]]:
    from chronorank.eval.datasets import load_benchmark, shared_data_dir, tdw_release_benchmark

    out = {"tdw-release": tdw_release_benchmark()}
    shared = shared_data_dir(ROOT)
    if shared is not None and (shared / "changelogs").is_dir():
        out["changelogs"] = load_benchmark(shared / "changelogs")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--embedder", default="default")
    ap.add_argument("--configs", nargs="*", default=None, help="names from the grid (default: all)")
    ap.add_argument("--extra", nargs="*", default=[], help="extra index(...) specs to try")
    ap.add_argument("--out", default=str(RESULTS / "index_quality.json"))
    args = ap.parse_args(argv)

    from chronorank.eval.index_eval import evaluate_index, index_for_benchmark
    from chronorank.index import get_embedder

    inner = get_embedder(args.embedder)
    emb = None if inner is None else _Cached(inner, args.embedder)
    grid = {k: v for k, v in GRID.items() if args.configs is None or k in args.configs}
    for i, spec in enumerate(args.extra):
        grid[f"extra{i}"] = spec
    report: dict = {"embedder": None if inner is None else inner.name, "datasets": {}}
    for name, (corpus, queries) in _datasets().items():
        t0 = time.perf_counter()
        idx = index_for_benchmark(corpus, embedder=emb)
        build_s = time.perf_counter() - t0
        rows = {}
        for label, spec in grid.items():
            t1 = time.perf_counter()
            res = evaluate_index(idx, queries, config=spec)
            per_q_ms = 1000 * (time.perf_counter() - t1) / len(queries)
            rows[label] = {
                "config": res["config"],
                "overall": res["overall"],
                "by_kind": {k: v["ndcg@10"] for k, v in res["by_kind"].items()},
                "ms_per_query": round(per_q_ms, 2),
                "per_query_ndcg": {q: v["ndcg@10"] for q, v in res["per_query"].items()},
            }
            kinds = " ".join(f"{k}={v['ndcg@10']:.3f}" for k, v in res["by_kind"].items())
            print(f"{name:12s} {label:22s} ndcg@10={res['overall']['ndcg@10']:.3f}  {kinds}", file=sys.stderr)
        report["datasets"][name] = {"docs": len(corpus), "queries": len(queries), "build_s": round(build_s, 2), "runs": rows}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
