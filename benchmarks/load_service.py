"""Load `noisecbr serve` on loopback: N concurrent clients post dev pages to /clean.

Starts `noisecbr serve --workers W` on a free loopback port (read-only: no case base), sends
REQUESTS pages of a dev set (cycled) from CLIENTS threads, each on its own keep-alive
connection, and reports requests/s, p50 / p99 latency (wall clock, as a client sees it), the
server's CPU time per request, its RSS (all its processes) at start, half-way and at the end,
and the number of errors (answers other than 200), the slowest answer and the count of each
status. Then it sends bad requests (a body over the
limit, malformed JSON, a binary body, a non-HTML type) and reports their statuses: none may be
a 500. Exit status 1 when any request errs.

Run from the repository root (needs the serve extra):

    python benchmarks/load_service.py [--workers 2] [--clients 16] [--requests 2000]
        [--data /work/shared/data/modernweb-dev]
"""

from __future__ import annotations

import argparse
import collections
import gzip
import http.client
import itertools
import json
import os
import select
import socket
import statistics
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

DEFAULT_DATA = Path(os.environ.get("NOISECBR_SHARED_DATA", "/work/shared/data")) / "modernweb-dev"
#: Distinct pages sent (cycled): enough variety, read in well under a second.
PAGES = 300
#: The server's default body limit; a larger page is not a load-test request.
MAX_BODY = 10_000_000
START_WAIT = 90
#: Bytes sent at a time by the bad-request client (it checks for an early answer between).
SEND_PIECE = 65_536
#: Requests sent before the measurement: every pool process has loaded the model and cleaned.
WARM_UP = 32


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _tree(pid: int) -> list[int]:
    """``pid`` and every process below it (from /proc)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            children.setdefault(int(fields[1]), []).append(int(entry.name))
    out, todo = [], [pid]
    while todo:
        current = todo.pop()
        out.append(current)
        todo.extend(children.get(current, []))
    return out


def _rss_and_cpu(pid: int) -> tuple[float, float]:
    """RSS (MB) and CPU seconds (user + system) summed over the server's processes."""
    rss, cpu, tick = 0, 0.0, os.sysconf("SC_CLK_TCK")
    for process in _tree(pid):
        try:
            status = Path(f"/proc/{process}/status").read_text()
            fields = Path(f"/proc/{process}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        rss += next((int(line.split()[1]) for line in status.splitlines()
                     if line.startswith("VmRSS:")), 0)
        cpu += (int(fields[11]) + int(fields[12])) / tick
    return rss / 1024, cpu


def _pages(data: Path) -> list[bytes]:
    files = sorted((data / "html").glob("*.html.gz"))[:PAGES]
    pages = [gzip.decompress(path.read_bytes()) for path in files]
    return [page for page in pages if len(page) <= MAX_BODY]


