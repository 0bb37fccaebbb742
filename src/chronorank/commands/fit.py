"""``chronorank fit``: search kernel, parameters, combine, strength and gate on labelled queries."""

from __future__ import annotations

import argparse
import json
from typing import Any

from chronorank.errors import InvalidInput, require


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    p = subparsers.add_parser("fit", help="fit kernel, strength and fusion on labelled queries",
                              description="Vectorised grid search with k-fold cross-validation over queries.")
    src = p.add_mutually_exclusive_group()
    src.add_argument("--suite", default=None,
                     help="synthetic, tdw-release or changelogs (default tdw-release; changelogs needs ../shared)")
    src.add_argument("--data", metavar="DIR",
                     help="a directory with corpus.jsonl + queries.jsonl (docs/format.md), e.g. examples/releases")
    p.add_argument("--metric", default="ndcg@10",
                   help="what to maximise: ndcg@k, recall@k, precision@k, hit_rate@k or mrr@k (default ndcg@10)")
    p.add_argument("--folds", type=int, default=5,
                   help="cross-validation folds over the queries, at least 2 (default 5)")
    p.add_argument("--space", choices=["default", "peer"], default="default",
                   help="default: chronorank's grid; peer: the peer's 368-trial grid")
    p.add_argument("--strength-plot", metavar="PNG",
                   help="also sweep strength for the best kernel and plot it (needs: pip install \"chronorank[plot]\")")
    p.add_argument("--json", metavar="FILE", help="write the result as JSON (default: none)")
    p.add_argument("--top", type=int, default=10, help="rows of the trials table to print (default 10)")
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    import chronorank.eval.fit as fit
    from chronorank.commands._input import check_suite_dir
    from chronorank.eval import benchmark

    fit._parse_metric(args.metric)
    if args.folds < 2:
        raise InvalidInput(f"--folds {args.folds}: cross-validation needs at least 2 folds, e.g. --folds 5")
    if args.top < 0:
        raise InvalidInput(f"--top {args.top}: give a number of rows, e.g. --top 10")
    require("bm25s", extra="index")  # the similarity the fit reranks
    if args.strength_plot:
        require("matplotlib", extra="plot")
    name = args.data or args.suite or "tdw-release"
    if args.data:
        check_suite_dir(args.data, "fit")
    suite = benchmark.load_suite(name)
    p = benchmark.prepare(suite)
    queries = [
        {"qid": q["qid"], "query": q["query"], "similarity": p.sims[i], "ages": (p.now[i] - p.times[i]) / 86400.0, "now": float(p.now[i]),
         "ids": p.ids[i], "relevance": q["relevance"]}
        for i, q in enumerate(suite.queries)
    ]
    space = fit.PEER_EQUIVALENT_SPACE if args.space == "peer" else fit.DEFAULT_SPACE
    result = fit.fit(queries, space, args.metric, folds=args.folds, progress=True)
    print(result)
    print()
    print(result.table(args.top))
    if args.strength_plot:
        fit.fit_strength(queries, result.kernel, result.combine, args.metric, gate=result.gate,
                         relative_recency=result.relative_recency, plot=args.strength_plot)
        print(f"wrote {args.strength_plot}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump({"suite": suite.name, "spec": result.spec, "metric": result.metric, "fitted": result.score,
                       "heldout": result.heldout, "heldout_std": result.heldout_std, "folds": result.folds,
                       "trials": result.n_trials}, fh, indent=1)
    return 0
