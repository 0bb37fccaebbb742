"""How often does the right document fall outside the fetched pool? (fetch_k guidance)

A reranker can only promote what was fetched. On the changelog corpus
(``../shared/data/changelogs``: 2,062 dated release entries, 196 labelled queries) this
script ranks the whole corpus by similarity (BM25 and/or the bundled MiniLM embedder), then,
for each ``fetch_k``:

- ``miss``: share of queries whose target (the grade-3 document) is not in the top
  ``fetch_k`` by similarity;
- ``miss_lanes``: the same when time-sliced lanes (as the LangChain retriever and the
  Chroma helper run them: ``plan_lanes`` on the query's intent, ``lane_k = max(k, fetch_k // 4)``
  per lane) are added to the pool;
- ``hit_at_k`` / ``hit_at_k_lanes``: share of queries whose target is in the final top ``k``
  after ``TemporalReranker().rerank_columns`` on that pool.

Usage::

    python benchmarks/fetch_k.py                       # BM25 + MiniLM, k = 5
    python benchmarks/fetch_k.py --retriever bm25 --k 10

Writes ``benchmarks/results/fetch_k.json``.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from collections import defaultdict
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "changelogs"  # ../shared beside the checkout
OUT = Path(__file__).resolve().parent / "results" / "fetch_k.json"
NOW = datetime(2026, 8, 20, tzinfo=timezone.utc).timestamp()
FETCH_KS = (5, 10, 20, 50, 100, 200, 500)
LANES_DAYS = (30.0, 180.0)


def load(data: Path) -> tuple[list[dict], list[dict]]:
    corpus = [json.loads(line) for line in (data / "corpus.jsonl").open()]
    queries = [json.loads(line) for line in (data / "queries.jsonl").open()]
    return corpus, queries


def bm25_scores(texts: list[str], queries: list[str]) -> np.ndarray:
    import bm25s

    retriever = bm25s.BM25()
    retriever.index(bm25s.tokenize(texts, stopwords="en", show_progress=False), show_progress=False)
    qtok = bm25s.tokenize(queries, stopwords="en", show_progress=False, return_ids=False)
    return np.stack([retriever.get_scores(q) for q in qtok]).astype(np.float64)


def minilm_scores(texts: list[str], queries: list[str]) -> np.ndarray:
    from chronorank.index.embedders import get_embedder

    emb = get_embedder()
    d = emb.embed(texts)
    q = emb.embed(queries)
    return (q @ d.T).astype(np.float64)


def pools_for(sim: np.ndarray, times: np.ndarray, lanes: list, fetch_k: int, lane_k: int) -> tuple:
    """(base pool indices, base+lanes pool indices), each best similarity first."""
    order = np.argsort(-sim, kind="stable")
    base = order[:fetch_k]
    extra = [base]
    for lane in lanes:
        inside = (times >= lane.start) & (times < lane.end)
        idx = np.flatnonzero(inside)
        if idx.size:
            extra.append(idx[np.argsort(-sim[idx], kind="stable")[:lane_k]])
    merged = np.unique(np.concatenate(extra))
    merged = merged[np.argsort(-sim[merged], kind="stable")]
    return base, merged


def evaluate(name: str, scores: np.ndarray, corpus: list[dict], queries: list[dict], k: int) -> dict:
    from chronorank import TemporalReranker
    from chronorank.integrations._common import plan_lanes
    from chronorank.timeparse import parse_times

    reranker = TemporalReranker()
    times = np.asarray(parse_times([d["date"] for d in corpus]), dtype=np.float64)
    ids = [d["id"] for d in corpus]
    pos = {d: i for i, d in enumerate(ids)}
    out: dict = {"rank_of_target": {}, "by_fetch_k": {}}
    intents = [reranker.intent(q["query"], now=NOW) for q in queries]
    targets = [pos[next(d for d, g in q["relevance"].items() if g == 3)] for q in queries]

    ranks_by_kind: dict[str, list[int]] = defaultdict(list)
    for qi, q in enumerate(queries):
        order = np.argsort(-scores[qi], kind="stable")
        rank = int(np.flatnonzero(order == targets[qi])[0]) + 1
        ranks_by_kind[q["kind"]].append(rank)
        ranks_by_kind["all"].append(rank)
    for kind, rs in ranks_by_kind.items():
        a = np.asarray(rs)
        out["rank_of_target"][kind] = {
            "n": len(rs),
            "median": float(np.median(a)),
            "p90": float(np.percentile(a, 90)),
            "max": int(a.max()),
        }

    for fetch_k in FETCH_KS:
        lane_k = max(k, fetch_k // 4)
        agg: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
        for qi, q in enumerate(queries):
            sim = scores[qi]
            lanes = plan_lanes(intents[qi], NOW, LANES_DAYS)
            base, merged = pools_for(sim, times, lanes, fetch_k, lane_k)
            t = targets[qi]
            rec = {
                "miss": float(t not in set(base.tolist())),
                "miss_lanes": float(t not in set(merged.tolist())),
                "pool_lanes": float(len(merged)),
            }
            for label, pool in (("hit_at_k", base), ("hit_at_k_lanes", merged)):
                ranking = reranker.rerank_columns(
                    q["query"], sim[pool], times[pool], ids=[ids[i] for i in pool], top_k=k, now=NOW
                )
                rec[label] = float(ids[t] in ranking.ranked_ids)
            for key, v in rec.items():
                agg[q["kind"]][key].append(v)
                agg["all"][key].append(v)
        out["by_fetch_k"][str(fetch_k)] = {
            kind: {key: round(float(np.mean(v)), 4) for key, v in d.items()} | {"n": len(d["miss"])}
            for kind, d in agg.items()
        }
        a = out["by_fetch_k"][str(fetch_k)]["all"]
        print(
            f"{name:7s} k={k} fetch_k={fetch_k:4d} ({fetch_k / k:5.1f}x k)  miss={a['miss']:.3f} "
            f"miss+lanes={a['miss_lanes']:.3f}  hit@k={a['hit_at_k']:.3f} "
            f"hit@k+lanes={a['hit_at_k_lanes']:.3f}",
            flush=True,
        )
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--retriever", choices=["bm25", "minilm", "both"], default="both")
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)

    corpus, queries = load(args.data)
    texts = [d["text"] for d in corpus]
    qtexts = [q["query"] for q in queries]
    result: dict = {
        "dataset": str(args.data),
        "n_docs": len(corpus),
        "n_queries": len(queries),
        "k": args.k,
        "fetch_ks": list(FETCH_KS),
        "lanes_days": list(LANES_DAYS),
        "lane_k": "max(k, fetch_k // 4)",
        "now": "2026-08-20",
        "target": "the grade-3 document of each query",
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "retrievers": {},
    }
    names = ["bm25", "minilm"] if args.retriever == "both" else [args.retriever]
    for name in names:
        t0 = time.perf_counter()
        scores = bm25_scores(texts, qtexts) if name == "bm25" else minilm_scores(texts, qtexts)
        t_score = time.perf_counter() - t0
        res = evaluate(name, scores, corpus, queries, args.k)
        res["scoring_seconds"] = round(t_score, 2)
        result["retrievers"][name] = res
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