def _start(workers: int, port: int) -> subprocess.Popen:
    process = subprocess.Popen(
        [sys.executable, "-m", "noisecbr_apps.cli", "serve", "--workers", str(workers), "--port",
         str(port), "--log-level", "warning"], stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + START_WAIT
    while time.monotonic() < deadline:
        try:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            connection.request("GET", "/healthz")
            if connection.getresponse().status == 200:
                return process
        except OSError:
            time.sleep(0.3)
    process.kill()
    raise SystemExit("the server did not start")


class Client(threading.local):
    """One keep-alive connection per client thread."""

    def post(self, port: int, body: bytes) -> tuple[int, float]:
        """Post a page to /clean: (status, 0 when the connection failed; seconds)."""
        if getattr(self, "connection", None) is None:
            self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        started = time.perf_counter()
        try:
            self.connection.request("POST", "/clean?format=text", body=body,
                                    headers={"Content-Type": "text/html"})
            answer = self.connection.getresponse()
            answer.read()
            return answer.status, time.perf_counter() - started
        except (OSError, http.client.HTTPException):
            self.connection.close()
            self.connection = None
            return 0, time.perf_counter() - started


def _send(port: int, body: bytes, content_type: str, chunked: bool = False) -> int:
    """Post ``body`` as a careful client does: stop sending when the server has answered
    (it answers an oversized body early), then read the status; 0 if no answer came."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    connection.putrequest("POST", "/clean")
    connection.putheader("Content-Type", content_type)
    if chunked:
        connection.putheader("Transfer-Encoding", "chunked")
    else:
        connection.putheader("Content-Length", str(len(body)))
    connection.endheaders()
    try:
        for start in range(0, len(body), SEND_PIECE):
            if select.select([connection.sock], [], [], 0)[0]:
                break  # answered already
            piece = body[start:start + SEND_PIECE]
            connection.sock.sendall(b"%x\r\n%s\r\n" % (len(piece), piece) if chunked
                                    else piece)
        else:
            if chunked:
                connection.sock.sendall(b"0\r\n\r\n")
        return connection.getresponse().status
    except (OSError, http.client.HTTPException):
        return 0
    finally:
        connection.close()


def _bad_requests(port: int) -> dict[str, int]:
    """Statuses of requests no server may answer with a 500."""
    oversized = b"<p>" + b"x" * 11_000_000
    return {
        "oversized, 11 MB with Content-Length": _send(port, oversized, "text/html"),
        "oversized, 11 MB chunked": _send(port, oversized, "text/html", chunked=True),
        "malformed JSON": _send(port, b'{"html": "<p>x</p>", ', "application/json"),
        "JSON without html": _send(port, b'{"url": "https://a.test/"}', "application/json"),
        "binary body": _send(port, bytes(range(256)) * 64, "text/html"),
        "not HTML (image/png)": _send(port, b"\x89PNG\r\n\x1a\n", "image/png"),
    }


def main() -> int:
    """Start the server, load it, print the report; 1 when a request erred."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--requests", type=int, default=2_000)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    args = parser.parse_args()
    pages = _pages(args.data)
    if not pages:
        raise SystemExit(f"no pages under {args.data}/html")
    port = _free_port()
    server = _start(args.workers, port)
    try:
        return _run(args, pages, port, server.pid)
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()


def _run(args: argparse.Namespace, pages: list[bytes], port: int, pid: int) -> int:
    client = Client()
    rss_idle = _rss_and_cpu(pid)[0]
    with ThreadPoolExecutor(args.clients) as pool:
        list(pool.map(lambda body: client.post(port, body), pages[:WARM_UP]))
    rss_start, cpu_start = _rss_and_cpu(pid)
    statuses: list[int] = []
    latencies: list[float] = []
    rss_half = [0.0]
    bodies = list(itertools.islice(itertools.cycle(pages), args.requests))

    def one(index_body: tuple[int, bytes]) -> None:
        index, body = index_body
        status, seconds = client.post(port, body)
        statuses.append(status)
        latencies.append(seconds)
        if index == args.requests // 2:
            rss_half[0] = _rss_and_cpu(pid)[0]

    started = time.perf_counter()
    with ThreadPoolExecutor(args.clients) as pool:
        list(pool.map(one, enumerate(bodies)))
    wall = time.perf_counter() - started
    rss_end, cpu_end = _rss_and_cpu(pid)
    errors = sum(status != 200 for status in statuses)
    cuts = statistics.quantiles(latencies, n=100)
    bad = _bad_requests(port)
    report = {
        "workers": args.workers, "clients": args.clients, "requests": args.requests,
        "distinct_pages": len(pages), "mean_page_kB": round(sum(map(len, pages)) / len(pages)
                                                            / 1000, 1),
        "requests_per_s": round(args.requests / wall, 1), "p50_ms": round(cuts[49] * 1000),
        "p99_ms": round(cuts[98] * 1000), "max_ms": round(max(latencies) * 1000),
        "statuses": dict(collections.Counter(statuses)), "server_cpu_ms_per_request": round(
            (cpu_end - cpu_start) * 1000 / args.requests, 1),
        "rss_mb_idle": round(rss_idle), "rss_mb_before": round(rss_start),
        "rss_mb_half": round(rss_half[0]),
        "rss_mb_end": round(rss_end), "errors": errors, "bad_requests": bad,
    }
    print(json.dumps(report, indent=2))
    no_500 = all(status not in (0, 500) for status in bad.values())
    return 0 if errors == 0 and no_500 else 1


if __name__ == "__main__":
    sys.exit(main())
