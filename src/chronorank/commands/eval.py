"""``chronorank eval --corpus C --queries Q``: run a docs/format.md benchmark through the index."""

from __future__ import annotations

import json
import sys
from typing import Any


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "eval",
        help="evaluate a docs/format.md benchmark through the index",
        description="Index the corpus (id, text, dates and validity only), rank it for every query "
        "at the query's reference date, and print nDCG@10, recall@10, MRR and stale@5 overall "
        "and per query kind. The kind is never used for ranking. A rerun with the same corpus, "
        "config and embedder loads the index the first run saved (CHRONORANK_INDEX_CACHE=off: build "
        "it every time).",
    )
    p.add_argument("--corpus", required=True, help="corpus.jsonl (docs/format.md; e.g. examples/releases/corpus.jsonl)")
    p.add_argument("--queries", required=True, help="queries.jsonl (docs/format.md; e.g. examples/releases/queries.jsonl)")
    p.add_argument("--config", default=None,
                   help="index(...) spec, e.g. \"index(fusion='rrf')\" (default: the built-in config)")
    p.add_argument("--embedder", default="default",
                   help="default | none | hashing | st:<model> | fastembed:<model> (default: default, MiniLM)")
    p.add_argument("--dayfirst", action="store_true",
                   help="read slash dates day-first: 03/04/2022 is 3 April (default: month-first)")
    p.add_argument("--json", action="store_true", help="print the docs/format.md evaluation JSON")
    p.add_argument("--per-query", action="store_true", help="include per-query metrics in the JSON")
    p.set_defaults(func=run)


def run(args: Any) -> int:
    from chronorank.commands._input import read_bytes, read_corpus, read_queries
    from chronorank.eval.index_cache import cached_benchmark_index, file_source, load_cached_index
    from chronorank.eval.index_eval import evaluate_index
    from chronorank.index import get_embedder
    from chronorank.index.config import IndexConfig

    config = IndexConfig.from_spec(args.config)
    embedder = get_embedder(args.embedder)  # a missing extra stops the command before any reading
    # a rerun on the same corpus file and settings loads the index the first run built and
    # saved, without reading the corpus again (its bytes, hashed, key the index)
    data = read_bytes(args.corpus, "--corpus")
    source = file_source(data, reader="read_corpus", dayfirst=args.dayfirst, bad_dates="raise")
    idx = load_cached_index(source, embedder=embedder, config=config)
    if idx is None:
        corpus = read_corpus(args.corpus, "eval", flag="--corpus", dayfirst=args.dayfirst, data=data)
        ids = {d["id"] for d in corpus}
    else:
        ids = set(idx.ids)  # the documents of the corpus it was built from
    queries = read_queries(args.queries, ids=ids)
    if idx is None:
        idx = cached_benchmark_index(corpus, embedder=embedder, config=config, source=source)
    from chronorank.index.embed_cache import cached_queries

    with cached_queries(idx):  # a rerun embeds none of the queries either
        res = evaluate_index(idx, queries)
    prog = idx.dense_progress  # complete here: the build embeds before returning
    out: dict[str, Any] = {"overall": res["overall"], "by_kind": res["by_kind"], "config": res["config"]}
    if args.per_query:
        out["per_query"] = res["per_query"]
    if args.json:
        print(json.dumps(out))
        return 0
    o = res["overall"]
    print(f"config: {res['config']}")
    print("dense: off (no embedder)" if prog is None else str(prog))
    print(f"{'kind':<14}{'queries':>8}{'ndcg@10':>10}{'recall@10':>11}{'mrr':>8}{'stale@5':>9}")
    rows = [("overall", o), *res["by_kind"].items()]
    for name, m in rows:
        print(
            f"{name:<14}{m['queries']:>8}{_f(m.get('ndcg@10')):>10}{_f(m.get('recall@10')):>11}"
            f"{_f(m.get('mrr')):>8}{_f(m.get('stale@5')):>9}"
        )
    sys.stdout.flush()
    return 0


def _f(v: Any) -> str:
    return "-" if v is None else f"{v:.3f}"
