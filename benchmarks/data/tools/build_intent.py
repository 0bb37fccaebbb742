"""Assemble ``intent_queries.jsonl`` from the hand-written source files.

The queries are written by hand in ``intent_src/*.txt``. This helper only:

* numbers them (``en-0001``, ``ru-0001`` in file order; the language is
  taken from the file name, ``NN_<lang>_*.txt``),
* resolves each compact target code to an exact UTC interval relative to ``now``,
* derives ``time_sensitive`` from the mode and ``split`` from a hash of the id.

Source format (one query a line, ``#`` comments, blank lines ignored)::

    @now 2026-08-20T12:00:00Z
    <MODE> <CODE> <source-tag> <query text ...>

MODE: R recent, G range, A as_of, S specific, T timeless.
CODE: ``-`` (null target) or one of the codes in ``resolve`` below.

Run: ``python benchmarks/data/tools/build_intent.py`` (standard library only).
"""

from __future__ import annotations

import calendar
import hashlib
import json
import re
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

HERE = Path(__file__).resolve().parent
SRC = HERE / "intent_src"
OUT = HERE.parent / "intent_queries.jsonl"

MODES = {"R": "recent", "G": "range", "A": "as_of", "S": "specific", "T": "timeless"}
UTC = timezone.utc
CYR = re.compile(r"[\u0400-\u04FF]")


def iso(dt: datetime | None) -> str | None:
    return None if dt is None else dt.strftime("%Y-%m-%dT%H:%M:%SZ")


def ymd(y: int, m: int = 1, d: int = 1) -> datetime:
    return datetime(y, m, d, tzinfo=UTC)


def add_months(y: int, m: int, k: int) -> tuple[int, int]:
    idx = y * 12 + (m - 1) + k
    return idx // 12, idx % 12 + 1


def unit(text: str) -> tuple[datetime, datetime]:
    """A calendar unit: YYYY, YYYY-MM or YYYY-MM-DD -> [start, end)."""
    parts = [int(p) for p in text.split("-")]
    if len(parts) == 1:
        return ymd(parts[0]), ymd(parts[0] + 1)
    if len(parts) == 2:
        y, m = parts
        ny, nm = add_months(y, m, 1)
        return ymd(y, m), ymd(ny, nm)
    start = ymd(*parts)
    return start, start + timedelta(days=1)


def shift_back(now: datetime, n: int, what: str) -> datetime:
    if what == "d":
        return now - timedelta(days=n)
    if what == "w":
        return now - timedelta(weeks=n)
    if what == "h":
        return now - timedelta(hours=n)
    months = n if what == "m" else 12 * n
    y, m = add_months(now.year, now.month, -months)
    d = min(now.day, calendar.monthrange(y, m)[1])
    return now.replace(year=y, month=m, day=d)


def iso_week(now: datetime, back: int) -> tuple[datetime, datetime]:
    day = now.replace(hour=0, minute=0, second=0, microsecond=0)
    monday = day - timedelta(days=day.weekday()) - timedelta(weeks=back)
    return monday, monday + timedelta(weeks=1)


def quarter(y: int, q: int) -> tuple[datetime, datetime]:
    ny, nm = add_months(y, 3 * (q - 1) + 1, 3)
    return ymd(y, 3 * (q - 1) + 1), ymd(ny, nm)


