"""Helpers of the index tests that check a ranking through the CLI as well as the Python API,
over small Debian-changelog-style corpora of their own."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from chronorank import TemporalIndex
from chronorank.cli import main


def debian_entry(pkg: str, version: str, date: str, body: str) -> dict[str, str]:
    """One Debian changelog entry as a document (id ``pkg@version``; its title names both)."""
    return {"id": f"{pkg}@{version}", "text": f"{pkg} ({version}) unstable; urgency=medium. {body}", "date": date}


def release_entry(project: str, version: str, date: str, body: str) -> dict[str, str]:
    """One release-notes entry as a document (id ``project@version``; its title is "project version.")."""
    return {"id": f"{project}@{version}", "text": f"{project} {version}. {body}", "date": date}


def reranked(index: TemporalIndex, docs: list[dict[str, Any]], query: str, now: str, **reranker: Any) -> Any:
    """The ranking :class:`chronorank.rerank.TemporalReranker` gives ``query`` at ``now`` over
    ``docs``, each scored by the index's similarity alone (``strength=0``)."""
    from chronorank.rerank import TemporalReranker

    by_id = {d["id"]: d for d in docs}
    cands = [{**by_id[h.id], "score": float(h.similarity)} for h in index.search(query, k=len(docs), now=now,
                                                                                 strength=0)]
    return TemporalReranker(**reranker).rerank(query, cands, now=now)


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


def corpus_fixtures(docs: list[dict[str, Any]], tag: str, index_name: str = "index",
                    cli_name: str = "cli_path") -> tuple[Any, Any]:
    """Two module fixtures over ``docs``: the index built in memory (``index_name``) and the one
    ``chronorank index`` saved (``cli_name``, see :func:`saved_index`); assign both at module level."""

    @pytest.fixture(scope="module", name=index_name)
    def _index() -> TemporalIndex:
        idx = TemporalIndex()
        idx.add(docs)
        return idx

    @pytest.fixture(scope="module", name=cli_name)
    def _cli(tmp_path_factory: Any) -> Path:
        return saved_index(tmp_path_factory, docs, tag)

    return _index, _cli


def first_both_ways(index: TemporalIndex, path: Path, capsys: Any, query: str, now: str, answer: str) -> Any:
    """Check that ``answer`` ranks first for ``query`` at ``now`` through the Python API and
    through ``chronorank search`` over the saved index; the API's ranking."""
    hits = index.search(query, k=3, now=now)
    assert hits.ranked_ids[0] == answer, hits.ranked_ids
    assert search_ids(capsys, path, query, now)[0] == answer
    return hits
