"""Result and intent types shared by the reranker, the index, the stores and the integrations.

Everything inside chronorank is columnar (float64 epoch seconds, float scores). These types
are the boundary: ``Ranking`` keeps the columns and builds a ``Hit`` only when one is read,
so reranking 100k candidates does not build 100k Python objects.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Literal, overload

import numpy as np

Mode = Literal["recent", "as_of", "range", "specific", "timeless"]
MODES: tuple[str, ...] = ("recent", "as_of", "range", "specific", "timeless")
DAY = 86400.0


def epoch_to_datetime(t: float) -> datetime | None:
    """UTC datetime for epoch seconds, None for NaN or values outside datetime's range."""
    if t is None or not math.isfinite(t):
        return None
    try:
        return datetime.fromtimestamp(t, tz=timezone.utc)
    except (OverflowError, OSError, ValueError):
        return None


def format_epoch(t: float, with_time: bool = False) -> str:
    dt = epoch_to_datetime(t)
    if dt is None:
        return "undated" if not (t is not None and math.isinf(t)) else ("-inf" if t < 0 else "+inf")
    return dt.strftime("%Y-%m-%d %H:%M" if with_time else "%Y-%m-%d")


@dataclass(frozen=True, slots=True)
class Interval:
    """A half-open UTC interval [start, end) in epoch seconds; either side may be infinite."""

    start: float
    end: float

    def __post_init__(self) -> None:
        if math.isnan(self.start) or math.isnan(self.end) or self.end < self.start:
            raise ValueError(f"Interval needs start <= end, got start={self.start!r} end={self.end!r}")

    @property
    def is_point(self) -> bool:
        return self.start == self.end

    def contains(self, t: float) -> bool:
        return self.start <= t < self.end or (self.is_point and t == self.start)

    @property
    def start_dt(self) -> datetime | None:
        return epoch_to_datetime(self.start)

    @property
    def end_dt(self) -> datetime | None:
        return epoch_to_datetime(self.end)

    def __str__(self) -> str:
        if self.is_point:
            return f"@{format_epoch(self.start, True)}"
        return f"[{format_epoch(self.start, True)}, {format_epoch(self.end, True)})"


@dataclass(frozen=True, slots=True)
class Span:
    """A piece of the query the intent parser matched: character offsets, text and role."""

    start: int
    end: int
    text: str
    kind: str  # e.g. "recent", "year", "date", "range", "relative", "version", "timeless"


@dataclass(frozen=True, slots=True)
class Intent:
    """What time a query is about and how much its answer depends on time.

    ``target`` is the interval the query is about (None means "now" for ``recent`` and
    "no particular time" otherwise). ``topical_query`` is the query with its temporal
    operators removed: the text retrieval should match.
    """

    query: str
    time_sensitivity: float
    mode: Mode
    target: Interval | None = None
    topical_query: str = ""
    spans: tuple[Span, ...] = ()
    lang: str = "en"

    def __post_init__(self) -> None:
        if not 0.0 <= self.time_sensitivity <= 1.0:
            raise ValueError(f"time_sensitivity must lie in [0, 1], got {self.time_sensitivity!r}")
        if self.mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, got {self.mode!r}")

    def describe(self) -> str:
        parts = [f"mode={self.mode}", f"sensitivity={self.time_sensitivity:.2f}"]
        if self.target is not None:
            parts.append(f"target={self.target}")
        if self.spans:
            parts.append("matched=" + ", ".join(repr(s.text) for s in self.spans))
        if self.topical_query != self.query:
            parts.append(f"topical={self.topical_query!r}")
        return " ".join(parts)


@dataclass(frozen=True, slots=True)
class Hit:
    """One ranked document: the same type from the reranker, the index and every store."""

    id: Any
    score: float
    similarity: float
    decay: float
    age_days: float
    rank_before: int
    rank_after: int
    time: float = math.nan
    payload: Any = None
    signals: Mapping[str, float] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    @property
    def rank_delta(self) -> int:
        """Places moved up by the temporal layer (negative: moved down)."""
        return self.rank_before - self.rank_after

    @property
    def date(self) -> datetime | None:
        return epoch_to_datetime(self.time)

    def explain(self) -> str:
        """One readable line: rank move, similarity and decay -> final score, age and notes.

        How similarity and decay combine (and at what effective strength) is in the
        ranking's header: a timeless query shows a decay weight but strength 0.
        """
        age = "undated" if math.isnan(self.age_days) else f"{self.age_days:.0f}d old"
        line = (
            f"{self.id}  [{self.rank_before} -> {self.rank_after}] "
            f"sim={self.similarity:.4f}, decay={self.decay:.4f} -> {self.score:.4f}  "
            f"({age}, {format_epoch(self.time)})"
        )
        if self.signals:
            line += "  signals: " + " ".join(f"{k}={v:.4f}" for k, v in self.signals.items())
        if self.notes:
            line += "  | " + "; ".join(self.notes)
        return line

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "score": _clean(self.score),
            "similarity": _clean(self.similarity),
            "decay": _clean(self.decay),
            "age_days": _clean(self.age_days),
            "rank_before": self.rank_before,
            "rank_after": self.rank_after,
            "rank_delta": self.rank_delta,
            "date": None if self.date is None else self.date.isoformat(),
            "signals": {k: _clean(v) for k, v in self.signals.items()},
            "notes": list(self.notes),
        }


