"""The demo's HTTP server: bounded in threads, connections and time (stdlib only).

One thread (:meth:`DemoServer.serve_forever`) accepts connections and reads their request
heads without blocking (a ``selectors`` loop), so a client that sends slowly, or nothing,
holds a socket and a few bytes but no thread. A head that is complete is handed to a
fixed pool of ``workers`` threads that parse it (``BaseHTTPRequestHandler``), search and
write the answer; searches run concurrently (the index is safe for concurrent readers).

Limits, each answered at once with a clear HTTP error and the connection closed:

- ``idle_timeout``: seconds a connection may stay silent before its first byte;
- ``request_timeout``: seconds to send the whole request head (a half-sent request, or
  one dribbled a byte at a time, is dropped after this);
- ``max_head_bytes``: the request line and headers together (414/431 beyond, answered
  after a quarter of a second, so that a client sending them back to back cannot take the
  server's turns from everyone else's searches);
- ``max_connections``: connections open at once (503 beyond);
- ``workers`` and a queue of ``4 * workers`` complete requests (503 beyond).

HTTP/1.0 semantics: one request per connection, no request bodies (the API is GET only).
"""

from __future__ import annotations

import contextlib
import errno
import io
import queue
import selectors
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler
from typing import Any

from chronorank.errors import InvalidInput

__all__ = ["DemoServer", "bind_error"]

_STOP = object()
_SWEEP = 0.1  # seconds between two checks of the connections' deadlines
_OVERSIZE_PAUSE = 0.25  # seconds before an oversized request is answered (414/431)


def bind_error(host: str, port: int, exc: OSError) -> InvalidInput:
    """The message for a socket that could not be bound (a busy port above all)."""
    if exc.errno == errno.EADDRINUSE:
        return InvalidInput(f"port {port} is in use on {host}; pass --port with another one (0 picks a free port).")
    if exc.errno == errno.EACCES:
        return InvalidInput(f"binding port {port} on {host} was refused ({exc.strerror}); pass --port above 1023.")
    if exc.errno == errno.EADDRNOTAVAIL or isinstance(exc, socket.gaierror):
        return InvalidInput(f"--host {host!r} is not an address of this machine ({exc}); use 127.0.0.1.")
    return InvalidInput(f"cannot listen on {host}:{port}: {exc}; pass another --host or --port.")


class _Conn:
    __slots__ = ("sock", "addr", "buf", "opened", "first_byte")

    def __init__(self, sock: socket.socket, addr: Any, now: float) -> None:
        self.sock, self.addr, self.buf, self.opened = sock, addr, bytearray(), now
        self.first_byte: float | None = None


