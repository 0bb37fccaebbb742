"""The reliability suite: property, stateful, bad-input, durability, concurrency and fault tests.

``reliability_support`` (fuzz inputs, invariants, the kill -9 campaign, the memory probe) is
shared with ``benchmarks/reliability.py``, which runs the long versions.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))
