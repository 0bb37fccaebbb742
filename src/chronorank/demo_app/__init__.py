"""``chronorank serve-demo``: a small stdlib HTTP app over a corpus in a TemporalIndex.

Type a question and see the ranking by similarity alone next to the time-aware ranking,
with the kernel and the query's temporal intent. Endpoints:

- ``GET /`` -- the page (self-contained: inline CSS/JS, talks only to this server);
- ``GET /api/search?q=...&k=10[&kernel=SPEC&strength=S&combine=NAME&now=DATE]`` -- JSON;
- ``GET /api/health`` -- JSON with the corpus size, embedder and reference date.

Nothing here imports an optional dependency at module import time; the index (and its
embedder) is built when a :class:`DemoEngine` is created.
"""

from __future__ import annotations

import json
import math
import sys
import threading
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

import numpy as np

from chronorank.demo_app.page import PAGE
from chronorank.demo_app.server import DemoServer
from chronorank.errors import ChronorankError, InvalidInput
from chronorank.eval.datasets import load_corpus, normalize_document, tdw_release_benchmark
from chronorank.index import TemporalIndex
from chronorank.timeparse import parse_times, resolve_now
from chronorank.types import format_epoch

__all__ = ["DemoEngine", "default_corpus", "demo_handler", "load_corpus_file", "make_server"]

MAX_K = 50
SNIPPET = 220
#: longest question the demo answers (characters); a longer one is refused with 400
MAX_QUERY_CHARS = 1000


def example_queries(docs: Sequence[Mapping[str, Any]]) -> list[str]:
    """A few questions of each temporal kind about the corpus's most frequent projects."""
    projects = Counter(
        str((d.get("metadata") or {}).get("project") or d.get("project") or "") for d in docs
    )
    names = [p for p, _ in projects.most_common(4) if p] or ["the project"]
    years = sorted({str(d.get("date", ""))[:4] for d in docs if str(d.get("date", ""))[:4].isdigit()})
    year = years[-2] if len(years) > 1 else (years[0] if years else "2024")
    pick = (names * 4)[:4]
    return [
        f"what changed in the latest release of {pick[0]}",
        f"what changed in {pick[1]} in {year}",
        f"what was the newest {pick[2]} release as of June 1, {year}",
        f"how do I configure {pick[3]}",
    ]


def _iso(t: float | None) -> str | None:
    if t is None or (isinstance(t, float) and math.isnan(t)):
        return None
    if math.isinf(t):
        return "-inf" if t < 0 else "+inf"
    return format_epoch(t)


def _num(x: Any) -> float | None:
    v = float(x)
    return v if math.isfinite(v) else None


def load_corpus_file(path: str | Path) -> list[dict[str, Any]]:
    """Documents from a docs/format.md ``corpus.jsonl`` (or a JSON list of such objects)."""
    p = Path(path)
    if not p.is_file():
        raise InvalidInput(f"--corpus {str(p)!r} does not exist; give a docs/format.md corpus.jsonl file")
    if p.suffix == ".json":
        data = json.loads(p.read_text(encoding="utf-8"))
        if not isinstance(data, list):
            raise InvalidInput(f"{str(p)!r} holds a JSON {type(data).__name__}; expected a list of documents")

        return [normalize_document(d, where=f"{p}[{i}]") for i, d in enumerate(data)]

    return load_corpus(p)


def default_corpus() -> tuple[list[dict[str, Any]], str]:
    """The bundled corpus: the changelog corpus when packaged, else the release-notes snapshot."""
    data = Path(__file__).resolve().parent.parent / "data"
    for candidate in sorted(data.glob("**/corpus.jsonl")) + sorted(data.glob("changelogs*.jsonl")):
        return load_corpus_file(candidate), f"bundled {candidate.relative_to(data.parent)}"

    corpus, _queries = tdw_release_benchmark()
    return corpus, "bundled release-notes snapshot (eval/bundled/release_corpus.json)"


