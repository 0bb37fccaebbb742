"""Write reworded (English) and Russian copies of the changelog dev queries.

Input: ``<repo>/../shared/data/changelogs/queries.jsonl``. Every field except
``query`` is copied unchanged; the query is replaced by one of several
hand-written phrasings per kind, picked deterministically by the query's
position within its kind (so neighbouring queries of one project get different
wordings). Project names alternate between lower case and their usual spelling.

Run: ``python benchmarks/data/tools/build_changelog_rewordings.py``
(standard library only).
"""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = HERE.parent
REPO = DATA.parent.parent
SRC = REPO.parent / "shared" / "data" / "changelogs" / "queries.jsonl"

DISPLAY = {
    "aiohttp": "aiohttp",
    "attrs": "attrs",
    "celery": "Celery",
    "click": "Click",
    "flask": "Flask",
    "httpx": "HTTPX",
    "itsdangerous": "ItsDangerous",
    "jinja": "Jinja",
    "marshmallow": "marshmallow",
    "pip": "pip",
    "poetry": "Poetry",
    "pytest": "pytest",
    "requests": "Requests",
    "rich": "Rich",
    "scrapy": "Scrapy",
    "sphinx": "Sphinx",
    "sqlalchemy": "SQLAlchemy",
    "tox": "tox",
    "urllib3": "urllib3",
    "werkzeug": "Werkzeug",
}

MONTHS_EN = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]
MONTHS_RU = [
    "января",
    "февраля",
    "марта",
    "апреля",
    "мая",
    "июня",
    "июля",
    "августа",
    "сентября",
    "октября",
    "ноября",
    "декабря",
]


def ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def en_dates(d: date) -> dict[str, str]:
    m = MONTHS_EN[d.month - 1]
    return {
        "iso": d.isoformat(),
        "dmy": f"{d.day} {m} {d.year}",
        "mdy_ord": f"{m} {ordinal(d.day)}, {d.year}",
        "mon": f"{m[:3]} {d.day} {d.year}",
        "mdy": f"{m} {d.day}, {d.year}",
    }


def ru_dates(d: date) -> dict[str, str]:
    m = MONTHS_RU[d.month - 1]
    return {
        "iso": d.isoformat(),
        "dmy": f"{d.day} {m} {d.year}",
        "dmy_g": f"{d.day} {m} {d.year} года",
        "dots": f"{d.day:02d}.{d.month:02d}.{d.year}",
    }


# Each phrasing is a function of (project, fields); written by hand, one style each.
EN = {
    "latest": [
        "what's new in {p}",
        "{p} most recent version changes",
        "newest {p} release notes",
        "did {p} ship anything recently?",
        "current {p} release - what changed",
        "show me the changelog of the last {p} release",
        "{p} latest update: fixes and new features",
        "what changed in the up-to-date version of {p}",
    ],
    "as_of": [
        "{p} changes during {y}",
        "what did {p} release in {y}",
        "{p} {y} release notes",
        "which {p} versions came out in {y}?",
        "everything that changed in {p} over the course of {y}",
        "list the {p} updates published in {y}",
        "how did {p} change in {y}",
    ],
    "version": [
        "{p} {v} changelog",
        "what was fixed in {p} v{v}",
        "release notes for {p} version {v}",
        "{p} {v}: what's different",
        "changes introduced by {p} {v}",
        "what's in the {v} release of {p}?",
        "{p}=={v} what changed",
    ],
    "as_of_date": [
        "which {p} release was current on {dmy}",
        "latest {p} version as of {iso}",
        "what {p} version would I have had on {mdy_ord}",
        "newest {p} release available on {mon}",
        "if I ran pip install {p} on {dmy}, which version would I get",
        "most recent {p} release as of {mdy}",
        "what was the up-to-date {p} version on {iso}?",
    ],
}

RU = {
    "latest": [
        "что нового в последнем релизе {p}",
        "{p}: изменения в свежей версии",
        "что поменяли в актуальной версии {p}",
        "последнее обновление {p} - что изменилось",
        "список изменений текущей версии {p}",
    ],
    "as_of": [
        "изменения {p} в {y} году",
        "какие версии {p} вышли в {y} году",
        "что выпустили в {p} за {y} год",
        "релизы {p} {y} года",
        "что изменилось в {p} в течение {y} года",
    ],
    "version": [
        "что изменилось в {p} {v}",
        "список изменений {p} версии {v}",
        "{p} {v}: что исправили",
        "что нового в релизе {v} {p}",
        "описание изменений {p} {v}",
    ],
    "as_of_date": [
        "какая версия {p} была актуальной на {dmy}",
        "последний релиз {p} на {dots}",
        "какую версию {p} я бы поставил {dmy_g}",
        "самая свежая версия {p} по состоянию на {iso}",
        "какой релиз {p} был последним на {dmy_g}",
    ],
}


def parse_qid(q: dict) -> dict[str, str]:
    kind = q["kind"]
    rest = q["qid"][len(kind) + 1 :]
    project, _, tail = rest.partition("-")
    out = {"project": project}
    if kind == "as_of":
        out["y"] = tail
    elif kind == "version":
        out["v"] = tail
    return out


def reword(queries: list[dict], table: dict, dates, display_every: int) -> list[dict]:
    pos: dict[str, int] = {}
    out = []
    for q in queries:
        kind = q["kind"]
        i = pos.get(kind, 0)
        pos[kind] = i + 1
        phr = table[kind]
        info = parse_qid(q)
        name = info["project"]
        # alternate the spelling of the project name on each pass over the phrasings
        if display_every and (i // len(phr)) % display_every == 1:
            name = DISPLAY[name]
        fields = {"p": name, **{k: v for k, v in info.items() if k != "project"}}
        if kind == "as_of_date":
            fields.update(dates(date.fromisoformat(q["target_date"])))
        new = dict(q)
        new["query"] = phr[i % len(phr)].format(**fields)
        out.append(new)
    return out


def write(rows: list[dict], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as fh:
        for r in rows:
            fh.write(json.dumps(r, ensure_ascii=False) + "\n")


def main() -> None:
    queries = [json.loads(line) for line in SRC.read_text(encoding="utf-8").splitlines() if line]
    write(reword(queries, EN, en_dates, 2), DATA / "changelogs_reworded" / "queries.jsonl")
    write(reword(queries, RU, ru_dates, 2), DATA / "changelogs_ru" / "queries.jsonl")
    print(len(queries), "queries written twice")


if __name__ == "__main__":
    main()
