"""Bad inputs the CLI must answer with one clear line, and the table of what each one gets.

    python tools/bad_inputs.py            # rewrite docs/bad_inputs.md
    python tools/bad_inputs.py --check    # exit 1 when docs/bad_inputs.md is stale

Each case writes its files into an empty directory, runs ``chronorank ARGS`` in-process there
(standard input fed from bytes) and records the exit code and what reached standard error.
``tests/test_bad_inputs.py`` runs every case and fails on a traceback, an internal error, an
unexpected exit code, a message longer than one line, or a table that differs from this output.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TABLE = ROOT / "docs" / "bad_inputs.md"

OK_DOC = b'{"id": "a", "text": "tern 3.0 release notes", "date": "2026-05-11"}\n'
OK_QUERY = b'{"qid": "q1", "query": "latest tern release", "reference_date": "2026-08-01", "relevance": {"a": 3}}\n'
CAND = b'{"id": "a", "score": 0.8, "date": "2026-05-11"}\n'


def _doc(extra: str) -> bytes:
    return ('{"id": "a", "text": "tern notes"' + extra + "}\n").encode()


def _text(text: str) -> bytes:
    return (json.dumps({"id": "a", "text": text}, ensure_ascii=False) + "\n").encode()


@dataclass(frozen=True)
class Case:
    what: str  # the bad input, in a few words
    args: tuple[str, ...]  # chronorank's arguments
    files: dict[str, bytes] = field(default_factory=dict)
    stdin: bytes = b""
    code: int = 2  # the exit code the case must get
    setup: tuple[tuple[str, ...], ...] = ()  # commands run first (their output is not recorded)
    prepare: Callable[[Path], None] | None = None  # then this, e.g. to damage a file


def _damage_the_docs_file(work: Path) -> None:
    """Overwrite the start of the saved documents with garbage of the same length."""
    gen = next(p for p in sorted((work / "idx").iterdir()) if p.is_dir())
    victim = gen / "docs.jsonl"
    data = victim.read_bytes()
    victim.write_bytes(b"\x00garbage" + data[8:])


def _replace_with_fifo(work: Path, name: str) -> None:
    """Replace a file of the current generation with a named pipe (opening it would block)."""
    gen = next(p for p in sorted((work / "idx").iterdir()) if p.is_dir())
    (gen / name).unlink()
    os.mkfifo(gen / name)


def _symlink_the_lock(work: Path) -> None:
    """Point the index's LOCK at a file elsewhere (a save would create it)."""
    (work / "idx" / "LOCK").unlink(missing_ok=True)
    os.symlink(work / "elsewhere", work / "idx" / "LOCK")


