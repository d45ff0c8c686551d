"""The compose file's processes, started on this machine for fault tests: a throw-away
PostgreSQL cluster and Redis server of the test's own (free ports, temporary folders),
gunicorn as ``deploy/gunicorn.conf.py`` runs it with ``DEBUG=0``, nginx with
``deploy/nginx/nginx.conf`` and a Celery worker. The shared PostgreSQL and Redis of the
machine are never touched; these can be stopped, killed and restarted at will.
"""

import glob
import http.client
import os
import re
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SECRET_KEY = "fault-tests-only-0f3a9c2e7b5d4a1e8c6f0b2d4e6a8c0e2f4a6b8d0e2f4a6b"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_for(check, timeout: float, what: str, interval: float = 0.1) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(interval)
    raise RuntimeError(f"{what} not ready within {timeout} s")


def _postgres_bin(name: str) -> str:
    found = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    return found[-1] if found else (shutil.which(name) or name)


def missing_tools() -> list[str]:
    needed = {
        "initdb": _postgres_bin("initdb"),
        "pg_ctl": _postgres_bin("pg_ctl"),
        "redis-server": shutil.which("redis-server"),
        "nginx": shutil.which("nginx") or ("/usr/sbin/nginx" * os.path.exists("/usr/sbin/nginx")),
        "runuser": shutil.which("runuser"),
    }
    return [name for name, path in needed.items() if not path or not os.path.exists(path)]


class PostgresCluster:
    """``initdb`` into a temporary folder, served on a free port as the ``postgres`` user
    (PostgreSQL refuses to run as root)."""

    def __init__(self):
        self.root = Path(tempfile.mkdtemp(prefix="fault-pg-"))
        self.data = self.root / "data"
        self.log = self.root / "server.log"
        self.port = free_port()
        os.chmod(self.root, 0o777)

    def _as_postgres(self, *command: str, check: bool = True) -> subprocess.CompletedProcess:
        return subprocess.run(
            ["runuser", "-u", "postgres", "--", *command],
            capture_output=True,
            text=True,
            check=check,
            timeout=120,
        )

    def create(self) -> "PostgresCluster":
        try:
            if not stat.S_ISCHR(os.stat("/dev/null").st_mode):
                raise RuntimeError(
                    "/dev/null is not a device any more (a command run as root renamed a "
                    "file onto it); initdb needs it: `mknod -m 666 /dev/null c 1 3`"
                )
            self._as_postgres(
                _postgres_bin("initdb"), "-D", str(self.data), "-U", "postgres",
                "--auth=trust", "-E", "UTF8", "--no-sync",
            )  # fmt: skip
            self.start()
        except BaseException:
            self.destroy()
            raise
        return self

    def start(self) -> None:
        options = (
            f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c fsync=off "
            "-c synchronous_commit=off -c full_page_writes=off -c max_connections=100"
        )
        self._as_postgres(
            _postgres_bin("pg_ctl"), "-D", str(self.data), "-l", str(self.log),
            "-o", options, "-w", "-t", "60", "start",
        )  # fmt: skip

    def stop(self, mode: str = "fast") -> None:
        self._as_postgres(
            _postgres_bin("pg_ctl"), "-D", str(self.data), "-m", mode, "-w", "stop", check=False
        )

    def url(self, database: str) -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/{database}"

    def create_database(self, name: str) -> None:
        import psycopg

        with psycopg.connect(self.url("postgres"), autocommit=True) as admin:
            admin.execute(f'CREATE DATABASE "{name}"')

    def destroy(self) -> None:
        self.stop("immediate")
        shutil.rmtree(self.root, ignore_errors=True)


class RedisServer:
    """redis-server on a free port, without persistence (a restart loses its queue)."""

    def __init__(self):
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process = None

    def start(self) -> "RedisServer":
        self.process = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1",
             "--save", "", "--appendonly", "no"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        wait_for(self.answers, 20, "redis-server")
        return self

    def answers(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=1) as conn:
                conn.sendall(b"PING\r\n")
                return conn.recv(16).startswith(b"+PONG")
        except OSError:
            return False

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=10)


