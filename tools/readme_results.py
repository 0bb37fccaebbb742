"""Generate the README's results section from the benchmark JSON in ``benchmarks/results/``.

The section sits between ``<!-- results:start -->`` and ``<!-- results:end -->`` in
``README.md``; everything outside the markers is left alone.

Usage::

    python tools/readme_results.py            # rewrite the section
    python tools/readme_results.py --check    # exit 1 (and print a diff) if it is stale

Each table comes from one JSON file. A missing file, or a file without the keys a table
needs, drops that table and nothing else. Standard library only.
"""

from __future__ import annotations

import argparse
import ast
import difflib
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
README = ROOT / "README.md"
START = "<!-- results:start -->"
END = "<!-- results:end -->"

DASH = "–"
PEER_BEST = "tdw-rag best global decay"
CHANGELOG_KINDS = ("latest", "as_of", "as_of_date", "version")
INDEX_ABLATIONS = ("no time (strength=0)", "bm25 only", "dense only", "rrf(1,1)")
MAX_ABLATIONS = 3


# ---------------------------------------------------------------- formatting


def f3(x: Any) -> str:
    """nDCG, recall, AUC, accuracy: 3 decimals."""
    return DASH if x is None else f"{float(x):.3f}"


def f1(x: Any) -> str:
    """Milliseconds and other one-decimal figures."""
    return DASH if x is None else f"{float(x):.1f}"


def ratio(x: Any) -> str:
    return DASH if x is None else f"{float(x):.1f}x"


def ratio2(x: Any) -> str:
    return DASH if x is None else f"{float(x):.2f}x"


def ms_from_s(x: Any) -> str:
    return DASH if x is None else f"{float(x) * 1000.0:.1f}"


def count(x: Any) -> str:
    return DASH if x is None else f"{int(x):,}"


def table(header: list[str], rows: list[list[str]], align: list[str] | None = None) -> str:
    """A markdown table; ``align`` holds 'l' or 'r' per column (first left, rest right)."""
    if align is None:
        align = ["l"] + ["r"] * (len(header) - 1)
    rule = ["---:" if a == "r" else "---" for a in align]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(rule) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def block(title: str, caption: str, body: str, note: str = "") -> str:
    text = f"**{title}** -- {caption}\n\n{body}"
    if note:
        text += f"\n\n{note}"
    return text


def load(results: Path, name: str) -> Any:
    path = results / name
    if not path.is_file():
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


# ---------------------------------------------------------------- sections


def _row_label(name: str) -> str:
    return PEER_BEST if name.startswith(PEER_BEST) else name


def quality(results: Path) -> str | None:
    data = load(results, "quality.json")
    if data is None:
        return None
    suites: dict[str, Any] = data["suites"]
    names = [s for s in ("synthetic", "tdw-release", "changelogs") if s in suites]
    names += [s for s in suites if s not in names]
    if not names:
        return None
    kind_suite = "changelogs" if "changelogs" in suites else None
    kinds: list[str] = []
    if kind_suite is not None:
        seen: set[str] = set()
        for row in suites[kind_suite]["rows"].values():
            seen.update(row.get("by_kind", {}))
        kinds = [k for k in CHANGELOG_KINDS if k in seen] + sorted(seen - set(CHANGELOG_KINDS))

    order: list[str] = []
    cells: dict[str, dict[str, Any]] = {}
    peer_settings: list[str] = []
    for suite in names:
        for name, row in suites[suite]["rows"].items():
            label = _row_label(name)
            if label not in cells:
                order.append(label)
                cells[label] = {}
            cells[label][suite] = row["mean"]["ndcg@10"]
            if suite == kind_suite:
                for kind in kinds:
                    cells[label][f"{suite}:{kind}"] = row.get("by_kind", {}).get(kind, {}).get("ndcg@10")
            if label == PEER_BEST and name != label:
                peer_settings.append(f"{suite} `{name[len(PEER_BEST):].lstrip(': ')}`")

    header = ["row"] + names + [f"{kind_suite} {k}" for k in kinds]
    keys = names + [f"{kind_suite}:{k}" for k in kinds]
    rows = [[lbl] + [f3(cells[lbl].get(k)) for k in keys] for lbl in order]
    note = ""
    if peer_settings:
        note = f"{PEER_BEST} = the peer's grid fitted on each suite: " + "; ".join(peer_settings) + "."
    return block(
        "Ranking quality",
        "nDCG@10 per suite, `benchmarks/quality.py` (= `chronorank benchmark`); one BM25 "
        "similarity shared by every row.",
        table(header, rows),
        note,
    )


