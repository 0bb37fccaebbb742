"""Parse speed (issue 3 target: 10,000 queries in < 1 s). Writes benchmarks/results/intent_speed.json.

    python benchmarks/intent_speed.py
"""

from __future__ import annotations

import json
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "benchmarks" / "data" / "intent_queries.jsonl"
OUT = ROOT / "benchmarks" / "results" / "intent_speed.json"


def main() -> int:
    from chronorank.intent import LexicalGate, parse

    rows = [json.loads(line) for line in DATA.read_text().splitlines() if line.strip()]
    base = [(r["query"], r["now"]) for r in rows]
    n = 10_000
    work = [base[i % len(base)] for i in range(n)]
    parse("warm up", now=0.0)
    runs, cpu = [], []
    for _ in range(3):
        t0, c0 = time.perf_counter(), time.process_time()
        for q, now in work:
            parse(q, now=now)
        runs.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    gate = LexicalGate()
    t0 = time.perf_counter()
    for q, _ in work:
        gate(q)
    gate_s = time.perf_counter() - t0
    big = "what changed in the latest release " * 30_000  # ~1 MB
    t0 = time.perf_counter()
    parse(big, now=0.0)
    big_s = time.perf_counter() - t0
    result = {
        "queries": n,
        "parse_seconds_best_of_3": round(min(runs), 4),
        "parse_seconds_runs": [round(r, 4) for r in runs],
        "parse_cpu_seconds_best_of_3": round(min(cpu), 4),
        "per_query_us": round(min(runs) / n * 1e6, 2),
        "load_average_1min": round(__import__("os").getloadavg()[0], 2),
        "cpu_count": __import__("os").cpu_count(),
        "lexical_gate_seconds_wall_clock_now": round(gate_s, 4),
        "one_megabyte_query_seconds": round(big_s, 4),
        "target_seconds": 1.0,
        "python": sys.version.split()[0],
        "machine": platform.machine(),
    }
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
