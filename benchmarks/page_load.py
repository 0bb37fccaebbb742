"""Page load time of docs/index.html in headless Chromium (moved here from the page tests,
which no longer assert a wall-clock bound). Writes benchmarks/results/page_load.json.

    python benchmarks/page_load.py [--runs 7]

Needs Debian's chromium and chromium-driver and selenium (the dev extra). Each run opens a
fresh browser, loads the page from disk and reads the Navigation Timing entry; the target is
a median load under 1000 ms.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "page_load.json"
TARGET_MS = 1000.0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--runs", type=int, default=7, help="fresh browsers to time (default 7)")
    ap.add_argument("--out", default=str(OUT), help="JSON output path")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT / "tests" / "page"))
    import conftest as page_conftest  # the tests' headless-chromium setup, reused

    loads, doms = [], []
    for _ in range(args.runs):
        driver = page_conftest.make_driver()
        try:
            driver.get(page_conftest.PAGE.as_uri())
            driver.execute_script("return window.chronorank.version")
            t = driver.execute_script(
                "var n = performance.getEntriesByType('navigation')[0];"
                "return {load: n.loadEventEnd - n.startTime, dom: n.domContentLoadedEventEnd - n.startTime};"
            )
        finally:
            page_conftest.close_driver(driver)
        loads.append(float(t["load"]))
        doms.append(float(t["dom"]))
    result = {
        "page": "docs/index.html",
        "runs": args.runs,
        "load_ms_median": round(statistics.median(loads), 1),
        "load_ms_runs": [round(x, 1) for x in loads],
        "dom_content_loaded_ms_median": round(statistics.median(doms), 1),
        "target_ms": TARGET_MS,
        "meets_target": statistics.median(loads) < TARGET_MS,
        "load_average_1min": round(os.getloadavg()[0], 2),
        "cpu_count": os.cpu_count(),
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
