"""``chronorank compare-weights``: the design record's rule for changing fusion-weight defaults."""

from __future__ import annotations

import argparse
import json
from typing import Any

from chronorank.errors import InvalidInput


def _weights(text: str) -> dict[str, float]:
    parts = [float(x) for x in text.split(",")]
    if len(parts) != 3:
        raise argparse.ArgumentTypeError(f"{text!r}: give vector,keyword,recency, e.g. 1,1,0.25")
    return dict(zip(("vector", "keyword", "recency"), parts))


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    p = subparsers.add_parser("compare-weights", help="compare fusion weights by hit rate",
                              description="Hit rate at equal budget per query domain; a change must beat the "
                                          "defaults (1.0/1.0/0.5) by > 5% in every domain.")
    p.add_argument("--suite", action="append", default=None,
                   help="a suite name or a directory with corpus.jsonl + queries.jsonl (repeatable; default: "
                        "synthetic, tdw-release, and changelogs when ../shared is present)")
    p.add_argument("--weights", action="append", type=_weights, default=None, metavar="V,K,R",
                   help="a setting to test (repeatable); default: a built-in list")
    p.add_argument("--k", type=int, default=5, help="budget: documents returned per query (default 5)")
    p.add_argument("--no-kinds", action="store_true", help="one domain per suite instead of per query kind")
    p.add_argument("--json", metavar="FILE", help="also write the full comparison as JSON (default: none)")
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    from chronorank.commands._input import check_suite_dir
    from chronorank.eval.datasets import default_suites
    from chronorank.eval.weights import compare_weights, weights_markdown

    if args.k < 1:
        raise InvalidInput(f"--k {args.k}: give a positive number of documents, e.g. --k 5")
    suites = args.suite or default_suites()
    for name in suites:
        check_suite_dir(name, "compare-weights")
    result = compare_weights(suites, args.weights, k=args.k, split_kinds=not args.no_kinds)
    print(weights_markdown(result))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(result, fh, indent=1)
    return 0
