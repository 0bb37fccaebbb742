"""Term extraction (``chronorank.index.text``): this tree against earlier analyzers, interleaved
in one process.

The earlier analyzers are that module's file at a git revision (``git show REV:...``) loaded
under another name: ``--original`` (default 8670c3b: the per-token analyzer, the "500
docs/s" issue 19 started from) and ``--baseline`` (default a066bcd: main when issue 19's
term-extraction work began, with the token table of 1.2-1.6x). Each side does what
``TemporalIndex.add`` does with a batch of texts -- texts -> flat term ids, offsets and lead
lengths (``encode_documents``, or ``analyze_documents`` + ``bm25.encode_terms`` where a
side has no ``encode_documents``) -- and, apart, ``analyze_many(texts)`` (the stores, the
benchmark's BM25). Documents per CPU second of the process (steadier than wall time on a
shared machine), best of ``--repeats``, sides taking turns within each repeat:

- ``cold``: the side's token/piece table emptied first (a first build in a fresh process);
- ``warm``: right after a cold run on the same texts (an append of known vocabulary).

Rows: each corpus as it is (the bundled release notes; ``../shared/data`` changelogs,
news-dev and the tdw-rag release corpus when present), and every corpus's texts cut at
white space into ~200-character and ~2,000-character documents (consecutive texts of a
corpus joined first, so the long ones are real text too). Every side's output is compared
with this tree's (``identical``). Writes ``benchmarks/results/term_speed.json``; only
numbers, no text.

    nice -n 10 python benchmarks/term_speed.py [--repeats 5] [--out benchmarks/results/term_speed.json]
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import importlib.util
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "term_speed.json"
TEXT_PY = "src/chronorank/index/text.py"


def corpora() -> dict[str, list[str]]:
    """The corpora's texts (the loader the analyzer's frozen reference uses)."""
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        from analyzer_reference import corpora as load
    finally:
        sys.path.pop(0)
    return load()


def pieces(texts: list[str], size: int) -> list[str]:
    """The texts joined by blank lines and cut at the first white space at or after every
    ``size`` characters."""
    whole = "\n\n".join(texts)
    out = []
    a = 0
    while a < len(whole):
        b = a + size
        while b < len(whole) and not whole[b].isspace():
            b += 1
        out.append(whole[a:b].strip())
        a = b
    return [p for p in out if p]


def load_rev(rev: str, label: str) -> ModuleType | None:
    """``TEXT_PY`` at git revision ``rev`` as a module of its own (None without git or the rev)."""
    try:
        src = subprocess.run(["git", "show", f"{rev}:{TEXT_PY}"], cwd=ROOT, capture_output=True,
                             text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError) as exc:
        print(f"skipping {label} ({rev}): {exc}", file=sys.stderr)
        return None
    path = Path(tempfile.mkdtemp(prefix="term_speed_")) / f"text_{label}.py"
    path.write_text(src, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(f"_term_speed_{label}", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def add_terms(mod: ModuleType) -> Callable[[list[str], list[int]], Any]:
    """What ``add()`` asks of the side's module: (term ids, offsets, lead lengths)."""
    from chronorank.index.bm25 import encode_terms

    fast = getattr(mod, "encode_documents", None)
    if fast is not None:
        return lambda texts, cuts: fast(texts, cuts, {})

    def slow(texts: list[str], cuts: list[int]) -> Any:
        terms, leads = mod.analyze_documents(texts, cuts)
        ids, ptr = encode_terms(terms, {})
        return ids, ptr, leads

    return slow


def fingerprint(out: Any) -> str:
    """A digest of an output: term lists, or (ids, offsets, leads) with their dtypes (kept
    instead of the outputs, whose millions of references would slow the collector for
    every side timed after)."""
    import numpy as np

    h = hashlib.sha256()
    if isinstance(out, list):
        h.update(json.dumps(out, ensure_ascii=True).encode("ascii"))
    else:
        for part in out:
            arr = np.asarray(part)
            h.update(str(arr.dtype).encode() + arr.tobytes())
    return h.hexdigest()


