"""Refresh a release-notes corpus from the GitHub releases API (standard library only).

``fetch_release_corpus(repos, token=None, out=DIR)`` reads
``GET https://api.github.com/repos/{owner}/{name}/releases?per_page=N`` for each repo,
keeps published, non-draft releases whose cleaned body has at least ``min_chars``
characters, and writes ``DIR/corpus.jsonl`` + ``DIR/queries.jsonl`` (docs/format.md) with the
snapshot time as every query's reference date, plus ``DIR/snapshot.json`` (the raw
snapshot in the bundled format).
"""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from chronorank.errors import ChronorankError, InvalidInput
from chronorank.eval.datasets import release_benchmark_from_snapshot, write_corpus, write_queries

__all__ = ["DEFAULT_REPOS", "FetchError", "fetch_release_corpus", "clean_body"]

API = "https://api.github.com/repos/{repo}/releases?per_page={per_page}"
DEFAULT_REPOS = (
    "apache/airflow", "astral-sh/ruff", "chroma-core/chroma", "duckdb/duckdb", "fastapi/fastapi",
    "huggingface/transformers", "pola-rs/polars", "prefecthq/prefect", "psf/black",
    "pydantic/pydantic", "qdrant/qdrant", "scikit-learn/scikit-learn", "streamlit/streamlit",
)
_REPO = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")
_STRIP = [
    (re.compile(r"<!--.*?-->", re.S), " "),
    (re.compile(r"\[([^\]]*)\]\([^)]*\)"), r"\1"),
    (re.compile(r"https?://\S+"), " "),
    (re.compile(r"(?<![\w`])@[A-Za-z0-9-]+"), " "),
    (re.compile(r"<[^>\n]{1,80}>"), " "),
    (re.compile(r"[#*`>]+"), " "),
    (re.compile(r"\s+"), " "),
]


class FetchError(ChronorankError):
    """The GitHub API could not be reached or refused the request."""


def clean_body(body: str, limit: int = 1500) -> str:
    """Release-note markdown -> one line of text (links, URLs, handles, markup removed)."""
    text = body or ""
    for pattern, repl in _STRIP:
        text = pattern.sub(repl, text)
    return text.strip()[:limit]


def _get(url: str, token: str | None, timeout: float) -> Any:
    headers = {"Accept": "application/vnd.github+json", "User-Agent": "chronorank-fetch-corpus",
               "X-GitHub-Api-Version": "2022-11-28"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    req = urllib.request.Request(url, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return json.load(resp)
    except urllib.error.HTTPError as exc:
        hint = " (rate limited: pass --token or set GITHUB_TOKEN)" if exc.code in (403, 429) else ""
        raise FetchError(f"GitHub answered HTTP {exc.code} for {url}{hint}") from None
    except (urllib.error.URLError, TimeoutError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise FetchError(
            f"cannot reach the GitHub API ({reason}); check the network connection or proxy, "
            "or use the bundled snapshot (chronorank benchmark --suite tdw-release)"
        ) from None


def fetch_release_corpus(
    repos: Sequence[str] = DEFAULT_REPOS,
    *,
    token: str | None = None,
    out: str | Path | None = None,
    per_page: int = 30,
    min_chars: int = 80,
    min_releases: int = 4,
    timeout: float = 30.0,
    now: Callable[[], datetime] | None = None,
    getter: Callable[[str, str | None, float], Any] | None = None,
) -> dict[str, Any]:
    """Fetch, clean and (with ``out``) write a docs/format.md release benchmark; returns the snapshot."""
    bad = [r for r in repos if not _REPO.match(r)]
    if bad or not repos:
        raise InvalidInput(f"repos={list(repos)!r}: give owner/name pairs such as 'pola-rs/polars'.")
    if not 1 <= per_page <= 100:
        raise InvalidInput(f"per_page={per_page}; the GitHub API accepts 1..100.")
    get = getter or _get
    fetched_at = (now or (lambda: datetime.now(timezone.utc)))().astimezone(timezone.utc).isoformat()
    docs: list[dict[str, Any]] = []
    for repo in repos:
        releases = get(API.format(repo=repo, per_page=per_page), token, timeout)
        if not isinstance(releases, list):
            raise FetchError(f"unexpected answer for {repo}: {str(releases)[:200]}")
        project = repo.split("/")[1]
        for rel in releases:
            if rel.get("draft") or not rel.get("published_at"):
                continue
            body = clean_body(rel.get("body") or "")
            if len(body) < min_chars:
                continue
            tag = rel.get("tag_name") or rel.get("name") or "?"
            docs.append({"id": f"{repo}@{tag}", "repo": repo, "project": project, "tag": tag,
                         "date": rel["published_at"], "text": f"{project} release {tag}. {body}"})
    docs.sort(key=lambda d: (d["date"], d["id"]), reverse=True)
    snapshot = {"fetched_at": fetched_at, "repos": list(repos), "documents": docs}
    if out is not None:
        d = Path(out)
        d.mkdir(parents=True, exist_ok=True)
        (d / "snapshot.json").write_text(json.dumps(snapshot, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        corpus, queries = release_benchmark_from_snapshot(snapshot, min_releases=min_releases)
        write_corpus(corpus, d / "corpus.jsonl")
        write_queries(queries, d / "queries.jsonl")
    return snapshot
