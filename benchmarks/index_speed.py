"""Speed and memory of the embedded index on synthetic data (dim 384, float32).

    python benchmarks/index_speed.py [--sizes 100000 1000000] [--queries 40] [--qdrant-n 20000] [--no-dense]

For each size: build throughput (documents/s, user-supplied vectors, BM25 analysis
included), search latency (p50/p90 over queries with a parsed temporal intent; the exact
top 10 -- every document's similarity, the temporal layer over a pool proven to hold the
top 10 (``core._exact_pool``); query vector given, so embedding is timed separately) against
the bare numpy baseline -- ``vectors @ q`` plus an ``argpartition`` top-10, timed right
after each search on the same query (``exact_over_bare`` is the ratio of the p50s) --, and
against the same bare top 10 over the search's own mat-vec (``core._cosines``: numpy's
per-row dot products, split between two threads above ``core.SMALL_MATVEC``), timed straight
after that (``exact_over_bare_same_matvec``: what the search costs beyond its mat-vec; on a
loaded machine the baseline's threaded gemv also charges the next search, since OpenBLAS's
worker spins after it: at 20,000 documents, load 5 on 2 cores, the search took 11.7 ms wall
for 3.9 ms of CPU, 5.1 ms for 3.7 ms with OPENBLAS_NUM_THREADS=1), the
stage breakdown (the search's dense mat-vec, BM25, temporal layer), memory per document (arrays +
resident-set growth), save/load times; then Qdrant local mode (``QdrantClient(":memory:")``,
prefetch + exp-decay formula query) on the same data at a smaller size, against our
index at that same size. ``modes`` (``--mode-queries``): every intent mode's query set, with
and without a metadata filter, against the bare mat-vec + top 10 timed straight after each
search (``bench_modes``; the target is a p50 within 1.3x of it).

``dense_small``: the changelog corpus (2,062 documents, ../shared/data/changelogs) with the
default MiniLM embedder, every query of its set in turn: the whole search (the query
embedded inside it) against embedding the query alone, the search with the vector given
straight after an embedding, and keywords only; ``embed_calls_per_search`` counts the
embedder's calls. Document vectors come from the embedding cache (the first run embeds
the corpus). Skipped without ../shared or the model. Writes ``benchmarks/results/index_speed.json``.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "index_speed.json"
DIM = 384
DAY = 86400.0
NOW = 1_785_000_000.0  # 2026-07-25
WORDS = 20_000
QUERIES = [
    "what changed in the latest release of {w}",
    "{w} {v} changelog",
    "{w} {x} bug fixes in 2024",
    "newest {w} {x} behaviour",
    "{w} {x} as of March 2025",
]


def _rss_mb() -> float:
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


def synthetic(n: int, seed: int = 0, *, dense: bool = True) -> tuple[list[dict], np.ndarray | None]:
    """``n`` short documents (Zipf words, a version, a date over the last years) and their
    unit vectors (None with ``dense=False``)."""
    rng = np.random.default_rng(seed)
    vocab = np.array([f"w{i}" for i in range(WORDS)])
    # Zipf-like word choice, ~30 words a document, plus a version token
    ranks = np.minimum(rng.zipf(1.3, size=(n, 30)), WORDS) - 1
    vers = rng.integers(0, 40, size=(n, 3))
    ages = rng.exponential(365.0, size=n)
    dates = NOW - ages * DAY
    vecs = None
    if dense:
        vecs = rng.standard_normal((n, DIM), dtype=np.float32)
        vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    docs = []
    for i in range(n):
        words = " ".join(vocab[ranks[i]])
        docs.append({"id": f"doc{i}", "text": f"{words} {vers[i, 0]}.{vers[i, 1]}.{vers[i, 2]}", "date": float(dates[i])})
    return docs, vecs


#: a query set per intent mode (``chronorank.intent``): each template parses to that mode
MODE_QUERIES = {
    "recent": ["what changed in the latest release of {w}", "newest {w} {x} behaviour"],
    "as_of": ["{w} {x} as of March 2025", "{w} release on 2024-03-05"],
    "range": ["{w} {x} bug fixes in 2024", "{w} {x} update in 2021"],
    "specific": ["{w} {v} changelog", "{w} {x} version {v}"],
    "timeless": ["explain {w} {x}", "how does {w} handle {x}"],
}
#: the metadata filter of the filtered query sets: one project of 20 (5% of the documents)
MODE_FILTER = {"project": "p3"}


#: The quiet before each timed call of ``bench_modes`` (longer than OpenBLAS's spin).
MODE_PAUSE_S = 0.15


def bench_modes(idx, n_queries: int, seed: int = 7, pause_s: float = MODE_PAUSE_S) -> dict:  # noqa: ANN001
    """Every intent mode's exact search, with and without a metadata filter, against the
    bare ``vectors @ q`` + argpartition top 10 timed straight after each search (the
    shapes take turns, so every ratio is from the same stretch of the run). Each timed call,
    ours and the bare one alike, starts after ``pause_s`` of quiet: OpenBLAS's worker threads
    spin for about 0.1 s after a threaded gemv (its THREAD_TIMEOUT), so without the pause the
    bare mat-vec would take a core from the two-thread search timed after it, and not the
    other way round."""
    from chronorank.index.version_conflict import LeadMemo
    from chronorank.intent import parse as parse_intent

    rng = np.random.default_rng(seed)
    vectors = idx._snap.vectors
    shapes = [(mode, flt) for mode in MODE_QUERIES for flt in (False, True)]
    sets: dict[tuple[str, bool], list[tuple[str, np.ndarray]]] = {sh: [] for sh in shapes}
    for mode, flt in shapes:
        tpls = MODE_QUERIES[mode]
        for i in range(n_queries):
            w, x = (f"w{int(j)}" for j in rng.integers(0, 300, size=2))
            v = ".".join(str(int(j)) for j in rng.integers(0, 40, size=3))
            text = tpls[i % len(tpls)].format(w=w, x=x, v=v)
            got = parse_intent(text, now=NOW).mode
            if got != mode:
                raise AssertionError(f"{text!r} parses as {got}, not {mode}")
            q = rng.standard_normal(DIM).astype(np.float32)
            sets[(mode, flt)].append((text, q / np.linalg.norm(q)))
    # the version rule reads each document's lead once (a regex, ~10 us a lead), at the first
    # version question that needs it or at a save; a loaded index has read them all, and so
    # has this one before the timed runs
    snap = idx._snap
    snap.lead_memo.setdefault("en", LeadMemo()).arrays_of(snap, "en")
    for (_mode, flt), qs in sets.items():  # warm-up: each shape once (the filter's column too)
        idx.search(qs[0][0], k=10, now=NOW, vector=qs[0][1], filter=MODE_FILTER if flt else None)
    lat: dict[tuple[str, bool], list[float]] = {sh: [] for sh in shapes}
    bare: dict[tuple[str, bool], list[float]] = {sh: [] for sh in shapes}
    for i in range(n_queries):
        for sh in shapes:
            text, q = sets[sh][i]
            time.sleep(pause_s)
            t0 = time.perf_counter()
            idx.search(text, k=10, now=NOW, vector=q, filter=MODE_FILTER if sh[1] else None)
            lat[sh].append(1000 * (time.perf_counter() - t0))
            time.sleep(pause_s)
            t0 = time.perf_counter()
            b = vectors @ q
            np.argpartition(-b, 9)[:10]
            bare[sh].append(1000 * (time.perf_counter() - t0))
    out: dict = {"queries_per_shape": n_queries, "filter": MODE_FILTER, "pause_s": pause_s, "shapes": {}}
    for mode, flt in shapes:
        name = f"{mode}{'+filter' if flt else ''}"
        p50, b50 = _pct(lat[(mode, flt)], 50), _pct(bare[(mode, flt)], 50)
        out["shapes"][name] = {"search_p50_ms": round(p50, 2), "search_p90_ms": round(_pct(lat[(mode, flt)], 90), 2),
                               "bare_p50_ms": round(b50, 2), "ratio": round(p50 / b50, 2)}
    out["worst_ratio"] = max(v["ratio"] for v in out["shapes"].values())
    out["target_ratio"] = 1.3
    return out


def _pct(xs: list[float], p: float) -> float:
    return float(np.percentile(np.array(xs), p))


def bench_ours(n: int, n_queries: int, *, save: bool = True, modes: int = 0) -> dict:
    from chronorank.index import TemporalIndex
    from chronorank.intent import parse as parse_intent
    from chronorank.temporal import apply_temporal

    docs, vecs = synthetic(n)
    for i, d in enumerate(docs):
        d["metadata"] = {"project": f"p{i % 20}"}
    rng = np.random.default_rng(1)
    gc.collect()
    rss0 = _rss_mb()
    idx = TemporalIndex(embedder=None)
    t0 = time.perf_counter()
    idx.add(docs, vectors=vecs)
    add_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    idx._snap.bm25(idx.k1, idx.b)  # built lazily at the first search; timed on its own
    bm25_build_s = time.perf_counter() - t0
    del docs
    gc.collect()
    rss1 = _rss_mb()
    snap = idx._snap
    arrays = {
        "vectors": snap.vectors.nbytes,
        "times": snap.times.nbytes,
        "terms": snap.term_ids.nbytes + snap.term_ptr.nbytes,
        "bm25": sum(a.nbytes for a in (snap._bm25.data, snap._bm25.indices, snap._bm25.indptr)),
    }
    queries = []
    for _ in range(n_queries):
        tpl = QUERIES[len(queries) % len(QUERIES)]
        w, x = (f"w{int(i)}" for i in rng.integers(0, 300, size=2))
        v = ".".join(str(int(i)) for i in rng.integers(0, 40, size=3))
        q = rng.standard_normal(DIM).astype(np.float32)
        queries.append((tpl.format(w=w, x=x, v=v), q / np.linalg.norm(q)))
    idx.search(queries[0][0], k=10, now=NOW, vector=queries[0][1])  # warm-up
    from chronorank.index.core import _cosines

    lat, lat_dense, lat_bm25, lat_temporal, lat_intent, lat_bare, lat_same = [], [], [], [], [], [], []
    cfg = idx.config
    tcfg = cfg.temporal_config()
    times = snap.times[0]
    from chronorank.index.text import analyze

    for text, q in queries:
        t0 = time.perf_counter()
        idx.search(text, k=10, now=NOW, vector=q)
        lat.append(1000 * (time.perf_counter() - t0))
        t0 = time.perf_counter()
        bare = snap.vectors @ q
        np.argpartition(-bare, 9)[:10]
        lat_bare.append(1000 * (time.perf_counter() - t0))
        t0 = time.perf_counter()
        same = _cosines(snap.vectors, q)
        np.argpartition(-same, 9)[:10]
        lat_same.append(1000 * (time.perf_counter() - t0))
        # stage breakdown (same work as inside search)
        t0 = time.perf_counter()
        intent = parse_intent(text, now=NOW)
        lat_intent.append(1000 * (time.perf_counter() - t0))
        t0 = time.perf_counter()
        dense = _cosines(snap.vectors, q)
        lat_dense.append(1000 * (time.perf_counter() - t0))
        t0 = time.perf_counter()
        ids = [idx._vocab[t] for t in analyze(intent.topical_query or text) if t in idx._vocab]
        kw = snap._bm25.scores(ids, idf_power=cfg.idf_power)
        lat_bm25.append(1000 * (time.perf_counter() - t0))
        sim = 0.3 * np.clip(dense, 0, 1) + 0.7 * kw / max(float(kw.max()), 1e-9)
        t0 = time.perf_counter()
        apply_temporal(sim.astype(np.float64), times, intent=intent, now=NOW, config=tcfg)
        lat_temporal.append(1000 * (time.perf_counter() - t0))
    out = {
        "n": n,
        "add_s": round(add_s, 2),
        "build_docs_per_s": round(n / (add_s + bm25_build_s)),
        "bm25_build_s": round(bm25_build_s, 2),
        "search_ms": {"p50": round(_pct(lat, 50), 2), "p90": round(_pct(lat, 90), 2), "mean": round(statistics.mean(lat), 2)},
        "bare_numpy_ms": {"p50": round(_pct(lat_bare, 50), 2), "p90": round(_pct(lat_bare, 90), 2)},
        "exact_over_bare": round(_pct(lat, 50) / _pct(lat_bare, 50), 2),
        "bare_same_matvec_ms": {"p50": round(_pct(lat_same, 50), 2), "p90": round(_pct(lat_same, 90), 2)},
        "exact_over_bare_same_matvec": round(_pct(lat, 50) / _pct(lat_same, 50), 2),
        "stage_p50_ms": {
            "intent_parse": round(_pct(lat_intent, 50), 2),
            "dense_matvec": round(_pct(lat_dense, 50), 2),
            "bm25": round(_pct(lat_bm25, 50), 2),
            "temporal_layer": round(_pct(lat_temporal, 50), 2),
        },
        "array_bytes_per_doc": {k: round(v / n, 1) for k, v in arrays.items()},
        "array_bytes_per_doc_total": round(sum(arrays.values()) / n, 1),
        "rss_mb_growth": round(rss1 - rss0, 1),
        "rss_bytes_per_doc": round((rss1 - rss0) * 1024 * 1024 / n, 1),
    }
    if modes:
        out["modes"] = bench_modes(idx, modes)
    if save:
        with tempfile.TemporaryDirectory(dir=os.environ.get("BENCH_TMP")) as d:
            t0 = time.perf_counter()
            idx.save(Path(d) / "idx")
            out["save_s"] = round(time.perf_counter() - t0, 2)
            for verify in (True, False):
                t0 = time.perf_counter()
                loaded = TemporalIndex.load(Path(d) / "idx", verify=verify)
                out["load_s_verify" if verify else "load_s_no_verify"] = round(time.perf_counter() - t0, 2)
            t0 = time.perf_counter()
            loaded.search(queries[1][0], k=10, now=NOW, vector=queries[1][1])
            out["first_search_after_load_ms"] = round(1000 * (time.perf_counter() - t0), 1)
            del loaded
    del idx, snap
    gc.collect()
    return out


class _Counting:
    """The embedder, counting its calls (each search should embed its query once)."""

    def __init__(self, inner) -> None:  # noqa: ANN001
        self.inner, self.name, self.dim, self.calls = inner, inner.name, inner.dim, 0
        self.cache_key = getattr(inner, "cache_key", None)

    def embed(self, texts):  # noqa: ANN001
        self.calls += 1
        return self.inner.embed(texts)


def bench_dense_small() -> dict:
    """Query latency with the dense signal on the changelog corpus (see the module docstring)."""
    from chronorank.eval.datasets import load_benchmark, shared_data_dir
    from chronorank.index import TemporalIndex, get_embedder
    from chronorank.index.embedders import embed_queries

    shared = shared_data_dir(ROOT)
    if shared is None or not (shared / "changelogs").is_dir():
        return {"skipped": "../shared/data/changelogs is not there"}
    try:
        emb = get_embedder("default")
        emb.embed(["warm-up"])
    except ImportError as exc:
        return {"skipped": f"default embedder unavailable: {exc}"}
    corpus, queries = load_benchmark(shared / "changelogs")
    idx = TemporalIndex(embedder=emb)
    idx.add(corpus)
    counting = _Counting(emb)
    idx.embedder = counting
    texts = [q["query"] for q in queries]
    now = queries[0]["reference_date"]
    for text in texts[:5]:
        idx.search(text, k=10, now=now)  # warm-up
    counting.calls = 0
    full, embed, given, keyword = [], [], [], []
    for text in texts:
        t0 = time.perf_counter()
        idx.search(text, k=10, now=now)
        full.append(1000 * (time.perf_counter() - t0))
        t0 = time.perf_counter()
        vec = embed_queries(emb, [text])[0]
        embed.append(1000 * (time.perf_counter() - t0))
        t0 = time.perf_counter()
        idx.search(text, k=10, now=now, vector=vec)  # straight after an embedding
        given.append(1000 * (time.perf_counter() - t0))
        t0 = time.perf_counter()
        idx.search(text, k=10, now=now, dense_weight=0)
        keyword.append(1000 * (time.perf_counter() - t0))
    p50 = {name: round(_pct(xs, 50), 2) for name, xs in
           (("search", full), ("embed_query_alone", embed), ("search_vector_given", given), ("keyword_only", keyword))}
    return {
        "corpus": "changelogs",
        "n": len(idx),
        "queries": len(texts),
        "embedder": emb.name,
        "p50_ms": p50,
        "p90_ms": {"search": round(_pct(full, 90), 2), "embed_query_alone": round(_pct(embed, 90), 2)},
        "search_over_embed": round(p50["search"] / p50["embed_query_alone"], 2),
        "embed_calls_per_search": counting.calls / len(texts),
    }


def bench_qdrant(n: int, n_queries: int) -> dict:
    try:
        from qdrant_client import QdrantClient, models
    except ImportError:
        return {"skipped": "qdrant-client is not installed (pip install qdrant-client)"}
    docs, vecs = synthetic(n)
    client = QdrantClient(":memory:")
    client.create_collection("c", vectors_config=models.VectorParams(size=DIM, distance=models.Distance.COSINE))
    t0 = time.perf_counter()
    batch = 2000
    for s in range(0, n, batch):
        client.upsert(
            "c",
            points=models.Batch(
                ids=list(range(s, min(n, s + batch))),
                vectors=vecs[s : s + batch].tolist(),
                payloads=[{"ts": d["date"]} for d in docs[s : s + batch]],
            ),
        )
    build = time.perf_counter() - t0
    rng = np.random.default_rng(1)
    lat = []
    half_life = 180 * DAY
    for i in range(n_queries):
        q = rng.standard_normal(DIM).astype(np.float32)
        q /= np.linalg.norm(q)
        t0 = time.perf_counter()
        client.query_points(
            "c",
            prefetch=models.Prefetch(query=q.tolist(), limit=1000),
            query=models.FormulaQuery(
                formula=models.MultExpression(
                    mult=[
                        "$score",
                        models.ExpDecayExpression(
                            exp_decay=models.DecayParamsExpression(
                                x=models.DatetimeKeyExpression(datetime_key="ts") if False else "ts",
                                target=NOW,
                                scale=half_life,
                                midpoint=0.5,
                            )
                        ),
                    ]
                )
            ),
            limit=10,
        )
        lat.append(1000 * (time.perf_counter() - t0))
        if i == 0:
            lat.clear()  # warm-up
    return {
        "n": n,
        "mode": "local (:memory:), prefetch 1000 by cosine then exp-decay formula",
        "build_docs_per_s": round(n / build),
        "search_ms": {"p50": round(_pct(lat, 50), 2), "p90": round(_pct(lat, 90), 2)},
        "note": "Qdrant local mode is a pure-Python test double, not the server; its prefetch "
        "also truncates the pool to 1000 candidates before decay, unlike our exact scoring.",
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", nargs="*", type=int, default=[100_000, 1_000_000])
    ap.add_argument("--queries", type=int, default=40)
    ap.add_argument("--qdrant-n", type=int, default=20_000)
    ap.add_argument("--no-dense", action="store_true", help="skip the changelog-corpus dense latency run")
    ap.add_argument("--mode-queries", type=int, default=20,
                    help="queries per intent mode and filter (bench_modes); 0 skips them")
    ap.add_argument("--out", default=str(OUT))
    ap.add_argument("--keep-others", action="store_true",
                    help="keep the sections this run skips (dense_small, qdrant_local) from the --out file, "
                         "listed under kept_from_previous_run")
    args = ap.parse_args(argv)
    import numpy

    report: dict = {
        "machine": {"python": platform.python_version(), "numpy": numpy.__version__, "cpus": os.cpu_count(),
                    "platform": platform.platform()},
        "dim": DIM,
        "dtype": "float32",
        "targets_ms": {"100000": 15, "1000000": 200},
        "ours": [],
    }
    if not args.no_dense:
        report["dense_small"] = bench_dense_small()
        print(json.dumps(report["dense_small"]), file=sys.stderr, flush=True)
    for n in args.sizes:
        r = bench_ours(n, args.queries, modes=args.mode_queries)
        print(json.dumps(r), file=sys.stderr, flush=True)
        report["ours"].append(r)
    if args.qdrant_n:
        same = bench_ours(args.qdrant_n, args.queries, save=False)
        qd = bench_qdrant(args.qdrant_n, args.queries)
        report["qdrant_local"] = {"qdrant": qd, "ours_same_n": same}
        if "search_ms" in qd:
            report["qdrant_local"]["p50_ratio_qdrant_over_ours"] = round(qd["search_ms"]["p50"] / same["search_ms"]["p50"], 1)
        print(json.dumps(report["qdrant_local"]), file=sys.stderr, flush=True)
    if args.keep_others and Path(args.out).is_file():
        old = json.loads(Path(args.out).read_text())
        kept = [key for key in ("dense_small", "qdrant_local") if key in old and key not in report]
        report.update({key: old[key] for key in kept})
        report["kept_from_previous_run"] = kept
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
