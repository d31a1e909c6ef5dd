"""Write a crawl of the development pages as WARC files, for the scale figures of docs/crawl.md.

    python benchmarks/make_warc.py ../shared/data -o /tmp/crawl --files 4

Every page of modernweb-dev and dragnet (2 171) becomes a ``response`` record with plausible
HTTP headers (status, Date, Server, Content-Type with charset, Content-Length; every fourth
page gzip content-encoded and chunked, as servers send them), dealt round-robin into ``--files``
``.warc.gz`` files (Spark parallelises over files, as cc-pyspark does). The record's URL is the
page's URL from the ground truth.
"""

from __future__ import annotations

import argparse
import gzip
import json
from email.utils import formatdate
from pathlib import Path

from noisecbr_apps.crawl.warc import response_record

#: The sets read by default: the dev sets we may measure on (not the public benchmarks).
SETS = ("modernweb-dev", "dragnet")
#: Every n-th page is sent gzip-encoded and chunked, as many servers send pages.
ENCODED_EVERY = 4
#: A fixed crawl time (2026-01-01): the headers, not the clock, vary between records.
CRAWL_TIME = 1767225600


def _chunked(body: bytes, size: int = 8192) -> bytes:
    chunks = [body[i:i + size] for i in range(0, len(body), size)]
    return b"".join(b"%x\r\n%s\r\n" % (len(chunk), chunk) for chunk in chunks) + b"0\r\n\r\n"


def record(url: str, page: bytes, n: int) -> bytes:
    """The response record of the n-th page."""
    headers = [("Date", formatdate(CRAWL_TIME + n, usegmt=True)), ("Server", "nginx"),
               ("Content-Type", "text/html; charset=utf-8")]
    if n % ENCODED_EVERY == 0:
        body = _chunked(gzip.compress(page, mtime=0))
        headers += [("Content-Encoding", "gzip"), ("Transfer-Encoding", "chunked")]
    else:
        body = page
        headers.append(("Content-Length", str(len(page))))
    return response_record(url, body, headers)


def main() -> None:
    """Write the WARC files and print how many pages went in."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data", type=Path, help="the folder of the dev sets (../shared/data)")
    parser.add_argument("-o", "--output", type=Path, required=True, help="output folder")
    parser.add_argument("--files", type=int, default=4, help="WARC files to write (4)")
    parser.add_argument("--sets", nargs="+", default=list(SETS))
    args = parser.parse_args()
    args.output.mkdir(parents=True, exist_ok=True)
    outputs = [(args.output / f"dev-{i:02d}.warc.gz").open("wb") for i in range(args.files)]
    n = 0
    try:
        for name in args.sets:
            truth = json.loads((args.data / name / "ground-truth.json").read_text())
            for page_id in sorted(truth):
                path = args.data / name / "html" / f"{page_id}.html.gz"
                url = truth[page_id].get("url") or f"http://dev.invalid/{name}/{page_id}"
                outputs[n % args.files].write(record(url, gzip.decompress(path.read_bytes()), n))
                n += 1
    finally:
        for handle in outputs:
            handle.close()
    print(f"{n} pages in {args.files} WARC files under {args.output}")


if __name__ == "__main__":
    main()
