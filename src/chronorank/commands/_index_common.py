"""Helpers shared by the ``index``, ``search``, ``demo`` and ``eval`` commands."""

from __future__ import annotations

import json
import math
import sys
from typing import Any


def print_ranking(ranking: Any, *, explain: bool, as_json: bool, width: int = 100, out: Any = None,
                  legend: bool = True) -> None:
    """A ranking as JSON lines, a compact table, or the full explanation trace (``legend=False``:
    without its legend, for a caller that prints one legend for several rankings)."""
    out = out or sys.stdout
    if as_json:
        rows = ranking.explain_records()
        for hit, row in zip(ranking, rows):
            row["text"] = (hit.payload or {}).get("text", "")
        out.write(json.dumps({"query": ranking.query, "meta": _meta(ranking.meta), "hits": rows}, ensure_ascii=False) + "\n")
        return
    if explain:
        out.write(ranking.explain(legend=legend) + "\n")
        return
    for hit in ranking:
        text = " ".join(((hit.payload or {}).get("text", "")).split())
        date = "undated" if hit.date is None else hit.date.strftime("%Y-%m-%d")
        head = f"{hit.rank_after:>3}. {hit.score:.4f}  {date}  {hit.id}"
        out.write(head + "\n")
        if text:
            room = max(20, width - 7)
            out.write("       " + (text[:room] + ("..." if len(text) > room else "")) + "\n")


def _meta(meta: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in meta.items():
        if k == "intent" and v is not None:
            out[k] = v.describe()
        elif isinstance(v, float):
            out[k] = None if math.isnan(v) else v
        elif isinstance(v, (str, int, bool)) or v is None:
            out[k] = v
    return out
