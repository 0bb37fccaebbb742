"""Suite-wide options: the default run is the fast suite; ``--all`` adds the opt-in tests.

``python -m pytest`` leaves out tests marked ``slow`` (benchmark subsamples, fuzzing, crash
campaigns, whole-corpus embedding), ``browser`` (headless chromium) and ``pg`` (an embedded
PostgreSQL server). ``--all`` runs them, as ``.ci/run`` does; ``-m slow``, ``-m browser`` or
``-m pg`` selects them by marker as usual. The run is parallel (``-n auto`` in pyproject's
addopts, pytest-xdist); ``-n 0`` runs in one process.
"""

from __future__ import annotations

import os
import tempfile
from typing import Any

OPT_IN = ("slow", "browser", "pg")

# the embedding cache (chronorank.index.embed_cache) and the built-index cache
# (chronorank.eval.index_cache, and demo's) of a test run live in scratch directories, never in the user's cache; tests of the caches set their own.
# Each pytest-xdist worker gets its own (a worker inherits the environment of the process that
# started it, so the variables this file set there are set again, not kept).
_SCRATCH = {
    "CHRONORANK_EMBED_CACHE": "chronorank-test-embeddings-",
    "CHRONORANK_INDEX_CACHE": "chronorank-test-indexes-",
}
_MINE = "CHRONORANK_TEST_SCRATCH"  # the variables of _SCRATCH this file set (not the user's)
_inherited = set(os.environ.get(_MINE, "").split(",")) if os.environ.get("PYTEST_XDIST_WORKER") else set()
_set = []
for _var, _prefix in _SCRATCH.items():
    if _var in _inherited or _var not in os.environ:
        os.environ[_var] = tempfile.mkdtemp(prefix=_prefix)
        _set.append(_var)
os.environ[_MINE] = ",".join(_set)


def pytest_addoption(parser: Any) -> None:
    parser.addoption("--all", action="store_true", default=False, dest="run_all",
                     help="also run the tests marked slow, browser or pg (CI runs everything)")


def _opted_in(config: Any) -> set[str]:
    if config.getoption("run_all"):
        return set(OPT_IN)
    expr = config.getoption("markexpr") or ""
    return {m for m in OPT_IN if m in expr}  # -m 'slow' selects them explicitly


def pytest_collection_modifyitems(config: Any, items: list[Any]) -> None:
    wanted = _opted_in(config)
    keep, left_out = [], []
    for item in items:
        marks = {m for m in OPT_IN if item.get_closest_marker(m) is not None}
        (left_out if marks - wanted else keep).append(item)
    if left_out:
        config.hook.pytest_deselected(items=left_out)
        items[:] = keep
        config._chronorank_left_out = len(left_out)


def pytest_report_header(config: Any) -> str | None:
    if len(_opted_in(config)) == len(OPT_IN):
        return "chronorank: running every test, slow, browser and pg included"
    return "chronorank: the fast suite; slow, browser and pg tests are left out (deselected) -- add --all to run them"


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: Any) -> None:
    n = getattr(config, "_chronorank_left_out", 0)
    if n:
        terminalreporter.write_line(f"{n} slow/browser/pg tests were left out; python -m pytest --all runs them")

