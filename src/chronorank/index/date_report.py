"""How many documents of a batch are dated, and from which field: :class:`DateReport`.

``TemporalIndex.add`` keeps the report of its last batch (``index.date_report``) and warns
(:class:`~chronorank.errors.DateWarning`) when no document has a readable date, naming the
field the dates seem to sit under; ``chronorank index`` prints the report on standard error.
``by_source`` counts the dated documents by where their time came from, so a new source
(a date inferred from the text, say) is one more key.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from chronorank.timeparse import parse_times

__all__ = ["DateReport", "date_report", "no_dates_message"]

#: The order a document's time is taken from (``time_field='auto'``; valid_from wins in ranking).
SOURCES = ("valid_from", "date", "updated")


@dataclass(frozen=True)
class DateReport:
    """Counts over one batch: ``by_source`` (dated documents by the field that dated them),
    ``undated`` (no time at all, unreadable ones included) and ``unreadable`` (a value was
    given but could not be read: ``bad_dates='missing'``)."""

    total: int
    by_source: Mapping[str, int] = field(default_factory=dict)
    undated: int = 0
    unreadable: int = 0
    #: a metadata key whose values read as dates, when nothing is dated (else None)
    likely_field: str | None = None

    @property
    def dated(self) -> int:
        return sum(self.by_source.values())

    def describe(self) -> str:
        src = ", ".join(f"{k}: {v}" for k, v in self.by_source.items() if v)
        return (f"{self.dated} of {self.total} document(s) dated" + (f" ({src})" if src else "")
                + f", {self.undated} undated, {self.unreadable} unreadable")


def date_report(times: np.ndarray, records: Sequence[Mapping[str, Any]], unreadable: int = 0,
                inferred: Mapping[str, int] | None = None) -> DateReport:
    """The report of one batch: ``times`` is the (4, n) date/updated/valid_from/valid_to block;
    ``inferred``: the dates ``timeparse.textdates`` found (already in ``times[0]``) by source,
    as ``TemporalIndex._infer_missing`` counts them (``checked`` is not a source)."""
    n = times.shape[1]
    have = {"date": ~np.isnan(times[0]), "updated": ~np.isnan(times[1]), "valid_from": ~np.isnan(times[2])}
    left = np.ones(n, dtype=bool)
    by_source: dict[str, int] = {}
    for name in SOURCES:
        hit = have[name] & left
        by_source[name] = int(hit.sum())
        left &= ~hit
    for src, count in (inferred or {}).items():
        if src != "checked" and count:
            by_source["date"] -= count
            by_source[f"inferred from the {src}"] = int(count)
    undated = int(left.sum())
    likely = _likely_field(records) if undated == n and n else None
    return DateReport(total=n, by_source=by_source, undated=undated, unreadable=int(unreadable), likely_field=likely)


def _likely_field(records: Sequence[Mapping[str, Any]], sample: int = 50) -> str | None:
    """The metadata key whose values (of the first ``sample`` records) read as dates most often."""
    head = list(records[:sample])
    keys: dict[str, None] = {}
    for r in head:
        for k, v in (r.get("metadata") or {}).items():
            if isinstance(v, str) and any(c.isdigit() for c in v):
                keys.setdefault(k, None)
    best, best_n = None, 0
    for k in keys:
        vals = [(r.get("metadata") or {}).get(k) for r in head]
        vals = [v if isinstance(v, str) else None for v in vals]
        got = int(np.count_nonzero(~np.isnan(np.asarray(parse_times(vals), dtype=np.float64))))
        if got > best_n and got * 2 >= len(head):
            best, best_n = k, got
    return best


def no_dates_message(report: DateReport, file: bool = False) -> str:
    """The one-line warning of a batch without a readable date, saying how to name the field
    (``file``: in a corpus file, not in the dicts given to ``add()``)."""
    how = " in the file" if file else f" (e.g. {{'date': doc[{report.likely_field!r}]}})"
    where = (f"their dates seem to be under {report.likely_field!r}: rename that field to 'date'{how}"
             if report.likely_field
             else "give each document a 'date' (or 'valid_from' / 'updated') field, e.g. \"date\": \"2024-09-02\"")
    return (f"none of the {report.total} document(s) has a readable date, so time cannot rank them (questions "
            f"such as 'latest' tie); {where} -- see docs/format.md")
