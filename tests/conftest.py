"""Suite-wide options: the default run is the fast suite; ``--all`` adds slow and browser tests.

``python -m pytest`` leaves out tests marked ``slow`` (benchmark subsamples, fuzzing, crash
campaigns, whole-corpus embedding) and ``browser`` (headless chromium). ``--all`` runs them,
as ``.ci/run`` does; ``-m slow`` or ``-m browser`` selects them by marker as usual.
"""

from __future__ import annotations

import os
import tempfile
from typing import Any

OPT_IN = ("slow", "browser")

# the embedding cache (chronorank.index.embed_cache) and the built-index cache
# (chronorank.eval.index_cache, and demo's) of a test run live in scratch directories, never in the
# user's cache; tests of the caches set their own
os.environ.setdefault("CHRONORANK_EMBED_CACHE", tempfile.mkdtemp(prefix="chronorank-test-embeddings-"))
os.environ.setdefault("CHRONORANK_INDEX_CACHE", tempfile.mkdtemp(prefix="chronorank-test-indexes-"))


def pytest_addoption(parser: Any) -> None:
    parser.addoption("--all", action="store_true", default=False, dest="run_all",
                     help="also run the tests marked slow or browser (CI runs everything)")


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
        return "chronorank: running every test, slow and browser included"
    return "chronorank: the fast suite; slow and browser tests are left out (deselected) -- add --all to run them"


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: Any) -> None:
    n = getattr(config, "_chronorank_left_out", 0)
    if n:
        terminalreporter.write_line(f"{n} slow/browser tests were left out; python -m pytest --all runs them")

