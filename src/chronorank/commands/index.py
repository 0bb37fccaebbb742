"""``chronorank index CORPUS.jsonl --out DIR``: build and save an index from a docs/format.md corpus."""

from __future__ import annotations

import contextlib
import dataclasses
import sys
import time
import warnings
from pathlib import Path
from typing import Any

from chronorank.errors import InvalidInput


def add_parser(sub: Any) -> None:
    from chronorank.commands._input import add_date_options

    p = sub.add_parser(
        "index",
        help="build an index from a corpus JSONL file",
        description="Read a corpus (JSON Lines: id, text, date, valid_from, valid_to, metadata; "
        "the format is in docs/format.md, an example in examples/releases/corpus.jsonl), embed and "
        "analyse every document, and save the index to --out. Exit codes: 0 done, 2 bad input, "
        "3 the corpus holds no documents.",
    )
    p.add_argument("corpus", help="corpus.jsonl (docs/format.md), or a JSON array of documents")
    p.add_argument("--out", "-o", required=True, help="index directory to write (created; replaced atomically)")
    p.add_argument("--embedder", default="default",
                   help="default (MiniLM int8 ONNX) | none (keywords only) | hashing | st:<model> | "
                        "fastembed:<model> (default: default)")
    p.add_argument("--config", default=None,
                   help="index(...) spec stored as the index's default search config (default: the built-in one)")
    p.add_argument("--group-key", default=None,
                   help="metadata field linking versions of one document (default: none)")
    add_date_options(p, "indexes the document as undated")
    p.add_argument("--no-infer-dates", dest="infer_dates", action="store_false",
                   help="leave documents without a date undated (default: date them by what their text, "
                        "a date-named metadata field or their url / source / path states)")
    p.add_argument("--append", action="store_true", help="upsert into an existing index at --out")
    p.set_defaults(func=run)


def run(args: Any) -> int:
    from chronorank.commands._input import read_corpus, warn
    from chronorank.errors import DateWarning
    from chronorank.index import TemporalIndex
    from chronorank.index.date_report import no_dates_message
    from chronorank.index.storage import CURRENT, writer_lock

    t0 = time.perf_counter()
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise InvalidInput(f"--out {str(out)!r} is a file; give a directory for the index (it is created)")
    # --append is a read-modify-write: hold the writer lock from the load to the save, so two
    # appends at once keep both batches
    with writer_lock(out) if args.append else contextlib.nullcontext():
        # the index (and its embedder, an optional dependency) comes first, so a missing extra
        # stops the command before it reads a large corpus
        if args.append and (out / CURRENT).is_file():
            idx = TemporalIndex.load(out)
        else:
            idx = TemporalIndex(
                embedder=args.embedder, config=args.config, group_key=args.group_key, bad_dates=args.bad_dates,
            )
        if not args.infer_dates:  # a new index or a loaded one (which keeps its saved setting otherwise)
            idx.infer_dates = False
        stats: dict[str, int] = {}
        docs = read_corpus(args.corpus, "index", bad_dates=args.bad_dates, dayfirst=args.dayfirst,
                           date_unit=args.date_unit, stats=stats)
        t1 = time.perf_counter()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", DateWarning)
            idx.add(docs)  # (numbers are ISO times by now: check_dates read them with --date-unit)
        for w in caught:  # the date warning is said below, as one line about the file
            if not issubclass(w.category, DateWarning):
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
        t2 = time.perf_counter()
        idx.save(out)
        t3 = time.perf_counter()
    print(
        f"indexed {len(docs)} documents ({len(idx)} in the index) into {out} -- "
        f"read {t1 - t0:.1f}s, embed+analyse {t2 - t1:.1f}s, save {t3 - t2:.1f}s",
        file=sys.stderr,
    )
    report = idx.date_report
    if report is not None:
        # the dates --bad-dates missing cleared reached add() as undated: count them as unreadable
        report = dataclasses.replace(report, unreadable=report.unreadable + stats.get("unreadable", 0))
        print(f"dates: {report.describe()}", file=sys.stderr)
        if report.total and report.undated == report.total:
            warn("index", f"{args.corpus}: {no_dates_message(report, file=True)}")
    found = dict(idx.last_inferred)
    checked = found.pop("checked", 0)
    if checked:
        parts = ", ".join(f"from the {k} {v}" for k, v in found.items() if v)
        print(f"chronorank index: note: dates inferred for {sum(found.values())} of {checked} documents without "
              f"a date{' (' + parts + ')' if parts else ''}; --no-infer-dates leaves them undated", file=sys.stderr)
    return 0