def resolve(code: str, now: datetime) -> tuple[datetime | None, datetime | None] | None:
    """Compact target code -> half-open [start, end) in UTC (None = open end)."""
    if code == "-":
        return None
    today = now.replace(hour=0, minute=0, second=0, microsecond=0)
    if code in ("y", "d", "m"):
        raise ValueError(code)
    key, _, arg = code.partition(":")
    if key in ("u", "y", "m", "d"):  # a calendar unit: year, month or day
        return unit(arg)
    if key == "q":  # q:2024-3
        y, q = (int(x) for x in arg.split("-"))
        return quarter(y, q)
    if key == "span":  # span:A..B inclusive units
        a, b = arg.split("..")
        return unit(a)[0], unit(b)[1]
    if key == "since":  # since:2024 -> [start of unit, now)
        return unit(arg)[0], now
    if key == "after":  # after:2021 -> [end of unit, now)
        return unit(arg)[1], now
    if key == "before":  # before:2020 -> [-inf, start of unit)
        return None, unit(arg)[0]
    if key == "past":  # past:30d / 2w / 6m / 1y / 24h -> [now - n, now)
        n, what = int(arg[:-1]), arg[-1]
        return shift_back(now, n, what), now
    if key == "ago":  # ago:2y / 3m / 2w / 5d -> that calendar unit
        n, what = int(arg[:-1]), arg[-1]
        if what == "y":
            return unit(str(now.year - n))
        if what == "m":
            y, m = add_months(now.year, now.month, -n)
            return unit(f"{y}-{m}")
        if what == "w":
            return iso_week(now, n)
        if what == "d":
            return today - timedelta(days=n), today - timedelta(days=n - 1)
    if key == "dny":  # a day without a year: most recent such day not after now
        mo, da = (int(x) for x in arg.split("-"))
        y = now.year
        if ymd(y, mo, da) > today:
            y -= 1
        start = ymd(y, mo, da)
        return start, start + timedelta(days=1)
    if key == "mny":  # a month without a year: most recent such month starting not after now
        mo = int(arg)
        y = now.year if mo <= now.month else now.year - 1
        return unit(f"{y}-{mo}")
    prev_y, prev_m = add_months(now.year, now.month, -1)
    simple = {
        "tomorrow": (today + timedelta(days=1), today + timedelta(days=2)),
        "yesterday": (today - timedelta(days=1), today),
        "thisweek": iso_week(now, 0),
        "lastweek": iso_week(now, 1),
        "nextweek": iso_week(now, -1),
        "thismonth": unit(f"{now.year}-{now.month}"),
        "lastmonth": unit(f"{prev_y}-{prev_m}"),
        "thisyear": unit(str(now.year)),
        "lastyear": unit(str(now.year - 1)),
        "ytd": (ymd(now.year), now),
        "thisq": quarter(now.year, (now.month - 1) // 3 + 1),
    }
    if code in simple:
        return simple[code]
    if code == "lastq":
        q = (now.month - 1) // 3 + 1
        return quarter(now.year, q - 1) if q > 1 else quarter(now.year - 1, 4)
    raise ValueError(f"unknown target code {code!r}")


def split_of(qid: str) -> str:
    h = int(hashlib.sha256(qid.encode("utf-8")).hexdigest()[:8], 16)
    return "train" if h % 100 < 65 else "test"


def build() -> list[dict]:
    rows: list[dict] = []
    counters = {"en": 0, "ru": 0}
    seen: set[str] = set()
    for path in sorted(SRC.glob("*.txt")):
        now_s = None
        for lineno, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            if line.startswith("@now"):
                now_s = line.split()[1]
                continue
            try:
                mode_c, code, source, query = line.split(None, 3)
                mode = MODES[mode_c]
                now = datetime.strptime(now_s, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
                tgt = resolve(code, now)
            except Exception as exc:  # pragma: no cover - authoring aid
                sys.exit(f"{path.name}:{lineno}: {exc}: {raw}")
            lang = "ru" if "_ru_" in path.name else "en"
            if bool(CYR.search(query)) != (lang == "ru"):
                sys.exit(f"{path.name}:{lineno}: script does not match {lang}: {raw}")
            norm = " ".join(query.lower().split())
            if norm in seen:
                sys.exit(f"{path.name}:{lineno}: duplicate query: {query}")
            seen.add(norm)
            counters[lang] += 1
            qid = f"{lang}-{counters[lang]:04d}"
            rows.append(
                {
                    "id": qid,
                    "query": query,
                    "lang": lang,
                    "now": now_s,
                    "time_sensitive": int(mode in ("recent", "range", "as_of")),
                    "mode": mode,
                    "target": None if tgt is None else {"start": iso(tgt[0]), "end": iso(tgt[1])},
                    "split": split_of(qid),
                    "source": source,
                }
            )
    return rows


def main() -> None:
    rows = build()
    with OUT.open("w", encoding="utf-8") as fh:
        for r in rows:
            fh.write(json.dumps(r, ensure_ascii=False) + "\n")
    from collections import Counter

    print(len(rows), Counter(r["lang"] for r in rows))
    print(Counter((r["lang"], r["mode"]) for r in rows))
    print(Counter((r["lang"], r["split"]) for r in rows))


if __name__ == "__main__":
    main()
