"""Parse speed (issue 3 target: 10,000 queries in < 1 s). Writes benchmarks/results/intent_speed.json.

    python benchmarks/intent_speed.py

Also times the time-sensitivity model alone (features + score, included in the parse) and,
when ../shared/data/gate-dev is present, its real search questions through the parser and
through tdw-rag 0.1.0's HeuristicGate in the same run, CPU time (issue 15: well under
1 ms a query on the lexical path).
"""

from __future__ import annotations

import json
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "benchmarks" / "data" / "intent_queries.jsonl"
GATE_DEV = ROOT.parent / "shared" / "data" / "gate-dev" / "queries.jsonl"


def _best_us(fn, items, repeats: int = 3) -> float:
    best = float("inf")
    for _ in range(repeats):
        c0 = time.process_time()
        for item in items:
            fn(item)
        best = min(best, time.process_time() - c0)
    return best / max(1, len(items)) * 1e6
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
    from chronorank.intent.lang import get_language
    from chronorank.intent.rules import sensitivity_features
    from chronorank.intent.sensitivity import default_model, feature_names

    model = default_model()
    en = get_language("en")
    names = [sensitivity_features(q, now=now) for q, now in base]
    model_us = {
        "features_us_per_query": round(_best_us(lambda q: feature_names(q, en, ()), [q for q, _ in base]), 2),
        "score_us_per_query": round(_best_us(model.score, names), 2),
    }
    gate_dev = None
    if GATE_DEV.exists():
        qs = [json.loads(line)["query"] for line in GATE_DEV.read_text().splitlines() if line.strip()]
        gate_dev = {"queries": len(qs),
                    "parse_cpu_us_per_query": round(_best_us(lambda q: parse(q, now=0.0), qs), 2)}
        try:
            from tdw_rag import HeuristicGate

            hg = HeuristicGate()
            gate_dev["tdw_rag_HeuristicGate_cpu_us_per_query"] = round(_best_us(hg, qs), 2)
            gate_dev["ratio_parse_over_peer"] = round(
                gate_dev["parse_cpu_us_per_query"] / gate_dev["tdw_rag_HeuristicGate_cpu_us_per_query"], 2)
        except ImportError:
            pass
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
        "sensitivity_model": model_us,
        "gate_dev": gate_dev,
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
