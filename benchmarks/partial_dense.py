"""While vectors are missing: keyword + time for every document, or dense where it is in?

    nice -n 10 python benchmarks/partial_dense.py [--vectors NEWS.npy] [--out PATH]

The design question of ``index/background.py``. With a share of news-dev's 5,000 articles
embedded -- in the order the embedder goes, shortest first -- a *per-document fallback*
fuses dense + keywords + lead for the documents that have a vector and keywords + lead
(the weights of an index without vectors) for the others, then applies time as usual. It
is emulated here by wrapping the index's signal and fusion steps (the library does not
ship it); at 0 % it equals keyword + time, checked in the output. Compared with keyword +
time for all documents (what the index does) and with every vector in.

Vectors: ``TemporalIndex().add`` through the embedding cache (a rerun embeds nothing), or
a ``.npy`` of the corpus's rows in order (``--vectors``). Writes
``benchmarks/results/partial_dense.json``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
SHARES = (0.0, 0.25, 0.5, 0.75)


def main() -> None:
    from chronorank.eval.datasets import load_benchmark
    from chronorank.eval.index_eval import _DOC_FIELDS, evaluate_index
    from chronorank.index import TemporalIndex, core

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data" / "news-dev"))
    ap.add_argument("--vectors", default=None, help="a .npy of the corpus's vectors, rows in corpus order")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "partial_dense.json"))
    args = ap.parse_args()
    corpus, queries = load_benchmark(args.data)
    docs = [{k: d.get(k) for k in _DOC_FIELDS if k in d} for d in corpus]
    idx = TemporalIndex()
    if args.vectors:
        idx.add(docs, vectors=np.load(args.vectors))
    else:
        idx.add(docs)

    def score(index: Any) -> dict[str, float]:
        res = evaluate_index(index, queries, depth=10, metrics=("ndcg@10",))
        cell = {k: round(v["ndcg@10"], 4) for k, v in res["by_kind"].items()}
        cell["all"] = round(res["overall"]["ndcg@10"], 4)
        return cell

    out: dict[str, Any] = {"command": "nice -n 10 python benchmarks/partial_dense.py", "all vectors in": score(idx)}
    kw = TemporalIndex(None)
    kw.add(docs)
    out["keyword + time (the index, while embedding)"] = score(kw)

    mask: dict[str, np.ndarray | None] = {"m": None}
    fuse, signals = core._fuse, TemporalIndex._signals

    def masked_signals(self: Any, snap: Any, topical: str, vector: Any, cfg: Any, rows: Any = None) -> Any:
        got = signals(self, snap, topical, vector, cfg, rows)
        m = mask["m"]
        if m is not None and "dense" in got and got["dense"].shape[0] == m.shape[0]:
            got["dense"] = np.where(m, got["dense"], 0.0).astype(got["dense"].dtype)  # no vector yet
        return got

    def fallback_fuse(sig: Any, cfg: Any) -> np.ndarray:
        m = mask["m"]
        if m is None or "dense" not in sig or sig["dense"].shape[0] != m.shape[0]:
            return fuse(sig, cfg)
        keywords = fuse({k: v for k, v in sig.items() if k != "dense"}, cfg)
        return np.where(m, fuse(sig, cfg), keywords)

    order = np.argsort([len(d["text"]) for d in docs], kind="stable")  # the embedder's order
    core._fuse = fallback_fuse  # type: ignore[assignment]
    TemporalIndex._signals = masked_signals  # type: ignore[method-assign]
    try:
        for share in SHARES:
            m = np.zeros(len(docs), dtype=bool)
            m[order[: int(share * len(docs))]] = True
            mask["m"] = m
            out[f"per-document fallback, {share:.0%} embedded"] = score(idx)
    finally:
        core._fuse = fuse  # type: ignore[assignment]
        TemporalIndex._signals = signals  # type: ignore[method-assign]
    Path(args.out).write_text(json.dumps(out, indent=1) + "\n")
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
