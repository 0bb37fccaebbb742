"""``IndexConfig.temporal`` is one TemporalConfig, built with the configuration (issue 21, item 3).

It used to be a loose dict turned into a TemporalConfig (and its kernel spec parsed) whenever a
configuration was made -- by every per-query ``replace``, and by the query-shape step of each
long question. The spec grammar and the save format are unchanged.
"""

from __future__ import annotations

import dataclasses

import pytest

from chronorank import temporal
from chronorank.errors import InvalidInput
from chronorank.index import IndexConfig, TemporalIndex
from chronorank.index.config import DEFAULT_TEMPORAL
from chronorank.temporal import TemporalConfig


def test_the_default_is_a_temporal_config_with_the_index_defaults() -> None:
    cfg = IndexConfig()
    assert isinstance(cfg.temporal, TemporalConfig) and cfg.temporal_config() is cfg.temporal
    assert cfg.temporal == TemporalConfig(**DEFAULT_TEMPORAL)
    assert cfg.temporal.relative_recency == 0.85 and cfg.temporal.range_slope == 0.2


def test_replace_keeps_the_temporal_object_unless_a_temporal_setting_changes() -> None:
    cfg = IndexConfig()
    assert cfg.replace(dense_weight=0.3).temporal is cfg.temporal
    assert dataclasses.replace(cfg, lead_weight=0.1).temporal is cfg.temporal  # the query-shape step
    other = cfg.replace(strength=0.5, kernel="exponential(half_life_days=30)")
    assert other.temporal.strength == 0.5 and other.temporal.kernel.half_life() == 30
    assert other.temporal.relative_recency == 0.85  # the other settings carried over
    assert cfg.temporal.strength == 1.0


def test_temporal_given_whole_or_as_changes() -> None:
    cfg = IndexConfig()
    whole = TemporalConfig(strength=0.3)
    assert cfg.replace(temporal=whole).temporal is whole
    merged = cfg.replace(temporal={"strength": 0.3})
    assert merged.temporal.strength == 0.3 and merged.temporal.range_slope == 0.2
    # a mapping at construction is read as TemporalConfig's own fields, as before
    assert IndexConfig(temporal={"strength": 0.2}).temporal == TemporalConfig(strength=0.2)


def test_bad_temporal_settings_name_the_setting() -> None:
    with pytest.raises(InvalidInput, match="Did you mean 'strength'"):
        IndexConfig().replace(strenght=1.0)
    with pytest.raises(InvalidInput, match="Did you mean 'strength'"):
        IndexConfig(temporal={"strenght": 1.0})
    with pytest.raises(InvalidInput, match="strength must be a number in"):
        IndexConfig().replace(strength=2.0)
    with pytest.raises(InvalidInput, match="give a chronorank.temporal.TemporalConfig"):
        IndexConfig(temporal=0.5)  # type: ignore[arg-type]


def test_the_spec_round_trips() -> None:
    cfg = IndexConfig.from_spec("index(fusion='rrf', kernel='weibull(half_life_days=90, shape=2)', strength=0.5)")
    assert cfg.temporal.kernel.half_life() == pytest.approx(90) and cfg.temporal.strength == 0.5
    again = IndexConfig.from_spec(cfg.spec())
    assert again == cfg and again.spec() == cfg.spec()


def test_a_search_builds_no_temporal_config(monkeypatch: pytest.MonkeyPatch) -> None:
    idx = TemporalIndex(embedder=None)
    words = "widget tool release notes export import data files changed api"
    idx.add([{"id": str(i), "text": f"{words} {i}", "date": f"2023-0{1 + i % 9}-01"} for i in range(12)])
    built = []
    original = TemporalConfig.__post_init__

    def counting(self: TemporalConfig) -> None:
        built.append(1)
        original(self)

    monkeypatch.setattr(temporal.TemporalConfig, "__post_init__", counting)
    # ten known terms: above short_query_terms, so the query-shape step makes a new IndexConfig
    long_q = "what changed in the widget tool release notes about export and import of data files in the api"
    for q in ("latest widget release", long_q):
        assert idx.search(q, k=3, now="2023-12-01").ids
    assert built == []
    idx.search("latest widget release", k=3, now="2023-12-01", strength=0.5)  # a temporal override: one
    assert len(built) == 1
