"""Engine parity: every store and every rerank adapter against the index, nDCG@10.

    nice -n 10 python benchmarks/engine_parity.py [--out benchmarks/results/engine_parity.json]

Three sets: ``../shared/data/changelogs`` (its templated queries), ``../shared/data/changelogs-user``
(hand-written questions over the same corpus) and the bundled ``time_semantics`` fixture. Rows:

- ``index``: ``TemporalIndex`` with its defaults, the reference;
- each store built with its defaults (``QdrantStore`` local mode, ``QdrantStore`` on Qdrant's
  engine in process (edge), ``PgVectorStore`` on an embedded PostgreSQL): ``fallback='client'``,
  the index's ranking (:func:`chronorank.ranking.rank`, the index's defaults) over the engine's
  candidate pool, with the index's query preparation (``chronorank.stores.prepare``: an undated
  anchor dated by the engine's BM25 within the question's subject, acronyms spelled out from
  the pool); and the same store scored by the engine alone (``fallback='error'``: ``server
  only``, the compiled formula without the rules that compare candidates);
- the rerank adapters over the same candidates as the index: the index's 40 best with time
  off (``strength=0``; their fused similarity as the score), reranked by a plain
  ``TemporalReranker()`` and by LangChain ``TemporalCompressor``, LlamaIndex
  ``TemporalPostprocessor`` and Haystack ``TemporalRanker``, each with default settings;
  ``index over the pool`` is the index searching those same 40 (``candidates=``), the
  reference the adapters are held to (``adapter_gap_to_index_over_the_pool``): 40 candidates
  by similarity need not hold the newest release of a project with a hundred releases, which
  the index over every document finds.

Targets: a store within 0.02 of the index, an adapter within 0.03 of the index over the same
candidates. Each query's own
reference date is used (never the wall clock); MiniLM document vectors are cached under
~/.cache/chronorank-bench as benchmarks/index_quality.py does. Without ../shared the shared
sets are skipped.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("HAYSTACK_TELEMETRY_ENABLED", "False")

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "engine_parity.json"
POOL = 40
STORE_BAR, ADAPTER_BAR = 0.02, 0.03


def ndcg(runs: dict[str, list[str]], queries: list[dict[str, Any]]) -> float:
    from chronorank.eval.metrics import evaluate
    from chronorank.timeparse import to_epoch

    qrels = {str(q["qid"]): dict(q.get("relevance") or {}) for q in queries}
    refs = {str(q["qid"]): to_epoch(q.get("reference_date", q.get("reference_time"))) for q in queries}
    return round(float(evaluate(runs, qrels, ["ndcg@10"], reference_times=refs)["mean"]["ndcg@10"]), 4)


def ref_of(q: dict[str, Any]) -> Any:
    return q.get("reference_date", q.get("reference_time"))


def engine_runs(engine: Any, queries: list[dict[str, Any]], **kw: Any) -> dict[str, list[str]]:
    return {str(q["qid"]): list(engine.search(q["query"], 10, ref_of(q), **kw).ids) for q in queries}


def adapter_runs(index: Any, docs: dict[str, dict[str, Any]], queries: list[dict[str, Any]]) -> dict[str, dict[str, list[str]]]:
    import numpy as np
    from haystack import Document as HDoc
    from langchain_core.documents import Document as LDoc
    from llama_index.core.schema import NodeWithScore, TextNode

    from chronorank import TemporalReranker
    from chronorank.integrations.haystack import TemporalRanker
    from chronorank.integrations.langchain import TemporalCompressor
    from chronorank.integrations.llama_index import TemporalPostprocessor
    from chronorank.timeparse import parse_times

    rr = TemporalReranker()
    runs: dict[str, dict[str, list[str]]] = {"index over the pool": {}, "TemporalReranker": {}, "langchain": {},
                                             "llama_index": {}, "haystack": {}}
    for q in queries:
        qid, text, ref = str(q["qid"]), q["query"], ref_of(q)
        pool = index.search(text, POOL, ref, strength=0)
        ids = list(pool.ids)
        sims = [float(h.similarity) for h in pool]
        metas = [{k: docs[i][k] for k in ("date", "valid_from", "valid_to") if docs[i].get(k)} for i in ids]
        cols = {k: parse_times([m.get(k) for m in metas]) for k in ("date", "valid_from", "valid_to")}
        extra = {k: cols[k] for k in ("valid_from", "valid_to") if not np.isnan(cols[k]).all()}
        texts = [{"text": docs[i]["text"]} for i in ids]  # "before v2" is dated through the texts
        # the reference over the same candidates: the index itself, restricted to them
        runs["index over the pool"][qid] = list(index.search(text, 10, ref, candidates=ids).ids)
        runs["TemporalReranker"][qid] = [h.id for h in rr.rerank_columns(text, np.asarray(sims), cols["date"], ids=ids, top_k=10,
                                                               now=ref, payloads=texts, **extra)]
        lc = [LDoc(page_content=docs[i]["text"], id=i, metadata={**m, "relevance_score": s}) for i, m, s in zip(ids, metas, sims)]
        runs["langchain"][qid] = [d.id for d in TemporalCompressor.build(now=ref, top_k=10).compress_documents(lc, text)]
        nodes = [NodeWithScore(node=TextNode(id_=i, text=docs[i]["text"], metadata=m), score=s) for i, m, s in zip(ids, metas, sims)]
        post = TemporalPostprocessor.build(top_n=10, now=ref)
        runs["llama_index"][qid] = [n.node.node_id for n in post.postprocess_nodes(nodes, query_str=text)]
        hd = [HDoc(id=i, content=docs[i]["text"], meta=m, score=s) for i, m, s in zip(ids, metas, sims)]
        runs["haystack"][qid] = [d.id for d in TemporalRanker(top_k=10).run(query=text, documents=hd, now=ref)["documents"]]
    return runs


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(OUT))
    ap.add_argument("--embedder", default="default")
    ap.add_argument("--engines", nargs="+", default=["qdrant", "qdrant_edge", "pgvector"])
    ap.add_argument("--sets", nargs="+", default=["time_semantics", "changelogs-user", "changelogs"])
    args = ap.parse_args(argv)
    import tempfile

    from index_quality import _Cached

    from chronorank.eval.datasets import load_benchmark, load_queries, shared_data_dir
    from chronorank.index import TemporalIndex, get_embedder
    from chronorank.stores import PgVectorStore, QdrantStore

    shared = shared_data_dir(ROOT) or shared_data_dir()
    sets: dict[str, tuple[list[dict[str, Any]], list[dict[str, Any]]]] = {}
    if "time_semantics" in args.sets:
        sets["time_semantics"] = load_benchmark(ROOT / "benchmarks" / "data" / "time_semantics")
    if shared is not None and (shared / "changelogs").is_dir():
        corpus, queries = load_benchmark(shared / "changelogs")
        if "changelogs" in args.sets:
            sets["changelogs"] = (corpus, queries)
        if "changelogs-user" in args.sets and (shared / "changelogs-user").is_dir():
            sets["changelogs-user"] = (corpus, load_queries(shared / "changelogs-user" / "queries.jsonl"))
    emb = _Cached(get_embedder(args.embedder), args.embedder)
    report: dict[str, Any] = {"embedder": emb.name, "pool": POOL, "store_bar": STORE_BAR, "adapter_bar": ADAPTER_BAR,
                              "sets": {}}
    pg = None
    if "pgvector" in args.engines:
        from _stores_common import start_pg

        pg = start_pg()
    tmp = tempfile.TemporaryDirectory()
    try:
        for name, (corpus, queries) in sets.items():
            t0 = time.perf_counter()
            docs = [{k: d.get(k) for k in ("id", "text", "date", "valid_from", "valid_to") if d.get(k) is not None} for d in corpus]
            by_id = {d["id"]: d for d in docs}
            vec = emb.embed([d["text"] for d in docs])
            idx = TemporalIndex(embedder=emb)
            idx.add(docs, vectors=vec)
            base = ndcg(engine_runs(idx, queries), queries)
            rows: dict[str, float] = {"index": base}
            stores: list[tuple[str, Any]] = []
            tag = name.replace("-", "_")
            if "qdrant" in args.engines:
                stores.append(("qdrant local", QdrantStore(f"p_{tag}", embedder=emb)))
            if "qdrant_edge" in args.engines:
                stores.append(("qdrant edge", QdrantStore(f"e_{tag}", embedder=emb, edge_path=Path(tmp.name) / "edge")))
            if pg is not None:
                stores.append(("pgvector", PgVectorStore(pg.dsn, f"parity_{tag}", embedder=emb)))
            for label, store in stores:
                store.add(docs, vectors=vec)
                assert store.config.fallback == "client"  # the row is the store as built by default
                rows[label] = ndcg(engine_runs(store, queries), queries)
                rows[f"{label} server only"] = ndcg(engine_runs(store, queries, fallback="error"), queries)
                print(name, label, rows[label], rows[f"{label} server only"], file=sys.stderr, flush=True)
                close = getattr(store, "close", None)
                if close is not None:
                    close()
            for label, runs in adapter_runs(idx, by_id, queries).items():
                rows[label if label.startswith("index") else f"adapter: {label}"] = ndcg(runs, queries)
            gaps = {k: round(v - base, 4) for k, v in rows.items() if k != "index"}
            pooled = rows["index over the pool"]
            report["sets"][name] = {"queries": len(queries), "docs": len(docs), "ndcg@10": rows, "gap_to_index": gaps,
                                    "adapter_gap_to_index_over_the_pool": {
                                        k: round(v - pooled, 4) for k, v in rows.items() if k.startswith("adapter")},
                                    "seconds": round(time.perf_counter() - t0, 1)}
            print(name, json.dumps(report["sets"][name]), file=sys.stderr, flush=True)
            Path(args.out).parent.mkdir(parents=True, exist_ok=True)
            Path(args.out).write_text(json.dumps(report, indent=1) + "\n")  # each set as it ends
    finally:
        tmp.cleanup()
        if pg is not None:
            pg.close()
    table = ["| set | row | nDCG@10 | gap to index | gap to index over the pool |", "|---|---|---:|---:|---:|"]
    for name, res in report["sets"].items():
        for row, v in res["ndcg@10"].items():
            gap = res["gap_to_index"].get(row)
            pg = res.get("adapter_gap_to_index_over_the_pool", {}).get(row)
            table.append(f"| {name} | {row} | {v:.4f} | {'' if gap is None else f'{gap:+.4f}'} | "
                         f"{'' if pg is None else f'{pg:+.4f}'} |")
    print("\n".join(table))
    report["table"] = table
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(report, indent=1) + "\n")
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
