"""`noisecbr serve` against slow and vanishing clients, over real sockets: a client slower than
--read-timeout to send its request head loses its connection, one slower to send its body gets
408 (five of each, while the server goes on answering others), a client that goes away is one line in the log (no traceback), and /docs needs no CDN.

The server is `noisecbr serve` itself on a free loopback port, started and stopped here.
"""

from __future__ import annotations

import json
import socket
import time
import urllib.request

import pytest
from conftest import serving

pytest.importorskip("fastapi", reason="the serve extra is not installed")
pytest.importorskip("fastapi_offline", reason="the serve extra is not installed")

#: The read timeout the server is started with (seconds), and how long a test waits past it.
READ_TIMEOUT, SLACK = 2.0, 8.0


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """`noisecbr serve` with a 2 s read timeout; yields (host, port, log path)."""
    log_path = tmp_path_factory.mktemp("serve") / "serve.log"
    with serving(log_path, "--pool", "1", "--read-timeout", str(READ_TIMEOUT),
                 "--log-level", "info") as base:
        yield "127.0.0.1", int(base.rsplit(":", 1)[1]), log_path


def _closed_within(connection: socket.socket, seconds: float) -> tuple[bool, bytes]:
    """Whether the server closed ``connection`` within ``seconds``, and what it sent first."""
    connection.settimeout(seconds)
    received = b""
    try:
        while True:
            chunk = connection.recv(65536)
            if not chunk:
                return True, received
            received += chunk
    except (TimeoutError, socket.timeout):
        return False, received
    except ConnectionResetError:
        return True, received


def _healthy(host: str, port: int) -> bool:
    with urllib.request.urlopen(f"http://{host}:{port}/healthz", timeout=5) as answer:
        return json.load(answer)["status"] == "ok"


def test_slow_request_heads_lose_their_connection_and_others_are_served(server):
    host, port, log_path = server
    clients = [socket.create_connection((host, port)) for _ in range(5)]
    started = time.monotonic()
    for client in clients:  # a slowloris: the head, a few bytes at a time, never finished
        client.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n")
    for _ in range(2):
        time.sleep(0.5)
        for client in clients:
            client.sendall(b"X-Slow: 1\r\n")
        assert _healthy(host, port)  # the server keeps answering others meanwhile
    for client in clients:
        closed, _ = _closed_within(client, READ_TIMEOUT + SLACK)
        assert closed, "a slow head kept its connection"
        client.close()
    assert time.monotonic() - started < READ_TIMEOUT + SLACK
    assert "sent no complete request head within 2 s: connection closed" in log_path.read_text()


def _clean(host: str, port: int) -> str:
    request = urllib.request.Request(f"http://{host}:{port}/clean?format=text",
                                     data=b"<p>A short page that is cleaned meanwhile.</p>",
                                     headers={"Content-Type": "text/html"})
    with urllib.request.urlopen(request, timeout=60) as answer:  # a busy CI machine
        return answer.read().decode()


def test_slow_bodies_get_408_while_clean_keeps_answering(server):
    host, port, _ = server
    clients = [socket.create_connection((host, port)) for _ in range(5)]
    for client in clients:
        client.sendall(b"POST /clean HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                       b"Content-Type: text/html\r\nContent-Length: 1000\r\n\r\n<p>a slow")
    for _ in range(3):
        time.sleep(0.5)
        for client in clients:
            client.sendall(b" b")
        assert "cleaned meanwhile" in _clean(host, port)
    for client in clients:
        closed, answer = _closed_within(client, READ_TIMEOUT + SLACK)
        assert answer.startswith(b"HTTP/1.1 408") and b"did not arrive within 2 s" in answer
        assert closed
        client.close()


def test_a_client_that_goes_away_is_one_line_in_the_log(server):
    host, port, log_path = server
    with socket.create_connection((host, port)) as client:
        client.sendall(b"POST /clean HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/html\r\n"
                       b"Content-Length: 100000\r\n\r\n<p>only the start")
        time.sleep(0.3)
    time.sleep(1.0)
    assert _healthy(host, port)
    log = log_path.read_text()
    assert "went away before its answer (POST /clean)" in log
    assert "Traceback" not in log and "Exception in ASGI application" not in log


def test_the_api_docs_are_served_from_disk(server):
    host, port, _ = server
    with urllib.request.urlopen(f"http://{host}:{port}/docs", timeout=5) as answer:
        page = answer.read().decode()
    assert "cdn" not in page.lower() and "/static-offline-docs/swagger-ui-bundle.js" in page
    for name in ("swagger-ui-bundle.js", "swagger-ui.css", "redoc.standalone.js"):
        with urllib.request.urlopen(f"http://{host}:{port}/static-offline-docs/{name}",
                                    timeout=5) as answer:
            assert answer.status == 200 and len(answer.read()) > 10_000, name