def rerank_speed(results: Path) -> str | None:
    data = load(results, "rerank_speed.json")
    if data is None or not data.get("rows"):
        return None
    rows = []
    for r in data["rows"]:
        rows.append([
            {"iso-timestamp": "ISO timestamps"}.get(r.get("format", "date"), "ISO dates"),
            count(r["n"]),
            ms_from_s(r["chronorank_s"]),
            ms_from_s(r["tdw_rag_s"]),
            ratio(r["ratio"]),
            ratio((r.get("cpu") or {}).get("ratio")),
            ratio((r.get("right_after_the_peer") or {}).get("ratio")),
            ratio(r.get("ratio_all_hits")),
            ms_from_s(r.get("chronorank_columns_s")),
        ])
    header = ["times", "candidates", "chronorank ms", "tdw-rag ms", "speedup", "speedup, CPU time",
              "speedup, right after the peer", "speedup, every hit materialised", "chronorank columns ms"]
    fresh = " in its own fresh process" if data.get("method") else ""
    return block(
        "Rerank speed",
        f"`benchmarks/rerank_speed.py`, median of {data.get('repeats', '?')} runs, each format "
        f"and size{fresh}, the two libraries alternating; \"speedup\" times each call after an "
        "untimed call of itself (steady state, wall clock), \"CPU time\" the same calls in "
        "process CPU seconds (without the time slices other processes take), \"right after the "
        "peer\" times chronorank in the caches the peer just evicted; the columns path takes "
        "numpy arrays instead of dicts.",
        table(header, rows),
    )


def fit_speed(results: Path) -> str | None:
    data = load(results, "fit_speed.json")
    if data is None:
        return None
    peer, ours = data["peer"], data["chronorank"]
    header = ["trials", "tdw-rag fit ms", "chronorank fit ms", "speedup", "target"]
    row = [
        count(ours.get("trials", peer.get("trials"))),
        ms_from_s(peer["median_s"]),
        ms_from_s(ours["median_s"]),
        ratio(data["speedup"]),
        ratio(data.get("target_speedup")),
    ]
    extra = " (chronorank's includes 5-fold cross-validation)" if ours.get("includes") else ""
    return block(
        "Fit speed",
        f"`benchmarks/fit_speed.py`, medians, the peer's grid on its release corpus{extra}.",
        table(header, [row]),
    )


def _peer_gate(auc: dict[str, Any]) -> Any:
    for key, value in auc.items():
        if key.startswith("tdw_rag") and key.endswith("HeuristicGate"):
            return value
    return None


def intent(results: Path) -> str | None:
    data = load(results, "intent_eval.json")
    if data is None:
        return None
    splits = [("dev test split", data, data.get("data", {}).get("test"))]
    if "blind_holdout" in data:
        splits.append(("blind holdout", data["blind_holdout"], data["blind_holdout"].get("rows")))
    if "gate_dev" in data:
        splits.append(("gate-dev dev", data["gate_dev"], data["gate_dev"].get("dev")))
    header = ["metric"] + [
        f"{name} (n={count(n)})" if n is not None else name for name, _, n in splits
    ]
    metrics: list[tuple[str, Callable[[dict[str, Any]], Any]]] = [
        ("gate AUC, lexical (the default)", lambda d: d["gate_auc"]["lexical"]),
        ("gate AUC, learned", lambda d: d["gate_auc"]["learned_shipped"]),
        ("gate AUC, tdw-rag HeuristicGate", lambda d: _peer_gate(d["gate_auc"])),
        ("mode accuracy", lambda d: d.get("parse_rules", {}).get("mode_accuracy")),
        ("target exact (queries with a target)", lambda d: d.get("parse_rules", {}).get("target_exact")),
    ]
    rows = [[label] + [f3(get(d)) for _, d, _ in splits] for label, get in metrics]
    return block(
        "Query intent",
        "`benchmarks/intent_eval.py`; the blind holdout was written after the rules and "
        "never tuned on; gate-dev is real search questions (SituatedQA), the time-sensitivity "
        "model is fitted on its train split only. The project's sets label whether time should "
        "shape the ranking, so their AUC scores the weight applied (`intent_strength`); "
        "gate-dev labels whether the answer depends on when it is asked, scored by "
        "`time_sensitivity`.",
        table(header, rows),
    )


