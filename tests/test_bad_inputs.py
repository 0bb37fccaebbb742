"""Every bad input in ``tools/bad_inputs.py`` gets one clear line, never a traceback, and
``docs/bad_inputs.md`` is what those cases print. Also: every CLI option has help text that
states its default, and every help screen points at docs/format.md."""

from __future__ import annotations

import argparse
import importlib.util
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _tool():
    spec = importlib.util.spec_from_file_location("bad_inputs", ROOT / "tools" / "bad_inputs.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses resolve through sys.modules
    spec.loader.exec_module(module)
    return module


TOOL = _tool()


def test_at_least_thirty_cases() -> None:
    assert len(TOOL.CASES) >= 30
    assert len({c.what for c in TOOL.CASES}) == len(TOOL.CASES)


@pytest.mark.parametrize("case", TOOL.CASES, ids=lambda c: c.what)
def test_bad_input_gets_one_clear_line(case, tmp_path: Path) -> None:
    code, err = TOOL.run_case(case, tmp_path)
    assert "Traceback" not in err and "internal error" not in err, err
    assert code == case.code, f"exit {code}, expected {case.code}: {err}"
    if code != 0:
        lines = [ln for ln in err.splitlines() if ln.strip() and not ln.startswith(("usage:", "  "))]
        assert len(lines) == 1, err
        assert lines[0].startswith("chronorank") and "error:" in lines[0], err
        # a fix is written as the command's flag, never as a Python keyword argument
        assert not re.search(r"\b(pass|use|or) [a-z_]+=", lines[0]), err


def test_python_keyword_hints_become_flags() -> None:
    from chronorank.cli import _build_parser, cli_hint

    _, rerank = _build_parser("rerank")
    msg = "pass bad_score='drop' (leave it out) or missing_date='keep'; id='a' stays"
    assert cli_hint(msg, rerank) == "pass --bad-score drop (leave it out) or --missing-date keep; id='a' stays"


def test_the_committed_table_is_generated() -> None:
    assert (ROOT / "docs" / "bad_inputs.md").read_text(encoding="utf-8") == TOOL.render(TOOL.run_all()), (
        "docs/bad_inputs.md is stale; run: python tools/bad_inputs.py"
    )


def _subparsers() -> list[tuple[str, argparse.ArgumentParser]]:
    from chronorank.cli import _build_parser
    from chronorank.commands import COMMANDS

    out = []
    for name in COMMANDS:
        _, sub = _build_parser(name)
        assert sub is not None, name
        out.append((name, sub))
    return out


@pytest.mark.parametrize("name,parser", _subparsers(), ids=lambda x: x if isinstance(x, str) else "")
def test_every_option_has_help_and_states_its_default(name: str, parser: argparse.ArgumentParser) -> None:
    missing = []
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction) or not action.option_strings:
            continue
        text = action.help or ""
        if not text.strip():
            missing.append(f"{action.option_strings[0]}: no help")
        elif action.default not in (None, False, argparse.SUPPRESS) and "default" not in text:
            missing.append(f"{action.option_strings[0]}: default {action.default!r} not stated")
        elif action.required and "default" in text:
            missing.append(f"{action.option_strings[0]}: required, yet its help names a default")
    assert not missing, f"chronorank {name}: " + "; ".join(missing)
    assert "docs/format.md" in parser.format_help()
    assert "%%" not in parser.format_help()
