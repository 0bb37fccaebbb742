"""``chronorank benchmark``: quality tables for every configuration on the same candidates."""

from __future__ import annotations

import argparse
from typing import Any


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    p = subparsers.add_parser("benchmark", help="run the quality benchmark suites",
                              description="Markdown tables (baseline, recency, each kernel, default, peer) per suite.")
    p.add_argument("--suite", action="append", default=None, metavar="NAME|DIR",
                   help="synthetic, tdw-release, changelogs or a directory with corpus.jsonl + queries.jsonl "
                        "(repeatable; default: all three built-in suites that are present)")
    p.add_argument("--json", metavar="FILE", help="write the full results as JSON")
    p.add_argument("--plots", metavar="DIR", help="write PNG figures (needs chronorank[plot])")
    p.add_argument("--metric", default="ndcg@10", help="metric for the per-kind table and plots")
    p.add_argument("--no-peer", action="store_true", help="skip the tdw-rag rows")
    p.add_argument("--no-index", action="store_true",
                   help="skip the embedded index's own row (it embeds every corpus with MiniLM)")
    p.add_argument("--seed", type=int, default=0, help="seed of the synthetic suite")
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    from chronorank.eval import benchmark
    from chronorank.eval.datasets import default_suites

    suites = args.suite or default_suites()
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