def _clean(x: float) -> float | None:
    x = float(x)
    return None if math.isnan(x) else x


class Ranking(Sequence[Hit]):
    """A ranked list backed by columns; ``Hit`` objects are built on access.

    Columns are aligned to the *input* order; ``order`` lists input positions best first
    (already cut to ``top_k``).
    """

    __slots__ = (
        "ids", "payloads", "_order", "_prefix", "_pool", "_limit", "score", "similarity", "decay", "age_days", "time",
        "_rank_before", "_lookups", "signals", "notes", "query", "meta",
    )

    def __init__(
        self,
        *,
        ids: Sequence[Any],
        payloads: Sequence[Any] | None,
        order: np.ndarray | None = None,
        pool: np.ndarray | None = None,
        limit: int | None = None,
        score: np.ndarray,
        similarity: np.ndarray,
        decay: np.ndarray,
        age_days: np.ndarray,
        time: np.ndarray,
        rank_before: np.ndarray | None,
        signals: Mapping[str, np.ndarray] | None = None,
        notes: Mapping[int, tuple[str, ...]] | Callable[[int], tuple[str, ...]] | None = None,
        query: str = "",
        meta: Mapping[str, Any] | None = None,
    ) -> None:
        self.ids = ids
        self.payloads = payloads
        # Either an explicit order, or a lazy one: ``pool`` (input positions that take part,
        # None = all) sorted by ``score`` descending, ties by input position, cut to ``limit``.
        self._order = None if order is None else np.asarray(order, dtype=np.int64)
        self._pool = pool
        self._prefix = np.zeros(0, dtype=np.int64)
        n_pool = score.shape[0] if pool is None else pool.shape[0]
        self._limit = n_pool if limit is None else min(limit, n_pool)
        self.score = score
        self.similarity = similarity
        self.decay = decay
        self.age_days = age_days
        self.time = time
        self._rank_before = rank_before
        self._lookups = 0
        self.signals = dict(signals or {})
        self.notes = notes if callable(notes) else dict(notes or {})
        self.query = query
        self.meta: dict[str, Any] = dict(meta or {})

    @property
    def rank_before(self) -> np.ndarray:
        """1-based rank of every input by similarity alone (ties: input order)."""
        if self._rank_before is None:
            n = self.similarity.shape[0]
            ranks = np.empty(n, dtype=np.int64)
            ranks[np.argsort(-self.similarity, kind="stable")] = np.arange(1, n + 1)
            self._rank_before = ranks
        return self._rank_before

    def __len__(self) -> int:
        return int(self._order.shape[0]) if self._order is not None else self._limit

    @property
    def order(self) -> np.ndarray:
        """Input positions, best first."""
        if self._order is None:
            self._order = self._top(self._limit)
        return self._order

    def _top(self, m: int) -> np.ndarray:
        pool = self._pool
        score = self.score if pool is None else self.score[pool]
        n = score.shape[0]
        if m < n // 8:
            if m > 0 and n > 4096 and m <= 64:
                # the m-th best of a strided sample is at most the m-th best of all, so every
                # candidate at or above it is a superset of the top m (~m x n/1024 of them)
                sample = score[:: n // 1024]
                kth = np.partition(sample, sample.shape[0] - m)[sample.shape[0] - m]
                part = np.flatnonzero(score >= kth)
            elif m > 0:
                # the m-th best score, then every candidate at or above it (ties keep input order)
                kth = score[np.argpartition(score, n - m)[n - m]]
                part = np.flatnonzero(score >= kth)
            else:
                part = np.zeros(0, dtype=np.int64)
            if part.shape[0] < m:  # NaN scores (a callable kernel's) defeat the cut: sort all
                part = np.arange(n)
            idx = part[np.argsort(-score[part], kind="stable")][:m]
        else:
            idx = np.argsort(-score, kind="stable")[:m]
        return idx if pool is None else pool[idx]

    def _position(self, pos: int) -> int:
        if self._order is not None:
            return int(self._order[pos])
        if pos >= self._prefix.shape[0]:
            want = max(pos + 1, 2 * self._prefix.shape[0], 16)
            if want >= self._limit // 8:
                return int(self.order[pos])
            self._prefix = self._top(min(want, self._limit))
        return int(self._prefix[pos])

    def _ranks_of(self, rows: list[int]) -> list[int]:
        """1-based similarity rank of the given rows. The first few lookups (the usual top-k)
        compare against the similarities at or above theirs; past that, sort once and cache."""
        if self._rank_before is None and rows and self._lookups + len(rows) <= 32:
            s = self.similarity
            r = np.asarray(rows, dtype=np.int64)
            v = s[r]
            near = np.flatnonzero(s >= v.min())  # usually few: the hits are the similar ones
            if near.shape[0] * r.shape[0] <= 1 << 18:
                self._lookups += len(rows)
                cs = s[near]
                above = np.count_nonzero(cs[None, :] > v[:, None], axis=1)
                # equal similarity: earlier input position ranks first
                tied = np.count_nonzero((cs[None, :] == v[:, None]) & (near[None, :] < r[:, None]), axis=1)
                return (above + tied + 1).tolist()
        return self.rank_before[rows].tolist()

    def _hit(self, pos: int, i: int | None = None, rank: int | None = None) -> Hit:
        if i is None:
            i = self._position(pos)
        return Hit(
            id=self.ids[i],
            score=float(self.score[i]),
            similarity=float(self.similarity[i]),
            decay=float(self.decay[i]),
            age_days=float(self.age_days[i]),
            rank_before=self._ranks_of([i])[0] if rank is None else rank,
            rank_after=pos + 1,
            time=float(self.time[i]),
            payload=None if self.payloads is None else self.payloads[i],
            signals={k: float(v[i]) for k, v in self.signals.items()},
            notes=self.notes(i) if callable(self.notes) else self.notes.get(i, ()),
        )

    @overload
    def __getitem__(self, index: int) -> Hit: ...
    @overload
    def __getitem__(self, index: slice) -> list[Hit]: ...
    def __getitem__(self, index: int | slice) -> Hit | list[Hit]:
        if isinstance(index, slice):
            positions = range(*index.indices(len(self)))
            rows = [self._position(p) for p in positions]
            ranks = self._ranks_of(rows)
            return [self._hit(p, i, r) for p, i, r in zip(positions, rows, ranks)]
        n = len(self)
        if index < 0:
            index += n
        if not 0 <= index < n:
            raise IndexError(f"Ranking index {index} out of range for {n} results")
        return self._hit(index)

    def __iter__(self) -> Iterator[Hit]:
        for p in range(len(self)):
            yield self._hit(p)

    @property
    def ranked_ids(self) -> list[Any]:
        return [self.ids[int(i)] for i in self.order]

    def explain(self) -> str:
        """The readable trace: query, kernel, gate and effective strength, then one line a document."""
        m = self.meta
        lines = [f"query: {self.query!r}"]
        if "kernel" in m:
            hl = m.get("half_life_days")
            hl_s = "" if hl is None else f"  half-life={hl:.1f}d"
            lines.append(f"kernel: {m['kernel']}{hl_s}")
        if "combine" in m:
            lines.append(f"combine: {m['combine']}")
        if "intent" in m and m["intent"] is not None:
            lines.append(f"intent: {m['intent'].describe()}")
        if "gate" in m:
            lines.append(
                f"gate: {m['gate']:.2f}  strength: {m.get('strength', 1.0):.2f}  "
                f"effective strength: {m.get('effective_strength', m['gate']):.2f}"
            )
        if "now" in m:
            lines.append(f"now: {format_epoch(m['now'], True)}")
        lines.append("-" * 72)
        lines.extend(h.explain() for h in self)
        return "\n".join(lines)

    def explain_records(self) -> list[dict[str, Any]]:
        """The structured trace, one dict a document, for programs."""
        return [h.to_dict() for h in self]

    def __repr__(self) -> str:
        head = ", ".join(repr(self.ids[int(i)]) for i in self.order[:5])
        more = ", ..." if len(self) > 5 else ""
        return f"Ranking([{head}{more}], n={len(self)})"
