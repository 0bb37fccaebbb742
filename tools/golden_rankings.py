"""Record (or check) the ranked lists every backend gives on the committed benchmark data.

``python tools/golden_rankings.py`` writes ``tests/data/golden_rankings.json``: for each
section, every ranked list (ids, best first) of

- ``reranker``: the benchmark rows (:func:`chronorank.eval.benchmark.our_rows`: similarity,
  recency, each kernel, the default) plus each fusion strategy and the main reranker policies,
  over the BM25 candidates of the bundled tdw-release suite, the synthetic suite, the
  time-semantics fixture and the two example pages;
- ``index``: the embedded index (keyword-only and with a deterministic hashing embedder; the
  default and a few configurations) over the same suites;
- ``fit``: the grid search's per-configuration mean metric (it ranks configurations) and the
  fitted choice on the synthetic suite;
- ``stores``: Qdrant local mode, its lane plan, over the PostgreSQL parity corpus (``tests/stores/pg_rankings.py``, whose own committed
  file holds the PostgreSQL rankings);
- ``shared``: the index keyword-only over ``../shared/data/changelogs`` (only when present).

``tests/test_golden_rankings.py`` recomputes each section and compares: a restructuring that
is meant to leave behaviour unchanged must leave every list identical. When a change is meant
to re-rank, re-record with this script and say why in the commit.

    python tools/golden_rankings.py [--section NAME ...] [--out PATH]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "tests" / "data" / "golden_rankings.json"
DEPTH = 20
SUITE_DIRS = ("benchmarks/data/time_semantics", "benchmarks/data/examples/api_login", "benchmarks/data/examples/pricing")


def _suites() -> list[Any]:
    from chronorank.eval.benchmark import load_suite

    return [load_suite("tdw-release"), load_suite("synthetic")] + [load_suite(str(ROOT / d)) for d in SUITE_DIRS]


def _reranker_rows() -> dict[str, Callable[..., list[str]]]:
    from chronorank.eval.benchmark import our_rows, reranker_ranker
    from chronorank.rerank import TemporalReranker

    rows: dict[str, Any] = {k: v for k, v in our_rows().items() if callable(v)}
    variants: dict[str, dict[str, Any]] = {
        "multiply": {"combine": "multiply"},
        "linear": {"combine": "linear", "strength": 0.4},
        "rrf": {"combine": "rrf"},
        "no gate": {"gate": False},
        "relative recency": {"relative_recency": 0.85},
        "topical margin + group": {"topical_margin": 0.5, "group_key": "project"},
        "missing penalise, future clamp": {"missing_date": "penalise", "future": "clamp"},
        "range slope": {"range_slope": 0.5, "range_scale": 0.3},
        "piecewise": {"kernel": "piecewise(points=[[0, 1], [90, 0.6], [400, 0.1]])"},
        "power law": {"kernel": "power_law(half_life_days=60)"},
    }
    for name, kw in variants.items():
        rows[name] = reranker_ranker(TemporalReranker(**kw))
    return rows


def _cut(ranked: list[str]) -> str:
    return " ".join(ranked[:DEPTH])


def section_reranker() -> dict[str, Any]:
    from chronorank.eval.benchmark import prepare

    out: dict[str, Any] = {}
    rows = _reranker_rows()
    for suite in _suites():
        p = prepare(suite)
        for row, rank in rows.items():
            out[f"{suite.name}|{row}"] = [_cut(rank(p, i)) for i in range(len(suite.queries))]
    return out


def _index_configs() -> dict[str, dict[str, Any]]:
    return {
        "keyword default": {"embedder": None},
        "hashing default": {"embedder": "hashing"},
        "hashing group": {"embedder": "hashing", "group_key": "project"},
        "hashing rrf": {"embedder": "hashing", "config": "index(fusion='rrf')"},
        "hashing gaussian keep": {"embedder": "hashing",
                                  "config": "index(kernel='gaussian(half_life_days=200)', missing_date='keep')"},
        "keyword no margin": {"embedder": None, "config": "index(topical_margin=none, relative_recency=none)"},
    }


def _index_rankings(suite: Any, embedder: Any, config: Any, group_key: Any) -> list[str]:
    from chronorank.eval.benchmark import prepare
    from chronorank.index import TemporalIndex

    idx = TemporalIndex(embedder=embedder, config=config, group_key=group_key)
    idx.add([{k: v for k, v in d.items() if k != "vector"} for d in suite.corpus])
    nows = prepare(suite).now
    return [_cut(idx.search(q["query"], k=DEPTH, now=nows[i]).ids) for i, q in enumerate(suite.queries)]


def section_index() -> dict[str, Any]:
    from chronorank.index import HashingEmbedder

    out: dict[str, Any] = {}
    for suite in _suites():
        for name, c in _index_configs().items():
            emb = HashingEmbedder(64) if c["embedder"] == "hashing" else None
            out[f"{suite.name}|{name}"] = _index_rankings(suite, emb, c.get("config"), c.get("group_key"))
    return out


def section_fit() -> dict[str, Any]:
    from chronorank.eval.benchmark import load_suite, prepare
    from chronorank.eval.fit import fit, score_space

    suite = load_suite("synthetic")
    p = prepare(suite)
    queries = [
        {"query": q["query"], "similarity": p.sims[i], "times": p.times[i], "ids": p.ids[i],
         "relevance": q["relevance"], "now": p.now[i]}
        for i, q in enumerate(suite.queries)
    ]
    space = {
        "kernels": {"exponential": {"half_life_days": [30, 180, 720]}, "weibull": {"half_life_days": [90], "shape": [2]},
                    "power_law": {"half_life_days": [60]}, "gaussian": {"half_life_days": [200]},
                    "cliff": {"half_life_days": [365]}, "linear": {"zero_at": [730]}},
        "strength": [0.0, 0.5, 1.0],
        "combine": ["gated_multiply", "multiply", "linear", "rrf"],
        "gate": [False, True, "intent"],
        "relative_recency": [None, 0.8],
    }
    table, matrix = score_space(queries, space)
    cols = {k: [round(float(x), 9) if isinstance(x, float) else str(x) for x in list(v)] for k, v in table.items()}
    per_query = [" ".join(f"{x:.6f}" for x in row) for row in matrix.tolist()]
    res = fit(queries, space, folds=3, progress=False)
    return {"table": cols, "per_query": per_query, "fit": {"spec": res.spec, "score": round(res.score, 9), "heldout": round(res.heldout, 9)}}


def section_stores() -> dict[str, Any]:
    sys.path.insert(0, str(ROOT / "tests" / "stores"))
    from pg_rankings import CONFIGS, FILTERS, NOW, QUERIES, corpus, lanes

    from chronorank.index import HashingEmbedder
    from chronorank.stores import QdrantStore

    out: dict[str, Any] = {}
    docs = corpus()
    # Qdrant local mode only: the edge engine's HNSW lanes differ from one build to the next.
    # The engine's own scoring (fallback='error'), as pg_rankings records it: its lanes' cuts
    # among equal scores follow TIE_RULE (QdrantStore._settle_lanes), not local mode's numpy
    # argsort, whose order among equal keys differs between CPUs. The default (client-side)
    # scoring is not recorded here (its pool still takes the engine's order at a lane's cut);
    # its ranking over the pool is held to the index's by tests/stores/test_store_rank_as_index.py
    for name, cfg in CONFIGS.items():
        store = QdrantStore(f"golden_{name}", embedder=HashingEmbedder(64), config=cfg, lanes=lanes(), fallback="error")
        try:
            store.add(docs)
            for fi, flt in enumerate(FILTERS):
                out[f"qdrant|{name}|{fi}"] = [_cut(store.search(q, k=10, now=NOW, filter=flt).ids) for q in QUERIES]
        finally:
            store.close()
    return out


def section_shared() -> dict[str, Any]:
    from chronorank.eval import datasets
    from chronorank.eval.benchmark import load_suite

    shared = datasets.shared_data_dir()
    if shared is None or not (shared / "changelogs").is_dir():
        return {}
    suite = load_suite("changelogs")
    return {"changelogs|keyword default": _index_rankings(suite, None, None, None)}


SECTIONS: dict[str, Callable[[], dict[str, Any]]] = {
    "reranker": section_reranker,
    "index": section_index,
    "fit": section_fit,
    "stores": section_stores,
    "shared": section_shared,
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--section", nargs="*", choices=list(SECTIONS), default=list(SECTIONS))
    ap.add_argument("--out", type=Path, default=OUT)
    a = ap.parse_args()
    old = json.loads(a.out.read_text()) if a.out.exists() else {}
    for name in a.section:
        old[name] = SECTIONS[name]()
        print(f"{name}: {len(old[name])} entries", flush=True)
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps(old, indent=0, sort_keys=True, ensure_ascii=False) + "\n")
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