class DemoEngine:
    """A TemporalIndex over ``docs`` that answers one question as before/after rankings."""

    def __init__(
        self,
        docs: Sequence[Mapping[str, Any]],
        *,
        embedder: Any = "default",
        config: str | None = None,
        group_key: str | None = None,
        now: Any = None,
        source: str = "",
        index_path: str | Path | None = None,
        embed: str = "now",
    ) -> None:
        """``embed="background"``: serve at once with keyword + time while the documents are
        embedded (the state is in :meth:`health` and every answer); an ``index_path`` that
        does not exist yet is saved once every vector is in."""
        docs = list(docs)
        if not docs:
            raise InvalidInput("the demo corpus is empty; give --corpus a corpus.jsonl with documents")
        started = time.perf_counter()
        if index_path is not None and Path(index_path).exists():
            self.index = TemporalIndex.load(index_path)
        else:
            self.index = TemporalIndex(embedder, config=config, group_key=group_key, bad_dates="missing")
            self.index.add(docs, embed=embed)
            if index_path is not None and self.index.ready:
                self.index.save(index_path)
            elif index_path is not None:
                self.saver = threading.Thread(target=self._save_when_ready, args=(Path(index_path),),
                                              name="chronorank-demo-save", daemon=True)
                self.saver.start()
        self.build_seconds = time.perf_counter() - started
        self.source = source
        self.examples = example_queries(docs)
        self.now = float(resolve_now(now)) if now is not None else _newest_time(docs)

    saver: threading.Thread | None = None
    save_error: str | None = None

    def _save_when_ready(self, path: Path) -> None:
        try:
            self.index.save(path)  # waits for the vectors
        except ChronorankError as exc:
            self.save_error = str(exc)
            print(f"the index was not saved to {path}: {exc}", file=sys.stderr, flush=True)

    def dense(self) -> dict[str, Any]:
        """The dense lane's state: ``dense`` (e.g. "1,200 / 5,000 embedded; ...") and
        ``dense_complete`` (None for an index without vectors)."""
        prog = self.index.dense_progress
        return {"dense": None if prog is None else prog.describe(),
                "dense_complete": None if prog is None else prog.complete}

    def health(self) -> dict[str, Any]:
        emb = self.index.embedder
        return {
            **self.dense(),
            "ok": True,
            "documents": len(self.index),
            "embedder": getattr(emb, "name", None) if emb is not None else None,
            "config": self.index.config.spec(),
            "now": _iso(self.now),
            "source": self.source,
            "build_seconds": round(self.build_seconds, 3),
            "examples": self.examples,
        }

    def search(
        self,
        query: str,
        *,
        k: int = 10,
        kernel: str | None = None,
        strength: float | None = None,
        combine: str | None = None,
        now: Any = None,
    ) -> dict[str, Any]:
        """Similarity-only and temporal top-k for ``query``, with intent and kernel."""
        if not 1 <= k <= MAX_K:
            raise InvalidInput(f"k={k}; give 1..{MAX_K}")
        if len(query) > MAX_QUERY_CHARS:
            raise InvalidInput(f"q has {len(query):,} characters; the demo answers questions of at most "
                               f"{MAX_QUERY_CHARS:,}: shorten it.")
        overrides: dict[str, Any] = {}
        if kernel:
            overrides["kernel"] = kernel
        if strength is not None:
            overrides["strength"] = strength
        if combine:
            overrides["combine"] = combine
        now_s = self.now if now in (None, "") else float(resolve_now(now))
        started = time.perf_counter()
        # no lock: the index serves concurrent readers (each search reads one immutable
        # snapshot; the ONNX session and the tokenizer are safe to call from many threads)
        after = self.index.search(query, k=k, now=now_s, **overrides)
        before = self.index.search(query, k=k, now=now_s, **{**overrides, "strength": 0.0})
        took = (time.perf_counter() - started) * 1000
        meta = after.meta
        intent = meta["intent"]
        return {
            "query": query,
            "now": _iso(now_s),
            "intent": {
                "mode": intent.mode,
                "time_sensitivity": intent.time_sensitivity,
                "target": None
                if intent.target is None
                else {"start": _iso(intent.target.start), "end": _iso(intent.target.end)},
                "topical_query": intent.topical_query,
                "matched": [s.text for s in intent.spans],
                "describe": intent.describe(),
            },
            "kernel": meta["kernel"],
            "half_life_days": meta.get("half_life_days"),
            "combine": meta["combine"],
            "strength": meta["strength"],
            "effective_strength": meta["effective_strength"],
            "reference": _iso(meta.get("reference_time")),
            "config": meta.get("config"),
            "before": [self._row(h, temporal=False) for h in before],
            "after": [self._row(h, temporal=True) for h in after],
            "took_ms": round(took, 1),
            "dense": meta.get("dense"),
            "dense_complete": meta.get("dense_complete"),
        }

    def _row(self, hit: Any, *, temporal: bool) -> dict[str, Any]:
        payload = hit.payload if isinstance(hit.payload, Mapping) else {}
        text = str(payload.get("text", ""))
        row: dict[str, Any] = {
            "rank": hit.rank_after,
            "id": hit.id,
            "date": _iso(hit.time),
            "similarity": _num(hit.similarity),
            "snippet": text[:SNIPPET] + ("\u2026" if len(text) > SNIPPET else ""),
        }
        if temporal:
            row.update(
                rank_before=int(hit.rank_before),
                decay=_num(hit.decay),
                score=_num(hit.score),
                age_days=_num(hit.age_days),
                notes=list(hit.notes),
            )
        return row


