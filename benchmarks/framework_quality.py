"""Framework users get the engine's quality: nDCG@10 on ../shared/data/changelogs.

    nice -n 10 python benchmarks/framework_quality.py [--out benchmarks/results/framework_quality.json]

For each engine (the embedded ``TemporalIndex``, ``QdrantStore`` in local mode, ``PgVectorStore``
on an embedded PostgreSQL when it starts) the same queries run four ways: the engine's own
``search``, and each framework's pipeline API over chronorank's retriever for that engine --
a LangChain LCEL chain (``ChronorankRetriever | ids``), a LlamaIndex ``RetrieverQueryEngine``
with ``MockLLM`` (its ``source_nodes``), a Haystack ``Pipeline`` with ``ChronorankRetriever``.
The acceptance bar is |framework - engine| <= 0.01. For reference, the rerank adapter a
LangChain user had before (``TemporalRetriever`` over an ``InMemoryVectorStore`` with the same
embeddings, fetch_k=40) is measured too.

Each query's own reference date is used (never the wall clock); document vectors are cached
under ~/.cache/chronorank-bench as benchmarks/index_quality.py does. Without ../shared the
script writes ``{"skipped": ...}`` and exits 0.
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
OUT = ROOT / "benchmarks" / "results" / "framework_quality.json"
BAR = 0.01


class _Memo:
    """The cached document embedder plus an in-process memo for query texts (every path
    embeds the same topical queries)."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.name, self.dim = inner, inner.name, inner.dim
        self._seen: dict[str, Any] = {}

    def embed(self, texts: Any) -> Any:
        import numpy as np

        texts = list(texts)
        if len(texts) >= 50:
            return self.inner.embed(texts)
        todo = [t for t in dict.fromkeys(texts) if t not in self._seen]
        if todo:
            for t, v in zip(todo, self.inner.embed(todo)):
                self._seen[t] = v
        return np.stack([self._seen[t] for t in texts])


def ndcg(runs: dict[str, list[str]], queries: list[dict[str, Any]]) -> dict[str, float]:
    from chronorank.eval.metrics import evaluate, group_means
    from chronorank.timeparse import to_epoch

    qrels = {str(q["qid"]): dict(q.get("relevance") or {}) for q in queries}
    refs = {str(q["qid"]): to_epoch(q.get("reference_date", q.get("reference_time"))) for q in queries}
    kinds = {str(q["qid"]): q.get("kind") for q in queries}
    res = evaluate(runs, qrels, ["ndcg@10"], reference_times=refs)
    out = {k: round(v["ndcg@10"], 4) for k, v in group_means(res["per_query"], kinds).items()}
    out["overall"] = round(res["mean"]["ndcg@10"], 4)
    return out


