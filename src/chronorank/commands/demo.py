"""``chronorank demo``: index a bundled real corpus and answer time-sensitive questions.

The corpus is the tdw-rag release-notes snapshot (242 GitHub release notes of 13
projects, MIT, bundled in ``chronorank/eval/bundled``). "Now" is pinned to the snapshot's
``fetched_at`` time so the answers do not drift with the wall clock. The built index is
cached (``$XDG_CACHE_HOME/chronorank/demo-index-<embedder>-<stamp>``, or in the folder
``$CHRONORANK_INDEX_CACHE`` names; ``CHRONORANK_INDEX_CACHE=off`` or ``--no-cache``: built every
time), so a second run skips the embedding; the stamp is a digest of the snapshot, the
embedder's model key and this chronorank's code (:func:`chronorank._recache.code_stamp`), so a
changed one builds anew (and the older stamps of that embedder are removed). The document and
question vectors have caches of their own (``CHRONORANK_EMBED_CACHE``).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any

from chronorank.errors import ChronorankError

QUESTIONS = (
    "what changed in the latest release of polars",
    "what was the newest duckdb release as of April 2026",
    "qdrant 1.17.0 release notes",
    "ruff releases in June 2026",
)


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "demo",
        help="index the bundled corpus and answer time-aware questions",
        description="Build (or reuse) an index over the bundled release-notes corpus and answer a few "
        "time-sensitive questions with explanations. Needs only `pip install \"chronorank[index]\"`.",
    )
    p.add_argument("questions", nargs="*", help="your own questions (default: four examples)")
    p.add_argument("-k", "--top-k", type=int, default=3, help="answers per question (default 3)")
    p.add_argument("--embedder", default="default", help="default (MiniLM int8 ONNX) | none | hashing (default: default)")
    p.add_argument("--rebuild", action="store_true", help="ignore the cached demo index (build it again)")
    p.add_argument("--no-cache", action="store_true", help="neither read nor write the cached index (as CHRONORANK_INDEX_CACHE=off)")
    p.add_argument("--json", action="store_true", help="print JSON, one object per question")
    p.set_defaults(func=run)


def _cache_dir(embedder: str, stamp: str) -> Path | None:
    """Where the demo's index is cached; None when ``CHRONORANK_INDEX_CACHE`` is off."""
    from chronorank._recache import env_cache_dir

    root = env_cache_dir("CHRONORANK_INDEX_CACHE", "indexes")
    if root is None:
        return None
    if os.environ.get("CHRONORANK_INDEX_CACHE", "").strip().lower() in ("", "1", "on", "true", "yes"):
        root = root.parent  # no folder named: beside the other caches, not among eval's indexes
    return root / f"demo-index-{embedder.replace(':', '_').replace('/', '_')}-{stamp}"


def _stamp(snapshot: bytes, embedder: Any, spec: str) -> str:
    """What the cached index was built from: the snapshot file's bytes, the model and the code."""
    from chronorank import _recache
    from chronorank.index.embed_cache import model_key

    material = {"snapshot": hashlib.sha256(snapshot).hexdigest(), "embedder": model_key(embedder) or spec,
                "code": _recache.code_stamp()}
    return hashlib.sha256(json.dumps(material, sort_keys=True).encode()).hexdigest()[:16]


def _prune(cache: Path) -> None:
    """Remove the other stamps of this embedder's cached index (built by older code or data)."""
    prefix = cache.name[: cache.name.rindex("-") + 1]  # demo-index-<embedder>-, then 16 hex digits
    try:
        others = [p for p in cache.parent.iterdir() if p != cache and p.is_dir() and len(p.name) == len(cache.name)
                  and p.name.startswith(prefix) and all(c in "0123456789abcdef" for c in p.name[len(prefix):])]
    except OSError:
        return
    for p in others:
        shutil.rmtree(p, ignore_errors=True)


def run(args: Any) -> int:
    from chronorank.commands._index_common import print_ranking
    from chronorank.eval.datasets import read_release_snapshot, release_benchmark_from_snapshot
    from chronorank.index import TemporalIndex, get_embedder

    snap, data = read_release_snapshot(None)
    now = snap["fetched_at"]
    embedder = get_embedder(args.embedder)
    cache = None if args.no_cache else _cache_dir(args.embedder, _stamp(data, embedder, args.embedder))
    t0 = time.perf_counter()
    idx = None
    if cache is not None and not args.rebuild:
        try:
            idx = TemporalIndex.load(cache, embedder=embedder)
            # the cache holds documents, vectors and BM25 statistics; ranking settings are
            # this version's defaults, not whatever was current when the cache was written
            from chronorank.index import IndexConfig

            idx.config = IndexConfig()
            how = f"loaded the cached index from {cache}"
        except (ChronorankError, OSError):
            idx = None
    if idx is None:
        corpus, _ = release_benchmark_from_snapshot(snap)
        idx = TemporalIndex(embedder=embedder)
        idx.add(corpus)
        how = f"indexed {len(corpus)} release notes of 13 projects"
        if cache is not None:
            try:
                idx.save(cache)
                how += f" (cached in {cache})"
            except OSError:
                pass
            else:
                _prune(cache)
    took = time.perf_counter() - t0
    if not args.json:
        print(f"chronorank demo: {how} in {took:.1f}s; now = {now} (the snapshot time)\n")
    from chronorank.index.embed_cache import cached_queries

    terms: set[str] = set()
    # a rerun asks the same questions: their vectors come from the cache
    with cached_queries(idx):
        for q in args.questions or QUESTIONS:
            ranking = idx.search(q, k=args.top_k, now=now)
            if args.json:
                print_ranking(ranking, explain=False, as_json=True)
                continue
            print("=" * 100)
            print_ranking(ranking, explain=True, as_json=False, legend=False)
            terms |= ranking.terms()
            if len(ranking):
                best = ranking[0]
                text = " ".join((best.payload or {}).get("text", "").split())
                print(f"\nanswer: {best.id} -- {text[:300]}{'...' if len(text) > 300 else ''}\n")
    if terms:
        from chronorank.types import legend_line

        print("=" * 100)
        print(legend_line(terms))
    sys.stdout.flush()
    return 0
