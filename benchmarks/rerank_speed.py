"""Reranking speed: chronorank vs tdw-rag 0.1.0, side by side in one run.

1k, 10k and 100k dict candidates with ISO date strings (``--formats date``) and full ISO
timestamps (``iso-timestamp``: a mix of ``...Z``, ``+02:00``, ``.123456Z`` and ``.5-05:30``
tails); the reference time is pinned (``NOW``) for both libraries, never the wall clock.

Method, the same for both libraries:

- Each (format, size) cell runs in its own fresh Python process (this script with
  ``--cell``), one cell at a time, so no cell inherits another's heap. In one long process
  the 10k row of the second format ran ~1 ms slower after the first format's 100k row: its
  candidate dicts were allocated into the holes the 100k cell's objects left (their
  addresses spread over 135-197 MiB, 8-21% of consecutive dicts at lower addresses, against
  11-16 MiB and none in a fresh process), and reading the dicts is most of chronorank's
  time. Candidates built before the 100k cell and timed after it were as fast as in a fresh
  process, and chronorank's calls take no page faults (``ru_minflt`` 0 a call at 10k and
  100k), so neither the malloc thresholds nor the peer's state explain it: the layout does.
- Inside a cell the two libraries alternate repeat by repeat, and which one goes first
  alternates too (ABBA), so drift and neighbours' load fall on both. Each timed call follows
  an untimed call of itself (the steady state that ``timeit`` measures); the headline figures
  are the medians of the repeats and ``ratio`` is the peer's median over ours
  (``ratio_median_of_pairs``: the median of the per-repeat ratios).
- Every timed call is measured twice: wall clock (``chronorank_s``, ``tdw_rag_s``, ``ratio``)
  and CPU time of the process (``cpu``), which leaves out the time slices that other
  processes take on a shared machine (a call of 2-3 ms loses a whole slice or none, so its
  wall-clock median jumps with the machine's load more than a 60 ms call's does).
- ``right_after_the_peer``: the same pair timed back to back (a, b, a, b, ...), where
  chronorank runs in the caches the peer's allocations left behind.
- chronorank alone: every Hit materialised (``chronorank_all_hits_s``) and the pre-parsed
  columns path (float epoch seconds, ``chronorank_columns_s``).
- ``load_average``: the machine's 1-minute load when the cell started (the run's noise).

    python benchmarks/rerank_speed.py [--repeats 15] [--sizes 1000,10000,100000]
        [--formats date,iso-timestamp] [--out benchmarks/results/rerank_speed.json]
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


def _timed(fn, warm: bool) -> tuple[float, float]:
    """(wall seconds, CPU seconds of this process) of one call of ``fn``."""
    if warm:
        fn()
    c0, t0 = time.process_time(), time.perf_counter()
    fn()
    t1, c1 = time.perf_counter(), time.process_time()
    return t1 - t0, c1 - c0


def _medians(ta: list[float], tb: list[float]) -> dict:
    return {"a": statistics.median(ta), "b": statistics.median(tb),
            "pairs": statistics.median(b / a for a, b in zip(ta, tb))}


def paired_times(fa, fb, repeats: int, warm: bool = True) -> tuple[dict, dict]:
    """Time two callables alternately so both see the same machine noise.

    ``warm=True``: each timed call follows an untimed call of itself -- the steady state
    that ``timeit`` measures -- and the library that goes first alternates repeat by repeat
    (a b, b a, a b, ...). ``warm=False``: a, b, a, b, ...: each call runs in the caches the
    other library left behind (the peer's many allocations evict the candidate dicts, so
    chronorank pays those misses).

    Returns wall-clock and CPU-time figures, each ``{"a": median a, "b": median b, "pairs":
    median of the per-repeat ratios b / a}``. CPU time (``time.process_time``: every thread of
    the process) leaves out the time slices other processes take on a shared machine, which
    a call of a few ms either suffers whole or not at all.
    """
    fa(), fb()  # warm-up
    wa, wb, ca, cb = [], [], [], []
    for i in range(repeats):
        for fn, wall, cpu in ((fb, wb, cb), (fa, wa, ca)) if warm and i % 2 else ((fa, wa, ca), (fb, wb, cb)):
            w, c = _timed(fn, warm)
            wall.append(w)
            cpu.append(c)
    return _medians(wa, wb), _medians(ca, cb)


def _side_by_side(wall: dict, cpu: dict) -> dict:
    return {"chronorank_s": wall["a"], "tdw_rag_s": wall["b"], "ratio": wall["b"] / wall["a"],
            "ratio_median_of_pairs": wall["pairs"],
            "cpu": {"chronorank_s": cpu["a"], "tdw_rag_s": cpu["b"], "ratio": cpu["b"] / cpu["a"],
                    "ratio_median_of_pairs": cpu["pairs"]}}


def run_cell(form: str, n: int, repeats: int) -> dict:
    """One (format, size) cell, timed in this process (``main`` gives each cell a fresh one)."""
    try:
        import tdw_rag
    except ImportError:  # pragma: no cover - the bench extra installs it
        tdw_rag = None

    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    ours = TemporalReranker("exponential(half_life_days=180)", gate=0.8)
    cands = make_candidates(n, form=form)
    row: dict = {"format": form, "n": n, "load_average": load}

    # rerank() ranks every candidate; hits are built lazily, so read the top 10 as a caller would
    def run_ours() -> object:
        return ours.rerank(QUERY, cands, now=NOW)[:10]

    reps = repeats if n <= 10000 else max(3, repeats // 2)
    if tdw_rag is not None:
        peer = tdw_rag.TemporalReranker(
            "exponential", half_life_days=180, gate=0.8, reference_date=NOW.replace(tzinfo=None)
        )
        run_peer = lambda: peer.rerank(QUERY, cands)[:10]  # noqa: E731
        row.update(_side_by_side(*paired_times(run_ours, run_peer, reps, warm=True)))
        row["right_after_the_peer"] = _side_by_side(*paired_times(run_ours, run_peer, reps, warm=False))
    else:
        row["chronorank_s"] = median_time(run_ours, reps)
    row["chronorank_all_hits_s"] = median_time(
        lambda: list(ours.rerank(QUERY, cands, now=NOW)), max(3, repeats // 2)
    )
    scores = np.array([c["score"] for c in cands])
    times = np.array([_aware(datetime.fromisoformat(c["date"])).timestamp() for c in cands])
    row["chronorank_columns_s"] = median_time(
        lambda: ours.rerank_columns(QUERY, scores, times, now=NOW, top_k=10), repeats
    )
    if "tdw_rag_s" in row:
        row["ratio_all_hits"] = row["tdw_rag_s"] / row["chronorank_all_hits_s"]
        row["tdw_rag_us_per_candidate"] = row["tdw_rag_s"] / n * 1e6
    row["chronorank_us_per_candidate"] = row["chronorank_s"] / n * 1e6
    row["tdw_rag_version"] = getattr(tdw_rag, "__version__", None) if tdw_rag else None
    return row


def _cell_in_fresh_process(form: str, n: int, repeats: int) -> dict:
    cmd = [sys.executable, __file__, "--cell", f"{form}:{n}", "--repeats", str(repeats)]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"cell {form}:{n} failed ({' '.join(cmd)}):\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=15)
    ap.add_argument("--sizes", default="1000,10000,100000")
    ap.add_argument("--formats", default="date,iso-timestamp")
    ap.add_argument("--out", default="benchmarks/results/rerank_speed.json")
    ap.add_argument("--cell", help="FORMAT:N: time one cell in this process, print its row as JSON (internal)")
    args = ap.parse_args()

    if args.cell:
        form, n = args.cell.split(":")
        print(json.dumps(run_cell(form, int(n), args.repeats)))
        return

    rows = []
    for form, n in [(f, int(s)) for f in args.formats.split(",") for s in args.sizes.split(",")]:
        if form not in ("date", "iso-timestamp"):
            raise SystemExit(f"unknown format {form!r}; use date or iso-timestamp")
        row = _cell_in_fresh_process(form, n, args.repeats)
        rows.append(row)
        print(
            f"{form:>13} n={n:>7}  chronorank {row['chronorank_s'] * 1e3:8.2f} ms"
            f"  (all hits {row['chronorank_all_hits_s'] * 1e3:8.2f} ms, columns {row['chronorank_columns_s'] * 1e3:6.2f} ms)"
            + (f"  tdw-rag {row['tdw_rag_s'] * 1e3:9.2f} ms  ratio {row['ratio']:6.1f}x"
               f" (CPU {row['cpu']['chronorank_s'] * 1e3:.2f} vs {row['cpu']['tdw_rag_s'] * 1e3:.2f} ms,"
               f" {row['cpu']['ratio']:5.1f}x; all hits {row['ratio_all_hits']:5.1f}x;"
               f" right after the peer {row['right_after_the_peer']['ratio']:5.1f}x)" if "tdw_rag_s" in row else "")
            + (f"  load {row['load_average']:.1f}" if row.get("load_average") is not None else ""),
            flush=True,
        )
    out = {
        "benchmark": "rerank_speed",
        "reference_time": NOW.isoformat(),
        "repeats": args.repeats,
        "method": "each (format, size) cell in a fresh process; the two libraries alternate (ABBA) "
                  "inside it, each timed call after an untimed call of itself; medians",
        "machine": {"python": platform.python_version(), "processor": platform.machine()},
        "tdw_rag_version": rows[0].pop("tdw_rag_version", None) if rows else None,
        "rows": rows,
    }
    for r in rows:
        r.pop("tdw_rag_version", None)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=2) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
