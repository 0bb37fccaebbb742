"""Embed the page's data into ``docs/index.html``.

The interactive page is one self-contained file: its document sets and the intent
language data sit in a ``<script type="application/json" id="cr-data">`` block. This
script rewrites that block from

- the release-notes sample (a fixed, deterministic choice from the changelog corpus),
- the pricing example (written here), and
- the intent language files ``src/chronorank/intent/lang/*.json``, and
- the time-sensitivity model (``src/chronorank/intent/sensitivity_weights.json`` and the
  regex sources of ``chronorank.intent.sensitivity``), which the page's parser ports.

Usage::

    python tools/build_page.py [--corpus PATH]     # rewrite the block
    python tools/build_page.py --check              # exit 1 if the page is stale

``--check`` compares the language data and the pricing set only, so it runs without
the corpus; the release-notes sample is rebuilt only when a corpus is available.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "index.html"
LANG_DIR = ROOT / "src" / "chronorank" / "intent" / "lang"
CORPUS_CANDIDATES = (
    ROOT / "src" / "chronorank" / "data" / "changelogs.jsonl",
    ROOT / "src" / "chronorank" / "data" / "corpus.jsonl",
    ROOT.parent / "shared" / "data" / "changelogs" / "corpus.jsonl",
)
BLOCK = re.compile(
    r'(<script type="application/json" id="cr-data">)(.*?)(</script>)', re.DOTALL
)

# project -> (licence, repository), from the corpus README's source table.
SAMPLE_PROJECTS: dict[str, tuple[str, str]] = {
    "requests": ("Apache-2.0", "psf/requests"),
    "flask": ("BSD-3-Clause", "pallets/flask"),
    "pytest": ("MIT", "pytest-dev/pytest"),
}
NEWEST_PER_PROJECT = 6
EARLIER_YEARS_PER_PROJECT = 4
MAX_TEXT = 520

# The pricing example: near-identical pages, the oldest the most canonical wording.
PRICING: list[dict[str, object]] = [
    {
        "id": "pricing-2019",
        "group": "pro-plan-pricing",
        "date": "2019-09-02",
        "title": "Pro plan launch note",
        "text": "Pricing guide. The Pro plan launches at 10 dollars per seat per month, "
        "billed monthly.",
    },
    {
        "id": "pricing-2021",
        "group": "pro-plan-pricing",
        "date": "2021-03-11",
        "title": "Pricing guide (2021)",
        "text": "Pricing guide. What does the Pro plan cost? The Pro plan costs 12 dollars "
        "per seat per month, billed monthly or yearly.",
    },
    {
        "id": "pricing-2023",
        "group": "pro-plan-pricing",
        "date": "2023-08-02",
        "title": "Pricing guide (2023)",
        "text": "Pricing guide. The Pro plan costs 18 dollars per seat per month, "
        "billed monthly or yearly.",
    },
    {
        "id": "pricing-2026",
        "group": "pro-plan-pricing",
        "date": "2026-05-14",
        "title": "Pricing guide (2026)",
        "text": "Pricing guide. The Pro plan now costs 25 dollars per seat per month, "
        "billed monthly or yearly.",
    },
    {
        "id": "billing-faq",
        "date": None,
        "title": "Billing FAQ (undated)",
        "text": "Billing questions: seats are counted at the start of each cycle, and the "
        "plan price is charged per seat.",
    },
]


def _truncate(text: str, limit: int = MAX_TEXT) -> str:
    if len(text) <= limit:
        return text
    cut = text[:limit].rsplit(" ", 1)[0]
    return cut.rstrip(" ,;:") + " \u2026"


def find_corpus(explicit: str | None) -> Path | None:
    if explicit:
        return Path(explicit)
    return next((p for p in CORPUS_CANDIDATES if p.is_file()), None)


def release_sample(corpus: Path) -> list[dict[str, object]]:
    """Newest entries of each sample project plus the newest entry of earlier years."""
    by_project: dict[str, list[dict[str, str]]] = defaultdict(list)
    with corpus.open(encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            if row["project"] in SAMPLE_PROJECTS:
                by_project[row["project"]].append(row)
    out: list[dict[str, object]] = []
    for project, (licence, repo) in SAMPLE_PROJECTS.items():
        rows = by_project[project]  # corpus order: (date, natural version)
        chosen = rows[-NEWEST_PER_PROJECT:]
        newest_year = chosen[0]["date"][:4]
        seen_years: set[str] = set()
        for row in reversed(rows[:-NEWEST_PER_PROJECT]):
            year = row["date"][:4]
            if year >= newest_year or year in seen_years:
                continue
            seen_years.add(year)
            chosen.insert(0, row)
            if len(seen_years) == EARLIER_YEARS_PER_PROJECT:
                break
        for row in sorted(chosen, key=lambda r: (r["date"], rows.index(r))):
            out.append(
                {
                    "id": row["id"],
                    "date": row["date"],
                    "title": f"{project} {row['version']}",
                    "text": _truncate(row["text"]),
                    "group": project,
                    "licence": licence,
                    "repo": repo,
                }
            )
    return out


def lang_data() -> dict[str, object]:
    if not LANG_DIR.is_dir():
        return {}
    return {
        p.stem: json.loads(p.read_text(encoding="utf-8")) for p in sorted(LANG_DIR.glob("*.json"))
    }


def sensitivity_data() -> dict[str, object]:
    if str(ROOT / "src") not in sys.path:
        sys.path.insert(0, str(ROOT / "src"))
    from chronorank.intent import sensitivity as sm

    raw = json.loads(sm.DEFAULT_WEIGHTS.read_text(encoding="utf-8"))
    items = sorted((int(k), v) for k, v in raw["weights"].items())
    return {
        "hash_bits": raw["hash_bits"],
        "bias": raw["bias"],
        "i": [k for k, _ in items],
        "w": [v for _, v in items],
        "patterns": {
            "token": sm._TOKEN.pattern, "year": sm._YEAR.pattern, "role_of": sm._EN_ROLE_OF.pattern,
            "superlative": sm._EN_SUPERLATIVE.pattern, "nature": sm._EN_NATURE.pattern,
        },
        "not_superlative": sorted(sm._EN_NOT_SUPERLATIVE),
        "skip_cues": sorted(sm._SKIP_CUES),
        "moving_kinds": sorted(sm._MOVING_KINDS),
    }


def current_block(html: str) -> dict[str, object]:
    m = BLOCK.search(html)
    if m is None:
        raise SystemExit(f"{PAGE}: no <script id=\"cr-data\"> block found")
    return json.loads(m.group(2))


def render(data: dict[str, object]) -> str:
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    return text.replace("</", "<\\/")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", help="changelog corpus JSONL (default: bundled or shared copy)")
    ap.add_argument("--check", action="store_true", help="exit 1 if the embedded data is stale")
    args = ap.parse_args(argv)

    html = PAGE.read_text(encoding="utf-8")
    old = current_block(html)
    new = dict(old)
    new["pricing"] = PRICING
    new["lang"] = lang_data()
    new["sensitivity"] = sensitivity_data()
    corpus = find_corpus(args.corpus)
    if corpus is not None and not args.check:
        new["releases"] = release_sample(corpus)
        new["corpus_source"] = "changelogs corpus (../shared/data/changelogs)"

    if args.check:
        stale = [k for k in ("pricing", "lang", "sensitivity") if old.get(k) != new.get(k)]
        if stale:
            print(f"{PAGE} is stale in: {', '.join(stale)}; run python tools/build_page.py")
            return 1
        return 0
    m = BLOCK.search(html)
    if m is None:  # pragma: no cover - current_block() already checked
        raise SystemExit("no data block")
    html = html[: m.start(2)] + render(new) + html[m.end(2) :]
    PAGE.write_text(html, encoding="utf-8")
    n_rel = len(new.get("releases", []))  # type: ignore[arg-type]
    print(f"wrote {PAGE} ({len(html) / 1024:.0f} KiB, {n_rel} release notes, "
          f"languages: {', '.join(new['lang']) or 'none'})")  # type: ignore[arg-type]
    return 0


if __name__ == "__main__":
    sys.exit(main())
