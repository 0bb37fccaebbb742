"""The index's stored documents as columns, read back as record dicts on demand.

A Python dict per document (id, text, four raw time fields, metadata) cost about 450 bytes
of overhead each; here each field is one list over all documents (an empty metadata dict is
stored as None), and a record dict is built only for the documents asked for: ``get``, the
payloads of a result's top k, ``save``. Iterating or indexing gives the same dicts, in the
same key order, as the records used to be (so ``docs.jsonl`` is written unchanged).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, overload

import numpy as np

__all__ = ["Records", "TIME_COLUMNS"]

TIME_COLUMNS = ("date", "updated", "valid_from", "valid_to")


class Records(Sequence[dict[str, Any]]):
    """Columns ``ids``, ``texts``, ``raw_times`` (one list per field of ``TIME_COLUMNS``, as
    given) and ``metadata`` (a dict, or None for none). Treat as immutable."""

    __slots__ = ("ids", "texts", "raw_times", "metadata")

    def __init__(
        self, ids: list[str], texts: list[str], raw_times: tuple[list[Any], ...], metadata: list[dict[str, Any] | None]
    ) -> None:
        self.ids = ids
        self.texts = texts
        self.raw_times = raw_times
        self.metadata = metadata

    @classmethod
    def from_dicts(cls, records: Iterable[Mapping[str, Any]]) -> Records:
        """Columns from records shaped as ``TemporalIndex`` normalises them."""
        if isinstance(records, Records):
            return records
        recs = records if isinstance(records, list) else list(records)
        return cls(
            [r["id"] for r in recs],
            [r["text"] for r in recs],
            tuple([r.get(name) for r in recs] for name in TIME_COLUMNS),
            [r.get("metadata") or None for r in recs],
        )

    def __len__(self) -> int:
        return len(self.ids)

    def record(self, i: int) -> dict[str, Any]:
        """Document ``i`` as a new dict (its metadata dict is the stored one)."""
        d, u, vf, vt = (col[i] for col in self.raw_times)
        meta = self.metadata[i]
        return {
            "id": self.ids[i], "text": self.texts[i], "date": d, "updated": u, "valid_from": vf, "valid_to": vt,
            "metadata": {} if meta is None else meta,
        }

    @overload
    def __getitem__(self, i: int) -> dict[str, Any]: ...

    @overload
    def __getitem__(self, i: slice) -> Records: ...

    def __getitem__(self, i: int | slice) -> dict[str, Any] | Records:
        if isinstance(i, slice):
            return Records(self.ids[i], self.texts[i], tuple(c[i] for c in self.raw_times), self.metadata[i])
        return self.record(i)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return (self.record(i) for i in range(len(self.ids)))

    def __add__(self, other: Sequence[Mapping[str, Any]]) -> Records:
        o = Records.from_dicts(other)
        return Records(
            self.ids + o.ids, self.texts + o.texts, tuple(a + b for a, b in zip(self.raw_times, o.raw_times)),
            self.metadata + o.metadata,
        )

    def take(self, rows: np.ndarray | Sequence[int]) -> Records:
        """The documents at ``rows``, in that order."""
        r = np.asarray(rows, dtype=np.int64).tolist()
        return Records(
            [self.ids[i] for i in r], [self.texts[i] for i in r],
            tuple([c[i] for i in r] for c in self.raw_times), [self.metadata[i] for i in r],
        )

    def __repr__(self) -> str:
        return f"Records(n={len(self)})"
