"""Embedding cache: `chronorank demo` and `chronorank eval`, first run against a rerun.

Each command runs as a fresh subprocess with its own empty caches -- embeddings
(``CHRONORANK_EMBED_CACHE=<tmp>``), built indexes (``CHRONORANK_INDEX_CACHE``), regexes
(``CHRONORANK_REGEX_CACHE``) and ``XDG_CACHE_HOME`` (where ``demo`` keeps its index) --
twice: the first run embeds the corpus, the rerun on the unchanged corpus should embed
nothing (and, with its questions' vectors cached too, start no embedder session).
The rerun loads the cached index and vectors and ranks every question again.
``demo`` runs as a user runs it (the rerun loads the index the first run saved);
``demo-no-cache`` with ``--no-cache``, which builds the index every time, so only the
embedding cache helps; ``eval`` runs on the demo's 242 release notes and their labelled
queries, written out in docs/format.md shape (the rerun loads the index the first run
built, :mod:`chronorank.eval.index_cache`); ``eval-changelogs`` on ../shared/data/changelogs
(2,062 documents, 196 queries; left out without ../shared). stderr is piped, so the
progress is the plain line; the time to its first byte (from the process start) is
recorded too, and each run's CPU seconds (user + system, from ``wait4``: steadier than
wall time on a busy machine). ``--reruns N`` times N reruns and reports their median.

As after ``pip install``, the package's bytecode exists before the first run (compiled
into a temporary ``PYTHONPYCACHEPREFIX``; ``PYTHONDONTWRITEBYTECODE`` is dropped), so
neither run pays for compiling chronorank's sources. The floor of any rerun is starting
Python and importing numpy: ``python_numpy_s`` records it (median of 5) beside the rows.

    nice -n 10 python benchmarks/embed_cache.py [--embedder default] [--reruns 3]
        [--commands demo,demo-no-cache,eval,eval-changelogs] [--out benchmarks/results/embed_cache.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import selectors
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def timed(cmd: list[str], env: dict[str, str]) -> dict:
    """Run ``cmd``; wall seconds, seconds to the first progress line on stderr, and that line."""
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    sel = selectors.DefaultSelector()
    assert p.stdout is not None and p.stderr is not None
    sel.register(p.stdout, selectors.EVENT_READ, "out")
    sel.register(p.stderr, selectors.EVENT_READ, "err")
    first: float | None = None
    err = out = b""
    open_streams = 2
    while open_streams:
        for key, _ in sel.select():
            chunk = os.read(key.fileobj.fileno(), 65536)  # type: ignore[union-attr]
            if not chunk:
                sel.unregister(key.fileobj)
                open_streams -= 1
                continue
            if key.data == "out":
                out += chunk
            if key.data == "err":
                err += chunk
                if first is None and b"embedding" in err:
                    first = time.perf_counter() - t0
    _, status, usage = os.wait4(p.pid, 0)
    rc = p.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - t0
    lines = [ln for ln in err.decode(errors="replace").splitlines() if ln.startswith("embedding")]
    if rc != 0:
        raise SystemExit(f"{' '.join(cmd)} exited {rc}:\n{err.decode(errors='replace')[-2000:]}")
    return {"wall_s": wall, "cpu_s": usage.ru_utime + usage.ru_stime, "first_progress_s": first, "progress_lines": len(lines),
            "first_line": lines[0] if lines else None, "last_line": lines[-1] if lines else None,
            "_stdout": out.decode(errors="replace")}


def _answers(stdout: str, command: str) -> str:
    """What a run printed, less the demo's first line (how the index was obtained, and how long it took)."""
    return stdout.split("\n", 1)[-1] if command.startswith("demo") else stdout