def operator_removal(results: Path) -> str | None:
    data = load(results, "intent_eval.json")
    if data is None:
        return None
    corpus = data["release_corpus"]
    scores: dict[str, Any] = corpus["ndcg@10"]
    full, topical = "bm25_full_query", "bm25_topical_query"
    suffixes = [""] + [k[len(full):] for k in scores if k.startswith(full + "_x_")]
    rows = []
    for suffix in suffixes:
        if full + suffix not in scores and topical + suffix not in scores:
            continue
        label = "BM25" + (f" x {suffix[len('_x_'):]}" if suffix else "")
        rows.append([label, f3(scores.get(full + suffix)), f3(scores.get(topical + suffix))])
    if not rows:
        return None
    return block(
        "Temporal-operator removal",
        f"release corpus nDCG@10 ({corpus.get('queries', '?')} queries), "
        "`benchmarks/intent_eval.py`: BM25 on the full query vs the topical query with "
        "the temporal words removed.",
        table(["scoring", "full query", "operators removed"], rows),
    )


def _index_label(name: str, run: dict[str, Any]) -> str:
    return run.get("config", name) if name.startswith("extra") else name


def index_quality(results: Path) -> str | None:
    data = load(results, "index_quality.json")
    if data is None:
        return None
    datasets: dict[str, Any] = data["datasets"]
    rel, cl = datasets.get("tdw-release"), datasets.get("changelogs")
    if rel is None and cl is None:
        return None
    runs_of = [d["runs"] for d in (rel, cl) if d is not None]
    names: list[str] = []
    for runs in runs_of:
        names += [n for n in runs if n not in names]
    if "default" not in names:
        return None
    picked = ["default"] + [n for n in INDEX_ABLATIONS if n in names][:MAX_ABLATIONS]
    kinds: list[str] = []
    if cl is not None:
        seen = set().union(*(r.get("by_kind", {}) for r in cl["runs"].values()))
        kinds = [k for k in CHANGELOG_KINDS if k in seen] + sorted(seen - set(CHANGELOG_KINDS))
    header = ["config"]
    if rel is not None:
        header.append("tdw-release")
    if cl is not None:
        header += ["changelogs"] + [f"changelogs {k}" for k in kinds]
    rows = []
    for name in picked:
        run = next(r[name] for r in runs_of if name in r)
        row = [_index_label(name, run)]
        if rel is not None:
            row.append(f3(rel["runs"].get(name, {}).get("overall", {}).get("ndcg@10")))
        if cl is not None:
            c = cl["runs"].get(name, {})
            row.append(f3(c.get("overall", {}).get("ndcg@10")))
            row += [f3(c.get("by_kind", {}).get(k)) for k in kinds]
        rows.append(row)
    emb = data.get("embedder")
    return block(
        "TemporalIndex quality",
        "nDCG@10, `benchmarks/index_quality.py`"
        + (f" ({emb} + BM25)" if emb else "")
        + "; the default config and ablations of it.",
        table(header, rows),
    )


