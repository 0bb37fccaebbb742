"""``chronorank serve-demo``: serve the before/after demo app over a corpus (stdlib HTTP)."""

from __future__ import annotations

import argparse
import contextlib
import sys
import threading
import time
from typing import Any

from chronorank.errors import ChronorankError, InvalidInput


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "serve-demo",
        help="serve the interactive demo app",
        description=(
            "Index a corpus with the embedded TemporalIndex (real MiniLM embeddings by default) "
            "and serve a page where a question shows its ranking by similarity alone and after "
            "the temporal layer, with the kernel and the query's temporal intent. "
            "JSON: GET /api/search?q=...&k=10[&kernel=SPEC&strength=S&combine=NAME&now=DATE]."
        ),
    )
    p.add_argument("--host", default="127.0.0.1", help="interface to bind (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8765, help="port (default 8765; 0 picks a free one)")
    p.add_argument("--corpus", default=None,
                   help="docs/format.md corpus.jsonl (default: the bundled corpus)")
    p.add_argument("--limit", type=int, default=None, metavar="N",
                   help="index only the first N documents, a quicker start (default: all)")
    p.add_argument("--embedder", default="default",
                   help="'default' (MiniLM ONNX), 'hashing', 'st:<model>', 'fastembed:<model>' or 'none' (default: default)")
    p.add_argument("--config", default=None,
                   help="index spec, e.g. \"index(kernel='cliff(half_life_days=90)', strength=0.5)\" (default: the built-in one)")
    p.add_argument("--group-key", default=None, help="metadata field linking versions of one document (default: none)")
    p.add_argument("--now", default=None,
                   help="reference date (default: the newest document date in the corpus)")
    p.add_argument("--index", default=None, metavar="DIR",
                   help="load the index from DIR if it exists, else build it and save it there (default: build in memory)")
    p.add_argument("--embed", choices=("background", "now"), default="background",
                   help="background: serve at once with keyword + time while the documents are embedded, "
                        "the dense signal joining once every vector is in; now: embed before serving "
                        "(default: background)")
    p.add_argument("--verbose", action="store_true", help="log every request")
    p.add_argument("--workers", type=int, default=8,
                   help="threads answering searches at once (default 8); slow clients hold none")
    p.add_argument("--request-timeout", type=float, default=10.0, metavar="S",
                   help="seconds a client has to send its whole request (default 10)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from chronorank.commands._input import parse_now
    from chronorank.demo_app import make_server

    parse_now(args.now)  # checked before indexing
    if args.limit is not None and args.limit < 1:
        raise InvalidInput(f"--limit {args.limit}; give a positive number of documents")
    # the port is bound before indexing: a busy one fails now, not after minutes of embedding
    server = make_server(None, args.host, args.port, verbose=args.verbose, workers=args.workers,
                         request_timeout=args.request_timeout)
    try:
        with contextlib.suppress(KeyboardInterrupt):
            _index_and_serve(args, server)
    finally:
        server.server_close()
    return 0


def _index_and_serve(args: argparse.Namespace, server: Any) -> None:
    from chronorank.demo_app import DemoEngine, default_corpus, demo_handler

    if args.corpus:
        from chronorank.commands._input import read_corpus

        docs, source = read_corpus(args.corpus, "serve-demo", flag="--corpus", bad_dates="missing"), args.corpus
    else:
        docs, source = default_corpus()
    if args.limit:
        docs = docs[: args.limit]
    print(f"indexing {len(docs)} documents from {source} ...", file=sys.stderr, flush=True)
    engine = DemoEngine(
        docs,
        embedder=None if args.embedder == "none" else args.embedder,
        config=args.config,
        group_key=args.group_key,
        now=args.now,
        source=source,
        index_path=args.index,
        embed=args.embed,
    )
    server.handler = demo_handler(engine)
    host, port = str(server.server_address[0]), int(server.server_address[1])
    print(
        f"indexed in {engine.build_seconds:.1f} s; serving http://{host}:{port}/ "
        f"(as of {engine.health()['now']}); Ctrl-C stops",
        file=sys.stderr,
        flush=True,
    )
    dense = engine.dense()
    if dense["dense_complete"] is False:
        print(f"dense: {dense['dense']} (embedding in the background)", file=sys.stderr, flush=True)
        threading.Thread(target=_report_when_ready, args=(engine,), daemon=True).start()
    server.serve_forever()


def _report_when_ready(engine: Any) -> None:
    started = time.perf_counter()
    try:
        engine.index.wait()
    except ChronorankError as exc:
        print(f"dense: {exc}", file=sys.stderr, flush=True)
        return
    print(f"dense: {engine.dense()['dense']} after {time.perf_counter() - started:.1f} s more; "
          "answers now fuse the dense signal", file=sys.stderr, flush=True)