def write_eval_inputs(folder: Path) -> tuple[Path, Path]:
    from chronorank.eval.datasets import release_benchmark_from_snapshot, release_snapshot

    corpus, queries = release_benchmark_from_snapshot(release_snapshot(None))
    c, q = folder / "corpus.jsonl", folder / "queries.jsonl"
    c.write_text("".join(json.dumps(d, default=str) + "\n" for d in corpus))
    q.write_text("".join(json.dumps(x, default=str) + "\n" for x in queries))
    return c, q


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--embedder", default="default")
    ap.add_argument("--commands", default="demo,demo-no-cache,eval,eval-changelogs")
    ap.add_argument("--reruns", type=int, default=3)
    ap.add_argument("--out", default="benchmarks/results/embed_cache.json")
    args = ap.parse_args()
    exe = [sys.executable, "-m", "chronorank"]
    rows = []
    with tempfile.TemporaryDirectory(prefix="chronorank-embed-bench-") as tmp:
        tmpd = Path(tmp)
        corpus, queries = write_eval_inputs(tmpd)
        cmds = {
            "demo": [*exe, "demo", "--embedder", args.embedder],
            "demo-no-cache": [*exe, "demo", "--no-cache", "--embedder", args.embedder],
            "eval": [*exe, "eval", "--corpus", str(corpus), "--queries", str(queries), "--embedder", args.embedder],
        }
        shared = ROOT.parent / "shared" / "data" / "changelogs"
        if (shared / "corpus.jsonl").is_file():
            cmds["eval-changelogs"] = [*exe, "eval", "--corpus", str(shared / "corpus.jsonl"),
                                       "--queries", str(shared / "queries.jsonl"), "--embedder", args.embedder]
        base_env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        base_env["PYTHONPYCACHEPREFIX"] = str(tmpd / "pycache")
        import chronorank

        # bytecode of the package as an install leaves it (pip compiles at install time)
        subprocess.run([sys.executable, "-c", f"import compileall; compileall.compile_dir({str(Path(chronorank.__file__).parent)!r}, quiet=1)"],
                       env=base_env, check=True)
        for name in args.commands.split(","):
            if name not in cmds:
                print(f"{name}: skipped (needs ../shared/data)")
                continue
            env = dict(base_env, CHRONORANK_EMBED_CACHE=str(tmpd / f"cache-{name}"), XDG_CACHE_HOME=str(tmpd / f"xdg-{name}"),
                       CHRONORANK_REGEX_CACHE=str(tmpd / f"regex-{name}"), CHRONORANK_INDEX_CACHE=str(tmpd / f"indexes-{name}"))
            first = timed(cmds[name], env)
            reruns = [timed(cmds[name], env) for _ in range(max(1, args.reruns))]
            # the median rerun by wall time; every rerun's wall and CPU seconds are kept
            rerun = dict(sorted(reruns, key=lambda r: r["wall_s"])[len(reruns) // 2])
            rerun["all_wall_s"] = [r["wall_s"] for r in reruns]
            rerun["all_cpu_s"] = [r["cpu_s"] for r in reruns]
            rerun["cpu_s"] = statistics.median(rerun["all_cpu_s"])
            same = all(_answers(r.pop("_stdout"), name) == _answers(first["_stdout"], name) for r in reruns)
            first.pop("_stdout")
            rerun.pop("_stdout", None)
            row = {"command": name, "first_run": first, "rerun": rerun,
                   "rerun_speedup": first["wall_s"] / rerun["wall_s"],
                   "rerun_speedup_cpu": first["cpu_s"] / rerun["cpu_s"], "target_speedup": 50.0,
                   "target_first_progress_s": 1.0, "rerun_prints_the_same_answers": same}
            rows.append(row)
            print(f"{name:>15}: first run {first['wall_s']:7.2f} s (first progress at {first['first_progress_s']} s)"
                  f"  rerun {rerun['wall_s']:6.2f} s  speedup {row['rerun_speedup']:6.1f}x"
                  f" (CPU {first['cpu_s']:.2f} s / {rerun['cpu_s']:.2f} s: {row['rerun_speedup_cpu']:.1f}x)"
                  f"  rerun progress lines {rerun['progress_lines']}")
        floor = [timed([sys.executable, "-c", "import numpy"], base_env)["wall_s"] for _ in range(5)]
        if not all(r["rerun_prints_the_same_answers"] for r in rows):
            print("WARNING: a rerun printed other answers than its first run")
    out = {
        "benchmark": "embed_cache",
        "embedder": args.embedder,
        "python_numpy_s": statistics.median(floor),
        "machine": {"python": platform.python_version(), "processor": platform.machine(), "cpus": os.cpu_count(),
                    "load_average_at_end": os.getloadavg()},
        "rows": rows,
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=2) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
