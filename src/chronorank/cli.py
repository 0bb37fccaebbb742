"""The ``chronorank`` command line. Subcommands live in :mod:`chronorank.commands`."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from chronorank.commands import COMMANDS
from chronorank.errors import ChronorankError


def _build_parser(only: str | None) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="chronorank",
        description="Time-aware retrieval for RAG.",
    )
    from chronorank import __version__

    parser.add_argument("--version", action="version", version=f"chronorank {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (module, help_text) in COMMANDS.items():
        if only is not None and name == only:
            try:
                importlib.import_module(module).add_parser(sub)
            except ModuleNotFoundError as exc:
                if exc.name != module:
                    raise
                sub.add_parser(name, help=help_text + " (not available in this build)")
        else:
            sub.add_parser(name, help=help_text, add_help=False)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    command = next((a for a in args_list if not a.startswith("-")), None)
    only = command if command in COMMANDS else None
    parser = _build_parser(only)
    args = parser.parse_args(args_list)
    if args.command is None:
        parser.print_help()
        return 0
    func = getattr(args, "func", None)
    if func is None:
        print(f"chronorank: command {args.command!r} is not available in this build", file=sys.stderr)
        return 2
    try:
        return int(func(args) or 0)
    except ChronorankError as exc:
        print(f"chronorank {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    raise SystemExit(main())
