"""Peak memory of ``TemporalIndex.add()`` for one huge document, default embedder (issue 31).

Each size runs in its own subprocess: load the model (embed one word), add a short and a
long document of other words (one-time costs of the code path), build the text (a
seeded ~1 MiB block of English-like words repeated, so the text costs its size and no
more), reset the kernel's peak-RSS mark (``/proc/self/clear_refs``), ``add()`` the one
document, read the peak (``VmHWM``); the embedding cache is off (a first add). The goal: the peak over the process before the text
existed (interpreter + model) stays below twice the text's size.

    nice -n 10 python benchmarks/add_memory.py [--sizes 1 10 100] [--baseline-src /tmp/base/src --baseline-sizes 1 10]

``--baseline-src`` runs another tree's ``src`` the same way (e.g. main before the cut:
``git archive <commit> src | tar -x -C /tmp/base``), one after the other; sizes whose
baseline would run past ``--baseline-timeout`` seconds are reported as such. Linux only.
Writes ``benchmarks/results/add_memory.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "add_memory.json"
MIB = 1 << 20

CHILD = r"""
import json, random, sys, time
mib = int(sys.argv[1])

def status(key):
    for line in open("/proc/self/status"):
        if line.startswith(key + ":"):
            return int(line.split()[1]) * 1024
    raise KeyError(key)

from chronorank.index import TemporalIndex
from chronorank.index.embedders import get_embedder
emb = get_embedder("default")
emb.embed(["warm up"])
idx = TemporalIndex(embedder=emb)
# a first long document of other words: the long-text path's one-time costs (lazy imports:
# numpy.ma, ~0.9 MiB, comes with the first np.unique) are the interpreter's, not the text's
from chronorank.index.text import LONG_TEXT_CHARS
warm = " ".join(f"warmup{i % 3000}" for i in range(LONG_TEXT_CHARS // 5))
idx.add([{"id": "warm", "text": "warm up the index", "date": "2024-01-01"},
         {"id": "warm-long", "text": warm, "date": "2024-01-01"}])
del warm
before_text = status("VmRSS")
rng = random.Random(31)
words = ["release", "notes", "version", "fixed", "the", "parser", "crash", "when", "reading", "dates",
         "added", "support", "for", "postgres", "query", "index", "memory", "faster", "search", "update"]
words += ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(3, 11))) for _ in range(2000)]
block = []
size = 0
while size < (1 << 20):
    w = rng.choice(words)
    block.append(w)
    size += len(w) + 1
block = " ".join(block)[: 1 << 20]
text = block * mib
del block
text_bytes = len(text)  # ASCII: one byte a character
with_text = status("VmRSS")
open("/proc/self/clear_refs", "w").write("5")  # the peak mark starts again from here
t0 = time.perf_counter()
idx.add([{"id": "big", "text": text, "date": "2024-06-01"}])
secs = time.perf_counter() - t0
peak = status("VmHWM")
hits = idx.search("postgres parser crash", k=2, now="2025-01-01")
print(json.dumps({"mib": mib, "text_bytes": text_bytes, "rss_before_text": before_text,
                  "rss_with_text": with_text, "peak_rss_in_add": peak, "add_seconds": round(secs, 2),
                  "found": [h.id for h in hits]}))
"""


def run(src: Path, mib: int, timeout: float) -> dict:
    # no embedding cache: a cached vector would skip the embedder (the first add of a text)
    env = dict(os.environ, PYTHONPATH=str(src), CHRONORANK_EMBED_CACHE="off")
    t0 = time.perf_counter()
    try:
        res = subprocess.run([sys.executable, "-c", CHILD, str(mib)], env=env, capture_output=True, text=True,
                             timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"mib": mib, "timed_out_after_s": timeout}
    if res.returncode != 0:
        return {"mib": mib, "error": res.stderr.strip().splitlines()[-1:] or [f"exit {res.returncode}"]}
    row = json.loads(res.stdout.strip().splitlines()[-1])
    row["wall_s"] = round(time.perf_counter() - t0, 1)
    growth = row["peak_rss_in_add"] - row["rss_before_text"]
    row["peak_over_model_mib"] = round(growth / MIB, 1)
    row["peak_over_model_per_text_byte"] = round(growth / row["text_bytes"], 3)
    row["goal_below_2x_text"] = growth < 2 * row["text_bytes"]
    # what add() itself took beyond the process holding the text (the text's pages may be
    # ones the warm-up freed, so rss_with_text can equal rss_before_text)
    row["add_growth_mib"] = round((row["peak_rss_in_add"] - row["rss_with_text"]) / MIB, 1)
    return row


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[1, 10, 100], help="text sizes in MiB")
    ap.add_argument("--baseline-src", type=Path, default=None)
    ap.add_argument("--baseline-sizes", type=int, nargs="+", default=[1, 10],
                    help="sizes for the baseline (MiB; 100 took 555 s and 17.6 GiB before the cut)")
    ap.add_argument("--baseline-timeout", type=float, default=300.0)
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)
    if not Path("/proc/self/clear_refs").exists():
        print("needs Linux (/proc/self/clear_refs)", file=sys.stderr)
        return 2
    out: dict = {"python": platform.python_version(), "machine": platform.machine(), "embedder": "default",
                 "rows": []}
    for mib in args.sizes:
        row = run(ROOT / "src", mib, 3600)
        print(json.dumps(row), flush=True)
        out["rows"].append(row)
    if args.baseline_src is not None:
        out["baseline"] = []
        for mib in args.baseline_sizes:
            row = run(args.baseline_src, mib, args.baseline_timeout)
            print("baseline", json.dumps(row), flush=True)
            out["baseline"].append(row)
    args.out.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