def _newest_time(docs: Sequence[Mapping[str, Any]]) -> float:
    """The newest document date (the snapshot's "today"), else the wall clock."""
    times = parse_times([d.get("date") for d in docs])
    finite = times[np.isfinite(times)]
    return float(finite.max()) if finite.size else float(resolve_now(None))


def demo_handler(engine: DemoEngine) -> type[BaseHTTPRequestHandler]:
    """The request handler class that answers for ``engine``."""
    page_bytes = PAGE.encode("utf-8")

    class Handler(BaseHTTPRequestHandler):
        server_version = "chronorank-demo"

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib name
            if getattr(self.server, "verbose", False):
                super().log_message(format, *args)

        def _send(self, status: int, body: bytes, ctype: str) -> None:
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.send_header("X-Content-Type-Options", "nosniff")
            if ctype.startswith("text/html"):
                self.send_header(
                    "Content-Security-Policy",
                    "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
                    "connect-src 'self'; img-src data:",
                )
            self.end_headers()
            self.wfile.write(body)

        def _json(self, status: int, obj: Any) -> None:
            self._send(status, json.dumps(obj, allow_nan=False).encode("utf-8"), "application/json")

        def do_GET(self) -> None:  # noqa: N802 - stdlib name
            url = urlparse(self.path)
            if url.path in ("/", "/index.html"):
                self._send(200, page_bytes, "text/html; charset=utf-8")
                return
            if url.path == "/api/health":
                self._json(200, engine.health())
                return
            if url.path != "/api/search":
                self._json(404, {"error": f"no such path {url.path!r}; try /, /api/search?q=... or /api/health"})
                return
            qs = {k: v[-1] for k, v in parse_qs(url.query).items()}
            query = qs.get("q", "").strip()
            if not query:
                self._json(400, {"error": "missing q; e.g. /api/search?q=what+changed+in+the+latest+release+of+flask"})
                return
            try:
                k = int(qs.get("k", "10"))
                strength = float(qs["strength"]) if qs.get("strength") else None
            except ValueError:
                self._json(400, {"error": "k must be an integer and strength a number in [0, 1]"})
                return
            try:
                result = engine.search(
                    query, k=k, kernel=qs.get("kernel") or None, strength=strength,
                    combine=qs.get("combine") or None, now=qs.get("now") or None,
                )
            except (ChronorankError, ValueError) as exc:
                self._json(400, {"error": str(exc)})
                return
            self._json(200, result)

    return Handler


def make_server(
    engine: DemoEngine | None, host: str = "127.0.0.1", port: int = 8765, *, verbose: bool = False, **limits: Any,
) -> DemoServer:
    """A :class:`~chronorank.demo_app.server.DemoServer` for ``engine``, its port bound (0
    picks a free one: ``server.server_port``). ``engine=None`` binds the port only; set
    ``server.handler = demo_handler(engine)`` before serving. ``limits``: ``workers``,
    ``max_connections``, ``request_timeout``, ``idle_timeout``, ``max_head_bytes``."""
    return DemoServer(host, port, None if engine is None else demo_handler(engine), verbose=verbose, **limits)