def index_speed(results: Path) -> str | None:
    data = load(results, "index_speed.json")
    if data is None or not data.get("ours"):
        return None
    targets: dict[str, Any] = data.get("targets_ms", {})
    header = ["engine", "docs", "search p50 ms", "bare mat-vec p50 ms", "search / bare", "search / own mat-vec",
              "target ms", "build docs/s", "bytes/doc"]
    rows = []
    for r in data["ours"]:
        bare = r.get("bare_numpy_ms", {}).get("p50")
        rows.append([
            "chronorank", count(r["n"]), f1(r["search_ms"]["p50"]), f1(bare),
            ratio2(r.get("exact_over_bare")), ratio2(r.get("exact_over_bare_same_matvec")),
            f1(targets.get(str(r["n"]))), count(r.get("build_docs_per_s")),
            count(r.get("array_bytes_per_doc_total")),
        ])
    note = ""
    q = data.get("qdrant_local")
    if q and "qdrant" in q:
        qd, same = q["qdrant"], q.get("ours_same_n")
        if same:
            bare = same.get("bare_numpy_ms", {}).get("p50")
            rows.append([
                "chronorank", count(same["n"]), f1(same["search_ms"]["p50"]), f1(bare),
                ratio2(same.get("exact_over_bare")), ratio2(same.get("exact_over_bare_same_matvec")), DASH,
                count(same.get("build_docs_per_s")), count(same.get("array_bytes_per_doc_total")),
            ])
        rows.append([
            "Qdrant local mode", count(qd["n"]), f1(qd["search_ms"]["p50"]), DASH, DASH, DASH, DASH,
            count(qd.get("build_docs_per_s")), DASH,
        ])
        if q.get("p50_ratio_qdrant_over_ours") is not None:
            note = (f"Qdrant local p50 / chronorank p50 at the same size: "
                    f"{ratio(q['p50_ratio_qdrant_over_ours'])}. Local mode is Qdrant's in-process "
                    "Python implementation, not the server.")
    return block(
        "TemporalIndex speed",
        f"`benchmarks/index_speed.py`, {data.get('dim', '?')}-d vectors, the exact top 10 "
        "(every document's similarity; time scored over a pool proven to hold the top 10); bare "
        "mat-vec = `vectors @ q` + argpartition on the same query in the same run; own mat-vec = "
        "the same top 10 over the search's own mat-vec (numpy's per-row dots, two threads above "
        "21,800 documents), what the search costs beyond it; bytes/doc counts the in-memory arrays.",
        table(header, rows),
        note,
    )


def _lanes(spec: Any) -> str:
    if spec in (None, "none"):
        return "none"
    try:
        lanes = ast.literal_eval(spec) if isinstance(spec, str) else spec
        parts = [f"newest {v}" if kind == "newest" else f"last {v:g} d" for kind, v in lanes]
        return ", ".join(parts)
    except (ValueError, SyntaxError, TypeError):
        return str(spec)


def ann_recall(results: Path) -> str | None:
    data = load(results, "ann_recall.json")
    if data is None or not data.get("results"):
        return None
    sizes = [res["n"] for res in data["results"]]
    many = len(sizes) > 1
    header = (["docs"] if many else []) + ["scoring", "ANN k", "lanes", "recall@10",
                                           "recall@10, recent", "candidates", "p50 ms"]
    align = (["r"] if many else []) + ["l", "r", "l", "r", "r", "r", "r"]
    rows = []
    for res in data["results"]:
        for cfg, body in res["configs"].items():
            for r in body["runs"]:
                rows.append(([count(res["n"])] if many else []) + [
                    cfg.replace("_", " "), count(r["ann_k"]), _lanes(r["lanes"]),
                    f3(r["recall_at_10"]), f3(r.get("recall_at_10_by_mode", {}).get("recent")),
                    f1(r.get("candidates_mean")), f1(r.get("ann_search_p50_ms")),
                ])
    where = "" if many else f" over {count(sizes[0])} docs"
    return block(
        "ANN recall",
        f"`benchmarks/ann_recall.py`: HNSW (faiss) top-10 against exact top-10{where}, with "
        "and without time-sliced lanes.",
        table(header, rows, align),
    )


def store_lanes(results: Path) -> str | None:
    data = load(results, "store_lanes.json")
    if data is None or not data.get("stores"):
        return None
    rows = []
    for name, r in data["stores"].items():
        rank = r.get("answer_rank@10")
        rows.append([name, "found" if r["found"] else "missed",
                     DASH if rank is None else str(rank), f1(r.get("ms"))])
    where = ""
    if "answer_similarity_rank" in data:
        where = f" (rank {count(data['answer_similarity_rank'])} by similarity"
        where += f" among {count(data['docs'])} docs)" if "docs" in data else ")"
    return block(
        "Fresh answer beyond top-k",
        f"`benchmarks/store_lanes.py`: the current answer sits outside a plain similarity "
        f"top-k{where}.",
        table(["store", "answer", "rank", "ms"], rows, ["l", "l", "r", "r"]),
    )


