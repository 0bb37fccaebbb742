"""``chronorank benchmark``: quality tables for every configuration on the same candidates."""

from __future__ import annotations

import argparse
from typing import Any

from chronorank.errors import require


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    p = subparsers.add_parser("benchmark", help="run the quality benchmark suites",
                              description="Markdown tables (baseline, recency, each kernel, default, peer) per suite.")
    p.add_argument("--suite", action="append", default=None, metavar="NAME|DIR",
                   help="synthetic, tdw-release, changelogs or a directory with corpus.jsonl + queries.jsonl "
                        "(repeatable; default: all three built-in suites that are present)")
    p.add_argument("--json", metavar="FILE", help="write the full results as JSON (default: none)")
    p.add_argument("--plots", metavar="DIR",
                   help="write PNG figures to DIR (needs: pip install \"chronorank[plot]\"; checked before the run)")
    p.add_argument("--metric", default="ndcg@10", help="metric for the per-kind table and plots (default ndcg@10)")
    p.add_argument("--no-peer", action="store_true", help="skip the tdw-rag rows")
    p.add_argument("--no-index", action="store_true",
                   help="skip the embedded index's own row (it embeds every corpus with MiniLM)")
    p.add_argument("--seed", type=int, default=0, help="seed of the synthetic suite (default 0)")
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    from chronorank.commands._input import check_suite_dir, warn
    from chronorank.eval import benchmark
    from chronorank.eval.datasets import default_suites
    from chronorank.eval.metrics import parse_metric

    parse_metric(args.metric)
    # optional dependencies the run will need are checked before a run that takes minutes
    require("bm25s", extra="index")  # the similarity every row shares
    if not args.no_index:
        require("onnxruntime", extra="index")  # the index row embeds every corpus with MiniLM
    if args.plots:
        require("matplotlib", extra="plot")
    suites = args.suite or default_suites()
    for name in suites:
        check_suite_dir(name, "benchmark")
    if not args.no_peer:
        from chronorank.eval.peer import peer_available

        if not peer_available():
            warn("benchmark", 'tdw-rag is not installed, so the tables have no peer rows '
                              '(pip install "chronorank[bench]", or pass --no-peer to silence this)')
    loaded: dict[str, Any] = {}
    result = benchmark.run_benchmark(suites, peer=not args.no_peer, seed=args.seed, loaded=loaded,
                                     index=not args.no_index)
    print(benchmark.markdown_tables(result, metric=args.metric))
    if args.json:
        benchmark.write_json(result, args.json)
        print(f"wrote {args.json}")
    if args.plots:
        from chronorank.eval.plots import benchmark_plots

        for path in benchmark_plots(result, loaded, args.plots, metric=args.metric):
            print(f"wrote {path}")
    return 0

