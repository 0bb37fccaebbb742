"""Appends and term extraction: this tree against a baseline tree, in one run.

Each side runs in its own subprocess with its own ``src`` on the path (``--baseline-src``,
e.g. ``git archive <commit> src | tar -x -C /tmp/base``), one after the other:

- **term extraction** on each corpus (the bundled release notes; ``../shared/data``
  changelogs, news-dev and the tdw-rag release corpus when present): texts -> term ids and
  lead lengths, as ``add()`` does it (``encode_documents`` here; ``analyze_documents`` +
  ``encode_terms`` before), documents per CPU second (the process's own time: steadier
  than wall time on a shared machine), best of ``--repeats``, the token table emptied
  before each repeat (a cold start); and ``add()`` with no embedder, the same way.
- **appends at 100k**: synthetic documents (``index_speed.synthetic``, vectors given), a
  steady search p50, then ``--rounds`` times "add one document, search": the add, the
  search after it and both together, p50; the first append after the build is reported on
  its own (it turns the built BM25 matrices into postings once).

    nice -n 10 python benchmarks/index_append.py --baseline-src /tmp/base/src [--n 100000] [--out benchmarks/results/index_append.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"
OUT = ROOT / "benchmarks" / "results" / "index_append.json"


def corpora() -> dict[str, list[dict]]:
    from chronorank.eval.datasets import release_benchmark_from_snapshot, release_snapshot

    out = {"bundled-release-notes": list(release_benchmark_from_snapshot(release_snapshot(None))[0])}
    for name in ("changelogs", "news-dev"):
        path = SHARED / name / "corpus.jsonl"
        if path.is_file():
            with path.open(encoding="utf-8") as fh:
                out[name] = [json.loads(line) for line in fh if line.strip()]
    rel = SHARED / "tdw-rag-release-corpus" / "release_corpus.json"
    if rel.is_file():
        out["tdw-rag-release-corpus"] = json.loads(rel.read_text(encoding="utf-8"))["documents"]
    return out


def extraction(docs: list[dict], repeats: int) -> dict:
    from chronorank.index import text as T
    from chronorank.index.core import TemporalIndex, lead_cut

    texts = [d["text"] for d in docs]
    cuts = [lead_cut(t) for t in texts]
    fast = getattr(T, "encode_documents", None)
    best = best_add = float("inf")
    for _ in range(repeats):
        getattr(T, "_tables", {}).clear()
        t0 = time.process_time()
        if fast is not None:
            fast(texts, cuts, {})
        else:
            from chronorank.index.bm25 import encode_terms

            terms, _ = T.analyze_documents(texts, cuts)
            encode_terms(terms, {})
        best = min(best, time.process_time() - t0)
        getattr(T, "_tables", {}).clear()
        clean = [{k: d[k] for k in ("id", "text", "date") if k in d} for d in docs]
        t0 = time.process_time()
        TemporalIndex(embedder=None).add(clean)
        best_add = min(best_add, time.process_time() - t0)
    return {"docs": len(texts), "mean_chars": sum(map(len, texts)) / max(1, len(texts)),
            "terms_docs_per_s": len(texts) / best, "add_no_embedder_docs_per_s": len(texts) / best_add}


def appends(n: int, rounds: int) -> dict:
    import numpy as np

    sys.path.insert(0, str(ROOT / "benchmarks"))
    from index_speed import NOW, synthetic

    from chronorank.index import TemporalIndex

    docs, vecs = synthetic(n + rounds + 1, seed=0)
    idx = TemporalIndex(embedder=None)
    t0 = time.perf_counter()
    idx.add(docs[:n], vectors=vecs[:n])
    build_s = time.perf_counter() - t0
    rng = np.random.default_rng(1)
    words = [f"w{int(i)}" for i in rng.integers(0, 400, size=64)]
    tpl = ["what changed in the latest release of {w}", "{w} {x} changelog", "newest {w} {x} behaviour"]
    queries = [(tpl[i % 3].format(w=words[i], x=words[-i - 1]), vecs[int(rng.integers(0, n))]) for i in range(64)]

    def search(i: int) -> float:
        q, v = queries[i % len(queries)]
        t = time.perf_counter()
        idx.search(q, k=10, now=NOW, vector=v)
        return 1000 * (time.perf_counter() - t)

    for i in range(3):
        search(i)
    steady = [search(i) for i in range(3, 23)]

    def add(j: int) -> float:
        t = time.perf_counter()
        idx.add([docs[n + j]], vectors=vecs[n + j : n + j + 1])
        return 1000 * (time.perf_counter() - t)

    first_add = add(0)
    first_search = search(0)
    add_ms, after_ms = [], []
    for j in range(1, rounds + 1):
        add_ms.append(add(j))
        after_ms.append(search(j))
    total = [a + s for a, s in zip(add_ms, after_ms)]
    steady_after = [search(i) for i in range(23, 43)]
    p50 = statistics.median
    return {
        "n": n, "build_s": build_s, "steady_search_p50_ms": p50(steady),
        "first_append_after_build": {"add_ms": first_add, "search_ms": first_search},
        "add_1_p50_ms": p50(add_ms), "search_after_add_p50_ms": p50(after_ms),
        "add_1_and_search_p50_ms": p50(total),
        "add_and_search_over_steady": p50(total) / p50(steady),
        "steady_search_after_appends_p50_ms": p50(steady_after),
        "rounds": rounds,
    }


def worker(args: argparse.Namespace) -> None:
    import chronorank

    out = {"src": str(Path(chronorank.__file__).resolve().parent), "extraction": {}, "appends": None}
    for name, docs in corpora().items():
        out["extraction"][name] = extraction(docs, args.repeats)
    if args.n:
        out["appends"] = appends(args.n, args.rounds)
    print(json.dumps(out))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--baseline-src", required=False, help="a src/ folder of the code to compare against")
    ap.add_argument("--n", type=int, default=100_000, help="index size for the append rows (0: skip)")
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", default=str(OUT))
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        worker(args)
        return
    sides = {"baseline": args.baseline_src, "this": str(ROOT / "src")}
    results = {}
    for side, src in sides.items():
        if src is None:
            continue
        env = dict(os.environ, PYTHONPATH=src, CHRONORANK_PROGRESS="0")
        cmd = [sys.executable, __file__, "--worker", "--n", str(args.n), "--rounds", str(args.rounds),
               "--repeats", str(args.repeats)]
        res = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
        if res.returncode != 0:
            raise SystemExit(f"{side} worker failed:\n{res.stderr[-3000:]}")
        results[side] = json.loads(res.stdout.strip().splitlines()[-1])
        print(f"{side}: {json.dumps(results[side], indent=1)}", flush=True)
    rows = []
    this = results["this"]
    base = results.get("baseline")
    for name, r in this["extraction"].items():
        row = {"corpus": name, **r}
        if base is not None:
            b = base["extraction"][name]
            row["baseline_terms_docs_per_s"] = b["terms_docs_per_s"]
            row["baseline_add_no_embedder_docs_per_s"] = b["add_no_embedder_docs_per_s"]
            row["terms_speedup"] = r["terms_docs_per_s"] / b["terms_docs_per_s"]
            row["add_speedup"] = r["add_no_embedder_docs_per_s"] / b["add_no_embedder_docs_per_s"]
        rows.append(row)
        print(f"{name:>24}: terms {r['terms_docs_per_s']:8.0f} docs/s"
              + (f" (baseline {row['baseline_terms_docs_per_s']:7.0f}, {row['terms_speedup']:.1f}x)" if base else "")
              + f"  add() {r['add_no_embedder_docs_per_s']:7.0f} docs/s"
              + (f" (baseline {row['baseline_add_no_embedder_docs_per_s']:6.0f}, {row['add_speedup']:.1f}x)" if base else ""))
    report = {
        "benchmark": "index_append",
        "machine": {"python": platform.python_version(), "processor": platform.machine(), "cpus": os.cpu_count(),
                    "load_average_at_end": os.getloadavg()},
        "targets": {"terms_docs_per_s": 2500, "add_1_and_search_over_steady": 2.0},
        "extraction": rows,
        "appends": {"this": this["appends"], "baseline": None if base is None else base["appends"]},
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(report, indent=2) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