def store_speed(results: Path) -> str | None:
    data = load(results, "store_speed.json")
    if data is None or not data.get("speed"):
        return None
    sizes = list(data["speed"])
    cells: dict[str, dict[str, str]] = {}
    skipped: list[tuple[str, str]] = []
    for size in sizes:
        for store, cell in data["speed"][size]["latency"].items():
            if isinstance(cell, dict):
                cells.setdefault(store, {})[size] = f1(cell["p50_ms"])
            else:
                skipped.append((store, size))
    for store, size in skipped:
        # "qdrant local": "not run (...)" covers "qdrant local, lanes" and its variants
        covered = [s for s in cells if s == store or s.startswith(store + ",")]
        for s in covered or [store]:
            cells.setdefault(s, {})[size] = "not run"
    rows = [[store] + [c.get(size, DASH) for size in sizes] for store, c in cells.items()]
    header = ["store"] + [f"p50 ms, {count(int(s))} docs" for s in sizes]
    note = ""
    qual = data.get("quality_changelogs_ndcg@10")
    if qual and qual.get("max_abs_diff_vs_index"):
        diff = max(qual["max_abs_diff_vs_index"].values())
        note = f"Quality parity on changelogs: max |nDCG@10 difference| from the index = {f3(diff)}."
    return block(
        "Store speed",
        "`benchmarks/store_speed.py`, same queries and kernels in each store.",
        table(header, rows),
        note,
    )


def store_pg(results: Path) -> str | None:
    data = load(results, "store_pg.json")
    if data is None:
        return None
    sets = [k for k, v in data.items() if isinstance(v, dict) and "store exact" in v]
    if not sets:
        return None
    cols = ["raw narrow-table pgvector exact", "store exact", "store lanes"]
    rows = []
    for name in sets:
        r = data[name]
        rows.append([name] + [f1(r[c]["p50_ms"]) for c in cols]
                    + [f"{r['ratio store exact / raw narrow exact']:.2f}x", f"{r['ratio store lanes / store exact']:.2f}x"])
    return block(
        "PostgreSQL layout",
        f"`benchmarks/store_pg.py`: `PgVectorStore` (schema 3: a narrow scoring table, texts fetched "
        f"for the top k) against a raw pgvector exact query over a narrow table in the same server, "
        f"{count(data['docs'])} synthetic {data['dim']}-d documents, p50 ms from one run.",
        table(["queries", "raw exact", "store exact", "store lanes", "exact / raw", "lanes / exact"], rows),
    )


def qdrant_engines(results: Path) -> str | None:
    """Qdrant local mode beside Qdrant's Rust engine in process (qdrant-edge-py), one run."""
    data = load(results, "store_speed_qdrant_edge.json")
    if data is None or not data.get("speed"):
        return None
    sizes = list(data["speed"])
    cells: dict[str, dict[str, str]] = {}
    for size in sizes:
        for store, cell in data["speed"][size]["latency"].items():
            cells.setdefault(store, {})[size] = f1(cell["p50_ms"]) if isinstance(cell, dict) else "not run"
    rows = [[store] + [c.get(size, DASH) for size in sizes] for store, c in cells.items()]
    header = ["engine"] + [f"p50 ms, {count(int(s))} docs" for s in sizes]
    ratios = [f"{count(int(s))}: {f1(data['speed'][s]['local_over_edge_p50'])}x" for s in sizes
              if data["speed"][s].get("local_over_edge_p50")]
    notes = []
    if ratios:
        notes.append("Local mode p50 / edge p50 (lanes, same run): " + ", ".join(ratios) + ".")
    diffs = (data.get("quality_changelogs_ndcg@10") or {}).get("max_abs_diff_vs_index") or {}
    if diffs:
        notes.append("Changelogs, max |nDCG@10 difference| per query kind from the index: "
                     + "; ".join(f"{k}: {f3(v)}" for k, v in diffs.items()) + ".")
    return block(
        "Qdrant: local mode and its Rust engine",
        "`benchmarks/store_speed.py --no-pg`, the same `QdrantStore` requests on qdrant-client's local mode and on "
        "`QdrantStore(edge_path=...)` (qdrant-edge-py), both engines in the same run at each size, on a loaded "
        "machine: compare within a column (`store_speed_qdrant_edge.json`).",
        table(header, rows),
        " ".join(notes),
    )


