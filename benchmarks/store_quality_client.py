"""The stores with the index's full defaults: quality on ../shared/data/changelogs.

`relative_recency` and `topical_margin` compare candidates with each other, so the engines
cannot evaluate them inside one expression; with ``fallback='client'`` each store fetches
its lanes' pool server-side and scores that pool with ``apply_temporal`` exactly as the
index scores the whole corpus. This measures what that costs in nDCG@10 against the index
(same documents, vectors and reference dates; the reference date is each query's own).

Usage: python benchmarks/store_quality_client.py [--out benchmarks/results/store_quality_client.json]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _stores_common import start_pg  # noqa: E402
from store_speed import quality  # noqa: E402

#: the index's defaults, named so that the stores keep them (they default them off)
CFG = "index(relative_recency=0.85, topical_margin=0.5)"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--out", default=str(Path(__file__).parent / "results" / "store_quality_client.json"))
    args = ap.parse_args()
    pg = start_pg()
    try:
        out = quality(pg, CFG, fallback="client", table="changelogs_client")
    finally:
        if pg is not None:
            pg.close()
    Path(args.out).write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