IDX = ("index", "c.jsonl", "--out", "idx", "--embedder", "hashing")
CASES: tuple[Case, ...] = (
    # ---- file kinds and encodings
    Case("corpus is a directory", ("index", "data", "--out", "idx"), {"data/corpus.jsonl": OK_DOC}),
    Case("corpus file does not exist", ("index", "nope.jsonl", "--out", "idx")),
    Case("corpus is a binary file (PNG)", IDX, {"c.jsonl": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"}),
    Case("corpus is UTF-16 with a BOM", IDX, {"c.jsonl": "\ufeff".encode("utf-16-le") + OK_DOC.decode().encode("utf-16-le")}),
    Case("corpus is Latin-1 text", IDX, {"c.jsonl": '{"id": "a", "text": "caf\xe9"}\n'.encode("latin-1")}),
    Case("corpus has a UTF-8 BOM (accepted)", IDX, {"c.jsonl": b"\xef\xbb\xbf" + OK_DOC}, code=0),
    Case("corpus file is empty", IDX, {"c.jsonl": b""}, code=3),
    Case("corpus holds only blank lines", IDX, {"c.jsonl": b"\n  \n\n"}, code=3),
    Case("--out is an existing file", ("index", "c.jsonl", "--out", "c.jsonl", "--embedder", "hashing"),
         {"c.jsonl": OK_DOC}),
    # ---- JSON and fields
    Case("a line is not JSON", IDX, {"c.jsonl": OK_DOC + b'{"id": "b", "text": "x",}\n'}),
    Case("a line is a JSON list", IDX, {"c.jsonl": b'["a", "text"]\n'}),
    Case("a JSON-array corpus is cut short", IDX, {"c.jsonl": b'[{"id": "a", "text": "x"},\n'}),
    Case("id missing", IDX, {"c.jsonl": b'{"text": "tern notes"}\n'}),
    Case("text is a number", IDX, {"c.jsonl": b'{"id": "a", "text": 42}\n'}),
    Case("the same id twice", IDX, {"c.jsonl": OK_DOC + OK_DOC}),
    Case("metadata is not an object", IDX, {"c.jsonl": _doc(', "metadata": "v2"')}),
    Case("date unreadable", IDX, {"c.jsonl": _doc(', "date": "nope"')}),
    Case("date unreadable, --bad-dates missing (counted)", (*IDX, "--bad-dates", "missing"),
         {"c.jsonl": _doc(', "date": "nope"') + b'{"id": "b", "text": "x", "date": "soon"}\n'}, code=0),
    Case("valid_to before date", IDX, {"c.jsonl": _doc(', "date": "2024-05-01", "valid_to": "2023-01-01"')}),
    Case("valid_to is not a date", IDX, {"c.jsonl": _doc(', "valid_to": "forever"')}),
    Case("date is a JSON object", IDX, {"c.jsonl": _doc(', "date": {"y": 2024}')}),
    Case("slash date with --dayfirst (accepted)", (*IDX, "--dayfirst"), {"c.jsonl": _doc(', "date": "03/04/2022"')},
         code=0),
    Case("slash dates that could be either order (warned)", IDX,
         {"c.jsonl": _doc(', "date": "03/04/2022"') + b'{"id": "b", "text": "x", "date": "12/30/2022"}\n'}, code=0),
    Case("a slash date only day-first can read (the whole file day-first, warned)", IDX,
         {"c.jsonl": _doc(', "date": "03/04/2022"') + b'{"id": "b", "text": "x", "date": "31/12/2022"}\n'}, code=0),
    Case("slash dates in two orders in one file", IDX,
         {"c.jsonl": _doc(', "date": "31/12/2022"') + b'{"id": "b", "text": "x", "date": "12/30/2022"}\n'}),
    Case("dates under another field, none readable (warned)", IDX,
         {"c.jsonl": _doc(', "published": "2024-01-02"') + b'{"id": "b", "text": "x", "published": "2025-03-04"}\n'},
         code=0),
    Case("date is a year as a JSON number (accepted)", IDX, {"c.jsonl": _doc(', "date": 2022')}, code=0),
    Case("date is a YYYYMMDD number (accepted)", IDX, {"c.jsonl": _doc(', "date": 20220304')}, code=0),
    Case("date is a bare number of unclear unit", IDX, {"c.jsonl": _doc(', "date": 86400')}),
    Case("a bare number with --date-unit s (accepted)", (*IDX, "--date-unit", "s"),
         {"c.jsonl": _doc(', "date": 86400')}, code=0),
    Case("corpus is a CSV file", ("index", "c.csv", "--out", "idx", "--embedder", "hashing"),
         {"c.csv": b"id,text,date\na,tern notes,2024-01-02\n"}),
    Case("a text over 1 MB (indexed, with a warning)", IDX,
         {"c.jsonl": b'{"id": "long", "text": "' + b"tern " * 220_000 + b'"}\n'}, code=0),
    Case("--config names an unknown setting", (*IDX, "--config", "index(strenght=0.5)"), {"c.jsonl": OK_DOC}),
    Case("--config names a kernel parameter as a setting", (*IDX, "--config", "index(half_life_days=90)"),
         {"c.jsonl": OK_DOC}),
    Case("--embedder unknown", ("index", "c.jsonl", "--out", "idx", "--embedder", "minilm-xl"), {"c.jsonl": OK_DOC}),
    Case("a text over 8 MB", IDX, {"c.jsonl": b'{"id": "big", "text": "' + b"a" * (8 * 1024 * 1024 + 1) + b'"}\n'}),
    # ---- rerank
    Case("rerank: nothing on standard input", ("rerank", "-q", "latest"), stdin=b"", code=3),
    Case("rerank: score missing", ("rerank", "-q", "latest"), stdin=b'{"id": "a", "date": "2026-05-11"}\n'),
    Case("rerank: score is text", ("rerank", "-q", "latest"), stdin=b'{"id": "a", "score": "high"}\n'),
    Case("rerank: date unreadable (the rule of index)", ("rerank", "-q", "latest"),
         stdin=b'{"id": "a", "score": 0.5, "date": "nope"}\n'),
    Case("rerank: --input is a binary file", ("rerank", "-q", "latest", "-i", "c.bin"), {"c.bin": b"\x00\x01\x02"}),
    Case("rerank: a line is not an object", ("rerank", "-q", "latest"), stdin=b"0.5\n"),
    Case("rerank: unknown kernel", ("rerank", "-q", "latest", "--kernel", "nonsense"), stdin=CAND),
    Case("rerank: misspelt kernel", ("rerank", "-q", "latest", "--kernel", "exponentail"), stdin=CAND),
    Case("rerank: --strength out of range", ("rerank", "-q", "latest", "--strength", "2"), stdin=CAND),
    Case("rerank: --combine unknown", ("rerank", "-q", "latest", "--combine", "average"), stdin=CAND),
    Case("rerank: --relative-recency out of range", ("rerank", "-q", "latest", "--relative-recency", "5"),
         stdin=CAND),
    Case("rerank: --gate not understood", ("rerank", "-q", "latest", "--gate", "maybe"), stdin=CAND),
    Case("rerank: --missing-date unknown", ("rerank", "-q", "latest", "--missing-date", "forget"), stdin=CAND),
    Case("rerank: --now unreadable", ("rerank", "-q", "latest", "--now", "someday"), stdin=CAND),
    Case("rerank: --strength not a number", ("rerank", "-q", "latest", "--strength", "high"), stdin=CAND),
    # ---- eval and queries
    Case("eval: relevance grade 5", ("eval", "--corpus", "c.jsonl", "--queries", "q.jsonl", "--embedder", "hashing"),
         {"c.jsonl": OK_DOC, "q.jsonl": OK_QUERY.replace(b'"a": 3', b'"a": 5')}),
    Case("eval: qid missing", ("eval", "--corpus", "c.jsonl", "--queries", "q.jsonl", "--embedder", "hashing"),
         {"c.jsonl": OK_DOC, "q.jsonl": b'{"query": "latest", "relevance": {}}\n'}),
    Case("eval: a query judges an unknown document",
         ("eval", "--corpus", "c.jsonl", "--queries", "q.jsonl", "--embedder", "hashing"),
         {"c.jsonl": OK_DOC, "q.jsonl": OK_QUERY.replace(b'"a": 3', b'"zz": 3')}),
    Case("eval: the query file is empty", ("eval", "--corpus", "c.jsonl", "--queries", "q.jsonl", "--embedder", "hashing"),
         {"c.jsonl": OK_DOC, "q.jsonl": b""}, code=3),
    Case("eval: reference_date unreadable",
         ("eval", "--corpus", "c.jsonl", "--queries", "q.jsonl", "--embedder", "hashing"),
         {"c.jsonl": OK_DOC, "q.jsonl": OK_QUERY.replace(b"2026-08-01", b"next week")}),
    # ---- search
    Case("search: no index there", ("search", "idx", "latest")),
    Case("search: a corpus file instead of an index", ("search", "c.jsonl", "latest"), {"c.jsonl": OK_DOC}),
    Case("search: -k 0", ("search", "idx", "latest", "-k", "0"), {"c.jsonl": OK_DOC}, setup=(IDX,)),
    Case("search: a damaged file under --no-verify", ("search", "idx", "latest", "--no-verify"), {"c.jsonl": OK_DOC},
         setup=(IDX,), prepare=_damage_the_docs_file),
    Case("search: a damaged file (checked)", ("search", "idx", "latest"), {"c.jsonl": OK_DOC},
         setup=(IDX,), prepare=_damage_the_docs_file),
    # ---- the other commands' flags
    Case("curve: --ages not numbers", ("curve", "--ages", "a,b")),
    Case("curve: --max-age negative", ("curve", "--max-age", "-1")),
    Case("curve: unknown kernel parameter", ("curve", "exponential", "half_life=30")),
    Case("curve: a negative half-life", ("curve", "weibull(half_life_days=-3)")),
    Case("compare-weights: two weights instead of three", ("compare-weights", "--weights", "1,2")),
    Case("fit: --folds 1", ("fit", "--folds", "1")),
    Case("fit: unknown --metric", ("fit", "--metric", "accuracy")),
    Case("fit: --data is not a directory", ("fit", "--data", "nowhere/")),
    Case("benchmark: unknown --metric", ("benchmark", "--metric", "ndcg")),
    Case("benchmark: a suite directory without queries", ("benchmark", "--suite", "s/", "--no-index"),
         {"s/corpus.jsonl": OK_DOC}),
    Case("intent: --now unreadable", ("intent", "latest news", "--now", "yesterday-ish")),
    Case("intent: a German question (no language file, warned)", ("intent", "die neuesten Versionen von polars"),
         code=0),
    Case("intent: a Chinese question (no language file, warned)", ("intent", "polars 最新"), code=0),
    Case("serve-demo: --limit 0", ("serve-demo", "--limit", "0")),
    Case("an unknown command", ("indx", "c.jsonl")),
    # ---- issue 31: values no engine represents, hostile index files
    Case("a metadata integer beyond 64 bits", IDX, {"c.jsonl": _doc(', "metadata": {"n": ' + "9" * 30 + "}")}),
    Case("a metadata number that is infinite (1e400)", IDX, {"c.jsonl": _doc(', "metadata": {"n": 1e400}')}),
    Case("search: the index's manifest is a named pipe", ("search", "idx", "latest"), {"c.jsonl": OK_DOC},
         setup=(IDX,), prepare=lambda work: _replace_with_fifo(work, "manifest.json")),
    Case("index --append: the index's LOCK is a symbolic link", (*IDX, "--append"), {"c.jsonl": OK_DOC},
         setup=(IDX,), prepare=_symlink_the_lock),
    # ---- misleading numbers in undated texts: none becomes a date (timeparse.textdates)
    Case("undated text with prices (no date inferred)", IDX,
         {"c.jsonl": _text("Pro plan: $2,019.99 a year, EUR 12.05.20 a month, 1.12.2019 RUB a seat")}, code=0),
    Case("undated text with version numbers (no date inferred)", IDX,
         {"c.jsonl": _text("tern 2.10.2020 and v2019.05.12 ship; upgrade from 1.12.2019 or 2019.3")}, code=0),
    Case("undated text with phone numbers (no date inferred)", IDX,
         {"c.jsonl": _text("Call +1 (555) 2023-0512 or 8-800-2024-12-31, fax 03.04.2022-7")}, code=0),
    Case("undated text with '2.9 million' (no date inferred)", IDX,
         {"c.jsonl": _text("2.9 million users in 2023, up from 1.2 million in May")}, code=0),
    Case("undated text with '99.9%' (no date inferred)", IDX,
         {"c.jsonl": _text("99.9% uptime since 2019; 12.5 MB per 24 hours, 2019.99 ms")}, code=0),
    Case("undated Russian text with numbers (no date inferred)", IDX,
         {"c.jsonl": _text("Цена 2 990 руб., версия 12.03.2024, тел. 8 (495) 2023-05-12, 2,9 млн")}, code=0),
    Case("undated text naming a date with the wrong weekday (no date inferred)", IDX,
         {"c.jsonl": _text("The council met on Monday, the 30th of May 2023, at noon.")}, code=0),
    Case("undated text mentioning another thing's date (no date inferred)", IDX,
         {"c.jsonl": _text("The same chart was posted April 2, 2020, to the agency's account.")}, code=0),
    Case("undated text stating its date (inferred)", IDX,
         {"c.jsonl": _text("Refund policy. Effective date: May 25, 2018.")}, code=0),
)


def run_case(case: Case, work: Path) -> tuple[int, str]:
    """(exit code, standard error) of the case, run in ``work`` (an empty directory)."""
    from chronorank.cli import main

    for name, data in case.files.items():
        p = work / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
    old_cwd, old_stdin = os.getcwd(), sys.stdin
    os.chdir(work)
    try:
        for args in case.setup:
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                if main(list(args)) != 0:
                    raise RuntimeError(f"setup {args} failed")
        if case.prepare is not None:
            case.prepare(work)
        sys.stdin = io.TextIOWrapper(io.BytesIO(case.stdin), encoding="utf-8")
        err = io.StringIO()
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
            try:
                code = main(list(case.args))
            except SystemExit as exc:  # argparse's own usage errors
                code = exc.code if isinstance(exc.code, int) else 2
        return int(code), err.getvalue()
    finally:
        sys.stdin = old_stdin
        os.chdir(old_cwd)


def shown(stderr: str, code: int = 2) -> str:
    """The message as the table shows it: argparse's usage line dropped, lines joined; for an
    accepted input only its warnings and notes (the progress line holds timings)."""
    lines = [ln for ln in stderr.splitlines() if ln.strip() and not ln.startswith(("usage:", "  "))]
    if code == 0:
        lines = [ln for ln in lines if "warning:" in ln or "note:" in ln] or ["(accepted)"]
    return " / ".join(lines)


def _cmd(args: tuple[str, ...]) -> str:
    return "chronorank " + " ".join(a if a and " " not in a else repr(a) for a in args)


def render(results: list[tuple[Case, int, str]]) -> str:
    out = [
        "# What the CLI says to bad input",
        "",
        "Generated by `python tools/bad_inputs.py` (the test `tests/test_bad_inputs.py` runs every",
        "case and checks this table). Each case runs in an empty directory holding only its files.",
        "Exit codes: 0 accepted (warnings on standard error), 2 bad input, 3 nothing to do;",
        "formats in [format.md](format.md).",
        "",
        "| # | bad input | command | exit | message |",
        "|---:|---|---|---:|---|",
    ]
    for i, (case, code, err) in enumerate(results, 1):
        msg = shown(err, code).replace("|", "\\|") or "(nothing)"
        out.append(f"| {i} | {case.what} | `{_cmd(case.args)}` | {code} | {msg} |")
    return "\n".join(out) + "\n"


def run_all() -> list[tuple[Case, int, str]]:
    import tempfile

    results = []
    for case in CASES:
        with tempfile.TemporaryDirectory(prefix="chronorank-bad-") as d:
            code, err = run_case(case, Path(d))
        results.append((case, code, err))
    return results


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    text = render(run_all())
    if "--check" in argv:
        if TABLE.read_text(encoding="utf-8") != text:
            print("docs/bad_inputs.md is stale; run: python tools/bad_inputs.py", file=sys.stderr)
            return 1
        return 0
    TABLE.write_text(text, encoding="utf-8")
    print(f"wrote {TABLE.relative_to(ROOT)} ({len(CASES)} cases)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
