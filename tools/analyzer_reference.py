"""Record the keyword analyzer's output, frozen, for ``tests/index/test_analyzer_reference.py``.

``python tools/analyzer_reference.py [--rev a066bcd]`` loads ``chronorank.index.text`` as it
was at git revision ``--rev`` (default: main before the batch analyzer moved to numpy) and
writes ``tests/data/analyzer_reference.json``:

- ``odd``: odd strings (empty, white space of every kind, versions, URLs, dates, Cyrillic,
  Greek sigma, dotted capital I, CJK, emoji, curly quotes, the scan's own mark characters,
  lone surrogates, pieces around the numpy key's length limits, ...) with, per string,
  ``analyze`` in each mode and, per cut, the lead's term count;
- ``digests``: for the bundled release notes and, when ``../shared/data`` is beside the
  repository, each corpus there, the SHA-256 of every document's terms in each mode (no
  text is written: the news texts must not be copied into the project).

Re-record only when the analyzer is meant to change (and bump ``ANALYZER_VERSION``).
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"
OUT = ROOT / "tests" / "data" / "analyzer_reference.json"

_ALPHA = "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyz"
ODD = [
    "",
    " ",
    "\n\n\t ",
    "Hello, World!",
    "v2.31.0 released 2024-05-01; see https://example.com/a/b?x=1&y=2#frag (docs.example.org/v2.31)",
    "python-3.12.0rc1 and scikit-learn 1.4.0.post1 (send_json, aiohttp.web, __init__, a__b)",
    "1.0 1.0.0 v1.2.0.0 2.3.10 10.0.0-beta.2 V2.0 vv2.0 v1 1.2.3.4.5.6.7.8.9.10.11.12",
    "ipv4 192.168.0.1 and 10.0.0.255; dates 2024-01-02 01/02/2024 2024.01.02 12:30:45Z 2024-06-01T12:00:00+02:00",
    "ΣΟΦΙΑ ΟΔΟΣ. Σ σ ς ΑΣ'Α ΟΔΟΣ.Α mixed ΣΑΣ ΣΑΣ.",
    "İstanbul İİ KELVIN K Å ǅungla ǈ ǋ ﬁ ﬂ ß STRASSE",
    "Ünïcödé façade naïve coöperate e\u0301tude",
    "Москва — столица России; версия 2.0.1 вышла 1 мая. ПРИВЕТ Мир",
    "東京は日本の首都です。バージョン3.2をリリース。한국어 텍스트",
    "emoji 🚀 launch 🎉🎉 ✔️ done 👍🏽 family 👨‍👩‍👧",
    "“Quoted” ‘words’ — dash – en… ellipsis\u00a0nbsp «guillemets» •bullet ‹single›",
    "a\x00b \x00 x \x01 c\x01 \x00\x01 end",
    "tab\tsep\x0bvert\x0cform\x1cfs\x1d\x1e\x1f\x85next\u2028line\u2029para\u3000ideo\u200bzero\u200djoin",
    "under_score -x- +y+ a+b c.d. ..e a-.b a.-b a..b _a_ -1 +1 1. .5",
    "ª º µ ² ³ ¹ ½ Ⅻ ١٢٣ ⅷ ۴ 𝟙𝟚 𝐀𝐁",
    " ".join(_ALPHA[:k] for k in (6, 7, 8, 9, 15, 16, 17, 23, 24, 25, 40)),
    " ".join(_ALPHA[:k].upper() + "." for k in (7, 8, 24, 25)) + " " + "x" * 30 + " " + "x" * 29 + "y",
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaa1 aaaaaaaaaaaaaaaaaaaaaaaaaaaa2 naïveté-naïveté-naïveté-naïveté",
    "The THE the a I s t don't won’t it's Running runs ran runner",
    "lone \ud800 surrogate \udfff and a pair 😀",
    "!!!???... --- +++ ___ ... . , ; :",
    "end. Next sentence! Another? yes.\nSecond line here",
    "No sentence end in the first part but a very long run of words that keeps going " * 8,
]


def load_rev(rev: str) -> ModuleType:
    src = subprocess.run(["git", "show", f"{rev}:src/chronorank/index/text.py"], cwd=ROOT,
                         capture_output=True, text=True, check=True).stdout
    path = Path(tempfile.mkdtemp(prefix="analyzer_ref_")) / "text_ref.py"
    path.write_text(src, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("_analyzer_reference_text", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def cuts_of(text: str) -> list[int]:
    from chronorank.index.core import lead_cut

    return sorted({lead_cut(text), 0, len(text), len(text) // 2, min(len(text), 3)})


def digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, ensure_ascii=True).encode("ascii")).hexdigest()


def corpus_digests(mod: ModuleType, texts: list[str]) -> dict[str, Any]:
    from chronorank.index.core import lead_cut

    return {
        "docs": len(texts),
        "documents": digest([mod.analyze(t, prefixes=True) for t in texts]),
        "plain": digest([mod.analyze(t) for t in texts]),
        "unstemmed": digest([mod.analyze(t, stem=False) for t in texts]),
        "leads": digest([len(mod.analyze(t[: lead_cut(t)], prefixes=True)) for t in texts]),
    }


def corpora() -> dict[str, list[str]]:
    from chronorank.eval.datasets import release_benchmark_from_snapshot, release_snapshot

    out = {"bundled-release-notes": [d["text"] for d in release_benchmark_from_snapshot(release_snapshot(None))[0]]}
    for name in ("changelogs", "news-dev"):
        path = SHARED / name / "corpus.jsonl"
        if path.is_file():
            with path.open(encoding="utf-8") as fh:
                out[name] = [json.loads(line)["text"] for line in fh if line.strip()]
    rel = SHARED / "tdw-rag-release-corpus" / "release_corpus.json"
    if rel.is_file():
        out["tdw-rag-release-corpus"] = [d["text"] for d in json.loads(rel.read_text(encoding="utf-8"))["documents"]]
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rev", default="a066bcd")
    ap.add_argument("--out", default=str(OUT))
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT / "src"))
    mod = load_rev(args.rev)
    odd = []
    for text in ODD:
        odd.append({
            "text": text,
            "documents": mod.analyze(text, prefixes=True),
            "plain": mod.analyze(text),
            "unstemmed": mod.analyze(text, stem=False),
            "queries": mod.analyze(text, series=True),
            "leads": {str(c): len(mod.analyze(text[:c], prefixes=True)) for c in cuts_of(text)},
        })
    report = {
        "rev": args.rev,
        "odd": odd,
        "digests": {name: corpus_digests(mod, texts) for name, texts in corpora().items()},
    }
    Path(args.out).write_text(json.dumps(report, indent=1, ensure_ascii=True) + "\n", encoding="ascii")
    print(f"wrote {args.out}: {len(odd)} odd strings, corpora {sorted(report['digests'])}")


if __name__ == "__main__":
    main()
