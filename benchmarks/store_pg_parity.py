"""PgVectorStore schema 3 against the schema-2 store it replaced, on ../shared/data/changelogs.

The previous ``stores/pgvector.py`` is read from git (``--ref``, default d835d9e, the last
commit with one wide table) and loaded beside today's, both on one embedded PostgreSQL with the
same documents and cached vectors (benchmarks/index_quality.py's cache). For each configuration
(the stores' defaults with the lead, and without it) and method (lanes, exact): nDCG@10 per
query kind for both layouts, their largest difference, and how many queries' top-10 differ.

Usage: nice -n 10 python benchmarks/store_pg_parity.py [--ref d835d9e]
Writes benchmarks/results/store_pg_parity.json.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _stores_common import start_pg  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = {
    "lead on (stores' default)": "index(relative_recency=none, topical_margin=none)",
    "lead off": "index(relative_recency=none, topical_margin=none, lead_weight=0)",
}


def previous_store(ref: str) -> Any:
    src = subprocess.run(["git", "-C", str(ROOT), "show", f"{ref}:src/chronorank/stores/pgvector.py"],
                         capture_output=True, text=True, check=True).stdout
    path = Path(tempfile.mkdtemp(prefix="chronorank-prev-")) / "pgvector_prev.py"
    path.write_text(src)
    spec = importlib.util.spec_from_file_location("pgvector_prev", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.PgVectorStore


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ref", default="d835d9e")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "store_pg_parity.json"))
    a = ap.parse_args()
    from framework_quality import _Memo, ndcg
    from index_quality import _Cached

    from chronorank.eval.datasets import load_benchmark, shared_data_dir
    from chronorank.index import get_embedder
    from chronorank.stores import PgVectorStore

    shared = shared_data_dir(ROOT)
    if shared is None or not (shared / "changelogs").is_dir():
        Path(a.out).write_text(json.dumps({"skipped": "../shared/data/changelogs not found"}) + "\n")
        return
    prev = previous_store(a.ref)
    corpus, queries = load_benchmark(shared / "changelogs")
    docs = [{k: d.get(k) for k in ("id", "text", "date", "valid_from", "valid_to") if k in d} for d in corpus]
    emb = _Memo(_Cached(get_embedder("default"), "default"))
    vec = emb.embed([d["text"] for d in docs])
    out: dict[str, Any] = {"previous": f"git {a.ref}", "docs": len(docs), "queries": len(queries), "results": {}}
    pg = start_pg()
    if pg is None:
        out["skipped"] = "embedded PostgreSQL could not start"
    try:
        for ci, (name, cfg) in enumerate(CONFIGS.items()):
            if pg is None:
                break
            stores = {"schema 2 (previous)": prev(pg.dsn, f"parity_prev{ci}", embedder=emb, config=cfg),
                      "schema 3": PgVectorStore(pg.dsn, f"parity_new{ci}", embedder=emb, config=cfg)}
            for s in stores.values():
                s.add(docs, vectors=vec)
            for method in ("lanes", "exact"):
                runs = {label: {str(q["qid"]): list(s.search(q["query"], 10, q.get("reference_date", q.get("reference_time")),
                                                             method=method).ids) for q in queries}
                        for label, s in stores.items()}
                res = {label: ndcg(r, queries) for label, r in runs.items()}
                p, n = res["schema 2 (previous)"], res["schema 3"]
                res["max_abs_diff"] = round(max(abs(p[k] - n[k]) for k in p), 4)
                old_runs, new_runs = runs["schema 2 (previous)"], runs["schema 3"]
                res["queries_with_another_top10"] = sum(old_runs[q] != new_runs[q] for q in old_runs)
                out["results"][f"{name} | {method}"] = res
                print(name, method, json.dumps(res), flush=True)
            for s in stores.values():
                s.close()
    finally:
        if pg is not None:
            pg.close()
    Path(a.out).write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
