"""``chronorank intent "query" [--now DATE] [--lang CODE] [--json]``: show the parsed intent."""

from __future__ import annotations

import argparse
import json
import math
from typing import Any

from chronorank.types import epoch_to_datetime


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "intent",
        help="show the temporal intent parsed from a query",
        description="Parse a query's temporal intent: mode, target interval, sensitivity, topical query.",
    )
    p.add_argument("query", help="the query text")
    p.add_argument("--now", default=None, help="reference time, an ISO date or epoch seconds (default: the wall clock)")
    p.add_argument("--lang", default=None, help="language code, e.g. en or ru (default: detected from the text)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=run)
    return p


def _bound(t: float) -> str | None:
    dt = None if math.isinf(t) else epoch_to_datetime(t)
    return None if dt is None else dt.strftime("%Y-%m-%dT%H:%M:%SZ")


def run(args: argparse.Namespace) -> int:
    from chronorank.commands._input import parse_now
    from chronorank.intent import parse

    intent = parse(args.query, now=parse_now(args.now), lang=args.lang)
    target = None
    if intent.target is not None:
        target = {"start": _bound(intent.target.start), "end": _bound(intent.target.end)}
    if args.json:
        print(json.dumps({
            "query": intent.query,
            "lang": intent.lang,
            "mode": intent.mode,
            "time_sensitivity": round(intent.time_sensitivity, 4),
            "target": target,
            "topical_query": intent.topical_query,
            "unsupported_language": intent.unsupported,
            "spans": [{"start": s.start, "end": s.end, "text": s.text, "kind": s.kind} for s in intent.spans],
        }, ensure_ascii=False))
        return 0
    print(f"mode:        {intent.mode}")
    print(f"sensitivity: {intent.time_sensitivity:.2f}")
    if target is not None:
        print(f"target:      [{target['start'] or '-inf'}, {target['end'] or '+inf'})")
    print(f"topical:     {intent.topical_query}")
    print(f"language:    {intent.lang}" + (f" (the question seems {intent.unsupported}: no language file, "
                                             "its time words are not read)" if intent.unsupported else ""))
    for s in intent.spans:
        print(f"matched:     {s.text!r} ({s.kind}, chars {s.start}-{s.end})")
    return 0
