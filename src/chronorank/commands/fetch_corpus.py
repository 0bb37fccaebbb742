"""``chronorank fetch-corpus``: refresh a release-notes benchmark from the GitHub releases API."""

from __future__ import annotations

import argparse
import os
from typing import Any

from chronorank.errors import InvalidInput


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    p = subparsers.add_parser("fetch-corpus", help="refresh a release-notes corpus from GitHub",
                              description="Writes corpus.jsonl, queries.jsonl (docs/format.md; reference date = "
                                          "snapshot time) and snapshot.json.")
    p.add_argument("--repos", default=None, help="owner/name,... (default: the 13 projects of the bundled snapshot)")
    p.add_argument("--token", default=None, help="GitHub token (default: $GITHUB_TOKEN)")
    p.add_argument("--out", default="release-corpus", metavar="DIR",
                   help="directory to write the three files to (default release-corpus)")
    p.add_argument("--per-page", type=int, default=30, metavar="N",
                   help="releases fetched per repository, 1-100 (default 30)")
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    from chronorank.eval.fetch import DEFAULT_REPOS, fetch_release_corpus

    if not 1 <= args.per_page <= 100:
        raise InvalidInput(f"--per-page {args.per_page}: GitHub pages hold 1 to 100 releases, e.g. --per-page 30")
    repos = [r.strip() for r in args.repos.split(",") if r.strip()] if args.repos else list(DEFAULT_REPOS)
    snap = fetch_release_corpus(repos, token=args.token or os.environ.get("GITHUB_TOKEN"), out=args.out,
                                per_page=args.per_page)
    print(f"wrote {len(snap['documents'])} releases from {len(repos)} repos to {args.out} "
          f"(reference date {snap['fetched_at']})")
    return 0
