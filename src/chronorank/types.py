"""Result and intent types shared by the reranker, the index, the stores and the integrations.

Everything inside chronorank is columnar (float64 epoch seconds, float scores). These types
are the boundary: ``Ranking`` keeps the columns and builds a ``Hit`` only when one is read,
so reranking 100k candidates does not build 100k Python objects.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, fields
from datetime import datetime, timezone
from operator import itemgetter
from typing import Any, Literal, Protocol, overload

import numpy as np

Mode = Literal["recent", "as_of", "range", "specific", "timeless"]
MODES: tuple[str, ...] = ("recent", "as_of", "range", "specific", "timeless")
DAY = 86400.0

#: How equal scores are ordered, in every engine (index, reranker, stores).
TIE_RULE = "equal scores: the newer document first (undated last), then the smaller id"


def _id_keys(ids: Sequence[Any], rows: np.ndarray) -> np.ndarray:
    """The ids of ``rows`` as one sortable array: numbers as numbers, anything else as text."""
    if isinstance(ids, range):
        return np.asarray(ids[0:0]) if rows.size == 0 else ids.start + ids.step * rows
    keys = np.asarray([ids[int(i)] for i in rows])
    if keys.dtype.kind not in "iufUS":
        keys = np.asarray([str(ids[int(i)]) for i in rows])
    return keys


def best_first(score: np.ndarray, rows: np.ndarray, time: np.ndarray, ids: Sequence[Any]) -> np.ndarray:
    """``rows`` ordered by ``score[rows]`` descending, equal scores by :data:`TIE_RULE`
    (``time``: epoch seconds, NaN = undated). The ids are read only for rows tied on both."""
    rows = np.asarray(rows, dtype=np.int64)
    s = -np.asarray(score, dtype=np.float64)[rows]
    with np.errstate(invalid="ignore"):
        newer = -np.asarray(time, dtype=np.float64)[rows]
    newer = np.where(np.isnan(newer), np.inf, newer)
    order = np.lexsort((newer, s))
    ss, nn = s[order], newer[order]
    if order.size > 1 and ((ss[1:] == ss[:-1]) & (nn[1:] == nn[:-1])).any():
        order = np.lexsort((_id_keys(ids, rows), newer, s))
    return rows[order]


def tied_at_cut(score: np.ndarray, k: int, time: np.ndarray, ids: Sequence[Any]) -> np.ndarray:
    """The rows of the best ``k`` scores, best first; the rows tied at the cut chosen by :data:`TIE_RULE`."""
    n = score.shape[0]
    k = min(int(k), n)
    if k <= 0:
        return np.zeros(0, dtype=np.int64)
    if k < n:
        kth = np.partition(score, n - k)[n - k]
        above = np.flatnonzero(score > kth)
        tied = np.flatnonzero(score == kth)
        if np.isnan(kth) or above.shape[0] + tied.shape[0] < k:  # NaN scores: sort them all
            return best_first(score, np.arange(n), time, ids)[:k]
        rows = np.concatenate([above, best_first(score, tied, time, ids)[: k - above.shape[0]]])
    else:
        rows = np.arange(n)
    return best_first(score, rows, time, ids)


#: What a period question's in-force bands are called in explanations (chronorank.temporal).
BAND_NAMES: tuple[str, ...] = (
    "in force at the period's end", "in force during the period, replaced before its end",
    "published after the period", "replaced before the period",
    "published before the period, not known to be in force",
)

#: Every term an explanation shows, defined once (``Ranking.explain`` prints the ones it uses).
LEGEND: dict[str, str] = {
    "score": "the rank score, written as the formula that gives it: similarity x the time weight "
             "(gated_multiply: 1 - s + s x time factor, s = effective strength; score = similarity when "
             "time is off), x a rule's factor where one applies",
    "similarity": "how well the document matches the question; in the index the fused score, "
                  "flattened so that documents within the topical margin of the best tie near 1",
    "time factor": "the decay kernel's weight in [0, 1] for the document's age (1 = fresh or in force)",
    "topic scale": "what the topic rule multiplies an off-topic score by, so that it ranks below every "
                   "on-topic document (their order kept)",
    "rank rule": "what a ranking rule applied after the time weight (a replaced version below its "
                 "successor, the first hit's versions together, a conflicting page last)",
    "age": "days from the document's date (or the end of its validity) to the named reference point",
    "fused": "the index's blend of dense, bm25 and lead, before flattening",
    "dense": "cosine similarity of the question's and the document's embeddings",
    "bm25": "keyword score of the whole document (BM25, rare query words weigh more)",
    "lead": "keyword score of the document's first sentence (its title, in effect)",
    "gate": "how much the answer depends on time, in [0, 1]: the intent parser's time sensitivity, or "
            "the fixed weight of a stated time ('as of April 2026')",
    "effective strength": "gate x strength: how far time may move a document (0 = time off)",
    "on topic": "passes the topic rule printed in the header (relative to the best candidate's "
                "signals); time never lifts a document that is not on topic over one that is",
}


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
class Anchor:
    """The operand of "before / after / since / until X" when X is not a date: a version
    ("the v2 change", "API 2.0") or an event ("the migration to OAuth"). The index and the
    reranker resolve it to a time through the documents that match ``text``."""

    text: str
    relation: Literal["before", "after"]


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
    anchor: Anchor | None = None  # an unresolved before/after operand (target is then None)
    #: the language the query seems written in when no language file covers it (its time
    #: words were not read: chronorank.intent.unsupported), else None
    unsupported: str | None = None

    def __post_init__(self) -> None:
        if not 0.0 <= self.time_sensitivity <= 1.0:
            raise ValueError(f"time_sensitivity must lie in [0, 1], got {self.time_sensitivity!r}")
        if self.mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, got {self.mode!r}")

    def describe(self) -> str:
        parts = [f"mode={self.mode}", f"sensitivity={self.time_sensitivity:.2f}"]
        if self.target is not None:
            parts.append(f"target={self.target}")
        if self.anchor is not None:
            parts.append(f"anchor={self.anchor.relation} {self.anchor.text!r}")
        if self.spans:
            parts.append("matched=" + ", ".join(repr(s.text) for s in self.spans))
        if self.topical_query != self.query:
            parts.append(f"topical={self.topical_query!r}")
        if self.unsupported:
            parts.append(f"language={self.unsupported} (no language file: its time words are not read)")
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
        if math.isnan(self.time) or math.isnan(self.age_days):
            age = "undated"
        elif self.age_days >= 0:
            age = f"{format_epoch(self.time)}, {self.age_days:.0f} days before the reference time"
        else:
            age = f"{format_epoch(self.time)}, {-self.age_days:.0f} days after the reference time"
        line = (
            f"{self.id}  [{self.rank_before} -> {self.rank_after}] "
            f"similarity {self.similarity:.4f}, time factor {self.decay:.4f} -> score {self.score:.4f}  "
            f"({age})"
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


(_SET_ID, _SET_SCORE, _SET_SIM, _SET_DECAY, _SET_AGE, _SET_BEFORE, _SET_AFTER, _SET_TIME, _SET_PAYLOAD,
 _SET_SIGNALS, _SET_NOTES) = (getattr(Hit, f.name).__set__ for f in fields(Hit))


def _new_hit(
    id: Any, score: float, similarity: float, decay: float, age_days: float, rank_before: int,
    rank_after: int, time: float, payload: Any, signals: Mapping[str, float], notes: tuple[str, ...],
) -> Hit:
    """``Hit(...)`` without the frozen dataclass's generic per-field ``object.__setattr__``
    (about 2x faster; iterating a ranking of 100k candidates builds 100k hits)."""
    h = object.__new__(Hit)
    _SET_ID(h, id)
    _SET_SCORE(h, score)
    _SET_SIM(h, similarity)
    _SET_DECAY(h, decay)
    _SET_AGE(h, age_days)
    _SET_BEFORE(h, rank_before)
    _SET_AFTER(h, rank_after)
    _SET_TIME(h, time)
    _SET_PAYLOAD(h, payload)
    _SET_SIGNALS(h, signals)
    _SET_NOTES(h, notes)
    return h


def _clean(x: float) -> float | None:
    x = float(x)
    return None if math.isnan(x) else x


class RowNotes(Protocol):
    """Notes for many rows at once (the reranker's TemporalResult is one)."""

    def notes_of(self, rows: Sequence[int]) -> list[tuple[str, ...]]: ...


class _FieldColumn(Sequence[Any]):
    """One field of a list of dicts, read on access (every dict is known to have it)."""

    __slots__ = ("items", "name")

    def __init__(self, items: Sequence[Mapping[str, Any]], name: str) -> None:
        self.items = items
        self.name = name

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return [it[self.name] for it in self.items[i]]
        return self.items[i][self.name]

    def take(self, rows: Sequence[int]) -> list[Any]:
        items, name = self.items, self.name
        return [items[i][name] for i in rows]

    def __iter__(self) -> Iterator[Any]:
        return map(itemgetter(self.name), self.items)

    def __eq__(self, other: object) -> bool:  # compares like the list it stands for
        if isinstance(other, (list, _FieldColumn)):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return repr(list(self))


def legend_line(terms: set[str]) -> str:
    """The legend of ``terms``, in :data:`LEGEND` order (one line)."""
    return "legend: " + "; ".join(f"{k} = {LEGEND[k]}" for k in LEGEND if k in terms)


def _num(x: float) -> str:
    """Up to 4 decimals, without trailing zeros: 0.9, 0.9837."""
    return f"{x:.4f}".rstrip("0").rstrip(".") or "0"


def _score_formula(h: Hit, s: float, combine: str, off_topic: bool) -> tuple[str, set[str]]:
    """A hit's score as the formula that gives it, with the numbers applied: the strategy's
    time weight (``s``: the effective strength, 0 when time is off), then what a rank rule
    applied on top (the topic rule's scale, a replaced version's demotion), so the printed
    numbers recompute to the printed score. Returns the text and the legend terms it uses."""
    sim, f, score = h.similarity, h.decay, h.score
    if s <= 0:
        base, text = sim, f"score {score:.4f} = similarity {sim:.4f}"
    elif combine == "gated_multiply":
        base = sim * (1.0 - s + s * f)
        text = f"score {score:.4f} = similarity {sim:.4f} x (1 - {_num(s)} + {_num(s)} x time factor {f:.4f})"
    elif combine == "multiply":
        base = sim * f**s
        text = f"score {score:.4f} = similarity {sim:.4f} x time factor {f:.4f} ^ {_num(s)}"
    else:  # linear and rrf depend on the other candidates: no per-row formula
        return f"score {score:.4f} (similarity {sim:.4f}, time factor {f:.4f}; combine {combine})", set()
    if not (math.isfinite(score) and math.isfinite(base)) or abs(score - base) <= 5e-5 * max(1.0, abs(base)):
        return text, set()
    why = "topic scale" if off_topic else "rank rule"
    if base > 0 and score > 0:
        return f"{text} x {why} {score / base:.4f}", {why}
    return f"{text} {'+' if score > base else '-'} {why} {abs(score - base):.4f}", {why}


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
        notes: Mapping[int, tuple[str, ...]] | Callable[[int], tuple[str, ...]] | RowNotes | None = None,
        query: str = "",
        meta: Mapping[str, Any] | None = None,
    ) -> None:
        self.ids = ids
        self.payloads = payloads
        # Either an explicit order, or a lazy one: ``pool`` (input positions that take part,
        # None = all) sorted by ``score`` descending, ties by TIE_RULE, cut to ``limit``.
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
        self.notes: Mapping[int, tuple[str, ...]] | Callable[[int], tuple[str, ...]] | RowNotes = (
            {} if notes is None else dict(notes) if isinstance(notes, Mapping) else notes
        )
        self.query = query
        self.meta: dict[str, Any] = dict(meta or {})

    @property
    def rank_before(self) -> np.ndarray:
        """1-based rank of every input by similarity alone (ties: by TIE_RULE, as the ranking)."""
        if self._rank_before is None:
            n = self.similarity.shape[0]
            ranks = np.empty(n, dtype=np.int64)
            ranks[best_first(self.similarity, np.arange(n), self.time, self.ids)] = np.arange(1, n + 1)
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
        rows_of = np.arange(self.score.shape[0]) if pool is None else pool
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
            idx = rows_of[part]
        else:
            idx = rows_of
        # equal scores by TIE_RULE: the rows tied at the cut are all in idx (score >= kth)
        return best_first(self.score, idx, self.time, self.ids)[:m]

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
        sort only the similarities at or above theirs; past that, sort all once and cache."""
        if not len(rows):
            return []
        if self._rank_before is None and self._lookups + len(rows) <= 32:
            self._lookups += len(rows)
            s = self.similarity
            r = np.asarray(rows, dtype=np.int64)
            v = s[r]
            near = np.sort(s[s >= v.min()])  # usually few: the hits are the similar ones
            right = np.searchsorted(near, v, side="right")
            ranks = near.shape[0] - right + 1
            shared = np.flatnonzero(right - np.searchsorted(near, v, side="left") > 1)
            for j in shared.tolist():  # equal similarity: by TIE_RULE, as the ranking orders them
                tied = best_first(s, np.flatnonzero(s == v[j]), self.time, self.ids)
                ranks[j] += int(np.flatnonzero(tied == r[j])[0])
            return ranks.tolist()
        return self.rank_before[rows].tolist()

    def _hit(self, pos: int) -> Hit:
        i = self._position(pos)
        return self._hits(range(pos, pos + 1), [i], self._ranks_of([i]))[0]

    def _hits(self, positions: Sequence[int], rows: Sequence[int], ranks: list[int]) -> list[Hit]:
        """Hits for many rows at once: each column is gathered in one step."""
        r = np.asarray(rows, dtype=np.int64)
        rl = r.tolist()
        m = len(rl)
        ids = self.ids.take(rl) if isinstance(self.ids, _FieldColumn) else [self.ids[i] for i in rl]
        payloads = [None] * m if self.payloads is None else [self.payloads[i] for i in rl]
        notes = self.notes
        if isinstance(notes, Mapping):
            texts = [notes.get(i, ()) for i in rl]
        elif callable(notes):
            texts = [notes(i) for i in rl]
        else:
            texts = notes.notes_of(rl)
        if self.signals:
            sig = {k: v[r].tolist() for k, v in self.signals.items()}
            signals = [{k: v[j] for k, v in sig.items()} for j in range(m)]
        else:
            signals = [{} for _ in range(m)]
        cols = [c[r].tolist() for c in (self.score, self.similarity, self.decay, self.age_days)]
        return list(map(
            _new_hit, ids, *cols, ranks, [p + 1 for p in positions], self.time[r].tolist(),
            payloads, signals, texts,
        ))

    @overload
    def __getitem__(self, index: int) -> Hit: ...
    @overload
    def __getitem__(self, index: slice) -> list[Hit]: ...
    def __getitem__(self, index: int | slice) -> Hit | list[Hit]:
        if isinstance(index, slice):
            positions = range(*index.indices(len(self)))
            rows = [self._position(p) for p in positions]
            return self._hits(positions, rows, self._ranks_of(rows))
        n = len(self)
        if index < 0:
            index += n
        if not 0 <= index < n:
            raise IndexError(f"Ranking index {index} out of range for {n} results")
        return self._hit(index)

    def __iter__(self) -> Iterator[Hit]:
        # blocks: a caller that stops after a few hits pays for a few, one that reads them
        # all pays one sort and one gather per column and block
        n = len(self)
        if n == 0:
            return
        first = min(n, 16)
        rows = [self._position(p) for p in range(first)]
        yield from self._hits(range(first), rows, self._ranks_of(rows))
        lo, step = first, 64
        while lo < n:
            hi = min(n, lo + step)
            rows = self.order[lo:hi].tolist()
            yield from self._hits(range(lo, hi), rows, self._ranks_of(rows))
            lo, step = hi, min(step * 4, 4096)

    @property
    def ranked_ids(self) -> list[Any]:
        return [self.ids[int(i)] for i in self.order]

    def _time_on(self) -> bool:
        m = self.meta
        intent = m.get("intent")
        if intent is not None and intent.mode in ("specific", "timeless"):
            return False
        return float(m.get("effective_strength", 1.0) or 0.0) > 0

    def _reference(self) -> str:
        """The point ages count from, named: now, the as-of date or the period's end."""
        m = self.meta
        intent = m.get("intent")
        ref = m.get("reference_time", m.get("now"))
        when = "" if ref is None else f" ({format_epoch(ref)})"
        if intent is not None and intent.target is not None and ref is not None:
            if intent.mode == "range" and ref < m.get("now", ref) + 1:
                return ("the period's end" if math.isfinite(intent.target.end) and intent.target.end <= ref + 1
                        else "now") + when
            if intent.mode == "as_of" and ref != m.get("now"):
                return f"the as-of date{when}"
        return f"now{when}"

    def _time_fields(self, row: int, hit: Hit, ref_name: str) -> dict[str, Any]:
        """What the explanation says about one document's time, as named fields."""
        m = self.meta
        band = m.get("band")
        expired = m.get("expired")
        on_topic = m.get("on_topic")
        mode = getattr(m.get("intent"), "mode", "recent")
        b = int(band[row]) if band is not None and row < len(band) else -1
        ended = bool(expired[row]) if expired is not None and row < len(expired) else False
        if math.isnan(hit.time):
            text = "undated"
        elif math.isnan(hit.age_days):
            text = f"published {format_epoch(hit.time)}"
        elif ended and mode != "range":
            text = (f"published {format_epoch(hit.time)}; its validity ended "
                    f"{max(hit.age_days, 0.0) + 0.0:.0f} days before {ref_name}")
        elif b == 2:  # published after the period (BAND_NAMES[2])
            text = f"published {format_epoch(hit.time)}, {max(-hit.age_days, 0.0) + 0.0:.0f} days after the period"  # + 0.0: never "-0"
            b = -1  # said already
        elif hit.age_days >= 0:
            text = f"published {format_epoch(hit.time)}, {hit.age_days:.0f} days before {ref_name}"
        elif mode == "range":
            text = f"published {format_epoch(hit.time)}, {-hit.age_days:.0f} days after the period"
        else:
            text = f"published {format_epoch(hit.time)}, {-hit.age_days:.0f} days after {ref_name}"
        return {
            **self._topic_fields(row, hit),
            "time_on": self._time_on(),
            "age_from": ref_name,
            "age_text": text,
            "time_factor": _clean(hit.decay) if self._time_on() else None,
            "period": BAND_NAMES[b] if 0 <= b < len(BAND_NAMES) else None,
            "on_topic": None if on_topic is None or row >= len(on_topic) else bool(on_topic[row]),
        }

    def _topic_fields(self, row: int, hit: Hit) -> dict[str, Any]:
        """Why a document is on topic or not (``topic``: the deciding signal, its share of the
        best match, the cut) and its version chain (``chain``: name, position from the oldest,
        length, newest id), when the engine recorded them (the index does)."""
        m = self.meta
        decision, on_topic, raw = m.get("topic"), m.get("on_topic"), m.get("raw_similarity")
        if callable(decision):  # the engine decides when an explanation asks (ranking.Ranked.topic)
            decision = decision()
        why = None
        if decision is not None and on_topic is not None and raw is not None and row < len(on_topic):
            facet = m.get("facet")
            why = decision.reason(bool(on_topic[row]), float(raw[row]), hit.signals,
                                  facet=facet is not None and bool(facet[row]))
        chain = None
        chains = m.get("chains")
        if callable(chains):
            got = chains([row])[0]
            if got is not None:
                name, pos, length, newest = got
                chain = {"name": name, "position": pos, "length": length, "newest": newest}
        return {"topic": why, "chain": chain}

    def _rows_and_hits(self) -> list[tuple[int, Hit]]:
        n = len(self)
        rows = [self._position(p) for p in range(n)]
        return list(zip(rows, self._hits(range(n), rows, self._ranks_of(rows)))) if n else []

    def explain(self, legend: bool = True) -> str:
        """The readable trace: the question's intent, how time is applied (or that it is off),
        the topic rule, then one line a document (its score written as the formula that gives
        it) and a legend of the terms used (``legend=False``: without it, see :meth:`terms`)."""
        lines, used = self._trace()
        if legend:
            lines.append(legend_line(used))
        return "\n".join(lines)

    def terms(self) -> set[str]:
        """The :data:`LEGEND` terms :meth:`explain` uses."""
        return self._trace()[1]

    def _trace(self) -> tuple[list[str], set[str]]:
        m = self.meta
        lines = [f"query: {self.query!r}"]
        intent = m.get("intent")
        if intent is not None:
            lines.append(f"intent: {intent.describe()}")
        time_on = self._time_on()
        ref_name = self._reference()
        strength = float(m.get("strength", 1.0))
        eff = float(m.get("effective_strength", m.get("gate", 1.0)))
        if time_on:
            hl = m.get("half_life_days")
            hl_s = "" if hl is None else f", half-life {hl:.1f} days"
            kernel = f"{m['kernel']}{hl_s}" if "kernel" in m else "the kernel"
            gate = eff / strength if strength > 0 else float(m.get("gate", 1.0))
            sens = float(m.get("gate", gate))
            why = ""
            if abs(gate - sens) > 5e-3 and intent is not None and intent.target is not None:
                why = f" (a stated time weighs {gate:.2f}, whatever the question's time sensitivity {sens:.2f})"
            lines.append(
                f"time: on; ages count from {ref_name}; decay {kernel}; combine {m.get('combine', '?')}; "
                f"gate {_num(gate)} x strength {_num(strength)} = effective strength {_num(eff)}{why}"
            )
        else:
            why = f"mode {intent.mode}" if intent is not None else "strength 0"
            lines.append(f"time: off ({why}); similarity decides, except that a version whose validity "
                         "ended ranks below the one that replaced it")
        if intent is not None and intent.target is not None and intent.mode == "range":
            lines.append("period: in force at its end first, then in force during it, then published "
                         "after it, then replaced before it")
        if m.get("dense_complete") is False:  # index/background.py: vectors still coming
            lines.append(f"dense: {m['dense']}")
        if m.get("topic_rule"):
            lines.append(f"topic: {m['topic_rule']}")
        if m.get("anchor"):
            lines.append(f"anchor: {m['anchor']}")
        if "now" in m:
            lines.append(f"now: {format_epoch(m['now'], True)}")
        lines.append("-" * 72)
        used = {"score", "similarity", "age"} | ({"time factor", "gate", "effective strength"} if time_on else set())
        combine = m.get("combine", "gated_multiply")
        for pos, (row, h) in enumerate(self._rows_and_hits()):
            f = self._time_fields(row, h, ref_name)
            head, adj = _score_formula(h, eff if time_on else 0.0, combine, f["on_topic"] is False)
            used.update(adj)
            parts = [f["age_text"]] + ([f["period"]] if f["period"] else [])
            if f["on_topic"] is False:
                parts.append("not on topic")
                used.add("on topic")
            line = f"{pos + 1}. {h.id}  {head}  [{'; '.join(parts)}]"
            if h.rank_before != h.rank_after:
                line += f"  similarity rank {h.rank_before} -> {h.rank_after}"
            if h.signals:
                line += "  signals: " + " ".join(f"{k}={v:.4f}" for k, v in h.signals.items())
                used.update(k for k in h.signals if k in LEGEND)
            if f["topic"]:
                line += f"  | {f['topic']}"
            if f["chain"]:
                c = f["chain"]
                line += (f"  | chain {c['name']}: {c['position']} of {c['length']} by date"
                         + (" (the newest)" if c["position"] == c["length"] else f", newest {c['newest']}"))
            if h.notes:
                # "undated" is said once, in the bracket: the note keeps only its reason
                notes = [n.split(": ", 1)[1] if n.startswith("undated: ") else n for n in h.notes]
                line += "  | " + "; ".join(notes)
            lines.append(line)
        lines.append("-" * 72)
        if m.get("topic_rule"):
            used.add("on topic")
        return lines, used

    def explain_records(self) -> list[dict[str, Any]]:
        """The structured trace, one dict a document, for programs: the fields of
        :meth:`explain` by name (``age_from``, ``age_text``, ``time_on``, ``time_factor``,
        ``period``, ``on_topic``, ``topic``, ``chain``) next to the hit's own."""
        ref_name = self._reference()
        return [{**h.to_dict(), **self._time_fields(row, h, ref_name)} for row, h in self._rows_and_hits()]

    def __repr__(self) -> str:
        head = ", ".join(repr(self.ids[int(i)]) for i in self.order[:5])
        more = ", ..." if len(self) > 5 else ""
        return f"Ranking([{head}{more}], n={len(self)})"
