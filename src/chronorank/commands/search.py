"""``chronorank search DIR "query"``: query a saved index."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from chronorank.errors import ChronorankError, InvalidInput


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "search",
        help="search a saved index",
        description="Rank every document of a saved index for a query at a reference time.",
    )
    p.add_argument("index", help="index directory written by `chronorank index`")
    p.add_argument("query", help="the question; its temporal intent is parsed from the text")
    p.add_argument("--now", default=None, help="reference time, e.g. 2026-08-01 (default: the wall clock)")
    p.add_argument("-k", "--top-k", type=int, default=10, help="number of results (default 10)")
    p.add_argument("--explain", action="store_true", help="print the scoring trace for every hit")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--config", default=None, help="index(...) spec overriding the saved config for this query (default: the saved one)")
    p.add_argument("--no-verify", action="store_true", help="skip the sha256 check of the index files")
    p.set_defaults(func=run)


def run(args: Any) -> int:
    from chronorank.commands._index_common import print_ranking
    from chronorank.commands._input import parse_now
    from chronorank.index import TemporalIndex

    if Path(args.index).is_file():  # a corpus given where the index goes: never suggest --out over it
        out = str(Path(args.index).with_name(Path(args.index).stem + "-index"))
        raise InvalidInput(f"{args.index!r} is a file, not an index directory; build an index from it first: "
                           f"chronorank index {args.index} --out {out}, then: chronorank search {out} QUERY")
    if not Path(args.index).is_dir():
        raise InvalidInput(f"index {args.index!r} is not a directory; build one with: chronorank index "
                           f"CORPUS.jsonl --out {args.index}")
    if args.top_k < 1:
        raise InvalidInput(f"--top-k {args.top_k}: give a positive number of results, e.g. -k 10")
    try:
        idx = TemporalIndex.load(args.index, verify=not args.no_verify)
    except (ChronorankError, OSError):
        raise
    except Exception as exc:  # unchecked files (--no-verify) can fail anywhere while decoding
        if not args.no_verify:
            raise
        raise InvalidInput(f"index {args.index!r} could not be read ({type(exc).__name__}: {exc}); its files "
                           "are damaged -- run without --no-verify to see which, or rebuild it with chronorank index"
                           ) from None
    ranking = idx.search(args.query, k=args.top_k, now=parse_now(args.now), config=args.config)
    print_ranking(ranking, explain=args.explain, as_json=args.json)
    return 0
