"""`noisecbr serve` against slow and vanishing clients, over real sockets: a client slower than
--read-timeout to send its request head loses its connection, one slower to send its body gets
408 (five of each, while the server goes on answering others), a client that goes away is one
line in the log (no traceback), and /docs needs no CDN.

The server is `noisecbr serve` itself on a free loopback port, started and stopped here.

No test races the server's deadline against the machine's speed (issue 43: a busy machine
stretched the test's own sleeps past it, and a byte written after it broke the pipe). A slow
client writes only until it sees the server's answer or close, and a write refused because the
server closed the connection meanwhile is that close; the deadline is checked from the test's
own clock (not before READ_TIMEOUT after the client connected: the server's clock started
later); and whatever the test waits for, it waits for by polling, up to a bound (WITHIN) that
only a server that never answers reaches.
"""

from __future__ import annotations

import json
import select
import socket
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import serving

pytest.importorskip("fastapi", reason="the serve extra is not installed")
pytest.importorskip("fastapi_offline", reason="the serve extra is not installed")

#: The read timeout the server is started with (seconds).
READ_TIMEOUT = 2.0
#: Seconds the test waits at most for what the server owes it: on a loaded 2-core machine an
#: answer is late by a second or two; past this, the server never answers.
WITHIN = 60.0
#: Seconds between a slow client's bytes.
TRICKLE = 0.5


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """`noisecbr serve` with a 2 s read timeout; yields (host, port, log path)."""
    log_path = tmp_path_factory.mktemp("serve") / "serve.log"
    with serving(log_path, "--pool", "1", "--read-timeout", str(READ_TIMEOUT),
                 "--log-level", "info") as base:
        yield "127.0.0.1", int(base.rsplit(":", 1)[1]), log_path


def _read_to_close(connection: socket.socket) -> tuple[bool, bytes]:
    """What the server sent on ``connection``, and whether it closed it within WITHIN s."""
    connection.settimeout(WITHIN)
    received = b""
    try:
        while chunk := connection.recv(65536):
            received += chunk
    except TimeoutError:
        return False, received
    except ConnectionResetError:
        pass
    return True, received


def _trickle(clients: list[socket.socket], byte: bytes,
             meanwhile: Callable[[], object]) -> dict[socket.socket, float]:
    """Send ``byte`` on every client each TRICKLE s until the server answers or closes it, and
    call ``meanwhile()`` each round; the time (time.monotonic) each client saw that happen.

    A client writes only while nothing has arrived on it; a write the server's close refuses
    (it closed between the look and the write) is that close, not an error."""
    seen: dict[socket.socket, float] = {}
    give_up = time.monotonic() + WITHIN
    while len(seen) < len(clients) and time.monotonic() < give_up:
        waiting = [client for client in clients if client not in seen]
        readable, _, _ = select.select(waiting, [], [], TRICKLE)
        now = time.monotonic()
        for client in waiting:
            if client in readable:
                seen[client] = now
                continue
            try:
                client.sendall(byte)
            except (BrokenPipeError, ConnectionResetError):
                seen[client] = time.monotonic()
        meanwhile()
    return seen


def _logged(log_path: Path, line: str) -> bool:
    """Whether ``line`` is in the server's log within WITHIN s (it may be written late)."""
    give_up = time.monotonic() + WITHIN
    while line not in log_path.read_text():
        if time.monotonic() > give_up:
            return False
        time.sleep(0.1)
    return True


def _healthy(host: str, port: int) -> bool:
    with urllib.request.urlopen(f"http://{host}:{port}/healthz", timeout=WITHIN) as answer:
        return json.load(answer)["status"] == "ok"


def test_slow_request_heads_lose_their_connection_and_others_are_served(server):
    host, port, log_path = server
    started = time.monotonic()  # before the server's clock of each connection starts
    clients = [socket.create_connection((host, port)) for _ in range(5)]
    for client in clients:  # a slowloris: the head, a few bytes at a time, never finished
        client.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n")
    answered = []  # the server keeps answering others meanwhile
    seen = _trickle(clients, b"X-Slow: 1\r\n", lambda: answered.append(_healthy(host, port)))
    assert len(seen) == len(clients), f"a slow head kept its connection for {WITHIN:g} s"
    for client in clients:
        assert seen[client] - started >= READ_TIMEOUT, "closed before the deadline"
        closed, answer = _read_to_close(client)
        assert closed and answer == b"", answer  # closed, no answer: there was no request
        client.close()
    assert answered and all(answered)
    assert _logged(log_path, "sent no complete request head within 2 s: connection closed")


def _clean(host: str, port: int) -> str:
    request = urllib.request.Request(f"http://{host}:{port}/clean?format=text",
                                     data=b"<p>A short page that is cleaned meanwhile.</p>",
                                     headers={"Content-Type": "text/html"})
    with urllib.request.urlopen(request, timeout=WITHIN) as answer:
        return answer.read().decode()


def test_slow_bodies_get_408_while_clean_keeps_answering(server):
    host, port, _ = server
    started = time.monotonic()  # before the server's clock of each request starts
    clients = [socket.create_connection((host, port)) for _ in range(5)]
    for client in clients:  # 1000 bytes declared; 2 every TRICKLE s never get there
        client.sendall(b"POST /clean HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                       b"Content-Type: text/html\r\nContent-Length: 1000\r\n\r\n<p>a slow")
    cleaned = []
    seen = _trickle(clients, b" b", lambda: cleaned.append(_clean(host, port)))
    assert len(seen) == len(clients), f"a slow body got no answer in {WITHIN:g} s"
    assert cleaned and all("cleaned meanwhile" in text for text in cleaned)
    for client in clients:
        # The deadline counts from the request's arrival: bytes trickling in do not extend it.
        assert seen[client] - started >= READ_TIMEOUT, "answered before the deadline"
        closed, answer = _read_to_close(client)
        assert answer.startswith(b"HTTP/1.1 408") and b"did not arrive within 2 s" in answer
        assert closed
        client.close()


def test_a_client_that_goes_away_is_one_line_in_the_log(server):
    host, port, log_path = server
    with socket.create_connection((host, port)) as client:  # gone with its body unsent
        client.sendall(b"POST /clean HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/html\r\n"
                       b"Content-Length: 100000\r\n\r\n<p>only the start")
    assert _logged(log_path, "went away before its answer (POST /clean)")
    assert _healthy(host, port)
    log = log_path.read_text()
    assert "Traceback" not in log and "Exception in ASGI application" not in log


def test_the_api_docs_are_served_from_disk(server):
    host, port, _ = server
    with urllib.request.urlopen(f"http://{host}:{port}/docs", timeout=WITHIN) as answer:
        page = answer.read().decode()
    assert "cdn" not in page.lower() and "/static-offline-docs/swagger-ui-bundle.js" in page
    for name in ("swagger-ui-bundle.js", "swagger-ui.css", "redoc.standalone.js"):
        with urllib.request.urlopen(f"http://{host}:{port}/static-offline-docs/{name}",
                                    timeout=WITHIN) as answer:
            assert answer.status == 200 and len(answer.read()) > 10_000, name
