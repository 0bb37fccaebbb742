"""Reliability benchmark: long fuzz, kill -9 campaign, two writers, loads during saves, LLM gate
under a hung model and the 1M-candidate memory figure.

    python benchmarks/reliability.py                      # 10 min fuzz, 50 kills, 60+60 writer trials
    python benchmarks/reliability.py --fuzz-seconds 30 --kills 5 --writer-trials 10 --loads 100  # quick

Writes ``benchmarks/results/reliability.json``. Every new crashing fuzz input is also
written to ``benchmarks/results/tmp/reliability_crashes.jsonl`` (turn each into a test
under ``tests/reliability/regressions/``). The machinery lives in
``tests/reliability/reliability_support.py`` so the slow-marked tests run a subsample of it.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "reliability"))

import reliability_support as rs  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fuzz-seconds", type=float, default=600.0)
    ap.add_argument("--kills", type=int, default=50)
    ap.add_argument("--big-every", type=int, default=2000, help="a ~1 MB fuzz input every N inputs")
    ap.add_argument("--candidates", type=int, default=1_000_000)
    ap.add_argument("--writer-trials", type=int, default=60, help="two-writer trials per mode (threads, processes)")
    ap.add_argument("--loads", type=int, default=810, help="loads while another process saves")
    ap.add_argument("--gate-timeouts", type=int, default=200, help="LLM gate calls against a hung model")
    ap.add_argument("--seed", type=int, default=20260101)
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "reliability.json")
    args = ap.parse_args(argv)

    crash_log = ROOT / "benchmarks" / "results" / "tmp" / "reliability_crashes.jsonl"
    crash_log.parent.mkdir(parents=True, exist_ok=True)

    def on_crash(target: str, s: str, exc: BaseException) -> None:
        with crash_log.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps({"target": target, "input": s, "error": repr(exc)}, ensure_ascii=True) + "\n")
        print(f"  CRASH {target}: {s[:60]!r}: {exc!r}", flush=True)

    result: dict = {"python": platform.python_version(), "machine": platform.machine(), "seed": args.seed}

    print(f"memory: rerank_columns over {args.candidates:,} candidates", flush=True)
    result["memory"] = rs.measure_rerank_memory(args.candidates)
    print(f"  {json.dumps(result['memory'])}", flush=True)

    print(f"kill -9 campaign: {args.kills} kills", flush=True)
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="chronorank-kill-") as d:
        kills = rs.run_kill_campaign(args.kills, Path(d), seed=args.seed % 1000, max_delay_s=0.8,
                                     log=lambda m: print("  " + m, flush=True))
    kills["seconds"] = time.perf_counter() - t0
    result["kill_campaign"] = kills
    print(f"  {json.dumps({k: v for k, v in kills.items() if k != 'failures'})}", flush=True)

    print(f"two writers: {args.writer_trials} trials with threads, {args.writer_trials} with processes", flush=True)
    result["two_writers"] = {}
    with tempfile.TemporaryDirectory(prefix="chronorank-writers-") as d:
        for mode in ("threads", "processes"):
            t0 = time.perf_counter()
            st = rs.concurrent_save_trials(Path(d), args.writer_trials, mode=mode)
            st["seconds"] = time.perf_counter() - t0
            result["two_writers"][mode] = st
            print(f"  {mode}: {json.dumps({k: v for k, v in st.items() if k != 'errors'})} errors={len(st['errors'])}",
                  flush=True)
        t0 = time.perf_counter()
        st = rs.load_during_save(Path(d), args.loads)
        st["seconds"] = time.perf_counter() - t0
        result["load_during_save"] = st
        print(f"  loads during saves: {json.dumps(st)}", flush=True)

    print(f"LLM gate: {args.gate_timeouts} calls against a hung model", flush=True)
    result["llm_gate_hung"] = rs.gate_under_hung_model(args.gate_timeouts)
    print(f"  {json.dumps(result['llm_gate_hung'])}", flush=True)

    print(f"fuzz: parse_time/parse_times/intent.parse for {args.fuzz_seconds:g} s", flush=True)
    t0 = time.perf_counter()
    fuzz = rs.run_fuzz(args.fuzz_seconds, seed=args.seed, big_every=args.big_every, on_crash=on_crash)
    fuzz["seconds"] = time.perf_counter() - t0
    result["fuzz"] = fuzz
    print(f"  inputs={fuzz['inputs']:,} big={fuzz['big_inputs']} crashes={len(fuzz['crashes'])} "
          f"slowest={fuzz['slowest_s']:.3f}s ({fuzz['slowest_input']})", flush=True)

    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1, ensure_ascii=True) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")
    ok = (not fuzz["crashes"] and kills["documents_lost"] == 0 and not kills["failures"]
          and all(w["documents_lost"] == 0 and not w["errors"] for w in result["two_writers"].values())
          and result["load_during_save"]["false_corrupt"] == 0 and result["load_during_save"]["other_errors"] == 0)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
