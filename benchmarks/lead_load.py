"""First query after ``TemporalIndex.load``: the lead field saved with the index (format 2).

Builds a keyword-only index of synthetic documents (a title sentence, then a body; the lead
field reads the title), saves it, then in a fresh process loads it and times the first
query, the second and the median of the next ones (the process warmed up on a tiny index
first, so only the loaded index's own work is timed), and the first query once more at the
end (``first_over_again``: the first query against itself once nothing is first; the first
query is a version question, which costs more than the second one steadily, since the
version rules of issue 16). ``format1`` drops the saved lead after
loading, as a format-1 index (chronorank before this change) loads: its first query
analyses every document's lead first. Reference time pinned.

    nice -n 10 python benchmarks/lead_load.py [--n 100000] [--repeats 5] [--out benchmarks/results/lead_load.json]
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

NOW = "2026-07-25"
WORDS = 20_000
QUERIES = [
    "w12 w7 2.3.1 changelog", "what changed in w40 recently", "w3 w99 w1200 bug fixes",
    "newest w5 behaviour", "w77 release notes 2024", "w8 w9 w10", "w2 2.1 upgrade", "w300 w4 fix",
]


def synthetic(n: int, seed: int = 0) -> list[dict]:
    rng = np.random.default_rng(seed)
    vocab = np.array([f"w{i}" for i in range(WORDS)])
    title = np.minimum(rng.zipf(1.3, size=(n, 6)), WORDS) - 1
    body = np.minimum(rng.zipf(1.3, size=(n, 30)), WORDS) - 1
    vers = rng.integers(0, 40, size=(n, 3))
    days = rng.integers(0, 2000, size=n)
    base = np.datetime64("2026-07-25")
    dates = np.datetime_as_string(base - days.astype("timedelta64[D]"), unit="D")
    return [
        {
            "id": f"doc{i}",
            "text": f"{' '.join(vocab[title[i]])} {vers[i, 0]}.{vers[i, 1]}.{vers[i, 2]}. {' '.join(vocab[body[i]])}",
            "date": str(dates[i]),
        }
        for i in range(n)
    ]


def child(path: str, drop_lead: bool) -> dict:
    from chronorank.index import TemporalIndex

    # the process's one-off costs (imports, the intent rules' regexes, the stemmer) are paid
    # on a tiny index first: what is left is the loaded index's own first-query work
    warm = TemporalIndex(embedder=None)
    warm.add(synthetic(50, seed=1))
    for q in QUERIES:
        warm.search(q, k=10, now=NOW)
    t0 = time.perf_counter()
    idx = TemporalIndex.load(path)
    load_s = time.perf_counter() - t0
    if drop_lead:  # as a format-1 index loads: neither the lead lengths nor its matrix
        idx._snap.lead_len = None
        idx._snap._lead.clear()
    times = []
    for q in QUERIES:
        t0 = time.perf_counter()
        idx.search(q, k=10, now=NOW)
        times.append(time.perf_counter() - t0)
    t0 = time.perf_counter()
    idx.search(QUERIES[0], k=10, now=NOW)  # the first query again, now that nothing is first
    again = time.perf_counter() - t0
    return {"load_s": load_s, "first_query_s": times[0], "second_query_s": times[1],
            "steady_query_s": statistics.median(times[2:]),
            "first_over_second": times[0] / times[1],
            "first_query_again_s": again, "first_over_again": times[0] / again}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--repeats", type=int, default=5, help="fresh processes per mode")
    ap.add_argument("--out", default="benchmarks/results/lead_load.json")
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(args.child[0], args.child[1] == "format1")))
        return
    from chronorank.index import TemporalIndex

    docs = synthetic(args.n)
    idx = TemporalIndex(embedder=None)
    t0 = time.perf_counter()
    idx.add(docs)
    add_s = time.perf_counter() - t0
    rows = {}
    with tempfile.TemporaryDirectory(prefix="chronorank-lead-bench-") as tmp:
        t0 = time.perf_counter()
        idx.save(tmp)
        save_s = time.perf_counter() - t0
        want = [h.id for h in idx.search(QUERIES[0], k=10, now=NOW)]
        for mode in ("format1", "format2"):
            runs = []
            for _ in range(args.repeats):  # fresh processes; medians over them
                out = subprocess.run([sys.executable, __file__, "--child", tmp, mode],
                                     check=True, capture_output=True, text=True).stdout
                runs.append(json.loads(out.strip().splitlines()[-1]))
            rows[mode] = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
            rows[mode]["runs"] = runs
            print(f"{mode}: load {rows[mode]['load_s']:.2f} s  first query {rows[mode]['first_query_s'] * 1e3:8.1f} ms"
                  f"  second {rows[mode]['second_query_s'] * 1e3:6.1f} ms  steady {rows[mode]['steady_query_s'] * 1e3:6.1f} ms"
                  f"  first/second {rows[mode]['first_over_second']:.2f}"
                  f"  first/again {rows[mode]['first_over_again']:.2f}")
        loaded = TemporalIndex.load(tmp)
        same = [h.id for h in loaded.search(QUERIES[0], k=10, now=NOW)] == want
    res = {
        "benchmark": "lead_load",
        "n": args.n,
        "reference_time": NOW,
        "machine": {"python": platform.python_version(), "processor": platform.machine()},
        "add_s": add_s, "add_docs_per_s": args.n / add_s, "save_s": save_s,
        "loaded_ranking_equals_built": same,
        "repeats": args.repeats,
        "target_first_over_second": 2.0,
        **rows,
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(res, indent=2) + "\n")
    print(f"add {add_s:.1f} s ({args.n / add_s:.0f} docs/s), save {save_s:.1f} s; wrote {args.out}")


if __name__ == "__main__":
    main()