def run_paths(engine: Any, queries: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    from haystack import Pipeline
    from langchain_core.runnables import RunnableLambda
    from llama_index.core import Settings
    from llama_index.core.llms import MockLLM
    from llama_index.core.query_engine import RetrieverQueryEngine

    from chronorank.integrations import haystack as hs
    from chronorank.integrations import langchain as lc
    from chronorank.integrations import llama_index as li

    Settings.llm = MockLLM()  # offline: nothing may resolve the default (OpenAI) LLM
    ids = RunnableLambda(lambda docs: [d.id for d in docs])
    pipe = Pipeline()
    pipe.add_component("retriever", hs.ChronorankRetriever(engine=engine, top_k=10))
    paths: dict[str, dict[str, list[str]]] = {"engine": {}, "langchain": {}, "llama_index": {}, "haystack": {}}
    for q in queries:
        qid, text = str(q["qid"]), q["query"]
        ref = q.get("reference_date", q.get("reference_time"))
        paths["engine"][qid] = list(engine.search(text, 10, ref).ids)
        # each query has its own reference date, so each gets its own chain (as a user's would)
        paths["langchain"][qid] = (lc.ChronorankRetriever(engine=engine, k=10, now=ref) | ids).invoke(text)
        qe = RetrieverQueryEngine.from_args(li.ChronorankRetriever(engine, similarity_top_k=10, now=ref), llm=MockLLM(),
                                            response_mode="no_text")  # retrieval is what is measured
        paths["llama_index"][qid] = [n.node.node_id for n in qe.query(text).source_nodes]
        out = pipe.run({"retriever": {"query": text, "now": ref}})
        paths["haystack"][qid] = [d.id for d in out["retriever"]["documents"]]
    return {name: ndcg(runs, queries) for name, runs in paths.items()}


def rerank_adapter_before(docs: list[dict[str, Any]], vectors: Any, emb: Any, queries: list[dict[str, Any]]) -> dict[str, float]:
    from langchain_core.documents import Document
    from langchain_core.vectorstores import InMemoryVectorStore

    from chronorank.integrations.langchain import ChronorankEmbeddings, TemporalRetriever
    from chronorank.timeparse import to_epoch

    store = InMemoryVectorStore(ChronorankEmbeddings(emb))
    store.add_documents([Document(page_content=d["text"], id=d["id"], metadata={"date": to_epoch(d["date"]) if d.get("date") else None})
                         for d in docs])
    runs = {}
    for q in queries:
        ref = q.get("reference_date", q.get("reference_time"))
        r = TemporalRetriever.from_vectorstore(store, k=10, fetch_k=40, now=ref)
        runs[str(q["qid"])] = [d.id for d in r.invoke(q["query"])]
    return ndcg(runs, queries)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(OUT))
    ap.add_argument("--embedder", default="default")
    ap.add_argument("--engines", nargs="+", default=["index", "qdrant", "pgvector"], help="which engines to run")
    ap.add_argument("--no-before", action="store_true", help="skip the rerank-adapter reference row")
    args = ap.parse_args(argv)
    from chronorank.eval.datasets import load_benchmark, shared_data_dir

    shared = shared_data_dir(ROOT)
    if shared is None or not (shared / "changelogs").is_dir():
        report: dict[str, Any] = {"skipped": "../shared/data/changelogs not found"}
        Path(args.out).write_text(json.dumps(report, indent=1) + "\n")
        print(report["skipped"], file=sys.stderr)
        return 0
    from index_quality import _Cached

    from chronorank.index import TemporalIndex, get_embedder
    from chronorank.stores import PgVectorStore, QdrantStore

    corpus, queries = load_benchmark(shared / "changelogs")
    docs = [{k: d.get(k) for k in ("id", "text", "date", "valid_from", "valid_to") if k in d} for d in corpus]
    emb = _Memo(_Cached(get_embedder(args.embedder), args.embedder))
    vec = emb.embed([d["text"] for d in docs])
    report = {"embedder": emb.name, "docs": len(docs), "queries": len(queries), "bar": BAR, "engines": {}}
    engines: list[tuple[str, Any]] = []
    if "index" in args.engines:
        idx = TemporalIndex(embedder=emb)
        idx.add(docs, vectors=vec)
        engines.append(("index", idx))
    if "qdrant" in args.engines:  # local mode: every filtered step is a Python loop (slow)
        qs = QdrantStore("framework_quality", embedder=emb)
        qs.add(docs, vectors=vec)
        engines.append(("qdrant", qs))
    pg = None
    if "pgvector" in args.engines:
        from _stores_common import start_pg

        pg = start_pg()
    try:
        if pg is not None:
            ps = PgVectorStore(pg.dsn, "framework_quality", embedder=emb)
            ps.add(docs, vectors=vec)
            engines.append(("pgvector", ps))
        for name, engine in engines:
            t0 = time.perf_counter()
            res = run_paths(engine, queries)
            base = res["engine"]
            diffs = {p: round(max(abs(v[k] - base[k]) for k in base), 4) for p, v in res.items() if p != "engine"}
            report["engines"][name] = {**res, "max_abs_diff_vs_engine": diffs, "seconds": round(time.perf_counter() - t0, 1)}
            print(name, json.dumps(report["engines"][name]), file=sys.stderr, flush=True)
        if not args.no_before:
            report["langchain rerank adapter (before)"] = rerank_adapter_before(docs, vec, emb, queries)
    finally:
        if pg is not None:
            pg.close()
    worst = max(d for e in report["engines"].values() for d in e["max_abs_diff_vs_engine"].values())
    report["worst_diff"] = worst
    report["passes"] = bool(worst <= BAR)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(report, indent=1) + "\n")
    print(f"wrote {args.out}; worst |framework - engine| = {worst}", file=sys.stderr)
    return 0 if report["passes"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
