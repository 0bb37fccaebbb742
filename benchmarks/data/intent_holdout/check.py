#!/usr/bin/env python3
"""Validate the blind intent hold-out set (standard library only).

Usage: python3 check.py [path/to/queries.jsonl]
Exits 1 if any check fails; prints counts per lang and mode.
"""
import json
import re
import sys
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path

PATH = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).with_name("queries.jsonl")
KEYS = {"id", "query", "lang", "now", "time_sensitive", "mode", "target", "source"}
MODES = ("recent", "range", "as_of", "specific", "timeless")
TS = {"recent": 1, "range": 1, "as_of": 1, "specific": 0, "timeless": 0}
ISO_UTC = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$")
MIN_TOTAL, MIN_RU, MIN_NOWS = 240, 80, 4

errors = []


def err(where, msg):
    errors.append(f"{where}: {msg}")


def parse_iso(s, where, field):
    if not isinstance(s, str) or not ISO_UTC.match(s):
        err(where, f"{field} is not ISO UTC 'YYYY-MM-DDTHH:MM:SSZ': {s!r}")
        return None
    try:
        return datetime.strptime(s, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc)
    except ValueError as e:
        err(where, f"{field} invalid date {s!r}: {e}")
        return None


rows, ids, queries = [], Counter(), Counter()
with PATH.open(encoding="utf-8") as f:
    for n, line in enumerate(f, 1):
        where = f"line {n}"
        if not line.strip():
            err(where, "blank line")
            continue
        try:
            r = json.loads(line)
        except json.JSONDecodeError as e:
            err(where, f"bad JSON: {e}")
            continue
        if not isinstance(r, dict) or set(r) != KEYS:
            err(where, f"keys must be exactly {sorted(KEYS)}, got {sorted(r) if isinstance(r, dict) else type(r)}")
            continue
        where = f"line {n} ({r['id']})"
        rows.append(r)
        ids[r["id"]] += 1
        queries[" ".join(str(r["query"]).lower().split())] += 1

        if r["lang"] not in ("en", "ru"):
            err(where, f"lang {r['lang']!r}")
        elif not re.fullmatch(rf"ho-{r['lang']}-\d{{3}}", str(r["id"])):
            err(where, "id must look like ho-<lang>-NNN")
        if not isinstance(r["query"], str) or not r["query"].strip():
            err(where, "empty query")
        elif r["lang"] == "ru" and not re.search(r"[а-яё]", r["query"], re.I):
            err(where, "ru query has no Cyrillic")
        if not isinstance(r["source"], str) or not re.fullmatch(r"[a-z_]{2,32}", r["source"]):
            err(where, f"source must be a short lowercase tag: {r['source']!r}")
        now = parse_iso(r["now"], where, "now")
        mode = r["mode"]
        if mode not in MODES:
            err(where, f"mode {mode!r}")
            continue
        if r["time_sensitive"] not in (0, 1) or isinstance(r["time_sensitive"], bool):
            err(where, f"time_sensitive must be 0/1, got {r['time_sensitive']!r}")
        elif r["time_sensitive"] != TS[mode]:
            err(where, f"time_sensitive {r['time_sensitive']} inconsistent with mode {mode}")

        t = r["target"]
        if t is None:
            if mode in ("range", "as_of"):
                err(where, f"mode {mode} needs a target")
            continue
        if mode in ("recent", "timeless"):
            err(where, f"mode {mode} must have target null")
        if not isinstance(t, dict) or set(t) != {"start", "end"}:
            err(where, f"target must be null or {{start, end}}: {t!r}")
            continue
        if t["start"] is None and t["end"] is None:
            err(where, "target with both ends null should be null")
            continue
        s = parse_iso(t["start"], where, "target.start") if t["start"] is not None else None
        e = parse_iso(t["end"], where, "target.end") if t["end"] is not None else None
        if s and e and not s < e:
            err(where, f"target start {t['start']} not < end {t['end']}")
        if now and s and s > now:
            err(where, f"target starts after now ({t['start']} > {r['now']})")
        if mode == "specific" and not (s and e and s.month == s.day == 1 and e.year == s.year + 1
                                       and e.month == e.day == 1 and s.hour == 0):
            err(where, "specific target must be a whole calendar year (thing named by a year)")

for k, c in ids.items():
    if c > 1:
        err("ids", f"duplicate id {k} x{c}")
for k, c in queries.items():
    if c > 1:
        err("queries", f"duplicate query {k!r} x{c}")

by_lang = Counter(r["lang"] for r in rows)
by_mode = Counter(r["mode"] for r in rows)
table = Counter((r["lang"], r["mode"]) for r in rows)
nows = Counter(r["now"] for r in rows)
if len(rows) < MIN_TOTAL:
    err("counts", f"{len(rows)} queries < {MIN_TOTAL}")
if by_lang["ru"] < MIN_RU:
    err("counts", f"{by_lang['ru']} ru queries < {MIN_RU}")
if len(nows) < MIN_NOWS:
    err("counts", f"{len(nows)} distinct now values < {MIN_NOWS}")
if not any(n[5:7] == "01" and int(n[8:10]) <= 10 for n in nows):
    err("counts", "no now value in early January")
if not any(n[5:10] in ("03-31", "06-30", "09-30", "12-31") for n in nows):
    err("counts", "no now value at the end of a quarter")
for lang in ("en", "ru"):
    seq = sorted(int(r["id"].rsplit("-", 1)[1]) for r in rows if r["lang"] == lang)
    if seq != list(range(1, len(seq) + 1)):
        err("ids", f"{lang} ids are not contiguous from 001")

print(f"{'lang':<6}" + "".join(f"{m:>10}" for m in MODES) + f"{'total':>8}")
for lang in ("en", "ru"):
    print(f"{lang:<6}" + "".join(f"{table[(lang, m)]:>10}" for m in MODES) + f"{by_lang[lang]:>8}")
print(f"{'all':<6}" + "".join(f"{by_mode[m]:>10}" for m in MODES) + f"{len(rows):>8}")
print("share " + "".join(f"{by_mode[m] / max(len(rows), 1):>10.1%}" for m in MODES))
print("now values:", ", ".join(f"{k} x{v}" for k, v in sorted(nows.items())))

if errors:
    print(f"\nFAIL: {len(errors)} problem(s)")
    for e in errors:
        print("  " + e)
    sys.exit(1)
print("\nOK")
