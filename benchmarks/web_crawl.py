"""A crawl of a loopback site's sitemap with ``noisecbr clean --sitemap``, beside the same pages
cleaned from files, then a crawl killed with SIGKILL and resumed (issue 55).

    python benchmarks/web_crawl.py [--pages 200] [--jobs 2] [--kill-after 40]

The site (tests/websim.py) serves PAGES article pages listed in a sitemap index (a gzipped
sitemap among them), five pages robots.txt forbids, a PDF; a URL list adds a slow page, a
server that stays busy and a missing page, which must fail and be named. Reported: pages/s of
the crawl (fetching and cleaning, ``--delay 0`` as the site is on loopback) and of ``noisecbr
clean`` over the same pages saved as files; every allowed page written, the forbidden ones never
requested; the sitemap crawled again without the failing URLs (whose timeout and retries
are waits of their host's turn); then the kill and the resume: no page lost, none written
twice. Each time includes the command's start (Python, the model).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from websim import serve_site  # noqa: E402  (the tests' loopback site)

ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


def _noisecbr(*arguments: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "noisecbr_apps.cli", *arguments], cwd=ROOT,
                          env=ENV, capture_output=True, text=True, check=False)


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=200)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--kill-after", type=int, default=40,
                        help="rows written before the crawl is killed")
    options = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="web-crawl-"))
    with serve_site(pages=options.pages, slow_seconds=30.0) as site:
        failing = work / "failing.txt"
        failing.write_text("\n".join(site.url(path) for path in (
            "/slow.html", "/always-busy.html", "/missing.html")) + "\n")
        out = work / "crawl.jsonl"
        started = time.perf_counter()
        crawl = _noisecbr("clean", "--sitemap", site.url("/sitemap.xml"), "--urls",
                          str(failing), "--delay", "0", "--timeout", "2", "--retries", "1",
                          "-j", str(options.jobs), "-o", str(out), "-q")
        crawl_seconds = time.perf_counter() - started
        rows = _rows(out)
        allowed = {site.url(f"/page/{n}.html") for n in range(options.pages)}
        written = [row["url"] for row in rows]
        private = [path for path in site.log if path.startswith("/private/")]
        print(f"crawl: exit {crawl.returncode}, {len(rows)} rows in {crawl_seconds:.1f} s "
              f"({len(rows) / crawl_seconds:.1f} pages/s, fetching and cleaning, -j "
              f"{options.jobs})")
        once = set(written) == allowed and len(written) == len(set(written))
        print(f"  every allowed page written once: {once}; forbidden pages requested: "
              f"{len(private)}")
        print("  its summary:\n    " + "\n    ".join(crawl.stderr.strip().splitlines()))

        # The sitemap alone: the pace of fetching and cleaning, without the failures' waits.
        alone = work / "alone.jsonl"
        started = time.perf_counter()
        _noisecbr("clean", "--sitemap", site.url("/sitemap.xml"), "--delay", "0", "-j",
                  str(options.jobs), "-o", str(alone), "-q")
        alone_seconds = time.perf_counter() - started
        print(f"sitemap alone: {len(_rows(alone))} rows in {alone_seconds:.1f} s "
              f"({len(_rows(alone)) / alone_seconds:.1f} pages/s, fetching and cleaning)")

        # The same pages from files: what cleaning alone costs.
        folder = work / "pages"
        folder.mkdir()
        for n in range(options.pages):
            with urllib.request.urlopen(site.url(f"/page/{n}.html")) as response:  # noqa: S310
                (folder / f"{n}.html").write_bytes(response.read())
        started = time.perf_counter()
        files = _noisecbr("clean", str(folder), "-o", str(work / "cleaned"), "-j",
                          str(options.jobs), "-q")
        file_seconds = time.perf_counter() - started
        print(f"files: exit {files.returncode}, {options.pages} pages in {file_seconds:.1f} s "
              f"({options.pages / file_seconds:.1f} pages/s, cleaning alone, -j {options.jobs})")

        # Killed mid-crawl, then resumed.
        resumed_out = work / "resumed.jsonl"
        command = [sys.executable, "-m", "noisecbr_apps.cli", "clean", "--sitemap",
                   site.url("/sitemap.xml"), "--delay", "0.02", "-j", str(options.jobs),
                   "-o", str(resumed_out), "-q"]
        process = subprocess.Popen(command, cwd=ROOT, env=ENV, stderr=subprocess.DEVNULL)
        while (not resumed_out.exists()
               or resumed_out.read_bytes().count(b"\n") < options.kill_after):
            if process.poll() is not None:
                sys.exit("the crawl ended before it could be killed: raise --pages")
            time.sleep(0.02)
        os.kill(process.pid, signal.SIGKILL)
        process.wait()
        at_kill = resumed_out.read_bytes()
        cut = not at_kill.endswith(b"\n")
        rows_at_kill = at_kill.count(b"\n")
        resume = subprocess.run([*command, "--resume"], cwd=ROOT, env=ENV,
                                capture_output=True, text=True, check=False)
        urls = [row["url"] for row in _rows(resumed_out)]
        print(f"kill -9 after {rows_at_kill} rows (a row cut short: {cut}); resume: "
              f"exit {resume.returncode}, {len(urls)} rows, {len(set(urls))} distinct, every "
              f"allowed page: {set(urls) == allowed}")
        print("  " + next((line for line in resume.stderr.splitlines() if "--resume" in line),
                          "(no resume line)"))


if __name__ == "__main__":
    main()