class DemoServer:
    """A small HTTP server for one handler class; see the module docstring for its limits.

    The port is bound when the server is made (a busy port fails at once, before any
    indexing); ``handler`` may be set later, before :meth:`serve_forever`."""

    def __init__(
        self,
        host: str,
        port: int,
        handler: type[BaseHTTPRequestHandler] | None = None,
        *,
        workers: int = 8,
        max_connections: int = 256,
        request_timeout: float = 10.0,
        idle_timeout: float = 5.0,
        max_head_bytes: int = 16384,
        verbose: bool = False,
    ) -> None:
        if workers < 1 or max_connections < 1:
            raise InvalidInput(f"workers={workers}, max_connections={max_connections}; give positive numbers.")
        if not (request_timeout > 0 and idle_timeout > 0):
            raise InvalidInput(f"request_timeout={request_timeout}, idle_timeout={idle_timeout}; give positive seconds.")
        try:
            self.socket = socket.create_server((host, port), backlog=128)
        except OSError as exc:
            raise bind_error(host, port, exc) from None
        self.socket.setblocking(False)
        self.server_address = self.socket.getsockname()[:2]
        self.server_port = int(self.server_address[1])
        self.handler = handler
        self.workers = int(workers)
        self.max_connections = int(max_connections)
        self.request_timeout = float(request_timeout)
        self.idle_timeout = float(idle_timeout)
        self.max_head_bytes = int(max_head_bytes)
        self.verbose = verbose
        self.refused = 0  # connections answered 503 (too many) since the start
        self.timed_out = 0  # connections dropped for a late request head
        self._jobs: queue.Queue[Any] = queue.Queue(maxsize=4 * self.workers)
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._stop = threading.Event()
        self._stopped = threading.Event()
        self._stopped.set()
        self._threads: list[threading.Thread] = []
        self._late: list[tuple[float, socket.socket, int, str]] = []  # (when, socket, status, why)

    # ------------------------------------------------------------------ lifecycle

    def serve_forever(self) -> None:
        if self.handler is None:
            raise InvalidInput("DemoServer.handler is not set; give the handler class before serving.")
        self._stopped.clear()
        self._threads = [threading.Thread(target=self._work, name=f"chronorank-demo-{i}", daemon=True)
                         for i in range(self.workers)]
        for t in self._threads:
            t.start()
        try:
            self._loop()
        finally:
            for _ in self._threads:
                self._jobs.put(_STOP)
            for t in self._threads:
                t.join(timeout=self.request_timeout)
            self._stopped.set()

    def shutdown(self) -> None:
        """Stop :meth:`serve_forever` (from another thread) and wait until it returned."""
        self._stop.set()
        with contextlib.suppress(OSError):
            self._wake_w.send(b"x")
        self._stopped.wait()

    def server_close(self) -> None:
        for s in (self.socket, self._wake_r, self._wake_w):
            with contextlib.suppress(OSError):
                s.close()

    # ------------------------------------------------------------------ the reading loop

    def _loop(self) -> None:
        sel = selectors.DefaultSelector()
        sel.register(self.socket, selectors.EVENT_READ, None)
        sel.register(self._wake_r, selectors.EVENT_READ, None)
        conns: dict[socket.socket, _Conn] = {}
        self._late = []
        sweep = 0.0
        try:
            while not self._stop.is_set():
                # deadlines are swept every _SWEEP seconds, not at each event: under a flood of
                # requests a scan of every open connection per event would cost a core
                for key, _ in sel.select(timeout=_SWEEP):
                    if key.fileobj is self.socket:
                        self._accept(sel, conns)
                    elif key.fileobj is self._wake_r:
                        with contextlib.suppress(OSError):
                            self._wake_r.recv(64)
                    else:
                        self._read(sel, conns, conns[key.fileobj])  # type: ignore[index]
                now = time.monotonic()
                if now < sweep:
                    continue
                sweep = now + _SWEEP
                if self._late:
                    due = [x for x in self._late if x[0] <= now]
                    self._late = [x for x in self._late if x[0] > now]
                    for _, sock, status, why in due:
                        _reply_and_close(sock, status, why)
                for c in [c for c in conns.values() if self._deadline(c) <= now]:
                    self.timed_out += 1
                    self._drop(sel, conns, c, 408, "the request was not sent in time")
        finally:
            for c in list(conns.values()):
                self._drop(sel, conns, c)
            for _, sock, status, why in self._late:
                _reply_and_close(sock, status, why)
            sel.close()

    def _deadline(self, c: _Conn) -> float:
        if c.first_byte is None:
            return c.opened + self.idle_timeout
        return c.opened + self.request_timeout

    def _accept(self, sel: selectors.BaseSelector, conns: dict[socket.socket, _Conn]) -> None:
        for _ in range(64):  # a burst of connections at most per turn
            try:
                sock, addr = self.socket.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                return
            if len(conns) + len(self._late) >= self.max_connections:
                self.refused += 1
                _reply_and_close(sock, 503, "the demo server has too many open connections; retry shortly")
                continue
            sock.setblocking(False)
            c = _Conn(sock, addr, time.monotonic())
            conns[sock] = c
            sel.register(sock, selectors.EVENT_READ, None)

    def _read(self, sel: selectors.BaseSelector, conns: dict[socket.socket, _Conn], c: _Conn) -> None:
        try:
            data = c.sock.recv(65536)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            data = b""
        if not data:  # closed by the client
            self._drop(sel, conns, c)
            return
        if c.first_byte is None:
            c.first_byte = time.monotonic()
        c.buf += data
        end = c.buf.find(b"\r\n\r\n")
        if end < 0 and len(c.buf) <= self.max_head_bytes:
            return
        if end < 0 or end + 4 > self.max_head_bytes:
            line_end = c.buf.find(b"\r\n")
            status = 414 if line_end < 0 or line_end > self.max_head_bytes else 431
            # answered after a pause, holding no thread: a client that sends oversized
            # requests back to back gets a few answers a second, not thousands of the
            # server's turns (the searches of everyone else run meanwhile)
            with contextlib.suppress(KeyError, ValueError):
                sel.unregister(c.sock)
            del conns[c.sock]
            self._late.append((time.monotonic() + _OVERSIZE_PAUSE, c.sock, status,
                               f"the request head is over {self.max_head_bytes} bytes; send a shorter query"))
            return
        sel.unregister(c.sock)
        del conns[c.sock]
        try:
            self._jobs.put_nowait((c.sock, c.addr, bytes(c.buf[: end + 4])))
        except queue.Full:
            self.refused += 1
            _reply_and_close(c.sock, 503, "the demo server is busy; retry shortly")

    def _drop(self, sel: selectors.BaseSelector, conns: dict[socket.socket, _Conn], c: _Conn,
              status: int | None = None, why: str = "") -> None:
        with contextlib.suppress(KeyError, ValueError):
            sel.unregister(c.sock)
        conns.pop(c.sock, None)
        if status is None:
            with contextlib.suppress(OSError):
                c.sock.close()
        else:
            _reply_and_close(c.sock, status, why)

    # ------------------------------------------------------------------ the workers

    def _work(self) -> None:
        handler = self.handler
        while True:
            job = self._jobs.get()
            if job is _STOP or handler is None:
                return
            sock, addr, head = job
            try:
                sock.setblocking(True)
                sock.settimeout(self.request_timeout)  # a client that does not read its answer
                handler(_Request(sock, head), addr, self)  # type: ignore[arg-type]
            except Exception:  # noqa: BLE001, S110 - one bad connection never stops a worker
                pass
            finally:
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_WR)
                with contextlib.suppress(OSError):
                    sock.close()


class _Request:
    """What ``BaseHTTPRequestHandler`` reads from (the head, already received) and writes to
    (the socket): the handler's ``setup`` calls :meth:`makefile`."""

    def __init__(self, sock: socket.socket, head: bytes) -> None:
        self.sock, self.head = sock, head

    def makefile(self, mode: str, *args: Any) -> Any:
        if "r" in mode:
            return io.BytesIO(self.head)
        return self.sock.makefile("wb")

    def settimeout(self, value: float | None) -> None:
        self.sock.settimeout(value)

    def setsockopt(self, *args: Any) -> None:
        self.sock.setsockopt(*args)

    def sendall(self, data: bytes) -> None:
        self.sock.sendall(data)


def _reply_and_close(sock: socket.socket, status: int, why: str) -> None:
    import json
    from http import HTTPStatus

    body = json.dumps({"error": why}).encode("utf-8")
    head = (f"HTTP/1.0 {status} {HTTPStatus(status).phrase}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n").encode("ascii")
    with contextlib.suppress(OSError):
        sock.setblocking(False)
        sock.send(head + body)  # best effort: a client that does not read gets nothing
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)
    with contextlib.suppress(OSError):
        sock.close()
