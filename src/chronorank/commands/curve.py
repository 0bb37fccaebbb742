"""``chronorank curve``: print a kernel as an ASCII curve, or plot it to a file."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from chronorank.errors import InvalidInput, require

DESCRIPTION = """\
Print a decay kernel as a table of age, weight and bar, with its half-life marked.

SPEC is a kernel spec such as 'weibull(half_life_days=90, shape=2)' (quote it in the
shell), or a name followed by key=value words: weibull half_life_days=90 shape=2.
Without SPEC the default kernel exponential(half_life_days=180) is shown.
"""

EPILOG = """\
examples:
  chronorank curve exponential half_life_days=30
  chronorank curve 'piecewise(points=[(0, 1), (30, 1), (180, 0.3)])' --max-age 365
  chronorank curve 'cliff(half_life_days=90, steepness=12)' --png cliff.png
"""


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    p: argparse.ArgumentParser = subparsers.add_parser(
        "curve",
        help="print or plot a decay kernel",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("spec", nargs="*", metavar="SPEC", help="kernel spec (default: exponential(half_life_days=180))")
    p.add_argument("--width", type=int, default=50, metavar="N", help="bar length at weight 1 (default 50)")
    p.add_argument("--max-age", type=float, default=None, metavar="DAYS",
                   help="show ages from 0 to DAYS (default: around the half-life)")
    p.add_argument("--ages", default=None, metavar="A,B,...", help="comma-separated ages in days to show")
    p.add_argument("--png", default=None, metavar="FILE",
                   help="also write a plot to FILE (needs: pip install \"chronorank[plot]\")")
    p.add_argument("--json", action="store_true", help="print {spec, half_life_days, ages, weights} as JSON instead of the curve")
    p.set_defaults(func=run)
    return p


def spec_from_words(words: list[str]) -> str | None:
    """Join CLI words into one spec: ``["weibull", "shape=2"]`` -> ``"weibull(shape=2)"``."""
    if not words:
        return None
    if len(words) == 1:
        return words[0]
    head, rest = words[0], words[1:]
    if "(" in head or not all("=" in w for w in rest):
        return " ".join(words)
    return f"{head}({', '.join(w.rstrip(',') for w in rest)})"


def run(args: argparse.Namespace) -> int:
    from chronorank.kernels import ascii_curve, get_kernel, plot_kernel

    if args.png:  # checked before any work

        require("matplotlib", extra="plot")
    if args.width < 1:
        raise InvalidInput(f"--width {args.width}: give a positive number of characters, e.g. --width 50")
    kernel = get_kernel(spec_from_words(list(args.spec)))
    ages = None
    if args.ages:
        try:
            ages = [float(a) for a in args.ages.split(",") if a.strip()]
        except ValueError:
            raise InvalidInput(f"--ages {args.ages!r} must be comma-separated numbers of days, e.g. 0,30,90") from None
    if args.max_age is not None and not args.max_age > 0:
        raise InvalidInput(f"--max-age {args.max_age!r} must be a positive number of days, e.g. 365")
    if args.json:
        from chronorank.kernels.curve import default_ages

        a = ages if ages is not None else default_ages(kernel, args.max_age).tolist()
        payload = {
            "spec": repr(kernel),
            "half_life_days": kernel.half_life(),
            "ages": a,
            "weights": [float(w) for w in kernel(a)],
        }
        print(json.dumps(payload))
    else:
        print(ascii_curve(kernel, width=args.width, ages=ages, max_age_days=args.max_age))
    if args.png:
        path = plot_kernel(kernel, args.png, max_age_days=args.max_age)
        print(f"wrote {path}", file=sys.stderr)
    return 0
