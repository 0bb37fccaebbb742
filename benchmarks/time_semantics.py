"""Issue 16 benchmark: does the default index answer time questions about versioned pages?

The fixture (``benchmarks/data/time_semantics/``) holds 35 versioned pages of five topics and
72 questions (periods, as-of, before/after/since/until a date, a version or an event,
current, timeless, off-topic distractors), each with one right answer, written before any
tuning. For each configuration it reports:

- ``top1``: the share of questions whose first hit is the answer (per kind and overall);
- ``offtopic_above``: questions where a document graded 0 (another topic) ranks, within the
  top 3, above a document graded >= 1 (the same page or subject), or above one that the top 3
  left out -- the acceptance figure is 0. An on-topic page that did not exist yet at the
  question's reference date (its start, ``valid_from`` or else the date as the index parses
  them, after the reference date) is not "left out": the index rightly drops pages from the
  future of the question (``future='auto'``), so "how do I authenticate to the API" asked on
  2024-01-15 owes no place to the v2 page published 2024-09-16;
- ``ndcg@10``.

Rows: the default index without and with ``group_key='doc_key'``, the default MiniLM
embedder. The reference date is each question's own.

    python benchmarks/time_semantics.py [--out benchmarks/results/time_semantics.json] [--show]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import numpy as np

from chronorank.eval.datasets import load_corpus, load_queries
from chronorank.eval.metrics import evaluate
from chronorank.index import TemporalIndex

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "benchmarks" / "data" / "time_semantics"


def offtopic_above(
    ranked: list[str], relevance: dict[str, int], depth: int = 3, unborn: frozenset[str] = frozenset()
) -> bool:
    """True when an off-topic document (grade 0) sits above an on-topic one (grade >= 1)
    among the first ``depth`` hits, or above an on-topic one that the top ``depth`` left out.
    ``unborn`` are documents that did not exist yet at the question's reference date: one of
    them left out is not counted (one that is ranked still is, like any other)."""
    on = {d for d, g in relevance.items() if g >= 1}
    owed = on - unborn
    return any(doc not in on and bool(owed - set(ranked[:pos])) for pos, doc in enumerate(ranked[:depth]))


def unborn_at(idx: TemporalIndex, now: str) -> frozenset[str]:
    """Ids of the documents that start after ``now``: ``valid_from``, else the date, as the
    index parsed them (undated ones are never unborn)."""
    from chronorank.timeparse import resolve_now

    snap = idx._snap
    date, vf = snap.times[0], snap.times[2]
    start = np.where(np.isnan(vf), date, vf)
    later = np.flatnonzero(start > float(resolve_now(now)))  # NaN compares False
    return frozenset(snap.ids[int(i)] for i in later)


def evaluate_rows(idx: TemporalIndex, queries: list[dict[str, Any]]) -> dict[str, Any]:
    run: dict[str, list[str]] = {}
    for q in queries:
        run[q["qid"]] = [h.id for h in idx.search(q["query"], k=10, now=q["reference_date"])]
    qrels = {q["qid"]: q["relevance"] for q in queries}
    ndcg = evaluate(run, qrels, ["ndcg@10"])["mean"]["ndcg@10"]
    per_kind: dict[str, list[bool]] = {}
    wrong, above = [], []
    for q in queries:
        answer = next(d for d, g in q["relevance"].items() if g == 3)
        ok = bool(run[q["qid"]]) and run[q["qid"]][0] == answer
        per_kind.setdefault(q["kind"], []).append(ok)
        if not ok:
            wrong.append({"qid": q["qid"], "query": q["query"], "want": answer, "got": run[q["qid"]][:3]})
        if offtopic_above(run[q["qid"]], q["relevance"], unborn=unborn_at(idx, q["reference_date"])):
            above.append({"qid": q["qid"], "query": q["query"], "got": run[q["qid"]][:3]})
    n = len(queries)
    return {
        "top1": round(sum(1 for q in queries if run[q["qid"]][:1] == [
            next(d for d, g in q["relevance"].items() if g == 3)]) / n, 4),
        "top1_by_kind": {k: round(sum(v) / len(v), 4) for k, v in sorted(per_kind.items())},
        "kind_counts": {k: len(v) for k, v in sorted(per_kind.items())},
        "offtopic_above": len(above),
        "ndcg@10": round(ndcg, 4),
        "queries": n,
        "wrong": wrong,
        "offtopic": above,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "time_semantics.json"))
    ap.add_argument("--embedder", default="default")
    ap.add_argument("--show", action="store_true", help="print the wrong answers")
    args = ap.parse_args()
    corpus = load_corpus(DATA / "corpus.jsonl")
    queries = load_queries(DATA / "queries.jsonl")
    rows: dict[str, Any] = {}
    t0 = time.perf_counter()
    base = TemporalIndex(embedder=args.embedder)
    base.add(corpus)
    for name, key in (("default index", None), ("default index, group_key='doc_key'", "doc_key")):
        idx = TemporalIndex(embedder=args.embedder, group_key=key)
        idx.add(corpus, vectors=base._snap.vectors)  # same vectors: embed once
        rows[name] = evaluate_rows(idx, queries)
        r = rows[name]
        print(f"{name}: top1 {r['top1']:.3f}  off-topic above on-topic {r['offtopic_above']}  "
              f"ndcg@10 {r['ndcg@10']:.3f}")
        if args.show:
            for w in r["wrong"]:
                print("   wrong", w)
            for w in r["offtopic"]:
                print("   offtopic", w)
    out = {
        "benchmark": "time_semantics",
        "corpus": "benchmarks/data/time_semantics (35 docs, 72 questions)",
        "embedder": base.embedder.name if base.embedder is not None else None,
        "config": base.config.spec(),
        "rows": rows,
        "seconds": round(time.perf_counter() - t0, 1),
    }
    Path(args.out).write_text(json.dumps(out, indent=2) + "\n")
    print("wrote", args.out)


if __name__ == "__main__":
    main()
