"""Helpers of the index tests that check a ranking through the CLI as well as the Python API,
over small Debian-changelog-style corpora of their own."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from chronorank.cli import main


def debian_entry(pkg: str, version: str, date: str, body: str) -> dict[str, str]:
    """One Debian changelog entry as a document (id ``pkg@version``; its title names both)."""
    return {"id": f"{pkg}@{version}", "text": f"{pkg} ({version}) unstable; urgency=medium. {body}", "date": date}


def saved_index(tmp_path_factory: Any, docs: list[dict[str, Any]], name: str) -> Path:
    """``chronorank index`` over ``docs`` written as a JSONL corpus; the saved index's path."""
    d = tmp_path_factory.mktemp(name)
    corpus = d / "corpus.jsonl"
    corpus.write_text("".join(json.dumps(x) + "\n" for x in docs), encoding="utf-8")
    assert main(["index", str(corpus), "--out", str(d / "idx")]) == 0
    return d / "idx"


def search_ids(capsys: Any, path: Path, query: str, now: str, k: int = 3) -> list[str]:
    """The ids ``chronorank search --json`` ranks for ``query`` at ``now``."""
    capsys.readouterr()
    assert main(["search", str(path), query, "--now", now, "-k", str(k), "--json"]) == 0
    return [h["id"] for h in json.loads(capsys.readouterr().out)["hits"]]
