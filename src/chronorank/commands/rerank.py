"""``chronorank rerank``: rerank scored, dated candidates read as JSON lines from stdin or a file."""

from __future__ import annotations

import argparse
import json
import math
import sys
from typing import Any

from chronorank.errors import InvalidInput


def add_parser(sub: Any) -> None:
    from chronorank.commands._input import add_date_options

    p = sub.add_parser(
        "rerank",
        help="rerank scored, dated candidates read as JSONL",
        description=(
            "Read candidates (one JSON object a line, with id, score and date fields) from "
            "stdin or --input, rerank them for --query and print the ranking."
        ),
    )
    p.add_argument("--query", "-q", required=True, help="the user's query (its temporal intent is parsed)")
    p.add_argument("--kernel", default=None,
                   help="kernel spec, e.g. 'weibull(half_life_days=90, shape=2)' (default: exponential(half_life_days=180))")
    p.add_argument("--strength", type=float, default=1.0, help="decay strength in [0, 1] (default 1)")
    p.add_argument("--combine", default="gated_multiply",
                   help="gated_multiply | multiply | linear | rrf (default gated_multiply)")
    p.add_argument("--missing-date", default="neutral", choices=("neutral", "keep", "penalise", "drop", "raise"),
                   help="what an undated candidate gets: neutral | keep | penalise | drop | raise (default neutral)")
    add_date_options(p, "treats the candidate as undated")
    p.add_argument("--bad-score", default="raise", choices=("raise", "drop", "zero"),
                   help="a missing or non-numeric score: raise (default), drop the candidate, or score it 0")
    p.add_argument("--future", default="auto",
                   help="dates after --now: auto (left out when --now is in the past) | clamp | "
                   "not_yet_valid | symmetric | exclude (default auto)")
    p.add_argument("--gate", default="intent",
                   help="'intent' (parse the query), 'off' (full strength) or a number in [0, 1] (default intent)")
    p.add_argument("--relative-recency", type=_ratio_or_off, default=None, metavar="RATIO",
                   help="count ages from the newest candidate within RATIO of the best similarity, or 'off' "
                   "(default: the library's, as in the index)")
    p.add_argument("--group-key", default=None,
                   help="metadata field linking versions of one document (default: none)")
    p.add_argument("--now", default=None, help="reference time, e.g. 2026-08-01 (default: the wall clock)")
    p.add_argument("--top-k", "-k", type=int, default=None, help="print only the best K (default: all)")
    p.add_argument("--date-field", default="date", help="the field holding each candidate's date (default date)")
    p.add_argument("--score-field", default="score",
                   help="the field holding each candidate's similarity score (default score)")
    p.add_argument("--id-field", default="id", help="the field holding each candidate's id (default id)")
    p.add_argument("--input", "-i", default="-", help="JSONL file of candidates (default: stdin; docs/format.md)")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.add_argument("--explain", action="store_true", help="print the full explanation trace")
    p.set_defaults(func=run)


def _relative_recency(value: float | str | None) -> dict[str, Any]:
    """The reranker's keyword: none given keeps the library default, 'off' turns it off."""
    if value is None:
        return {}
    return {"relative_recency": None if value == "off" else value}


def _ratio_or_off(value: str) -> float | str:
    if value.strip().lower() in ("off", "none"):
        return "off"
    try:
        return float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r}; give a ratio in [0, 1] such as 0.85, or 'off'") from None


def _gate(value: str) -> Any:
    if value == "intent":
        return True
    if value == "off":
        return False
    try:
        return float(value)
    except ValueError:
        raise InvalidInput(f"--gate {value!r}: use 'intent', 'off' or a number in [0, 1]") from None


def _check_scores(rows: list[tuple[int, dict[str, Any]]], where: str, field: str, policy: str) -> int:
    """Scores must be finite numbers; the first bad one names its line (or a count with a lenient policy)."""
    bad = [(n, r) for n, r in rows
           if isinstance(r.get(field), bool) or not isinstance(r.get(field), (int, float))
           or not math.isfinite(r[field])]
    if bad and policy == "raise":
        lineno, row = bad[0]
        value = row.get(field, "(missing)")
        more = f" (and {len(bad) - 1} more)" if len(bad) > 1 else ""
        raise InvalidInput(
            f"{where} line {lineno}: {field} {json.dumps(value) if field in row else value} is not a finite "
            f"number{more}; give each candidate a numeric {field} (or name the field with --score-field), "
            "or pass --bad-score drop (leave it out) or --bad-score zero (score it 0)"
        )
    return len(bad)


def run(args: argparse.Namespace) -> int:
    from chronorank.commands._input import (
        NothingToDo,
        check_dates,
        decode,
        parse_jsonl,
        parse_now,
        read_text,
        warn,
    )
    from chronorank.rerank import TemporalReranker

    if args.input == "-":
        where = "stdin"
        text = decode(sys.stdin.buffer.read(), where) if hasattr(sys.stdin, "buffer") else sys.stdin.read()
    else:
        where = args.input
        text = read_text(args.input, "--input")
    rows_at = parse_jsonl(text, where, "candidate")
    if not rows_at:
        raise NothingToDo(f"{where} holds no candidates; nothing to rerank (one JSON object a line, "
                          "see docs/format.md)")
    reranker = TemporalReranker(
        kernel=args.kernel, strength=args.strength, combine=args.combine,
        missing_date=args.missing_date, future=args.future, gate=_gate(args.gate),
        date_field=args.date_field, score_field=args.score_field, id_field=args.id_field,
        group_key=args.group_key, bad_score=args.bad_score,
        **_relative_recency(args.relative_recency),
    )
    fields = (args.date_field, reranker.valid_from_field, reranker.valid_to_field)
    cleared = check_dates(rows_at, where, fields=fields, bad_dates=args.bad_dates, dayfirst=args.dayfirst,
                          date_unit=args.date_unit, command="rerank",
                          id_field=args.id_field)
    if cleared:
        warn("rerank", f"{cleared} date(s) unreadable, treated as undated (--bad-dates missing; undated "
                       f"candidates get --missing-date {args.missing_date})")
    bad_scores = _check_scores(rows_at, where, args.score_field, args.bad_score)
    if bad_scores:
        what = "left out" if args.bad_score == "drop" else "scored 0"
        warn("rerank", f"{bad_scores} candidate(s) without a numeric {args.score_field}, {what} "
                       f"(--bad-score {args.bad_score})")
    rows = [r for _, r in rows_at]
    ranking = reranker.rerank(args.query, rows, top_k=args.top_k, now=parse_now(args.now))
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
