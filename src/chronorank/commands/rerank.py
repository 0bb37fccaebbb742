"""``chronorank rerank``: rerank scored, dated candidates read as JSON lines from stdin or a file."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from chronorank.errors import InvalidInput


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "rerank",
        help="rerank scored, dated candidates read as JSONL",
        description=(
            "Read candidates (one JSON object a line, with id, score and date fields) from "
            "stdin or --input, rerank them for --query and print the ranking."
        ),
    )
    p.add_argument("--query", "-q", required=True, help="the user's query (its temporal intent is parsed)")
    p.add_argument("--kernel", default=None, help="kernel spec, e.g. 'weibull(half_life_days=90, shape=2)'")
    p.add_argument("--strength", type=float, default=1.0, help="decay strength in [0, 1] (default 1)")
    p.add_argument("--combine", default="gated_multiply",
                   help="gated_multiply | multiply | linear | rrf (default gated_multiply)")
    p.add_argument("--missing-date", default="neutral", help="neutral | keep | penalise | drop | raise")
    p.add_argument("--future", default="auto", help="auto | clamp | not_yet_valid | symmetric | exclude")
    p.add_argument("--gate", default="intent",
                   help="'intent' (parse the query), 'off' (full strength) or a number in [0, 1]")
    p.add_argument("--relative-recency", type=float, default=None, metavar="RATIO",
                   help="count ages from the newest candidate within RATIO of the best similarity")
    p.add_argument("--group-key", default=None, help="metadata field linking versions of one document")
    p.add_argument("--now", default=None, help="reference time (default: the wall clock)")
    p.add_argument("--top-k", "-k", type=int, default=None, help="print only the best K")
    p.add_argument("--date-field", default="date")
    p.add_argument("--score-field", default="score")
    p.add_argument("--id-field", default="id")
    p.add_argument("--input", "-i", default="-", help="JSONL file (default: stdin)")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.add_argument("--explain", action="store_true", help="print the full explanation trace")
    p.set_defaults(func=run)


def _gate(value: str) -> Any:
    if value == "intent":
        return True
    if value == "off":
        return False
    try:
        return float(value)
    except ValueError:
        raise InvalidInput(f"--gate {value!r}: use 'intent', 'off' or a number in [0, 1]") from None


def read_jsonl(stream: Any, source: str) -> list[dict[str, Any]]:
    rows = []
    for lineno, line in enumerate(stream, 1):
        line = line.strip()
        if not line:
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InvalidInput(f"{source} line {lineno} is not valid JSON ({exc.msg}); each line must be one JSON object") from None
        if not isinstance(row, dict):
            raise InvalidInput(f"{source} line {lineno} is a {type(row).__name__}, expected a JSON object")
        rows.append(row)
    return rows


def run(args: argparse.Namespace) -> int:
    from chronorank.rerank import TemporalReranker

    if args.input == "-":
        rows = read_jsonl(sys.stdin, "stdin")
    else:
        try:
            with open(args.input, encoding="utf-8") as fh:
                rows = read_jsonl(fh, args.input)
        except OSError as exc:
            raise InvalidInput(f"cannot read --input {args.input!r}: {exc.strerror}") from None
    reranker = TemporalReranker(
        kernel=args.kernel, strength=args.strength, combine=args.combine,
        missing_date=args.missing_date, future=args.future, gate=_gate(args.gate),
        date_field=args.date_field, score_field=args.score_field, id_field=args.id_field,
        relative_recency=args.relative_recency, group_key=args.group_key,
    )
    ranking = reranker.rerank(args.query, rows, top_k=args.top_k, now=args.now)
    if args.json:
        out = {
            "query": args.query,
            "config": repr(reranker),
            "intent": ranking.meta["intent"].describe(),
            "results": ranking.explain_records(),
        }
        json.dump(out, sys.stdout, ensure_ascii=False, indent=2)
        sys.stdout.write("\n")
    elif args.explain:
        print(ranking.explain())
    else:
        print(_table(ranking))
    return 0


def _table(ranking: Any) -> str:
    lines = [f"{'rank':>4}  {'move':>5}  {'score':>8}  {'sim':>7}  {'decay':>6}  {'age':>7}  id"]
    for h in ranking:
        age = "-" if h.age_days != h.age_days else f"{h.age_days:.0f}d"
        move = f"{h.rank_delta:+d}" if h.rank_delta else "="
        lines.append(
            f"{h.rank_after:>4}  {move:>5}  {h.score:8.4f}  {h.similarity:7.4f}  {h.decay:6.3f}  {age:>7}  {h.id}"
        )
    return "\n".join(lines)
