"""Issue 5 benchmark: one configuration for every query kind of the changelog dev set.

Rows (nDCG@10 per query kind, candidate pool = the whole corpus, reference date pinned by
each query): similarity alone; the peer tdw-rag 0.1.0's best single global decay, chosen
over its own 368-setting grid on these very queries and candidates (favourable to the
peer); and chronorank's embedded index with its default configuration.

Variants:
  1. dates only;
  2. valid_from / valid_to derived from each project's version chain (valid_to = the next
     release's date), handed to the index as validity fields.
Query sets: the original templates, a reworded copy (6+ phrasings per kind) and a Russian
copy (benchmarks/data/).

    python benchmarks/validity_quality.py [--out benchmarks/results/validity_quality.json]
"""

from __future__ import annotations

import argparse
import json
import math
import time
from pathlib import Path

import numpy as np

from chronorank.eval.benchmark import Prepared, Suite
from chronorank.eval.datasets import load_corpus, load_queries, shared_data_dir, to_epoch
from chronorank.eval.metrics import evaluate, group_means
from chronorank.index import TemporalIndex

ROOT = Path(__file__).resolve().parents[1]
QUERY_SETS = {
    "original": None,  # the shared file
    "reworded": ROOT / "benchmarks" / "data" / "changelogs_reworded" / "queries.jsonl",
    "russian": ROOT / "benchmarks" / "data" / "changelogs_ru" / "queries.jsonl",
}


def chain_validity(corpus: list[dict]) -> list[dict]:
    """Copy of the corpus with valid_from = date and valid_to = the next release's date."""
    by_project: dict[str, list[int]] = {}
    for i, d in enumerate(corpus):
        by_project.setdefault(d["metadata"].get("project") or d["id"].split("@")[0], []).append(i)
    out = [dict(d, valid_from=d["date"], valid_to=None) for d in corpus]
    for rows in by_project.values():  # the corpus is sorted by (project, date, version)
        for a, b in zip(rows, rows[1:]):
            out[a]["valid_to"] = corpus[b]["date"]
    return out


def run_index(idx: TemporalIndex, queries: list[dict], **overrides) -> dict[str, list[str]]:
    return {q["qid"]: [h.id for h in idx.search(q["query"], k=10, now=q["reference_date"], **overrides)]
            for q in queries}


def scores(run: dict[str, list[str]], queries: list[dict]) -> dict[str, float]:
    qrels = {q["qid"]: q["relevance"] for q in queries}
    res = evaluate(run, qrels, ["ndcg@10", "recall@10"])
    kinds = {q["qid"]: q.get("kind") for q in queries}
    out = {k: round(v["ndcg@10"], 4) for k, v in group_means(res["per_query"], kinds).items()}
    out["all"] = round(res["mean"]["ndcg@10"], 4)
    out["recall@10"] = round(res["mean"]["recall@10"], 4)
    return out


def peer_best(idx: TemporalIndex, corpus: list[dict], queries: list[dict]) -> tuple[dict, dict]:
    """The peer's best global decay on our similarity over the whole corpus."""
    from chronorank.eval import peer as peer_mod

    ids = [d["id"] for d in corpus]
    pos = {d: i for i, d in enumerate(ids)}
    times = np.array([to_epoch(d["date"]) for d in corpus])
    sims, nows = [], []
    for q in queries:
        hits = idx.search(q["query"], k=len(ids), now=q["reference_date"], strength=0.0)
        s = np.zeros(len(ids))
        s[[pos[h.id] for h in hits]] = [h.similarity for h in hits]
        sims.append(s)
        nows.append(to_epoch(q["reference_date"]))
    suite = Suite("changelogs", corpus, queries)
    p = Prepared(suite, [ids] * len(queries), sims, [times] * len(queries), nows)
    (name, params, strategy, s), _ = peer_mod._best_setting(p)
    from tdw_rag.decay import get_kernel
    from tdw_rag.scoring import combine

    kernel = get_kernel(name, **params)
    run = {}
    for i, q in enumerate(queries):
        a = np.maximum((nows[i] - times) / 86400.0, 0.0)
        final = combine(sims[i], kernel(a), strategy, s)
        run[q["qid"]] = [ids[j] for j in np.argsort(-final, kind="stable")[:10]]
    label = f"{name}({', '.join(f'{k}={v:g}' for k, v in params.items())}) {strategy} s={s:g}"
    sim_run = {q["qid"]: [ids[j] for j in np.argsort(-sims[i], kind="stable")[:10]] for i, q in enumerate(queries)}
    return {"label": label, "run": run}, {"run": sim_run}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "validity_quality.json"))
    ap.add_argument("--no-peer", action="store_true")
    args = ap.parse_args()
    shared = shared_data_dir()
    if shared is None:
        raise SystemExit("../shared/data is not beside the repository")
    corpus = load_corpus(shared / "changelogs" / "corpus.jsonl")
    sets = {name: load_queries(path or shared / "changelogs" / "queries.jsonl") for name, path in QUERY_SETS.items()}
    t0 = time.perf_counter()
    dated = TemporalIndex()
    dated.add(corpus)
    vectors = np.asarray(dated._snap.vectors)
    chained = TemporalIndex()
    chained.add(chain_validity(corpus), vectors=vectors)
    result: dict = {"command": "python benchmarks/validity_quality.py", "config": dated.config.spec(),
                    "embedder": dated.embedder.name if dated.embedder else None, "variants": {}}
    for variant, idx in (("dates only", dated), ("version-chain validity", chained)):
        rows: dict = {}
        for set_name, queries in sets.items():
            rows.setdefault("chronorank index (default)", {})[set_name] = scores(run_index(idx, queries), queries)
            if variant == "dates only" and set_name == "original":
                # the article's hard date-range filter (use_temporal_filter on): its recall cost
                for days in (90, 365, 730):
                    rows[f"index + hard filter: last {days} days"] = {
                        set_name: scores(run_index(idx, queries, max_age_days=days), queries)}
            if variant == "dates only" and not args.no_peer and set_name == "original":
                peer, sim = peer_best(idx, corpus, queries)
                rows[f"tdw-rag best global decay: {peer['label']}"] = {set_name: scores(peer["run"], queries)}
                rows["similarity only"] = {set_name: scores(sim["run"], queries)}
        result["variants"][variant] = rows
        print(variant)
        for label, per_set in rows.items():
            for set_name, s in per_set.items():
                print(f"  {label[:60]:<60} {set_name:<9} " + " ".join(f"{k}={v:.3f}" for k, v in sorted(s.items())))
    result["seconds"] = round(time.perf_counter() - t0, 1)
    Path(args.out).write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n")
    print(f"wrote {args.out}")
    assert not any(math.isnan(v) for r in result["variants"].values() for s in r.values() for x in s.values() for v in x.values())


if __name__ == "__main__":
    main()
