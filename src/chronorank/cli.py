"""The ``chronorank`` command line. Subcommands live in :mod:`chronorank.commands`.

Exit codes (docs/format.md): 0 success, 1 an unexpected internal error (reported in one
line; ``CHRONORANK_TRACEBACK=1`` shows the traceback), 2 bad input or usage, 3 nothing to do.
"""

from __future__ import annotations

import argparse
import importlib
import os
import re
import sys
import warnings
from collections.abc import Sequence
from typing import Any

from chronorank import __version__
from chronorank.commands import COMMANDS
from chronorank.errors import ChronorankError, DateWarning, LanguageWarning

EPILOG = "File formats: docs/format.md; example data: examples/releases/."

# A library hint written in Python (``pass bad_dates='missing'``) becomes the command's flag
# (``--bad-dates missing``) when the command has that option.
_FILE_ERROR = re.compile(r"\b(line|item) \d+\b")
_PY_HINT = re.compile(r"\b([a-z][a-z0-9_]*)=('([^']*)'|\"([^\"]*)\"|[\w.+-]+)")


def _build_parser(only: str | None) -> tuple[argparse.ArgumentParser, argparse.ArgumentParser | None]:
    parser = argparse.ArgumentParser(
        prog="chronorank",
        description="Time-aware retrieval for RAG.",
        epilog=EPILOG,
    )

    parser.add_argument("--version", action="version", version=f"chronorank {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    chosen = None
    for name, (module, help_text) in COMMANDS.items():
        if only is not None and name == only:
            try:
                importlib.import_module(module).add_parser(sub)
            except ModuleNotFoundError as exc:
                if exc.name != module:
                    raise
                sub.add_parser(name, help=help_text + " (not available in this build)")
            chosen = sub.choices.get(name)
            if chosen is not None and EPILOG not in (chosen.epilog or ""):
                chosen.epilog = f"{chosen.epilog.rstrip()}\n\n{EPILOG}" if chosen.epilog else EPILOG
        else:
            sub.add_parser(name, help=help_text, add_help=False)
    return parser, chosen


def cli_hint(message: str, parser: argparse.ArgumentParser | None) -> str:
    """Rewrite ``name='value'`` in ``message`` as ``--name value`` where the command has that flag."""
    if parser is None:
        return message
    flags = {a.dest: a.option_strings[-1] for a in parser._actions if a.option_strings}
    flags.update({a.dest: a.option_strings[0] for a in parser._actions
                  if a.option_strings and a.option_strings[0].startswith("--")})

    def swap(m: re.Match[str]) -> str:
        flag = flags.get(m.group(1))
        if flag is None:
            return m.group(0)
        value = m.group(3) if m.group(3) is not None else m.group(4) if m.group(4) is not None else m.group(2)
        return f"{flag} {value}"

    message = _PY_HINT.sub(swap, message)
    # "strength must be ..." names the option the user typed
    return re.sub(r"^([a-z][a-z0-9_]*)(?= must be )", lambda m: flags.get(m.group(1), m.group(1)), message)


def main(argv: Sequence[str] | None = None) -> int:
    # progress bars on stderr belong to the CLI; a library call logs them (index/progress.py);
    # restored afterwards, so an in-process call leaves the library's default in place
    given = os.environ.get("CHRONORANK_PROGRESS")
    if given is None:
        os.environ["CHRONORANK_PROGRESS"] = "bar"
    try:
        return _main(argv)
    finally:
        if given is None:
            os.environ.pop("CHRONORANK_PROGRESS", None)


def _main(argv: Sequence[str] | None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    command = next((a for a in args_list if not a.startswith("-")), None)
    only = command if command in COMMANDS else None
    parser, chosen = _build_parser(only)
    args = parser.parse_args(args_list)
    if args.command is None:
        parser.print_help()
        return 0
    func = getattr(args, "func", None)
    if func is None:
        print(f"chronorank: command {args.command!r} is not available in this build", file=sys.stderr)
        return 2
    shown = warnings.showwarning

    def one_line(message: Any, category: Any, *rest: Any, **kw: Any) -> None:
        """chronorank's own warnings (dates, languages) as one line naming the command."""
        if issubclass(category, (DateWarning, LanguageWarning)):
            print(f"chronorank {args.command}: warning: {message}", file=sys.stderr)
        else:
            shown(message, category, *rest, **kw)

    warnings.showwarning = one_line
    try:
        return int(func(args) or 0)
    except ChronorankError as exc:
        text = " ".join(cli_hint(str(exc), chosen).split())
        if _FILE_ERROR.search(text) and "format.md" not in text:
            text += " (file formats: docs/format.md)"
        print(f"chronorank {args.command}: error: {text}", file=sys.stderr)
        return int(getattr(exc, "exit_code", 2))
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        print(f"chronorank {args.command}: interrupted", file=sys.stderr)
        return 130
    except OSError as exc:
        where = f" {exc.filename!r}" if exc.filename else ""
        print(f"chronorank {args.command}: error:{where} {exc.strerror or exc}; check the path and its "
              "permissions", file=sys.stderr)
        return 2
    except Exception as exc:  # the last line of defence: one line, never a traceback
        if os.environ.get("CHRONORANK_TRACEBACK"):
            raise
        text = " ".join(str(exc).split())[:300]
        print(f"chronorank {args.command}: internal error: {type(exc).__name__}: {text} -- this is a bug; "
              "please report it with the command line (CHRONORANK_TRACEBACK=1 shows the traceback)",
              file=sys.stderr)
        return 1
    finally:
        warnings.showwarning = shown


if __name__ == "__main__":
    raise SystemExit(main())
