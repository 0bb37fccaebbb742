"""The index's retrieval configuration: signal fusion plus the temporal layer, as one spec.

Spec grammar (``chronorank.spec``), flat, e.g.::

    index(fusion='blend', dense_weight=0.3, keyword_weight=0.7,
          kernel='exponential(half_life_days=180)', strength=1, relative_recency=0.8)

Keys are the fields of :class:`IndexConfig` plus every field of
:class:`chronorank.temporal.TemporalConfig` (``kernel`` as a quoted spec string); the latter
are held as one ``TemporalConfig`` (``IndexConfig.temporal``), built when the configuration is,
never again per search.

Fusion of the two similarity signals over all documents:

- ``blend``: ``(w_d * cos' + w_k * bm25 / max(bm25) + w_l * lead / max(lead)) / (w_d + w_k + w_l)``
  -- scores in [0, 1]; ``cos' = max(cos, 0)`` with ``dense_scale='raw'`` (the default, which
  the server-side stores can compute too) or ``max(cos, 0) / max(cos)`` with ``'max'`` (dense
  and keyword scores on one scale: +0.02-0.03 nDCG@10 on reworded changelog queries, -0.004
  on the release corpus; embedded index only). ``lead`` is BM25 over each document's lead:
  its first sentence or line (a title, a release header), at most ``lead_tokens`` terms,
  with each query term weighted by the *whole documents'* plain idf (BM25F-style: a word that
  is rare in opening lines but common in the corpus, such as "release", must not outweigh the
  query's subject; and without ``idf_power``, so "httpx 0.7.0" prefers the title naming both
  over "requests 0.7.0"). It favours documents *about* the subject over ones that mention it in
  passing (a vendoring note in pip's changelog that names requests). Weight 0.5 by default:
  on the changelog set, against 0.1 over the first 3 terms with the lead's own idf, latest
  0.858 -> 0.960, reworded latest 0.766 -> 0.942, reworded as_of_date 0.845 -> 0.945, the
  release corpus 0.971 -> 0.997 (version series terms, added after, cost latest 0.006) (benchmarks/validity_quality.py, index_quality.py);
- ``rrf``: weighted reciprocal rank fusion ``sum_s w_s / (k + rank_s)`` (``rrf_k`` = 60),
  divided by its maximum so the temporal layer sees [0, 1] as well.

Topical margin (``topical_margin = m``), for time-sensitive queries only (intent mode
``recent``/``as_of``/``range`` with sensitivity > 0): documents whose fused similarity is
within ``m`` of the best are treated as equally on-topic, so time decides among them:
``sim' = (1 - e) * min(1, s / (m * max s)) + e * s / max s`` with ``e = tie_break`` (0.02:
against 0.05, changelog latest 0.954 -> 0.977, reworded 0.932 -> 0.959, as_of 0.978 -> 0.979,
reworded as_of 0.967 -> 0.964; 0 lets time alone order the cluster and loses as_of_date).
``specific`` and ``timeless`` queries (e.g. an exact version) keep the raw similarity.

Query shape (``short_query_terms = n``, 6): the lead field, ``idf_power`` and the topical
margin are name-lookup mechanisms; they apply in full to queries of up to n distinct known
terms and fade linearly to off at 2n (see ``ranking.shaped`` for the measurement); the topic
cut below fades with them towards no cut (``ranking.cut_margin``).

Temporal burst (``burst_ratio = r``, 0.1): a query the intent parser calls ``timeless`` (with
no time expression), ``recent``, or a period up to now ("this week") is a current-event query
when three of its 10 best matches are newer than the newest share r of the collection
(``ranking.burst_scale``): it becomes ``recent`` at full sensitivity with a half-life set by
those matches' ages (``ranking.current_event``).

Topic first (:func:`chronorank.temporal.topic_first`, every query, when the index has keyword
scores): a document is *on topic* when its fused similarity is at least ``topical_margin`` x
the best candidate's, or its dense cosine at least ``topic_floor`` (0.75) x the best dense, or
its lead at least ``topic_lead_floor`` (0.5) x the best lead; time reorders only within the
on-topic set, which always ranks above the rest. Measured on ``benchmarks/data/time_semantics``
(72 questions, written before tuning): top-1 0.514 -> 0.861 (0.917 with ``group_key``) with the
in-force periods, anchors and this rule; dense floor 0.55 loses "pro plan price during 2024" to the enterprise page, 0.75 keeps
a reworded fresh pricing page (tests/index/test_index.py) on topic; the lead floor 0.5 keeps
"pip install Requests on 17 March 2017" right (reworded changelogs as_of_date 0.942 -> 0.966).

Versions stay with the first hit (``version_floor = c``, 0.5; :func:`chronorank.temporal.versions_first`,
after topic first): the first hit's version chain (group key) and the pages among the 50 best
whose first sentence is the first hit's but for the words holding a digit -- on topic, or with
embedding cosine >= c to the first hit -- rank above every page under 0.8 x the best fused
similarity, when the first hit is not or one of its versions is the best match. On ``benchmarks/data/time_semantics``
off-topic-above-on-topic in the top 3 went 18 -> 7 (22 -> 7 with ``group_key``), top-1 unchanged;
benchmarks/cross_domain.py: release 0.997, changelogs latest / as_of / as_of_date / version
0.987 / 0.980 / 0.984 / 1.000 -> 0.988 / 0.980 / 0.985 / 1.000, reworded 0.976 -> 0.977, Russian
0.994 -> 0.994, news-dev 0.788 / 0.692 -> 0.787 / 0.691, synthetic 0.927. Without the 0.8 core
(versions above every other page) the release set fell to 0.984 (airflow's helm-chart series is
the second-newest airflow release) and a wrong first hit buried the right project (reworded
0.968). The cosine test is for the pages the topic rule left out: news-dev's articles that
share a dateline lead ("CNN --") have pairwise cosine median 0.14, the releases of one
changelog project 0.55, the versions of one fixture page 0.49-0.99. ``none`` turns the rule off.

Version-aware rules (with the two above; no setting of their own: ``topical_margin=none`` or
``version_floor=none`` turn them off): a page whose first sentence names only versions the
question rules out ranks below the rest of its tier (:mod:`chronorank.index.version_conflict`);
for a before / after question the first hit's version across the boundary ranks right after it
(``ranking.across_boundary``); the page announcing an anchor's version is its event page
(:func:`chronorank.index.version_conflict.version_event`). On ``benchmarks/data/time_semantics``
off-topic-above-on-topic in the top 3 went 4 -> 0 (4 -> 0 with ``group_key``), top-1 0.986 /
1.000 unchanged; benchmarks/cross_domain.py: the default row does not move.

BM25 query terms are weighted by ``idf ** idf_power`` on top of BM25's own idf. The
default 3 lets a query's rare subject ("marshmallow") outweigh words common in the corpus
("release", "changed") that it shares with fresher, unrelated documents: on the changelog
set "latest" went 0.795 -> 0.855 and the release corpus 0.939 -> 0.955 nDCG@10, exact
versions 0.982 -> 0.967 (benchmarks/index_quality.py). A question whose best match is a
section of a page (``ranking.sectioned``) is scored at plain BM25 (``idf_power`` 0): it names
the page in rare words (the service, the company) that the shared title already matches, and
the section in ordinary ones, which idf cubed drowned ("OpenAI's developer terms on security
and privacy" -> another service's confidentiality section). policies-dev train
(benchmarks/cross_domain.py, MiniLM; dev only reported), with the section chain: 0.629 ->
0.717; idf_power 0 for every query instead cost time_semantics top-1 0.972 -> 0.944 and the
hand-written changelog as_of 0.917 -> 0.830, which this leaves unchanged. The reranker and
the stores have no ``idf_power``: the rule is the index's.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from chronorank.errors import InvalidInput
from chronorank.ranking import (  # the ranking rules' defaults, shared with the reranker and the stores
    DEFAULT_BURST_RATIO,
    DEFAULT_LEAD_TOKENS,
    DEFAULT_SHORT_QUERY_TERMS,
    DEFAULT_TIE_BREAK,
    DEFAULT_TOPIC_FLOOR,
    DEFAULT_TOPIC_LEAD_FLOOR,
    DEFAULT_VERSION_FLOOR,
)
from chronorank.spec import format_spec, parse_spec
from chronorank.temporal import (
    DEFAULT_RANGE_SLOPE,
    DEFAULT_RELATIVE_RECENCY,
    DEFAULT_TOPICAL_MARGIN,
    TemporalConfig,
)

__all__ = ["IndexConfig", "FUSIONS", "DEFAULT_TEMPORAL"]

FUSIONS = ("blend", "rrf")
TIME_FIELDS = ("auto", "date", "updated", "valid_from")

#: The temporal defaults the index uses (chosen on the changelog and release benchmarks;
#: see benchmarks/index_quality.py). Any key can be overridden in the spec.
#:
#: Measured with MiniLM int8 (nDCG@10, tdw release / changelogs all; every row keeps the
#: lead field): default 0.997 / 0.985; blend 0.3/0.7 0.997 / 0.984; rrf(1, 1) 0.329 / 0.767;
#: BM25 only 1.000 / 0.964; dense only 0.450 / 0.617; no time 0.231 / 0.369.
#:
#: ``range_slope=0.2``: among the pages published inside a period ("in 2023") the newest comes
#: first (the state at the period's end): changelog as_of 0.941 -> 0.978, reworded 0.943 ->
#: 0.967, Russian 0.942 -> 0.989. Pages in force during the period but published before it, after
#: it, or replaced before it take the lower bands of :func:`chronorank.temporal._in_force_range`.
#:
#: ``relative_recency=0.85`` (was 0.95): a fresh document that is a little less similar than
#: a stale one (a "Price update" page against an older "Pro plan pricing" page) still makes
#: the stale one old. Fresh-page probe (3 wordings x 4 questions, default MiniLM index): 8 ->
#: 10 of 12 right; changelog set unchanged except as_of_date reworded 0.948 -> 0.961 and
#: Russian 0.986 -> 0.978; 0.8 costs reworded latest 0.034.
#: The values live in :mod:`chronorank.temporal` (``DEFAULT_*``), read by the reranker too.
DEFAULT_TEMPORAL: dict[str, Any] = {"relative_recency": DEFAULT_RELATIVE_RECENCY, "range_slope": DEFAULT_RANGE_SLOPE}


def _temporal_fields() -> tuple[str, ...]:
    return tuple(f.name for f in dataclasses.fields(TemporalConfig))


@functools.lru_cache(maxsize=1)
def _default_temporal() -> TemporalConfig:
    # frozen, so every default IndexConfig shares one (its kernel spec is parsed once)
    return TemporalConfig(**DEFAULT_TEMPORAL)


def _kernel_hint(name: str, keys: Any) -> str:
    """' half_life_days is a kernel parameter: ...' when ``name`` is one (a common slip), else ''."""
    from chronorank.kernels.registry import KERNELS, _valid_params

    owners = [k for k, f in sorted(KERNELS.items()) if name in (_valid_params(f) or ())]
    if not owners:
        return ""
    kernel = "exponential" if "exponential" in owners else owners[0]
    value = keys[name] if isinstance(keys, Mapping) else "..."
    return (f" {name!r} is a parameter of the decay kernel ({', '.join(owners)}): write "
            f"kernel='{kernel}({name}={value!r})'.")


def _check_temporal_keys(keys: Any) -> None:
    known = set(_temporal_fields())
    unknown = sorted(set(keys) - known)
    if unknown:
        import difflib

        names = known | {f.name for f in dataclasses.fields(IndexConfig)}
        close = difflib.get_close_matches(unknown[0], sorted(names), n=1, cutoff=0.75)
        hint = f" Did you mean {close[0]!r}?" if close else _kernel_hint(unknown[0], keys)
        raise InvalidInput(
            f"unknown temporal setting(s) {unknown}.{hint} Known: {sorted(known)}."
        )


@dataclass(frozen=True)
class IndexConfig:
    """How the index turns a query into one score per document."""

    fusion: str = "blend"
    dense_weight: float = 0.5
    keyword_weight: float = 0.5
    rrf_k: int = 60
    idf_power: float = 3.0
    dense_scale: str = "raw"
    lead_weight: float = 0.5
    lead_tokens: int = DEFAULT_LEAD_TOKENS
    topical_margin: float | None = DEFAULT_TOPICAL_MARGIN
    tie_break: float = DEFAULT_TIE_BREAK
    short_query_terms: int | None = DEFAULT_SHORT_QUERY_TERMS
    burst_ratio: float | None = DEFAULT_BURST_RATIO
    topic_floor: float | None = DEFAULT_TOPIC_FLOOR
    topic_lead_floor: float | None = DEFAULT_TOPIC_LEAD_FLOOR
    version_floor: float | None = DEFAULT_VERSION_FLOOR
    time_field: str = "auto"
    #: the temporal layer's settings; a mapping of TemporalConfig fields is converted once
    temporal: TemporalConfig = field(default_factory=_default_temporal)

    def __post_init__(self) -> None:
        if self.fusion not in FUSIONS:
            raise InvalidInput(f"fusion={self.fusion!r} is unknown; use one of {list(FUSIONS)}.")
        for name in ("dense_weight", "keyword_weight"):
            w = getattr(self, name)
            if not (isinstance(w, (int, float)) and math.isfinite(w) and w >= 0):
                raise InvalidInput(f"{name}={w!r}; expected a finite number >= 0 (0 turns the signal off).")
        if self.dense_weight == 0 and self.keyword_weight == 0:
            raise InvalidInput("dense_weight and keyword_weight are both 0; set at least one above 0, e.g. keyword_weight=1.")
        if not (isinstance(self.lead_weight, (int, float)) and math.isfinite(self.lead_weight) and self.lead_weight >= 0):
            raise InvalidInput(f"lead_weight={self.lead_weight!r}; expected a finite number >= 0 (0 turns the lead signal off).")
        if self.dense_scale not in ("raw", "max"):
            raise InvalidInput(f"dense_scale={self.dense_scale!r}; use 'raw' (cosine as is) or 'max' (divided by the best).")
        if not (isinstance(self.lead_tokens, int) and self.lead_tokens >= 1):
            raise InvalidInput(f"lead_tokens={self.lead_tokens!r}; expected an integer >= 1 such as 12.")
        if not (isinstance(self.rrf_k, int) and self.rrf_k >= 1):
            raise InvalidInput(f"rrf_k={self.rrf_k!r}; expected an integer >= 1 such as 60.")
        if not (isinstance(self.idf_power, (int, float)) and 0 <= self.idf_power <= 4):
            raise InvalidInput(f"idf_power={self.idf_power!r}; expected a number in [0, 4] (0 = plain BM25).")
        if self.topical_margin is not None and not (
            isinstance(self.topical_margin, (int, float)) and 0 < self.topical_margin <= 1
        ):
            raise InvalidInput(
                f"topical_margin={self.topical_margin!r}; expected a number in (0, 1] such as 0.6, or none."
            )
        for name in ("topic_floor", "topic_lead_floor", "version_floor"):
            v = getattr(self, name)
            if v is not None and not (isinstance(v, (int, float)) and 0 < v <= 1):
                raise InvalidInput(f"{name}={v!r}; expected a number in (0, 1] such as 0.5, or none.")
        if not (isinstance(self.tie_break, (int, float)) and 0 <= self.tie_break <= 1):
            raise InvalidInput(f"tie_break={self.tie_break!r}; expected a number in [0, 1] such as 0.02.")
        if self.short_query_terms is not None and not (
            isinstance(self.short_query_terms, int) and self.short_query_terms >= 1
        ):
            raise InvalidInput(
                f"short_query_terms={self.short_query_terms!r}; expected an integer >= 1 such as 6, or none."
            )
        if self.burst_ratio is not None and not (
            isinstance(self.burst_ratio, (int, float)) and 0 < self.burst_ratio < 1
        ):
            raise InvalidInput(f"burst_ratio={self.burst_ratio!r}; expected a number in (0, 1) such as 0.1, or none.")
        if self.time_field not in TIME_FIELDS:
            raise InvalidInput(f"time_field={self.time_field!r}; use one of {list(TIME_FIELDS)}.")
        if not isinstance(self.temporal, TemporalConfig):
            if not isinstance(self.temporal, Mapping):
                raise InvalidInput(
                    f"temporal={self.temporal!r}; give a chronorank.temporal.TemporalConfig or a mapping of "
                    "its settings, e.g. {'strength': 0.5}."
                )
            _check_temporal_keys(self.temporal)
            object.__setattr__(self, "temporal", TemporalConfig(**self.temporal))

    def temporal_config(self) -> TemporalConfig:
        """The temporal layer's settings (``self.temporal``: built with the configuration)."""
        return self.temporal

    def replace(self, **changes: Any) -> IndexConfig:
        """A copy with ``changes``: IndexConfig fields, TemporalConfig fields (``strength=0``,
        ``kernel=...``), or ``temporal=`` (a TemporalConfig, or a mapping of changes to it).
        The TemporalConfig is rebuilt only when a temporal setting changes."""
        own = {f.name for f in dataclasses.fields(self)} - {"temporal"}
        base = self.temporal
        temporal: dict[str, Any] = {}
        mine: dict[str, Any] = {}
        for k, v in changes.items():
            if k in own:
                mine[k] = v
            elif k == "temporal":
                if isinstance(v, TemporalConfig):
                    base, temporal = v, {}
                else:
                    temporal.update(v)
            else:
                temporal[k] = v
        _check_temporal_keys(temporal)
        new_temporal = dataclasses.replace(base, **temporal) if temporal else base
        return dataclasses.replace(self, temporal=new_temporal, **mine)

    @classmethod
    def from_spec(cls, spec: str | IndexConfig | None) -> IndexConfig:
        if spec is None:
            return cls()
        if isinstance(spec, IndexConfig):
            return spec

        name, params = parse_spec(spec)
        if name not in ("index", "config"):
            raise InvalidInput(
                f"config spec {spec!r} starts with {name!r}; write index(key=value, ...), "
                "e.g. index(fusion='rrf', relative_recency=0.8)."
            )
        return cls().replace(**params)

    def spec(self) -> str:
        cached = self.__dict__.get("_spec")
        if cached is None:
            cached = self._format_spec()
            object.__setattr__(self, "_spec", cached)
        return cached

    def _format_spec(self) -> str:

        cfg = self.temporal
        params: dict[str, Any] = {
            "fusion": self.fusion,
            "dense_weight": self.dense_weight,
            "keyword_weight": self.keyword_weight,
            "rrf_k": self.rrf_k,
            "dense_scale": self.dense_scale,
            "lead_weight": self.lead_weight,
            "lead_tokens": self.lead_tokens,
            "idf_power": self.idf_power,
            "topical_margin": self.topical_margin,
            "tie_break": self.tie_break,
            "short_query_terms": self.short_query_terms,
            "burst_ratio": self.burst_ratio,
            "topic_floor": self.topic_floor,
            "topic_lead_floor": self.topic_lead_floor,
            "version_floor": self.version_floor,
            "time_field": self.time_field,
        }
        for f in dataclasses.fields(cfg):
            v = getattr(cfg, f.name)
            params[f.name] = repr(v) if f.name == "kernel" else v
        return format_spec("index", params)

    def __repr__(self) -> str:
        return self.spec()
