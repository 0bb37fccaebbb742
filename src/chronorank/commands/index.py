"""``chronorank index CORPUS.jsonl --out DIR``: build and save an index from a FORMAT.md corpus."""

from __future__ import annotations

import contextlib
import sys
import time
from typing import Any


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "index",
        help="build an index from a corpus JSONL file",
        description="Read a FORMAT.md corpus (JSON Lines: id, text, date, valid_from, valid_to, "
        "metadata), embed and analyse every document, and save the index to --out.",
    )
    p.add_argument("corpus", help="corpus.jsonl (FORMAT.md), or a JSON array of documents")
    p.add_argument("--out", "-o", required=True, help="index directory to write (created; replaced atomically)")
    p.add_argument("--embedder", default="default",
                   help="default (MiniLM int8 ONNX) | none (keywords only) | hashing | st:<model> | fastembed:<model>")
    p.add_argument("--config", default=None, help="index(...) spec stored as the index's default search config")
    p.add_argument("--group-key", default=None, help="metadata field linking versions of one document")
    p.add_argument("--bad-dates", default="raise", choices=("raise", "missing"),
                   help="unparseable dates: raise (default) or index the document as undated")
    p.add_argument("--append", action="store_true", help="upsert into an existing index at --out")
    p.set_defaults(func=run)


def run(args: Any) -> int:
    from pathlib import Path

    from chronorank.eval.datasets import load_corpus
    from chronorank.index import TemporalIndex
    from chronorank.index.storage import CURRENT, writer_lock

    t0 = time.perf_counter()
    docs = load_corpus(args.corpus)
    out = Path(args.out)
    # --append is a read-modify-write: hold the writer lock from the load to the save, so two
    # appends at once keep both batches
    with writer_lock(out) if args.append else contextlib.nullcontext():
        if args.append and (out / CURRENT).is_file():
            idx = TemporalIndex.load(out)
        else:
            idx = TemporalIndex(
                embedder=args.embedder, config=args.config, group_key=args.group_key, bad_dates=args.bad_dates
            )
        t1 = time.perf_counter()
        idx.add(docs)
        t2 = time.perf_counter()
        idx.save(out)
        t3 = time.perf_counter()
    print(
        f"indexed {len(docs)} documents ({len(idx)} in the index) into {out} -- "
        f"read {t1 - t0:.1f}s, embed+analyse {t2 - t1:.1f}s, save {t3 - t2:.1f}s",
        file=sys.stderr,
    )
    return 0
