"""Time to first answer from a cold start, and the quality once the vectors are in (issue 19).

    nice -n 10 python benchmarks/first_answer.py [--data ../shared/data/news-dev] [--out PATH]

A fresh process (with an empty ``CHRONORANK_EMBED_CACHE``, so it really embeds) imports
chronorank, reads the corpus with ``chronorank.eval.datasets.load_benchmark``, builds
``TemporalIndex()`` (the default MiniLM embedder) with ``add(docs, embed="background")``
and answers the first query; seconds are counted from just before the process is
launched. Then, in the same process:

- a few more questions while the embedder runs (keyword + time, their latency);
- the moment the last vector is in (what a synchronous ``add`` -- today's only way --
  would have taken before its first answer: analysis + embedding of every document);
- nDCG@10 per kind with every vector in (the final quality), and with keyword + time
  (an index without an embedder: what the answers are worth while embedding runs; equal
  ranking by ranking, tests/index/test_background.py);
- the same corpus built synchronously (``add(docs)``, its vectors now read from the
  embedding cache the background run filled): every query's ranking compared with the
  background-built index's;
- the committed figure of ``benchmarks/cross_domain.py``'s default row for reference.

``--first-only N`` runs N more cold starts that stop after the first answers (the job
ends after its current chunk when the process exits) and adds their figures to the same
JSON under ``cold_starts``.

Only document ids, dates and figures are written (never news texts).
Writes ``benchmarks/results/first_answer.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
#: questions answered while the embedder runs, after the first one
DURING = 5


def child(data: Path, out: Path, first_only: bool = False) -> None:
    """The measured process: everything from its imports on counts."""
    from chronorank.eval.datasets import load_benchmark
    from chronorank.eval.index_eval import _DOC_FIELDS, evaluate_index
    from chronorank.index import TemporalIndex

    t_import = time.time()
    corpus, queries = load_benchmark(data)
    docs = [{k: d.get(k) for k in _DOC_FIELDS if k in d} for d in corpus]
    t_read = time.time()
    idx = TemporalIndex()
    idx.add(docs, embed="background")
    t_added = time.time()
    q0 = queries[0]
    first = idx.search(q0["query"], k=10, now=q0["reference_date"])
    t_first = time.time()
    # CPU seconds, independent of how contended the machine is: the main thread's (the path
    # to the first answer) and the whole process's (the embedder thread's included)
    cpu = {"main_thread": round(time.thread_time(), 2), "process": round(time.process_time(), 2)}
    at_first = idx.dense_progress
    dense_line = next((ln for ln in first.explain().splitlines() if ln.startswith("dense:")), None)
    during = []
    for q in queries[1 : 1 + DURING]:
        t = time.perf_counter()
        r = idx.search(q["query"], k=10, now=q["reference_date"])
        during.append({"ms": round(1000 * (time.perf_counter() - t), 1), "dense_complete": r.meta.get("dense_complete")})
    if first_only:
        out.write_text(json.dumps({"t_import": t_import, "t_read": t_read, "t_added": t_added, "t_first": t_first,
                                   "cpu_s_at_first_answer": cpu,
                                   "dense_at_first_answer": at_first.embedded if at_first else None,
                                   "during_embedding_ms": [d["ms"] for d in during]}))
        return
    idx.wait()
    t_complete = time.time()

    def by_kind(index: Any) -> tuple[dict[str, float], dict[str, list[str]]]:
        res = evaluate_index(index, queries, depth=10, metrics=("ndcg@10",))
        cell = {k: round(v["ndcg@10"], 4) for k, v in res["by_kind"].items()}
        cell["all"] = round(res["overall"]["ndcg@10"], 4)
        return cell, res["runs"]

    final, runs = by_kind(idx)
    kw = TemporalIndex(None)
    kw.add(docs)
    keyword_time, _ = by_kind(kw)
    t0 = time.perf_counter()
    sync = TemporalIndex()
    sync.add(docs)  # every vector from the cache the background run filled
    sync_s = time.perf_counter() - t0
    sync_ndcg, sync_runs = by_kind(sync)
    same = sum(runs[q] == sync_runs[q] for q in runs)
    out.write_text(json.dumps({
        "t_import": t_import, "t_read": t_read, "t_added": t_added, "t_first": t_first,
        "t_complete": t_complete, "cpu_s_at_first_answer": cpu,
        "first_query": {"qid": q0["qid"], "hits": len(first), "top_id": first.ranked_ids[0] if len(first) else None},
        "dense_at_first_answer": None if at_first is None else {"embedded": at_first.embedded, "total": at_first.total},
        "explain_dense_line": dense_line,
        "during_embedding": during,
        "ndcg_final": final, "ndcg_keyword_time": keyword_time, "ndcg_sync_from_cache": sync_ndcg,
        "sync_from_cache_build_s": round(sync_s, 2),
        "rankings_identical_to_sync": f"{same}/{len(runs)}",
        "n_docs": len(docs), "n_queries": len(queries),
    }))


def launch(data: Path, *, first_only: bool) -> tuple[dict[str, Any], float, Any]:
    """One measured process with an empty embedding cache: its figures, launch time, result."""
    with tempfile.TemporaryDirectory(prefix="chronorank-first-answer-") as tmp:
        env = dict(os.environ, CHRONORANK_EMBED_CACHE=str(Path(tmp) / "cache"),
                   PYTHONPATH=os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]))
        res_path = Path(tmp) / "child.json"
        cmd = [sys.executable, str(Path(__file__).resolve()), "--data", str(data), "--child", str(res_path)]
        if first_only:
            cmd.append("--child-first-only")
        t_launch = time.time()
        p = subprocess.run(cmd, env=env, capture_output=True, text=True)
        if p.returncode != 0:
            raise SystemExit(f"the measured process exited {p.returncode}:\n{p.stderr[-3000:]}")
        return json.loads(res_path.read_text()), t_launch, p


def stages(c: dict[str, Any], t_launch: float) -> dict[str, float]:
    """Seconds of each step from the launch to the first answer."""
    return {
        "interpreter_and_imports": round(c["t_import"] - t_launch, 2),
        "read_corpus": round(c["t_read"] - c["t_import"], 2),
        "add_background (keyword + time structures)": round(c["t_added"] - c["t_read"], 2),
        "first_search": round(c["t_first"] - c["t_added"], 2),
    }


def cold_starts(data: Path, out: Path, n: int) -> None:
    runs = []
    for _ in range(n):
        c, t_launch, _p = launch(data, first_only=True)
        runs.append({
            "first_answer_s": round(c["t_first"] - t_launch, 2),
            "stages_s": stages(c, t_launch),
            "cpu_s_at_first_answer": c["cpu_s_at_first_answer"],
            "embedded_at_first_answer": c["dense_at_first_answer"],
            "next_queries_ms": c["during_embedding_ms"],
        })
    result = json.loads(out.read_text()) if out.is_file() else {}
    result["cold_starts"] = runs
    result["cold_starts_first_answer_s_median"] = float(np.median([r["first_answer_s"] for r in runs]))
    result["cold_starts_main_thread_cpu_s_median"] = float(
        np.median([r["cpu_s_at_first_answer"]["main_thread"] for r in runs]))
    result["cold_starts_load_avg_at_end"] = os.getloadavg()
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(result, indent=1))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data" / "news-dev"))
    ap.add_argument("--out", default=str(RESULTS / "first_answer.json"))
    ap.add_argument("--first-only", type=int, default=0, metavar="N",
                    help="N more cold starts measured to the first answers only, added to --out")
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--child-first-only", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(Path(args.data), Path(args.child), args.child_first_only)
        return
    data = Path(args.data)
    if not (data / "corpus.jsonl").is_file():
        raise SystemExit(f"{data} holds no corpus.jsonl (news-dev lives in ../shared/data)")
    if args.first_only:
        cold_starts(data, Path(args.out), args.first_only)
        return
    c, t_launch, p = launch(data, first_only=False)
    progress = [ln for ln in p.stderr.splitlines() if ln.startswith("embedding")]
    embed_s = c["t_complete"] - c["t_added"]
    first_s = c["t_first"] - t_launch
    complete_s = c["t_complete"] - t_launch
    committed = None
    cd = RESULTS / "cross_domain.json"
    if cd.is_file():
        committed = json.loads(cd.read_text())["rows"]["default index"]["ndcg"]["news/news"]
    result = {
        "command": "nice -n 10 python benchmarks/first_answer.py",
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "load_avg_at_end": os.getloadavg()},
        "corpus": str(data.name), "n_docs": c["n_docs"], "n_queries": c["n_queries"],
        "embedder": "default (minilm-l6-v2-int8, max_length=128), empty embedding cache",
        "first_answer_s": round(first_s, 2),
        "stages_s": stages(c, t_launch),
        "cpu_s_at_first_answer": c["cpu_s_at_first_answer"],
        "dense_at_first_answer": c["dense_at_first_answer"],
        "explain_dense_line": c["explain_dense_line"],
        "during_embedding": c["during_embedding"],
        "all_vectors_in_s": round(complete_s, 1),
        "embed_docs_per_s": round(c["n_docs"] / embed_s, 1) if embed_s > 0 else None,
        "first_answer_speedup_vs_synchronous": round(complete_s / first_s, 1),
        "synchronous_note": "a synchronous add() answers only once every vector is in: all_vectors_in_s is its "
                            "time to first answer on this run (same analysis + embedding work)",
        "ndcg@10_final": c["ndcg_final"],
        "ndcg@10_while_embedding (keyword + time)": c["ndcg_keyword_time"],
        "ndcg@10_synchronous_build": c["ndcg_sync_from_cache"],
        "rankings_identical_to_synchronous_build": c["rankings_identical_to_sync"],
        "ndcg@10_committed_cross_domain_default": committed,
        "progress_lines": len(progress),
        "progress_last": progress[-1] if progress else None,
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
