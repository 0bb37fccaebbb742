"""README.md stays true: its results tables, its Python quick start and its shell lines.

- the results section equals what ``tools/readme_results.py`` generates from the JSON in
  ``benchmarks/results/``;
- every ```python block runs (blocks share one namespace, in order), and each
  ``print(...)  # -> EXPECTED`` line prints exactly ``EXPECTED``;
- every command of the ```bash blocks runs as written, in a fresh copy of the repository's
  files with no ``../shared`` beside it (a clone's layout); install commands and the test
  command itself are not re-run (``.ci/run`` calls the latter).
"""

from __future__ import annotations

import ast
import contextlib
import importlib.util
import io
import os
import re
import shlex
import shutil
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


# ---------------------------------------------------------------- (d) every command, as a clone runs it


def _readme_commands() -> list[str]:
    """Each bash line as written, less its install steps and the test command."""
    out = []
    for block in _blocks("bash"):
        for line in block.splitlines():
            code = line.split("  #", 1)[0].strip()
            parts = [p.strip() for p in code.split("&&")]
            kept = [p for p in parts if p and " pip install" not in f" {p}" and not p.endswith("-m pytest")]
            if kept:
                out.append(" && ".join(kept))
    return out


README_COMMANDS = _readme_commands()
LONG_RUNNING = ("chronorank serve-demo",)


def test_readme_commands_found_and_test_command_is_what_ci_runs() -> None:
    assert any(c.startswith("chronorank index ") for c in README_COMMANDS)
    assert len(README_COMMANDS) >= 8, README_COMMANDS
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "python -m pytest" in _blocks("bash")[0]
    assert "python -m pytest --all" in ci  # CI runs the README's command with the slow and browser tests


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The files a clone has, in a directory with no ``shared/`` beside it or above it."""
    root = tmp_path_factory.mktemp("clone") / "chronorank"
    for name in ("src", "examples", "docs", "benchmarks", "tools"):
        shutil.copytree(ROOT / name, root / name, ignore=shutil.ignore_patterns("__pycache__", "*.png"))
    shutil.copy(ROOT / "README.md", root / "README.md")
    assert not any((p / "shared").exists() for p in root.parents)
    return root


def _clone_env(clone: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(clone / "src")
    env["XDG_CACHE_HOME"] = str(clone / ".cache")
    env["MPLBACKEND"] = "Agg"
    return env


def _shell(command: str) -> str:
    """The README line, run by bash with ``chronorank`` meaning this interpreter's package."""
    return f'chronorank() {{ "{sys.executable}" -m chronorank "$@"; }}\n{command}\n'


# the two that embed the bundled 242-document corpus (~45 s each on 2 cores) run with --all
SLOW_COMMANDS = ("chronorank demo", "chronorank serve-demo")


def _params(commands: list[str]) -> list:
    return [pytest.param(c, marks=pytest.mark.slow) if c.startswith(SLOW_COMMANDS) else c for c in commands]


@pytest.mark.parametrize("command", _params([c for c in README_COMMANDS if not c.startswith(LONG_RUNNING)]))
def test_readme_command_runs_in_a_clone(command: str, clone: Path) -> None:
    if "chronorank demo" in command or "chronorank index" in command or "chronorank eval" in command \
            or "chronorank benchmark" in command:
        _skip_without_default_embedder()
    proc = subprocess.run(["bash", "-c", _shell(command)], cwd=clone, env=_clone_env(clone),
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, f"{command}\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}"
    assert "Traceback" not in proc.stderr, proc.stderr
    assert (proc.stdout + proc.stderr).strip(), f"{command} printed nothing"


@pytest.mark.parametrize("command", _params([c for c in README_COMMANDS if c.startswith(LONG_RUNNING)]))
def test_readme_server_command_starts_in_a_clone(command: str, clone: Path) -> None:
    """A server runs until stopped: it must get as far as serving, then it is stopped."""
    _skip_without_default_embedder()
    proc = subprocess.Popen(["bash", "-c", "exec " + _shell(command).split("\n", 1)[1].replace(
        "chronorank ", f"{sys.executable} -m chronorank ", 1)], cwd=clone, env=_clone_env(clone),
        stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    lines = []
    try:
        assert proc.stderr is not None
        for line in proc.stderr:
            lines.append(line)
            if "serving http" in line or "Traceback" in line or "error" in line:
                break
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    text = "".join(lines)
    if "Address already in use" in text:
        pytest.skip(f"the README's port is taken on this machine: {text.strip()}")
    assert "serving http://127.0.0.1:8765/" in text, text
