"""Slow clients against the compose setup (nginx in front of gunicorn's 3 sync workers):
sockets that send one header line every 2 s, or trickle a body, must not starve the
workers — ``/healthz`` keeps answering, nginx drops them after its timeouts, and no
gunicorn worker is killed for a timeout."""

import socket
import threading
import time

import pytest

from tests.faults.stack import http_get

pytestmark = pytest.mark.slow

SLOW_HEADERS = 40  # far more than the 3 gunicorn workers
SLOW_BODIES = 10
DURATION_S = 16  # longer than nginx's 10 s header and body timeouts


def _slow_header_client(port: int, outcome: list, stop: threading.Event) -> None:
    """Sends a request header line by line, one every 2 s, never finishing it."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=DURATION_S + 10) as conn:
            conn.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            line = 0
            while not stop.wait(2):
                conn.sendall(f"X-Slow-{line}: {'a' * 10}\r\n".encode())
                line += 1
            outcome.append("header: still open")
    except OSError:
        outcome.append("header: closed by the server")


def _slow_body_client(port: int, outcome: list, stop: threading.Event) -> None:
    """Announces a 100 kB upload and sends 10 bytes of it every 2 s."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=DURATION_S + 10) as conn:
            conn.sendall(
                b"POST /api/v1/batches/x/items HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                b"Content-Type: multipart/form-data; boundary=zz\r\n"
                b"Content-Length: 100000\r\n\r\n"
            )
            while not stop.wait(2):
                conn.sendall(b"x" * 10)
            outcome.append("body: still open")
    except OSError:
        outcome.append("body: closed by the server")


def test_health_keeps_answering_while_slow_clients_hold_connections(fault_stack):
    port = fault_stack.proxy_port
    stop = threading.Event()
    outcome: list[str] = []
    threads = [
        threading.Thread(target=_slow_header_client, args=(port, outcome, stop), daemon=True)
        for _ in range(SLOW_HEADERS)
    ] + [
        threading.Thread(target=_slow_body_client, args=(port, outcome, stop), daemon=True)
        for _ in range(SLOW_BODIES)
    ]
    for thread in threads:
        thread.start()
    latencies = []
    started = time.monotonic()
    try:
        while time.monotonic() - started < DURATION_S:
            asked = time.monotonic()
            status, _, body = http_get(port, "/healthz", timeout=5)
            latencies.append(time.monotonic() - asked)
            assert status == 200, (status, body, fault_stack.logs())
            time.sleep(0.25)
    finally:
        stop.set()
        for thread in threads:
            thread.join(timeout=10)
    print(
        f"[slow clients] {len(latencies)} health checks during {DURATION_S} s with "
        f"{SLOW_HEADERS} slow-header and {SLOW_BODIES} slow-body connections: slowest "
        f"{max(latencies) * 1000:.0f} ms; connections: {sorted(set(outcome))} "
        f"{[outcome.count(kind) for kind in sorted(set(outcome))]}"
    )
    assert max(latencies) < 2.0
    # nginx gave up on every unfinished header after client_header_timeout (10 s); a body
    # that keeps trickling is held by nginx alone (client_body_timeout is between reads)
    assert outcome.count("header: closed by the server") == SLOW_HEADERS, outcome
    assert "WORKER TIMEOUT" not in fault_stack.web.log_text()
