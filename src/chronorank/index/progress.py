"""Progress for long jobs (embedding): shown from the first second, whatever the count.

In a library call the state goes to :mod:`logging` (logger ``chronorank.progress``, INFO: a
line every few seconds and one at the end), never to stderr. Bars are drawn on request: the
CLI sets ``CHRONORANK_PROGRESS=bar`` (do the same, or pass ``stream=``): on a terminal a bar
redrawn in place (done/total, documents a second, ETA); when stderr is piped, a plain line
every few seconds and one at the end. Nothing is shown for a job that ends within ``delay``
seconds. ``CHRONORANK_PROGRESS=0`` turns it off everywhere.

A daemon thread draws, so a slow first batch (64 long documents take ~4 s on 2 cores)
still shows the job started: the bar does not wait for the first update.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
from typing import Any, TextIO

__all__ = ["Progress", "progress_enabled"]


_LOG = logging.getLogger("chronorank.progress")


def progress_mode() -> str:
    """``off``, ``log`` (the library default) or ``bar`` (the CLI's), from ``CHRONORANK_PROGRESS``."""
    v = os.environ.get("CHRONORANK_PROGRESS", "1").strip().lower()
    if v in ("0", "off", "false", "no"):
        return "off"
    return "bar" if v in ("bar", "bars", "stderr") else "log"


def progress_enabled() -> bool:
    return progress_mode() != "off"


def _clock(s: float) -> str:
    s = max(0, int(round(s)))
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"


class Progress:
    """``with Progress(total, "embedding") as p: ... p.update(k)``."""

    def __init__(
        self,
        total: int,
        desc: str = "embedding",
        *,
        unit: str = "docs",
        stream: TextIO | None = None,
        delay: float = 0.2,
        tty: bool | None = None,
        every: float | None = None,
    ) -> None:
        self.total = int(total)
        self.desc = desc
        self.unit = unit
        self.stream: Any = stream if stream is not None else sys.stderr
        # no stream asked for and no bars requested: the lines go to logging
        self.log = stream is None and progress_mode() == "log"
        if self.log:
            tty = False
        self.delay = delay
        if tty is None:
            isatty = getattr(self.stream, "isatty", None)
            tty = bool(isatty()) if callable(isatty) else False
        self.tty = tty
        self.every = every if every is not None else (0.25 if tty else 5.0)
        self.done = 0
        self.shown = False
        self._t0 = time.monotonic()
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        if progress_enabled() and self.total > 0:
            self._thread = threading.Thread(target=self._loop, name="chronorank-progress", daemon=True)
            self._thread.start()

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def update(self, k: int) -> None:
        with self._lock:
            self.done += int(k)

    def line(self) -> str:
        """The current state: done/total, percent, rate and ETA once there is a rate."""
        el = time.monotonic() - self._t0
        done, total = min(self.done, self.total), self.total
        pct = 100.0 * done / total if total else 100.0
        rate = done / el if el > 0 and done else 0.0
        eta = f"ETA {_clock((total - done) / rate)}" if rate > 0 and done < total else f"elapsed {_clock(el)}"
        speed = f"{rate:.1f} {self.unit}/s" if rate > 0 else f"- {self.unit}/s"
        if self.tty:
            width = 24
            fill = int(width * done / total) if total else width
            return f"{self.desc} [{'#' * fill}{'.' * (width - fill)}] {done}/{total} {self.unit} {pct:3.0f}%  {speed}  {eta}"
        return f"{self.desc}: {done}/{total} {self.unit} ({pct:.0f}%), {speed}, {eta}"

    def _write(self, text: str) -> None:
        if self.log:
            _LOG.info("%s", text.strip())
            return
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):  # a closed stream: progress is best effort
            self._stop.set()

    def _draw(self) -> None:
        self.shown = True
        self._write(f"\r{self.line()}\x1b[K" if self.tty else self.line() + "\n")

    def _loop(self) -> None:
        if self._stop.wait(self.delay):
            return
        while True:
            self._draw()
            if self._stop.wait(self.every):
                return

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
            if self.shown:  # the final state, so a finished job reads as finished
                el = time.monotonic() - self._t0
                rate = self.done / el if el > 0 else 0.0
                tail = f"{self.desc}: {self.done}/{self.total} {self.unit} in {el:.1f} s ({rate:.1f} {self.unit}/s)"
                self._write(f"\r{tail}\x1b[K\n" if self.tty else tail + "\n")
