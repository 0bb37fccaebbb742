"""Fit speed: the peer's 368-trial grid on its real corpus vs chronorank's equivalent grid.

Both fits run in this process on the same 13 queries and the same candidates (the peer's
own TF-IDF similarity over its bundled release corpus, whole corpus as the pool). The
peer's ``fit`` measures age from the wall clock; ours gets the same ages computed once
at the start of the run, so both search the same problem. Writes
``benchmarks/results/fit_speed.json`` with both medians and the ratio.

    python benchmarks/fit_speed.py [--repeats-peer 3] [--repeats-ours 7]
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import time
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from chronorank.eval.fit import PEER_EQUIVALENT_SPACE, FitQuery, fit


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats-peer", type=int, default=3)
    ap.add_argument("--repeats-ours", type=int, default=7)
    ap.add_argument("--out", default=str(Path(__file__).parent / "results" / "fit_speed.json"))
    args = ap.parse_args()

    import tdw_rag
    from tdw_rag import fitting
    from tdw_rag.core import age_in_days
    from tdw_rag.real_datasets import build_release_benchmark

    peer_queries = build_release_benchmark()
    now = datetime.now(timezone.utc).replace(tzinfo=None)
    ours = []
    for q in peer_queries:
        ages = np.array([np.nan if (a := age_in_days(c["date"], now)) is None else a for c in q.candidates])
        ours.append(FitQuery(
            query=q.query,
            similarity=np.array([c["score"] for c in q.candidates], dtype=float),
            ages=ages,
            grades=np.array([q.relevance.get(c["id"], 0.0) for c in q.candidates]),
            ideal=np.sort(np.array([g for g in q.relevance.values() if g > 0]))[::-1],
            sensitivity=1.0,
        ))

    peer_times, peer_best = [], None
    for _ in range(args.repeats_peer):
        t0 = time.perf_counter()
        peer_best = fitting.fit(peer_queries)
        peer_times.append(time.perf_counter() - t0)
    our_times, our_best = [], None
    for _ in range(args.repeats_ours):
        t0 = time.perf_counter()
        our_best = fit(ours, PEER_EQUIVALENT_SPACE, "ndcg@10", folds=5, progress=False)
        our_times.append(time.perf_counter() - t0)
    assert peer_best is not None and our_best is not None
    peer_med, our_med = statistics.median(peer_times), statistics.median(our_times)
    out = {
        "benchmark": "fit speed, 368-trial grid, tdw-rag release corpus (13 queries x 242 candidates)",
        "command": "python benchmarks/fit_speed.py",
        "peer": {"package": f"tdw-rag {getattr(tdw_rag, '__version__', '?')}", "trials": len(peer_best.trials),
                 "seconds": [round(t, 4) for t in peer_times], "median_s": round(peer_med, 4),
                 "best": str(peer_best), "ndcg@10": round(peer_best.score, 4)},
        "chronorank": {"trials": our_best.n_trials, "seconds": [round(t, 4) for t in our_times],
                       "median_s": round(our_med, 4), "best": our_best.spec,
                       "ndcg@10": round(our_best.score, 4), "heldout_ndcg@10": round(our_best.heldout, 4),
                       "includes": "5-fold cross-validation"},
        "speedup": round(peer_med / our_med, 1),
        "target_speedup": 20,
        "machine": {"python": platform.python_version(), "processor": platform.processor() or platform.machine()},
        "note": "ages measured from the wall clock at the start of the run (the peer's fit cannot pin them), so the ndcg values move with the date; the timings do not",
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=1) + "\n")
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
