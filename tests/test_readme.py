"""README.md stays true: its results tables, its Python quick start and its shell lines.

- the results section equals what ``tools/readme_results.py`` generates from the JSON in
  ``benchmarks/results/``;
- every ```python block runs (blocks share one namespace, in order), and each
  ``print(...)  # -> EXPECTED`` line prints exactly ``EXPECTED``;
- the ``chronorank curve`` and ``chronorank rerank`` lines of the ```bash block run.
"""

from __future__ import annotations

import ast
import contextlib
import importlib.util
import io
import re
import shlex
import subprocess
import sys
import tokenize
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
TOOL = ROOT / "tools" / "readme_results.py"
FENCE = re.compile(r"^```(\w*)[ \t]*\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)
EXPECT = "# ->"


def _readme() -> str:
    return README.read_text(encoding="utf-8")


def _blocks(lang: str) -> list[str]:
    return [m.group(2) for m in FENCE.finditer(_readme()) if m.group(1) == lang]


def _tool():
    spec = importlib.util.spec_from_file_location("readme_results", TOOL)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses/typing resolve through sys.modules
    spec.loader.exec_module(module)
    return module


# ---------------------------------------------------------------- (a) results section


def test_results_section_is_generated() -> None:
    tool = _tool()
    assert tool.extract(_readme()) == tool.render(), (
        "README's results section is stale; run: python tools/readme_results.py"
    )


def test_results_check_flag_agrees() -> None:
    tool = _tool()
    assert tool.main(["--check"]) == 0


def test_results_render_tolerates_missing_files(tmp_path: Path) -> None:
    tool = _tool()
    assert tool.render(tmp_path) == "\n"
    (tmp_path / "fit_speed.json").write_text('{"peer": {}}', encoding="utf-8")
    (tmp_path / "reliability.json").write_text(
        '{"kill_campaign": {"kills": 3, "survived": 3, "documents_lost": 0}}', encoding="utf-8"
    )
    out = tool.render(tmp_path)
    assert "Fit speed" not in out
    assert "| kill -9 during writes, survived | 3 / 3 |" in out


# ---------------------------------------------------------------- (b) python quick start


def _expectations(source: str) -> dict[int, str]:
    """Line number -> EXPECTED for each ``# -> EXPECTED`` comment (tokenized, not grepped)."""
    out: dict[int, str] = {}
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT and tok.string.startswith(EXPECT):
            out[tok.start[0]] = tok.string[len(EXPECT):].strip()
    return out


def _run_block(source: str, namespace: dict, name: str) -> list[tuple[str, str, str]]:
    """Run ``source`` statement by statement; return (line, expected, printed) per ``# ->``."""
    expected = _expectations(source)
    lines = source.splitlines()
    checks = []
    for stmt in ast.parse(source, filename=name).body:
        code = compile(ast.Module(body=[stmt], type_ignores=[]), name, "exec")
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            exec(code, namespace)
        end = stmt.end_lineno or stmt.lineno
        marks = [n for n in range(stmt.lineno, end + 1) if n in expected]
        if not marks:
            continue  # prints without a "# ->" comment are not checked
        printed = buf.getvalue().splitlines()
        assert len(printed) == len(marks), (
            f"{name} line {stmt.lineno}: {len(marks)} '# ->' comment(s) but printed {printed!r}"
        )
        for n, got in zip(marks, printed):
            checks.append((lines[n - 1].strip(), expected[n], got))
    return checks


def _needs_default_embedder(source: str) -> bool:
    return re.search(r"\bTemporalIndex\(\s*\)", source) is not None


def _skip_without_default_embedder() -> None:
    from chronorank.errors import MissingDependency

    try:
        from chronorank.index import get_embedder

        embedder = get_embedder("default")
        assert embedder is not None
        embedder.embed(["probe"])
    except MissingDependency as exc:
        pytest.skip(f"the default embedder needs the index extra: {exc}")


PY_BLOCKS = _blocks("python")


def test_readme_has_python_blocks_with_expectations() -> None:
    assert PY_BLOCKS, "README.md has no ```python blocks"
    assert any(_expectations(b) for b in PY_BLOCKS)


@pytest.mark.parametrize("i", range(len(PY_BLOCKS)), ids=lambda i: f"block{i}")
def test_python_block_runs_and_prints_what_it_says(i: int) -> None:
    """Blocks run in order in one namespace; block ``i`` is checked after 0..i-1 ran."""
    if any(_needs_default_embedder(b) for b in PY_BLOCKS[: i + 1]):
        _skip_without_default_embedder()
    namespace: dict = {"__name__": "__readme__"}
    for j in range(i):
        _run_block(PY_BLOCKS[j], namespace, f"README python block {j}")
    checks = _run_block(PY_BLOCKS[i], namespace, f"README python block {i}")
    wrong = [f"{line}\n    expected {exp!r}, printed {got!r}" for line, exp, got in checks
             if exp != got]
    assert not wrong, "README expectations differ from the output:\n" + "\n".join(wrong)


# ---------------------------------------------------------------- (c) bash lines


def _bash_command(prefix: str) -> tuple[list[str], str | None]:
    """The README's ``chronorank <prefix> ...`` line as argv (without 'chronorank') + stdin file."""
    for block in _blocks("bash"):
        for line in block.splitlines():
            if line.strip().startswith(f"chronorank {prefix} "):
                words = shlex.split(line, comments=True)
                stdin = None
                if "<" in words:
                    at = words.index("<")
                    stdin = words[at + 1]
                    words = words[:at] + words[at + 2:]
                return words[1:], stdin
    raise AssertionError(f"README's bash block has no 'chronorank {prefix}' line")


def _run_cli(args: list[str], stdin: str | None) -> subprocess.CompletedProcess[str]:
    feed = (ROOT / stdin).read_text(encoding="utf-8") if stdin else None
    return subprocess.run(
        [sys.executable, "-m", "chronorank", *args],
        cwd=ROOT, input=feed, capture_output=True, text=True, timeout=120,
    )


def test_bash_curve_line_runs() -> None:
    args, stdin = _bash_command("curve")
    proc = _run_cli(args, stdin)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "half-life" in proc.stdout


def test_bash_rerank_line_puts_the_current_price_first() -> None:
    args, stdin = _bash_command("rerank")
    assert stdin == "examples/pricing_candidates.jsonl"
    proc = _run_cli(args, stdin)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    ranked = [line.split() for line in proc.stdout.splitlines()]
    ranked = [w for w in ranked if w and w[0].isdigit()]
    assert ranked, proc.stdout
    assert ranked[0][0] == "1" and ranked[0][-1] == "pricing-2026", proc.stdout


def test_the_explain_trace_shown_in_the_readme_is_what_the_code_prints():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    shown = re.search(r"```text\n(query: .*?)```", readme, re.S)
    assert shown is not None
    from chronorank import TemporalReranker

    docs = [
        {"id": "pricing-2021", "score": 0.84, "date": "2021-03-11"},
        {"id": "pricing-2023", "score": 0.82, "date": "2023-08-02"},
        {"id": "pricing-2026", "score": 0.79, "date": "2026-05-14"},
    ]
    ranking = TemporalReranker("power_law(half_life_days=180, beta=1)").rerank(
        "what does the pro plan cost right now", docs, now="2026-08-01"
    )
    assert shown.group(1).strip() == ranking.explain().strip()
