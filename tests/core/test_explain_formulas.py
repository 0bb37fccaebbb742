"""Every score line of ``explain()`` recomputes to the printed score, for every kind of row:
on topic, off topic, undated, expired, and with time off; the header's gate x strength
equals the effective strength it prints."""

from __future__ import annotations

import re

import pytest

from chronorank import TemporalReranker

NOW = "2026-08-01"
CANDIDATES = [
    {"id": "fresh", "score": 0.90, "date": "2026-07-20", "text": "release 3.0"},
    {"id": "old", "score": 0.95, "date": "2024-01-10", "text": "release 2.0"},
    {"id": "undated", "score": 0.85, "date": None, "text": "release notes"},
    {"id": "ended", "score": 0.80, "date": "2025-01-01", "valid_to": "2025-06-01", "text": "release 2.5"},
    {"id": "unrelated", "score": 0.20, "date": "2026-07-30", "text": "weather"},
]

ROW = re.compile(
    r"^\d+\. (?P<id>\S+)  score (?P<score>-?[\d.]+) = similarity (?P<sim>-?[\d.]+)"
    r"(?: x \(1 - (?P<s1>[\d.]+) \+ (?P<s2>[\d.]+) x time factor (?P<f>[\d.]+)\))?"
    r"(?: x (?:topic scale|rank rule) (?P<mul>[\d.]+)| (?P<sign>[+-]) (?:topic scale|rank rule) (?P<add>[\d.]+))?  \["
)


def _rows(text: str) -> list[tuple[str, float, float, str]]:
    """(id, printed score, recomputed score, the line) for every document line."""
    out = []
    for line in text.splitlines():
        if not re.match(r"^\d+\. ", line):
            continue
        m = ROW.match(line)
        assert m, f"a score line that is not a formula: {line}"
        value = float(m["sim"])
        if m["f"] is not None:
            assert m["s1"] == m["s2"], line
            s = float(m["s1"])
            value *= 1 - s + s * float(m["f"])
        if m["mul"] is not None:
            value *= float(m["mul"])
        if m["add"] is not None:
            value += float(m["add"]) * (1 if m["sign"] == "+" else -1)
        out.append((m["id"], float(m["score"]), value, line))
    return out


@pytest.mark.parametrize("query,kinds", [
    ("latest release", {"on topic", "undated", "validity ended", "not on topic", "topic scale"}),
    ("release notes as of March 2025", {"on topic"}),
    ("what is a release", {"time off"}),
])
def test_every_explained_score_recomputes(query: str, kinds: set[str]) -> None:
    rr = TemporalReranker(topical_margin=0.5)
    text = rr.explain(query, CANDIDATES, now=NOW)
    rows = _rows(text)
    assert len(rows) == len(CANDIDATES) or "as of" in query, text
    for _id, printed, value, line in rows:
        # the printed numbers carry 4 decimals (s up to 4): they recompute to the printed score
        assert value == pytest.approx(printed, abs=2e-4), line
    seen = set()
    for _id, _p, _v, line in rows:
        if "not on topic" in line:
            seen.add("not on topic")
        else:
            seen.add("on topic")
        seen |= {k for k in ("undated", "validity ended", "topic scale") if k in line}
    if "time: off" in text:
        seen.add("time off")
        assert all(" x (1 - " not in line for *_, line in rows)
    assert kinds <= seen, (kinds - seen, text)
    head = re.search(r"gate ([\d.]+) x strength ([\d.]+) = effective strength ([\d.]+)", text)
    if head:
        assert float(head[1]) * float(head[2]) == pytest.approx(float(head[3]), abs=6e-3), head[0]


def test_a_stated_time_says_why_the_gate_is_not_the_sensitivity() -> None:
    text = TemporalReranker().explain("release notes as of March 2025", CANDIDATES, now=NOW)
    head = re.search(r"gate ([\d.]+) x strength ([\d.]+) = effective strength ([\d.]+)(.*)", text)
    assert head and float(head[1]) * float(head[2]) == pytest.approx(float(head[3]), abs=6e-3)
    sens = re.search(r"sensitivity=([\d.]+)", text)
    assert sens
    if abs(float(sens[1]) - float(head[1])) > 5e-3:
        assert "a stated time weighs" in head[4], head[0]


def test_legend_can_be_left_out_and_given_once() -> None:
    from chronorank.types import legend_line

    ranking = TemporalReranker(topical_margin=0.5).rerank("latest release", CANDIDATES, now=NOW)
    full, bare = ranking.explain(), ranking.explain(legend=False)
    assert full == bare + "\n" + legend_line(ranking.terms())
    assert "legend:" not in bare and "topic scale" in ranking.terms()


@pytest.mark.parametrize("query", ["latest tern release", "tern release notes as of March 2025", "what is tern"])
def test_the_index_explanations_recompute_too(query: str) -> None:
    from chronorank.index import TemporalIndex

    idx = TemporalIndex(embedder="hashing")
    docs = [dict(c, text=f"tern {c['text']}") for c in CANDIDATES if c["id"] != "unrelated"]
    docs.append({"id": "unrelated", "text": "weather in lisbon today", "date": "2026-07-30"})
    idx.add(docs)
    text = idx.search(query, k=10, now=NOW).explain()
    rows = _rows(text)
    assert rows, text
    for _id, printed, value, line in rows:
        assert value == pytest.approx(printed, abs=2e-4), line
