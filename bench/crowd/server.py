"""Starting and stopping gunicorn: the platform (``config.wsgi``) and the ceiling.

Both get the same command line (``gunicorn APP -b 127.0.0.1:PORT -w WORKERS -k CLASS``),
and the same environment except the settings module and the ceiling's unreachable
database; see ``platform_settings.py`` and ``ceiling.py``.
"""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from bench.crowd.procstat import tree_seconds
from bench.crowd.setup_db import code_dir

GUNICORN = Path(sys.executable).with_name("gunicorn")
# Nothing listens on port 9 (discard); a database query in the ceiling fails as a 500.
NO_DATABASE_URL = "postgres://postgres@127.0.0.1:9/ceiling_uses_no_database"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class Server:
    name: str  # "platform" or "ceiling"
    app: str
    env: dict
    workers: int
    worker_class: str
    threads: int
    log_path: Path
    timeout: int = 0  # gunicorn --timeout; 0 keeps gunicorn's default (30 s)
    port: int = 0
    process: subprocess.Popen | None = None
    command: list[str] = field(default_factory=list)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def client_url(self, index: int) -> str:
        """Where client process ``index`` sends its requests (``web_tier.ServerGroup``
        spreads them over several servers)."""
        return self.base_url

    def start(self, ready_path: str, timeout: float = 300.0) -> None:
        self.port = free_port()
        self.command = [
            str(GUNICORN),
            self.app,
            "-b",
            f"127.0.0.1:{self.port}",
            "-w",
            str(self.workers),
            "-k",
            self.worker_class,
        ]
        if self.threads > 1:
            self.command += ["--threads", str(self.threads)]
        if self.timeout:
            self.command += ["--timeout", str(self.timeout)]
        log = self.log_path.open("ab")
        self.process = subprocess.Popen(
            self.command, cwd=code_dir(), env=self.env, stdout=log, stderr=subprocess.STDOUT
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"{self.name} server exited; see {self.log_path}")
            try:
                with urllib.request.urlopen(self.base_url + ready_path, timeout=2) as answer:
                    if answer.status < 500:
                        self.warm(ready_path)
                        return
            except urllib.error.HTTPError as error:
                if error.code < 500:
                    self.warm(ready_path)
                    return
            except OSError:
                pass
            time.sleep(0.2)
        raise RuntimeError(f"{self.name} server did not answer in {timeout} s; see {self.log_path}")

    def warm(self, ready_path: str) -> None:
        """A few requests so that every worker has imported and set up the app."""
        for _ in range(self.workers * 3):
            try:
                urllib.request.urlopen(self.base_url + ready_path, timeout=5).close()
            except urllib.error.HTTPError:
                pass

    def cpu_seconds(self) -> float:
        """gunicorn master + workers (alive or reaped) CPU seconds."""
        return tree_seconds(self.process.pid) if self.process else 0.0

    def wait_idle(self, limit: float = 180.0, quiet: float = 0.05) -> float:
        """Wait until the server has used < ``quiet`` of a core for 1 s (requests still
        queued after a client gave up are served all the same); returns the wait."""
        began = time.monotonic()
        last = self.cpu_seconds()
        calm = 0
        while time.monotonic() - began < limit:
            time.sleep(0.5)
            now = self.cpu_seconds()
            calm = calm + 1 if now - last < quiet * 0.5 else 0
            last = now
            if calm >= 2:
                break
        return time.monotonic() - began

    def worker_pids(self) -> list[int]:
        try:
            text = Path(f"/proc/{self.process.pid}/task/{self.process.pid}/children").read_text()
        except OSError:
            return []
        return [int(pid) for pid in text.split()]

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