def app_environment(database_url: str, redis_url: str, static_root: Path, data_dir: Path):
    """The compose file's application environment, pointed at this machine's processes."""
    environment = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("DJANGO_", "PYTEST")) and key not in ("DEBUG",)
    }
    environment.update(
        DEBUG="0",
        SECRET_KEY=SECRET_KEY,
        ALLOWED_HOSTS="127.0.0.1,localhost",
        DATABASE_URL=database_url,
        REDIS_URL=redis_url,
        DATA_DIR=str(data_dir),
        STATIC_ROOT=str(static_root),
        SESSION_COOKIE_SECURE="0",
        CSRF_COOKIE_SECURE="0",
        CLIENT_IP_HEADER="HTTP_X_REAL_IP",
        # every simulated annotator comes from 127.0.0.1
        ENTRY_RATE_LIMIT_PER_HOUR="0",
        DJANGO_SETTINGS_MODULE="config.settings",
        LOG_LEVEL="WARNING",
    )
    return environment


def manage(environment: dict, *arguments: str, timeout: float = 300) -> str:
    run = subprocess.run(
        [sys.executable, "manage.py", *arguments],
        cwd=REPO, env=environment, capture_output=True, text=True, timeout=timeout,
    )  # fmt: skip
    if run.returncode != 0:
        raise RuntimeError(f"manage.py {' '.join(arguments)} failed:\n{run.stdout}{run.stderr}")
    return run.stdout


class Process:
    """A long-running child with its log in a file; stopped by its own pid."""

    def __init__(self, command: list[str], environment: dict, log_path: Path):
        self.command, self.environment, self.log_path = command, environment, log_path
        self.process = None

    def start(self) -> "Process":
        self.log = open(self.log_path, "a")  # closed in stop()
        self.process = subprocess.Popen(
            self.command, cwd=REPO, env=self.environment, stdout=self.log,
            stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
        return self

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def log_text(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except OSError:
            return ""

    def stop(self, sig=signal.SIGTERM, timeout: float = 20) -> None:
        if self.alive():
            os.killpg(self.process.pid, sig)
            try:
                self.process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=10)
        if self.process is not None:
            self.log.close()


def http_get(port: int, path: str, timeout: float = 5, headers: dict | None = None):
    """(status, headers, body bytes) of a plain GET."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request("GET", path, headers=headers or {})
        response = conn.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        conn.close()


def gunicorn(
    environment: dict, log_path: Path, workers: int = 3, app: str = "config.wsgi"
) -> tuple[Process, int]:
    """gunicorn as the compose file's ``web`` runs it (deploy/gunicorn.conf.py)."""
    port = free_port()
    command = [
        str(Path(sys.executable).with_name("gunicorn")), "-c", "deploy/gunicorn.conf.py",
        app, "--bind", f"127.0.0.1:{port}", "--workers", str(workers),
        "--no-control-socket", "--access-logfile", "/dev/null",
    ]  # fmt: skip
    server = Process(command, environment, log_path).start()
    wait_for(lambda: _answers(port), 60, f"gunicorn\n{server.log_text()[-2000:]}", 0.2)
    return server, port


def _answers(port: int) -> bool:
    try:
        return http_get(port, "/healthz", timeout=2)[0] in (200, 503)
    except OSError:
        return False


def nginx_config(upstream_port: int, static_root: Path, folder: Path) -> tuple[Path, int]:
    """deploy/nginx/nginx.conf with this machine's addresses and folders put in."""
    port = free_port()
    text = (REPO / "deploy" / "nginx" / "nginx.conf").read_text()
    replacements = [
        (r"set $app http://web:8000;", f"set $app http://127.0.0.1:{upstream_port};"),
        (r"listen 8080;", f"listen 127.0.0.1:{port};"),
        (r"alias /app/staticfiles/;", f"alias {static_root}/;"),
        (r"alias /usr/share/nginx/errors/;", f"alias {REPO / 'deploy' / 'nginx' / 'errors'}/;"),
        (r"pid /tmp/nginx.pid;", f"pid {folder / 'nginx.pid'};"),
        (r"/tmp/nginx-", f"{folder}/nginx-"),
        (r"access_log /dev/stdout;", f"access_log {folder / 'access.log'};"),
    ]
    for pattern, replacement in replacements:
        text, count = re.subn(re.escape(pattern), replacement, text)
        assert count, f"nginx.conf no longer contains {pattern!r}"
    # workers run as root here: the test folders are private to root
    config = folder / "nginx.conf"
    config.write_text("user root;\n" + text)
    return config, port


def nginx(upstream_port: int, static_root: Path, folder: Path) -> tuple[Process, int]:
    config, port = nginx_config(upstream_port, static_root, folder)
    binary = shutil.which("nginx") or "/usr/sbin/nginx"
    command = [binary, "-c", str(config), "-p", str(folder), "-g", "daemon off;"]
    server = Process(command, dict(os.environ), folder / "nginx.out").start()
    wait_for(lambda: _answers(port), 20, f"nginx\n{server.log_text()[-2000:]}", 0.1)
    return server, port
