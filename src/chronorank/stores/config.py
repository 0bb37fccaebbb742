"""A store's configuration: the candidate lanes (:class:`Lanes`) and everything it scores
with (:class:`StoreConfig`: the index configuration, the lanes, the undated fill weight and the
fallback policy)."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any

from chronorank.errors import InvalidInput
from chronorank.index.config import IndexConfig

__all__ = ["FALLBACKS", "Lanes", "StoreConfig"]

FALLBACKS = ("error", "client")


@dataclass(frozen=True)
class Lanes:
    """Candidate lanes: how many documents each brings to the server-side scorer.

    ``windows`` are (days, limit) pairs: the ``limit`` nearest documents dated within
    ``days`` before the reference time. ``edge`` is the fraction of a lane's limit past which
    a hit counts as coming from the lane's edge (the truncated-pool diagnostic).
    """

    dense: int = 100
    keyword: int = 100
    windows: tuple[tuple[float, int], ...] = ((30.0, 50), (180.0, 50))
    newest: int = 50
    edge: float = 0.9

    def __post_init__(self) -> None:
        for name in ("dense", "keyword", "newest"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                raise InvalidInput(f"Lanes.{name}={v!r}; give a whole number >= 0 (0 turns the lane off), e.g. 100.")
        wins = []
        for w in self.windows:
            if not (isinstance(w, (tuple, list)) and len(w) == 2):
                raise InvalidInput(f"Lanes.windows item {w!r}; give (days, limit) pairs, e.g. ((30, 50), (180, 50)).")
            days, limit = float(w[0]), int(w[1])
            if not (days > 0 and math.isfinite(days)) or limit < 1:
                raise InvalidInput(f"Lanes.windows item {w!r}; days must be > 0 and limit >= 1, e.g. (30, 50).")
            wins.append((days, limit))
        object.__setattr__(self, "windows", tuple(wins))
        if not 0.0 < self.edge <= 1.0:
            raise InvalidInput(f"Lanes.edge={self.edge!r}; give a fraction in (0, 1], e.g. 0.9.")
        if self.dense == 0 and self.keyword == 0 and not self.windows and self.newest == 0:
            raise InvalidInput("every lane is off; set Lanes(dense=100) or another lane above 0.")

    @classmethod
    def plain(cls, limit: int = 100) -> Lanes:
        """One similarity top-``limit`` lane, no time lanes: the usual prefetch + decay."""
        return cls(dense=limit, keyword=0, windows=(), newest=0)

    def named(self) -> list[tuple[str, int]]:
        out = [("dense", self.dense), ("keyword", self.keyword)]
        out += [(f"last_{days:g}d", limit) for days, limit in self.windows]
        out.append(("newest", self.newest))
        return [(n, lim) for n, lim in out if lim > 0]

    def total(self) -> int:
        return sum(lim for _, lim in self.named())


#: the index defaults that compare candidates with each other (a competitive anchor, a margin
#: below the best similarity): no engine evaluates them inside one expression
_POOL_ONLY = ("relative_recency", "topical_margin")


def _index_default(name: str) -> Any:
    d = IndexConfig()
    return getattr(d, name) if hasattr(d, name) else getattr(d.temporal, name)


@dataclass(frozen=True)
class StoreConfig:
    """Everything a store needs to score: the index configuration (fusion weights +
    temporal settings, see :class:`chronorank.index.IndexConfig`), the lanes, the undated
    fill weight and the fallback policy.

    ``fallback='client'`` (default): the engine builds the candidate pool and the index's
    ranking (:func:`chronorank.ranking.rank`, with the index's defaults) runs client-side over
    it. ``'error'``: the engine scores alone; the index's defaults it cannot evaluate
    (``relative_recency``, ``topical_margin``) are off unless the configuration names them,
    and a named one raises InvalidInput.
    """

    index: Any = None
    lanes: Lanes = field(default_factory=Lanes)
    missing_weight: float = 0.5
    fallback: str = "client"
    # whether the caller named lead_weight (a spec string or a per-query override) rather than
    # taking the default: an old collection without lead vectors then raises instead of
    # searching without the lead
    lead_named: bool = field(default=False, compare=False)
    # the _POOL_ONLY settings the caller did not name: at the index's default under
    # fallback='client', off under 'error'
    unnamed: frozenset[str] = field(default=frozenset(), compare=False)

    def __post_init__(self) -> None:
        raw = self.index
        if isinstance(raw, str) and "lead_weight" in raw:
            object.__setattr__(self, "lead_named", True)
        idx = IndexConfig.from_spec(raw)
        if not isinstance(raw, IndexConfig):
            spec = str(raw or "")
            object.__setattr__(self, "unnamed", frozenset(n for n in _POOL_ONLY if n not in spec))
        if self.fallback not in FALLBACKS:
            raise InvalidInput(f"fallback={self.fallback!r}; use 'client' (default) or 'error'.")
        if self.unnamed:
            idx = idx.replace(**{n: None if self.fallback == "error" else _index_default(n) for n in self.unnamed})
        object.__setattr__(self, "index", idx)
        if not (isinstance(self.missing_weight, (int, float)) and 0.0 <= self.missing_weight <= 1.0):
            raise InvalidInput(f"missing_weight={self.missing_weight!r}; give a weight in [0, 1], e.g. 0.5.")
        if not isinstance(self.lanes, Lanes):
            raise InvalidInput(f"lanes={self.lanes!r}; give a chronorank.stores.Lanes(...).")
        if getattr(self.index, "topical_margin", None) is not None and self.fallback != "client":
            raise InvalidInput(
                f"topical_margin={self.index.topical_margin:g} rescales similarity by the best candidate's "
                "and cannot run inside the engine; use topical_margin=None or fallback='client' (the default)."
            )
        if getattr(self.index, "dense_scale", "raw") != "raw":
            raise InvalidInput(
                "dense_scale='max' is an embedded-index option that the engines do not compute yet; "
                "use dense_scale='raw' for a store."
            )
        if self.index.fusion != "blend" and self.fallback != "client":
            raise InvalidInput(
                f"fusion={self.index.fusion!r} ranks over the whole candidate set and cannot run inside "
                "the engine; use fusion='blend' or fallback='client' (the default)."
            )

    @classmethod
    def coerce(cls, config: Any, lanes: Lanes | None, missing_weight: float, fallback: str = "client") -> StoreConfig:
        """A StoreConfig as given, or one built from an index config/spec and the store's options."""
        if isinstance(config, StoreConfig):
            return config
        return cls(index=config, lanes=lanes or Lanes(), missing_weight=missing_weight, fallback=fallback)

    def replace(self, **changes: Any) -> StoreConfig:
        own = {"lanes", "missing_weight", "fallback"}
        mine = {k: v for k, v in changes.items() if k in own}
        rest = {k: v for k, v in changes.items() if k not in own}
        idx = self.index.replace(**rest) if rest else self.index
        named = self.lead_named or "lead_weight" in rest
        return dataclasses.replace(self, index=idx, lead_named=named, unnamed=self.unnamed - set(rest), **mine)
