"""Quality benchmark: every configuration (ours and the peer's) on the same candidates.

Same engine as ``chronorank benchmark``; writes ``benchmarks/results/quality.json`` and
the markdown tables to ``benchmarks/results/quality.md``. Reference dates are pinned by
the suites, so two runs give byte-identical files.

    python benchmarks/quality.py [--suite NAME ...] [--no-peer]
"""

from __future__ import annotations

import argparse
from pathlib import Path

from chronorank.eval.benchmark import SUITES, markdown_tables, run_benchmark, write_json
from chronorank.eval.datasets import shared_data_dir

RESULTS = Path(__file__).parent / "results"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--suite", action="append", default=None)
    ap.add_argument("--no-peer", action="store_true")
    ap.add_argument("--no-index", action="store_true")
    ap.add_argument("--out", default=str(RESULTS / "quality.json"))
    args = ap.parse_args()
    suites = args.suite or [s for s in SUITES if s != "changelogs" or shared_data_dir() is not None]
    result = run_benchmark(suites, peer=not args.no_peer, index=not args.no_index)
    write_json(result, args.out)
    md = markdown_tables(result)
    Path(args.out).with_suffix(".md").write_text(md + "\n", encoding="utf-8")
    print(md)


if __name__ == "__main__":
    main()
