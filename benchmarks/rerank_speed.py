"""Reranking speed: chronorank vs tdw-rag 0.1.0, side by side in one run.

1k, 10k and 100k dict candidates with ISO date strings (``--formats date``) and full ISO
timestamps (``iso-timestamp``: a mix of ``...Z``, ``+02:00``, ``.123456Z`` and ``.5-05:30``
tails); the reference time is pinned.
Reports the median of several repeats for each library and the ratio, plus chronorank on
pre-parsed columns (float epoch seconds), and the cost of materialising every Hit. The
two libraries alternate repeat by repeat; the headline ratio is the steady state (each
timed call follows an untimed call of itself, as ``timeit`` measures), and
``right_after_the_peer`` is the same pair timed back to back, where chronorank runs in the
caches the peer's allocations left behind.

    python benchmarks/rerank_speed.py [--repeats 7] [--formats date,iso-timestamp]
        [--out benchmarks/results/rerank_speed.json]
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

from chronorank import TemporalReranker

NOW = datetime(2026, 8, 1, tzinfo=timezone.utc)
QUERY = "what does the pro plan cost right now"


TIMESTAMP_TAILS = np.array(["Z", "+02:00", ".123456Z", ".5-05:30"])


def make_candidates(n: int, seed: int = 0, form: str = "date") -> list[dict]:
    rng = np.random.default_rng(seed)
    days = rng.integers(0, 3650, n)
    base = np.datetime64("2026-08-01")
    dates = np.datetime_as_string(base - days.astype("timedelta64[D]"), unit="D")
    if form == "iso-timestamp":
        secs = rng.integers(0, 86400, n).astype("timedelta64[s]")
        clock = np.datetime_as_string(dates.astype("datetime64[s]") + secs, unit="s")
        dates = np.char.add(clock, TIMESTAMP_TAILS[rng.integers(0, len(TIMESTAMP_TAILS), n)])
    elif form != "date":
        raise SystemExit(f"unknown format {form!r}; use date or iso-timestamp")
    scores = rng.random(n)
    return [
        {"id": f"doc-{i}", "score": float(scores[i]), "date": str(dates[i]), "text": f"document {i}"}
        for i in range(n)
    ]


def _aware(dt: datetime) -> datetime:
    return dt if dt.tzinfo is not None else dt.replace(tzinfo=timezone.utc)


def median_time(fn, repeats: int) -> float:
    fn()  # warm-up
    runs = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        runs.append(time.perf_counter() - t0)
    return statistics.median(runs)


def paired_times(fa, fb, repeats: int, warm: bool = True) -> tuple[float, float, float]:
    """Time two callables alternately so both see the same machine noise.

    ``warm=True``: each timed call follows an untimed call of itself -- the steady state
    that ``timeit`` measures -- while the two libraries still alternate. ``warm=False``:
    a, b, a, b, ...: each call runs in the caches the other library left behind (the
    peer's many allocations evict the candidate dicts, so chronorank pays those misses).

    Returns (median a, median b, median of the per-pair ratios b / a).
    """
    fa(), fb()  # warm-up
    ta, tb = [], []
    for _ in range(repeats):
        if warm:
            fa()
        t0 = time.perf_counter()
        fa()
        ta.append(time.perf_counter() - t0)
        if warm:
            fb()
        t0 = time.perf_counter()
        fb()
        tb.append(time.perf_counter() - t0)
    return statistics.median(ta), statistics.median(tb), statistics.median(b / a for a, b in zip(ta, tb))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--sizes", default="1000,10000,100000")
    ap.add_argument("--formats", default="date,iso-timestamp")
    ap.add_argument("--out", default="benchmarks/results/rerank_speed.json")
    args = ap.parse_args()

    try:
        import tdw_rag
    except ImportError:  # pragma: no cover - the bench extra installs it
        tdw_rag = None

    ours = TemporalReranker("exponential(half_life_days=180)", gate=0.8)
    rows = []
    for form, n in [(f, int(s)) for f in args.formats.split(",") for s in args.sizes.split(",")]:
        cands = make_candidates(n, form=form)
        row: dict = {"format": form, "n": n}
        # rerank() ranks every candidate; hits are built lazily, so read the top 10 as a caller would
        def run_ours() -> object:
            return ours.rerank(QUERY, cands, now=NOW)[:10]

        row["chronorank_s"] = median_time(run_ours, args.repeats)
        row["chronorank_all_hits_s"] = median_time(
            lambda: list(ours.rerank(QUERY, cands, now=NOW)), max(3, args.repeats // 2)
        )
        scores = np.array([c["score"] for c in cands])
        times = np.array([_aware(datetime.fromisoformat(c["date"])).timestamp() for c in cands])
        row["chronorank_columns_s"] = median_time(
            lambda: ours.rerank_columns(QUERY, scores, times, now=NOW, top_k=10), args.repeats
        )
        if tdw_rag is not None:
            peer = tdw_rag.TemporalReranker(
                "exponential", half_life_days=180, gate=0.8, reference_date=NOW.replace(tzinfo=None)
            )
            reps = args.repeats if n <= 10000 else max(3, args.repeats // 2)
            run_peer = lambda: peer.rerank(QUERY, cands)[:10]  # noqa: E731
            # interleaved: each repeat times chronorank then the peer, so drift hits both
            ours_s, peer_s, pair_ratio = paired_times(run_ours, run_peer, reps, warm=True)
            row["chronorank_s"] = ours_s
            row["tdw_rag_s"] = peer_s
            row["ratio"] = peer_s / ours_s
            row["ratio_median_of_pairs"] = pair_ratio
            cold_ours, cold_peer, cold_ratio = paired_times(run_ours, run_peer, reps, warm=False)
            row["right_after_the_peer"] = {"chronorank_s": cold_ours, "tdw_rag_s": cold_peer,
                                           "ratio": cold_peer / cold_ours, "ratio_median_of_pairs": cold_ratio}
            row["ratio_all_hits"] = row["tdw_rag_s"] / row["chronorank_all_hits_s"]
            row["tdw_rag_us_per_candidate"] = row["tdw_rag_s"] / n * 1e6
        row["chronorank_us_per_candidate"] = row["chronorank_s"] / n * 1e6
        rows.append(row)
        print(
            f"{form:>13} n={n:>7}  chronorank {row['chronorank_s'] * 1e3:8.2f} ms"
            f"  (all hits {row['chronorank_all_hits_s'] * 1e3:8.2f} ms, columns {row['chronorank_columns_s'] * 1e3:6.2f} ms)"
            + (f"  tdw-rag {row['tdw_rag_s'] * 1e3:9.2f} ms  ratio {row['ratio']:6.1f}x"
               f" (all hits {row['ratio_all_hits']:5.1f}x; right after the peer"
               f" {row['right_after_the_peer']['ratio']:5.1f}x)" if "tdw_rag_s" in row else "")
        )
    out = {
        "benchmark": "rerank_speed",
        "reference_time": NOW.isoformat(),
        "repeats": args.repeats,
        "machine": {"python": platform.python_version(), "processor": platform.machine()},
        "tdw_rag_version": getattr(tdw_rag, "__version__", None) if tdw_rag else None,
        "rows": rows,
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=2) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
