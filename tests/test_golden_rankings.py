"""Every ranked list the backends give on the committed benchmark data equals the recorded one.

``tools/golden_rankings.py`` recorded ``tests/data/golden_rankings.json`` (see its docstring
for what each section holds). A restructuring that is meant to leave behaviour unchanged must
leave every list identical; a change meant to re-rank re-records the file and says why.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("golden_rankings", ROOT / "tools" / "golden_rankings.py")
assert _spec is not None and _spec.loader is not None
golden = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(golden)
RECORDED: dict[str, Any] = json.loads(golden.OUT.read_text())


def _first_difference(want: Any, got: Any, path: str = "") -> str | None:
    if isinstance(want, dict) and isinstance(got, dict):
        if set(want) != set(got):
            return f"{path}: keys differ: missing {sorted(set(want) - set(got))[:3]}, new {sorted(set(got) - set(want))[:3]}"
        for k in sorted(want):
            d = _first_difference(want[k], got[k], f"{path}/{k}")
            if d:
                return d
        return None
    if isinstance(want, list) and isinstance(got, list):
        if len(want) != len(got):
            return f"{path}: {len(want)} entries recorded, {len(got)} now"
        for i, (w, g) in enumerate(zip(want, got)):
            d = _first_difference(w, g, f"{path}[{i}]")
            if d:
                return d
        return None
    return None if want == got else f"{path}: recorded {want!r}, now {got!r}"


@pytest.mark.parametrize("section", ["reranker", "index", "fit", "stores", "shared"])
def test_rankings_equal_the_recorded_ones(section: str) -> None:
    want = RECORDED[section]
    if section == "stores":
        pytest.importorskip("qdrant_client")
    got = golden.SECTIONS[section]()
    if section == "shared" and not got:
        pytest.skip("needs ../shared/data/changelogs beside the repository")
    assert want, f"section {section!r} has nothing recorded"
    diff = _first_difference(want, got)
    assert diff is None, f"{section}: {diff} (re-record with tools/golden_rankings.py only for an intended re-ranking)"
