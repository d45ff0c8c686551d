"""Several web servers, and PgBouncer between them and PostgreSQL.

README, "Deployment": with many web containers, each keeping its own pool of PostgreSQL
connections, the ``pgbouncer`` profile puts PgBouncer in transaction mode between them and
the database. On one machine a container is one gunicorn (``--web-servers K``, each with
``--workers`` processes); ``--pgbouncer`` starts Debian's PgBouncer in transaction mode with
``--pgbouncer-pool-size`` server connections and points the platform's servers at it with
the settings the compose profile sets (``DATABASE_TRANSACTION_POOLING=1``, and
``DATABASE_DIRECT_URL`` for what must bypass it). The ceiling gets the same number of
servers, so the ratio compares like with like; the clients' processes go to the servers in
turn (client process ``p`` to server ``p mod K``).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit

from bench.crowd.server import Server, free_port

PGBOUNCER = shutil.which("pgbouncer") or "/usr/sbin/pgbouncer"


class Bouncer:
    """PgBouncer in transaction mode in front of the PostgreSQL at ``host:port``, run as
    the ``postgres`` user (it refuses to run as root) from a folder of its own, trusting
    local connections as the PostgreSQL behind it does."""

    def __init__(self, host: str, port: int, pool_size: int, max_clients: int = 400):
        self.root = Path(tempfile.mkdtemp(prefix="bench-pgbouncer-"))
        os.chmod(self.root, 0o777)
        self.port = free_port()
        self.pool_size = pool_size
        self.log_path = self.root / "pgbouncer.log"
        self.config = self.root / "pgbouncer.ini"
        (self.root / "users.txt").write_text('"postgres" ""\n')
        settings = {
            "listen_addr": "127.0.0.1",
            "listen_port": self.port,
            "unix_socket_dir": "",
            "auth_type": "trust",
            "auth_file": self.root / "users.txt",
            "pool_mode": "transaction",
            "default_pool_size": pool_size,
            "max_client_conn": max_clients,
            "logfile": self.log_path,
            "pidfile": self.root / "pgbouncer.pid",
        }
        self.config.write_text(
            f"[databases]\n* = host={host} port={port}\n[pgbouncer]\n"
            + "".join(f"{key} = {value}\n" for key, value in settings.items())
        )
        for path in self.root.iterdir():
            os.chmod(path, 0o666)
        self.process: subprocess.Popen | None = None

    @classmethod
    def available(cls) -> bool:
        return os.path.exists(PGBOUNCER)

    def start(self, timeout: float = 20.0) -> Bouncer:
        runas = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        self.process = subprocess.Popen(
            [*runas, PGBOUNCER, str(self.config)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return self
            except OSError:
                time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"pgbouncer did not listen within {timeout:g} s\n{self.log_text()}")

    def url(self, database: str) -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/{database}"

    def version(self) -> str:
        done = subprocess.run([PGBOUNCER, "--version"], capture_output=True, text=True)
        return (done.stdout or done.stderr).splitlines()[0].strip() if done.returncode == 0 else "?"

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=10)
        shutil.rmtree(self.root, ignore_errors=True)

    def log_text(self) -> str:
        return self.log_path.read_text()[-2000:] if self.log_path.exists() else ""


def add_arguments(parser) -> None:
    parser.add_argument(
        "--web-servers",
        type=int,
        default=1,
        help="gunicorn servers of each app, as several web containers (web_tier.py); the "
        "client processes go to them in turn (at least one each)",
    )
    parser.add_argument(
        "--pgbouncer",
        action="store_true",
        help="the platform's servers connect through PgBouncer in transaction mode",
    )
    parser.add_argument(
        "--pgbouncer-pool-size",
        type=int,
        default=4,
        help="PgBouncer's server connections to the database (default_pool_size)",
    )


def database_route(args, env: dict, direct_url: str, meta: dict) -> tuple[Bouncer | None, dict]:
    """The PgBouncer started for ``--pgbouncer`` (else ``None``) and the platform servers'
    environment: through it, or ``env`` as it is; ``meta`` records which."""
    if not args.pgbouncer:
        return None, env
    if not Bouncer.available():
        raise SystemExit("--pgbouncer needs pgbouncer (apt-get install pgbouncer)")
    host, port = postgres_address(args.pg)
    clients = args.web_servers * args.workers * 8 + 50
    bouncer = Bouncer(host, port, args.pgbouncer_pool_size, clients).start()
    meta["pgbouncer"] = (
        f"{bouncer.version()}, transaction mode, {args.pgbouncer_pool_size} server connections"
    )
    return bouncer, through_bouncer(env, bouncer, direct_url)


def through_bouncer(env: dict, bouncer: Bouncer, direct_url: str) -> dict:
    """The platform's environment with its connections through ``bouncer`` (what the
    compose file's ``pgbouncer`` profile sets)."""
    return {
        **env,
        "DATABASE_URL": bouncer.url(urlsplit(direct_url).path.lstrip("/")),
        "DATABASE_TRANSACTION_POOLING": "1",
        "DATABASE_DIRECT_URL": direct_url,
    }


def postgres_address(server_url: str) -> tuple[str, int]:
    address = urlsplit(server_url)
    return address.hostname or "127.0.0.1", address.port or 5432


class ServerGroup:
    """K gunicorn servers of the same app, started and measured as one (``Server``'s
    interface): CPU seconds are their sum; client process ``p`` goes to server ``p mod K``."""

    def __init__(self, servers: list[Server]):
        self.servers = servers
        self.name = servers[0].name

    @property
    def base_url(self) -> str:
        return self.servers[0].base_url

    @property
    def command(self) -> list[str]:
        return self.servers[0].command

    def client_url(self, index: int) -> str:
        return self.servers[index % len(self.servers)].base_url

    def start(self, ready_path: str) -> None:
        for server in self.servers:
            server.start(ready_path)

    def cpu_seconds(self) -> float:
        return sum(server.cpu_seconds() for server in self.servers)

    def wait_idle(self) -> float:
        return sum(server.wait_idle() for server in self.servers)

    def worker_pids(self) -> list[int]:
        return [pid for server in self.servers for pid in server.worker_pids()]

    def stop(self) -> None:
        for server in self.servers:
            server.stop()


def server_group(count: int, name: str, app: str, env: dict, log_dir: Path, **common) -> Server:
    """One server, or a group of ``count`` alike (logs ``NAME-1.log``…)."""
    if count == 1:
        return Server(name, app, env, log_path=log_dir / f"{name}.log", **common)
    return ServerGroup(
        [
            Server(name, app, env, log_path=log_dir / f"{name}-{number}.log", **common)
            for number in range(1, count + 1)
        ]
    )
