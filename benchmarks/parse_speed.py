"""Batch time-parsing speed: chronorank.parse_times over 100k values in several formats.

Writes benchmarks/results/parse_speed.json and prints median / best milliseconds per
format. For reference it also times pandas.to_datetime (if installed) and the peer
library's per-item parser (tdw_rag.parse_date, if installed) on the date-only strings.

    python benchmarks/parse_speed.py [--n 100000] [--repeats 15]
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import statistics
import time
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import numpy as np

from chronorank.timeparse import parse_times, to_epoch

ROOT = Path(__file__).resolve().parent
RESULTS = ROOT / "results" / "parse_speed.json"


def make_inputs(n: int, seed: int = 0) -> dict[str, Any]:
    rng = random.Random(seed)
    base = datetime(1990, 1, 1, tzinfo=timezone.utc)
    stamps = [base + timedelta(seconds=rng.randrange(0, 40 * 365 * 86400)) for _ in range(n)]
    dates = [d.strftime("%Y-%m-%d") for d in stamps]
    mixed = []
    for i, d in enumerate(stamps):
        r = i % 4
        if r == 0:
            mixed.append(d.strftime("%Y-%m-%d"))
        elif r == 1:
            mixed.append(d.strftime("%Y-%m-%dT%H:%M:%SZ"))
        elif r == 2:
            mixed.append(d.astimezone(timezone(timedelta(hours=2))).isoformat())
        else:
            mixed.append(d.strftime("%Y-%m-%dT%H:%M:%S"))
    return {
        "iso_date_list": dates,
        "iso_date_ndarray": np.asarray(dates),
        "iso_mixed_list": mixed,
        "iso_datetime_offset_list": [d.astimezone(timezone(timedelta(hours=-5))).isoformat() for d in stamps],
        "iso_date_list_tz_berlin": dates,
        "unix_seconds_int_list": [int(d.timestamp()) for d in stamps],
        "unix_ms_ndarray": np.array([int(d.timestamp() * 1000) for d in stamps], dtype=np.int64),
        "datetime64_ndarray": np.array([d.replace(tzinfo=None) for d in stamps], dtype="datetime64[s]"),
        "written_dates_list_10k": [d.strftime("%B %d, %Y") for d in stamps[: max(1, n // 10)]],
    }


def timed(fn: Callable[[], Any], repeats: int) -> dict[str, float]:
    fn()  # warm-up
    ts = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return {"median_ms": statistics.median(ts) * 1e3, "best_ms": min(ts) * 1e3}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--repeats", type=int, default=15)
    args = ap.parse_args()
    inputs = make_inputs(args.n)
    results: dict[str, Any] = {}
    for name, values in inputs.items():
        tz = "Europe/Berlin" if name.endswith("tz_berlin") else "UTC"
        reps = args.repeats if not name.startswith("written") and tz == "UTC" else max(3, args.repeats // 3)
        r = timed(lambda values=values, tz=tz: parse_times(values, tz=tz), reps)
        out = parse_times(values, tz=tz)
        r["n"] = len(values)
        r["us_per_value"] = r["median_ms"] * 1e3 / len(values)
        r["parsed"] = int(np.isfinite(out).sum())
        # correctness spot check against the scalar parser
        idx = np.random.default_rng(0).choice(len(values), size=min(200, len(values)), replace=False)
        sample = [values[i].item() if isinstance(values, np.ndarray) else values[i] for i in idx]
        expected = np.array([to_epoch(v, tz=tz) for v in sample])
        r["matches_scalar"] = bool(np.array_equal(out[idx], expected, equal_nan=True)) if name != "datetime64_ndarray" else None
        results[name] = r
        print(f"{name:28s} n={r['n']:>7d}  median {r['median_ms']:8.2f} ms  best {r['best_ms']:8.2f} ms  "
              f"({r['us_per_value']:.3f} us/value)")
    reference: dict[str, Any] = {}
    dates = inputs["iso_date_list"]
    try:
        import pandas as pd

        reference["pandas_to_datetime_iso_date_list"] = timed(
            lambda: pd.to_datetime(dates, format="ISO8601", utc=True), max(3, args.repeats // 3))
    except ImportError:
        pass
    try:
        from tdw_rag import parse_date

        small = dates[:10_000]
        r = timed(lambda: [parse_date(d) for d in small], 3)
        r["n"] = len(small)
        r["us_per_value"] = r["median_ms"] * 1e3 / len(small)
        reference["tdw_rag_parse_date_per_item_10k"] = r
    except ImportError:
        pass
    ours = results["iso_date_list"]
    for key, r in reference.items():
        if "us_per_value" in r:
            r["ratio_vs_chronorank_per_value"] = r["us_per_value"] / ours["us_per_value"]
        else:
            r["ratio_vs_chronorank"] = r["median_ms"] / ours["median_ms"]
        print(f"{key:40s} median {r['median_ms']:8.2f} ms")
    payload = {
        "benchmark": "parse_speed",
        "python": platform.python_version(),
        "numpy": np.__version__,
        "machine": platform.machine(),
        "results": results,
        "reference": reference,
        "target": "iso_date_list < 20 ms median for 100k; all ISO formats well under 1 s",
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(payload, indent=2))
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()
