"""Load of a large keyword-only index, and the first search after it (issue 32).

    nice python benchmarks/index_load.py [--n 1000000] [--queries 30] [--out benchmarks/results/index_load.json]

Builds the index once (``benchmarks/index_speed.synthetic``: short Zipf-worded documents
with a version and a date, no vectors), then times ``add``, ``save``, ``load`` (with and
without ``verify``, the checksums; the built index is dropped first, the files are in the
page cache as after any save) and, on a fresh load, the first search against the steady
searches that follow it (p50 over ``--queries`` other questions, then the first question
again; the process searched a tiny index before, so its own first-search costs -- the query
parser's tables, imports -- are not counted). Also the first ``get`` after a load: ids are read from the start of each ``docs.jsonl`` line when first
needed (no record is parsed whole), so that one call pays that scan. ``--index`` times a saved
index instead of building one; each run also times ``np.load`` of every array file and one
thread's sha256 of every file, so the load's seconds can be read against this machine's speed. Memory: the process's peak
resident set. Times are wall seconds on whatever else the machine runs: ``loadavg`` says
how busy it was. Writes ``benchmarks/results/index_load.json``.
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import json
import os
import platform
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "index_load.json"
sys.path.insert(0, str(Path(__file__).resolve().parent))

from index_speed import NOW, QUERIES, synthetic  # noqa: E402


def _queries(m: int, seed: int = 1) -> list[str]:
    rng = np.random.default_rng(seed)
    out = []
    for i in range(m):
        w, x = (f"w{int(j)}" for j in rng.integers(0, 300, size=2))
        v = ".".join(str(int(j)) for j in rng.integers(0, 40, size=3))
        out.append(QUERIES[i % len(QUERIES)].format(w=w, x=x, v=v))
    return out


def _ms(fn, *args, **kw) -> float:  # noqa: ANN001, ANN002, ANN003
    t0 = time.perf_counter()
    fn(*args, **kw)
    return 1000 * (time.perf_counter() - t0)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--queries", type=int, default=30)
    ap.add_argument("--out", default=str(OUT))
    ap.add_argument("--index", type=Path, default=None,
                    help="a saved index of --n such documents to time instead of building one (add/save not timed)")
    args = ap.parse_args(argv)
    from chronorank.index import TemporalIndex

    report: dict = {
        "machine": {"python": platform.python_version(), "numpy": np.__version__, "cpus": os.cpu_count(),
                    "platform": platform.platform()},
        "n": args.n,
        "loadavg_start": list(os.getloadavg()),
    }
    # the process's own first search (the query parser's tables, imports) is paid here, on a
    # tiny index, so that the first search after the load measures what the load left undone
    warm = TemporalIndex(embedder=None)
    warm.add(synthetic(50, seed=2, dense=False)[0])
    for q in _queries(len(QUERIES), seed=3):
        warm.search(q, k=10, now=NOW)
    del warm
    queries = _queries(args.queries + 1)
    with tempfile.TemporaryDirectory(dir=os.environ.get("BENCH_TMP")) as d:
        path = Path(d) / "idx"
        if args.index is None:
            docs, _ = synthetic(args.n, dense=False)
            idx = TemporalIndex(embedder=None)
            t0 = time.perf_counter()
            idx.add(docs)
            report["add_s"] = round(time.perf_counter() - t0, 2)
            del docs
            gc.collect()
            t0 = time.perf_counter()
            idx.save(path)
            report["save_s"] = round(time.perf_counter() - t0, 2)
            del idx
            gc.collect()
        else:
            path = args.index
            report["index_given"] = True
        report["files_mb"] = round(sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 2**20, 1)
        # the machine's speed in this run: reading every .npy file of the index into memory
        # (np.load, no mapping) and hashing them all; the load is reported against both
        gen = next(path.glob("g-*"))
        for _rep in range(2):  # the second pass is reported (the files in the page cache)
            loads, load_ref, hash_ref = [], [], []
            for verify in (False, True):
                t0 = time.perf_counter()
                TemporalIndex.load(path, verify=verify)  # dropped at once
                loads.append(time.perf_counter() - t0)
                gc.collect()
            t0 = time.perf_counter()
            for f in sorted(gen.glob("*.npy")):
                np.load(f)
            load_ref.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            for f in sorted(gen.iterdir()):
                hashlib.sha256(f.read_bytes()).hexdigest()
            hash_ref.append(time.perf_counter() - t0)
        report["load_s_no_verify"] = round(loads[0], 3)
        report["load_s"] = round(loads[1], 3)
        report["np_load_all_arrays_s"] = round(load_ref[-1], 3)
        report["sha256_all_files_one_thread_s"] = round(hash_ref[-1], 3)
        report["load_over_np_load"] = round(loads[1] / load_ref[-1], 2)
        report["load_no_verify_over_np_load"] = round(loads[0] / load_ref[-1], 2)
        loaded = TemporalIndex.load(path)
        first = _ms(loaded.search, queries[0], k=10, now=NOW)
        steady = [_ms(loaded.search, q, k=10, now=NOW) for q in queries[1:]]
        again = _ms(loaded.search, queries[0], k=10, now=NOW)
        p50 = statistics.median(steady)
        report["first_search_ms"] = round(first, 1)
        report["steady_search_ms"] = {"p50": round(p50, 1), "p90": round(float(np.percentile(steady, 90)), 1)}
        report["first_query_again_ms"] = round(again, 1)
        report["first_over_steady_p50"] = round(first / p50, 2)
        report["first_get_after_load_s"] = round(_ms(loaded.get, "doc17") / 1000, 2)
        report["second_get_ms"] = round(_ms(loaded.get, "doc18"), 3)
        report["ids_after_get_s"] = round(_ms(getattr, loaded, "ids") / 1000, 3)
        one = {"id": "added-after-load", "text": "w1 w2 release 9.9.9", "date": "2026-01-01"}
        report["first_add_after_load_s"] = round(_ms(loaded.add, [one]) / 1000, 3)
        report["search_after_that_add_ms"] = round(_ms(loaded.search, queries[1], k=10, now=NOW), 1)
        del loaded
    report["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    report["loadavg_end"] = list(os.getloadavg())
    report["targets"] = {"load_s": 3.0, "first_over_steady_p50": 2.0}
    print(json.dumps(report, indent=1))
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(report, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