def reliability(results: Path) -> str | None:
    data = load(results, "reliability.json")
    if data is None:
        return None
    rows = []
    fuzz = data.get("fuzz")
    if fuzz:
        rows.append(["fuzz inputs", count(fuzz["inputs"])])
        rows.append(["fuzz crashes / invariant violations", count(len(fuzz.get("crashes", [])))])
    big = data.get("fuzz_big_inputs")
    if big:
        rows.append(["fuzz inputs, ~1 MB input every 25", count(big["inputs"])])
        rows.append(["fuzz crashes, big-input run", count(len(big.get("crashes", [])))])
    kills = data.get("kill_campaign")
    if kills:
        rows.append(["kill -9 during writes, survived", f"{kills['survived']} / {kills['kills']}"])
        rows.append(["documents lost", count(kills["documents_lost"])])
    writers = data.get("two_writers")
    if writers:
        trials = sum(w["trials"] for w in writers.values())
        lost = sum(w["documents_lost"] for w in writers.values())
        rows.append([f"two writers on one index, documents lost ({trials} trials)", count(lost)])
    busy = data.get("load_during_save")
    if busy:
        rows.append([f"false CorruptIndex in {count(busy['loads'])} loads during saves", count(busy["false_corrupt"])])
    mem = data.get("memory")
    if mem:
        rows.append([f"peak memory reranking {count(mem['n'])} candidates (MiB)",
                     f1(mem["tracemalloc_peak_mib"])])
    if not rows:
        return None
    return block(
        "Reliability",
        "`benchmarks/reliability.py`; details in "
        "[benchmarks/results/reliability.md](benchmarks/results/reliability.md).",
        table(["check", "result"], rows),
    )


CROSS_COLUMNS = (
    ("release/release/all", "release"),
    ("changelogs/original/latest", "changelogs latest"),
    ("changelogs/original/as_of", "as_of"),
    ("changelogs/original/as_of_date", "as_of_date"),
    ("changelogs/original/version", "version"),
    ("changelogs/reworded/all", "reworded"),
    ("changelogs/russian/all", "Russian"),
    ("news/news/fresh_only", "news fresh_only"),
    ("news/news/fresh_vs_stale", "news fresh_vs_stale"),
    ("synthetic/synthetic/all", "synthetic"),
    ("changelogs/user/all", "changelogs-user"),
    ("policies/dev/all", "policies dev"),
    ("policies_validity/dev/all", "policies dev, validity"),
)


def cross_domain(results: Path) -> str | None:
    data = load(results, "cross_domain.json")
    if data is None or not data.get("rows"):
        return None
    auc = (data.get("gate") or {}).get("auc")
    header = ["row"] + [c[1] for c in CROSS_COLUMNS] + ["gate AUC (gate-dev dev)"]
    rows = []
    for label, row in data["rows"].items():
        cols = row["columns"]
        rows.append([label] + [f3(cols.get(key)) for key, _ in CROSS_COLUMNS]
                    + [f3(auc) if label == "default index" else DASH])
    emb_rows = []
    for name, e in data.get("embedders", {}).items():
        cols = e["columns"]
        emb_rows.append([name] + [f3(cols.get(key)) for key, _ in CROSS_COLUMNS] + [f1(e.get("docs_per_s"))])
    peer = (data["rows"].get("tdw-rag best global decay") or {}).get("settings") or {}
    note = (
        f"One default for every domain ({data.get('embedder')} + BM25); each ablation changes one "
        "setting for all domains; similarity only = `strength=0`; tdw-rag best = the peer's "
        "368-setting grid fitted on each domain separately over the index's top 200 at each reference "
        "time (documents written later left out, as in every row but `future='clamp'`). "
        "An embedder row with dashes was not run on those domains (the 4-bit e5 engine embeds "
        "about ten times slower than MiniLM on 2 cores). "
        f"Gate AUC: {(data.get('gate') or {}).get('source', DASH)}."
    )
    if peer:
        note += " Peer settings: " + "; ".join(f"{k} `{v}`" for k, v in peer.items()) + "."
    body = table(header, rows)
    if emb_rows:
        body += "\n\nEmbedders, default configuration (docs/s: news articles of 2,000 characters, this shared 2-core machine):\n\n"
        body += table(["embedder"] + [c[1] for c in CROSS_COLUMNS] + ["docs/s"], emb_rows)
    return block(
        "One default on every domain",
        "nDCG@10, `benchmarks/cross_domain.py`: release corpus, changelogs (original, reworded, "
        "Russian), news-dev (real news questions over dated articles), synthetic, changelogs-user "
        "(hand-written questions over the changelog corpus), policies-dev (versioned policy "
        "sections, dev split, without and with validity intervals).",
        body, note,
    )