def measure(sides: dict[str, ModuleType], texts: list[str], repeats: int) -> dict:
    from chronorank.index.core import lead_cut

    cuts = [lead_cut(t) for t in texts]
    fns = {s: (add_terms(m), m.analyze_many) for s, m in sides.items()}
    best: dict[str, dict[str, float]] = {s: {} for s in sides}
    outputs: dict[str, dict[str, str]] = {s: {} for s in sides}
    for _ in range(repeats):
        for side, mod in sides.items():
            enc, many = fns[side]
            for what, run in (("add", lambda: enc(texts, cuts)), ("analyze_many", lambda: many(texts))):
                getattr(mod, "_tables", {}).clear()
                prints = {}
                for state in ("cold", "warm"):
                    gc.collect()
                    t0 = time.process_time()
                    res = run()
                    dt = time.process_time() - t0
                    prints[state] = fingerprint(res)
                    del res
                    key = f"{what}_{state}"
                    best[side][key] = min(best[side].get(key, float("inf")), dt)
                if prints["cold"] != prints["warm"]:
                    raise SystemExit(f"{side}: {what} gave another output with a warm table")
                outputs[side].setdefault(what, prints["cold"])
    n = len(texts)
    row: dict[str, Any] = {"docs": n, "mean_chars": round(sum(map(len, texts)) / max(1, n), 1)}
    ref = outputs["this"]
    for side in sides:
        row[side] = {f"{k}_docs_per_s": round(n / v) for k, v in best[side].items()}
        if side != "this":
            row[side]["identical"] = all(outputs[side][w] == ref[w] for w in ref)
            row[f"this_over_{side}"] = {k: round(best[side][k] / best["this"][k], 2) for k in best["this"]}
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--original", default="8670c3b", help="git rev of the per-token analyzer (empty: skip)")
    ap.add_argument("--baseline", default="a066bcd", help="git rev of the analyzer before this work (empty: skip)")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--out", default=str(OUT))
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT / "src"))
    from chronorank.index import text as this

    sides: dict[str, ModuleType] = {}
    for label, rev in (("original", args.original), ("baseline", args.baseline)):
        mod = load_rev(rev, label) if rev else None
        if mod is not None:
            sides[label] = mod
    sides["this"] = this
    found = corpora()
    sets = dict(found)
    everything = [t for texts in found.values() for t in texts]
    sets["short-200-chars"] = [p for texts in found.values() for p in pieces(texts, 200)]
    sets["long-2000-chars"] = [p for texts in found.values() for p in pieces(texts, 2000)]
    rows = {}
    for name, texts in sets.items():
        rows[name] = measure(sides, texts, args.repeats)
        r = rows[name]
        line = f"{name:>24} ({r['docs']} docs, {r['mean_chars']:.0f} chars): this {r['this']['add_cold_docs_per_s']:>7} docs/s"
        for side in sides:
            if side != "this":
                line += (f" | {side} {r[side]['add_cold_docs_per_s']:>6} ({r[f'this_over_{side}']['add_cold']:.2f}x,"
                         f" identical {r[side]['identical']})")
        print(line, flush=True)
    report = {
        "benchmark": "term_speed",
        "what": "documents per CPU second, best of repeats, sides interleaved: add = texts -> term ids + offsets + "
                "lead lengths (encode_documents); analyze_many = texts -> term lists; cold = token table emptied "
                "first, warm = right after",
        "sides": {"original": args.original, "baseline": args.baseline, "this": "working tree"},
        "machine": {"python": platform.python_version(), "processor": platform.machine(), "cpus": os.cpu_count(),
                    "load_average_at_end": os.getloadavg()},
        "target": "add_cold over original >= 5 on every row (issue 19: 5x the 500 docs/s it measured)",
        "corpus_docs": len(everything),
        "repeats": args.repeats,
        "rows": rows,
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(report, indent=2) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