TIME_KINDS = ("period", "as_of", "before", "after", "since", "until", "current", "version", "timeless",
              "distractor")


def time_semantics(results: Path) -> str | None:
    data = load(results, "time_semantics.json")
    if data is None or not data.get("rows"):
        return None
    rows_in: dict[str, Any] = data["rows"]
    seen: set[str] = set().union(*(r.get("top1_by_kind", {}) for r in rows_in.values()))
    kinds = [k for k in TIME_KINDS if k in seen] + sorted(seen - set(TIME_KINDS))
    counts = next(iter(rows_in.values())).get("kind_counts", {})
    header = ["index", "top-1 right", "off-topic above on-topic (top 3)", "nDCG@10"]
    header += [f"{k} ({counts.get(k, '?')})" for k in kinds]
    rows = []
    for name, r in rows_in.items():
        n = r.get("queries")
        rows.append([name, f3(r.get("top1")), f"{r.get('offtopic_above', DASH)} of {n}", f3(r.get("ndcg@10"))]
                    + [f3(r.get("top1_by_kind", {}).get(k)) for k in kinds])
    align = ["l"] + ["r"] * (len(header) - 1)
    first = next(iter(rows_in.values()))
    wrong = ", ".join(f"\"{w['query']}\"" for w in first.get("wrong", []))
    note = f"Wrong top-1 ({next(iter(rows_in))}): {wrong}." if wrong else ""
    return block(
        "Time semantics",
        "top-1 accuracy per kind of question, `benchmarks/time_semantics.py` on the fixture in "
        "`benchmarks/data/time_semantics/` (35 versioned pages of five topics, 72 questions written "
        "before tuning); \"off-topic above on-topic\" counts questions where a page graded 0 ranks in "
        "the top 3 above a page graded >= 1 (or above one the top 3 left out, unless that page did not "
        "exist yet at the question's reference date).",
        table(header, rows, align),
        note,
    )


SECTIONS: tuple[Callable[[Path], str | None], ...] = (
    quality, rerank_speed, fit_speed, intent, operator_removal, index_quality, cross_domain, time_semantics, index_speed,
    ann_recall, store_lanes, store_speed, qdrant_engines, store_pg, reliability,
)


def render(results: Path = RESULTS) -> str:
    """The text between the markers: every table whose JSON is present, blank-line separated."""
    parts = []
    for section in SECTIONS:
        try:
            text = section(results)
        except (KeyError, TypeError, ValueError, IndexError, AttributeError, StopIteration):
            text = None
        if text:
            parts.append(text)
    return "\n\n" + "\n\n".join(parts) + "\n\n" if parts else "\n"


def extract(readme: str) -> str:
    """The README's current section (between the markers)."""
    start, end = _markers(readme)
    return readme[start + len(START):end]


def splice(readme: str, section: str) -> str:
    start, end = _markers(readme)
    return readme[:start + len(START)] + section + readme[end:]


def _markers(readme: str) -> tuple[int, int]:
    start = readme.find(START)
    end = readme.find(END, start + len(START)) if start >= 0 else -1
    if start < 0 or end < 0:
        raise ValueError(f"README lacks the {START} ... {END} markers")
    return start, end


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 with a diff if README is stale")
    ap.add_argument("--readme", type=Path, default=README)
    ap.add_argument("--results", type=Path, default=RESULTS)
    args = ap.parse_args(argv)
    text = args.readme.read_text(encoding="utf-8")
    section = render(args.results)
    if args.check:
        current = extract(text)
        if current == section:
            return 0
        sys.stdout.writelines(difflib.unified_diff(
            current.splitlines(keepends=True), section.splitlines(keepends=True),
            "README.md (results section)", "generated",
        ))
        return 1
    new = splice(text, section)
    if new != text:
        args.readme.write_text(new, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
