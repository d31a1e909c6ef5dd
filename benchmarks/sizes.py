"""Time and peak memory of cleaning big and hostile pages, each case in its own process.

    python benchmarks/sizes.py [--code DIR] [--cases NAME,...] [--limit-gb G]

Cases (issue 17): 1, 10 and 50 MB of small paragraphs; 10^5 hidden elements; one tag with 10^5
attributes; a 1 GB gzip bomb given to ``noisecbr clean`` as a .gz file; (issue 32) 10^5 sibling
``br``, ``a``, ``img``, ``td`` and ``li`` elements. Each case runs in a fresh
``python`` child: the wall and CPU time of the clean (import excluded) and the child's peak RSS
(its own ru_maxrss) are printed as a Markdown table with the outcome (characters of text
kept, or the error the page raised).

``--code DIR`` puts DIR first on the children's PYTHONPATH: point it at an export of another
revision (``git archive main | tar -x -C /tmp/main``) to measure that code. ``--limit-gb``
caps each child's address space (RLIMIT_AS), so that old code cannot eat the shared machine: a
case that needs more reports a MemoryError.
"""

from __future__ import annotations

import argparse
import gzip
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

#: One small paragraph: ~40 bytes, as in a long forum or log page.
PARAGRAPH = b"<p>Lorem ipsum dolor sit amet, elit.</p>\n"
#: A tiny one (18 bytes): the most elements per megabyte a page of text can have.
TINY_PARAGRAPH = b"<p>Some text.</p>\n"

#: The child: clean the page (a file; .gz through the CLI's reader), touch every attribute of
#: the result, print "wall-seconds cpu-seconds peak-RSS-MB outcome".
CHILD = r"""
import resource, sys, time
import noisecbr
from noisecbr_apps.cli import _read
path = sys.argv[1]
t0, c0 = time.perf_counter(), time.process_time()
try:
    data = _read(path)
    result = noisecbr.clean(data)
    outcome = f"{len(result.text):,} chars kept, html {len(result.html):,} B"
except Exception as error:
    outcome = f"{type(error).__name__}: {str(error)[:70]}"
wall, cpu = time.perf_counter() - t0, time.process_time() - c0
# The process's own peak resident set (KiB on Linux), imports included.
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(f"{wall:.2f} {cpu:.2f} {rss:.0f} {outcome}")
"""


def paragraphs(megabytes: float, paragraph: bytes = PARAGRAPH) -> bytes:
    """A page of at most ``megabytes`` MB (10^6 bytes) of paragraphs."""
    start, end = b"<html><body>\n", b"</body></html>\n"
    count = int((megabytes * 1_000_000 - len(start) - len(end)) / len(paragraph))
    return start + paragraph * count + end


def hidden_elements(count: int = 100_000) -> bytes:
    return (b"<html><body><div>" + b"<span hidden>x</span> text " * count
            + b"</div></body></html>")


def many_attributes(count: int = 100_000) -> bytes:
    attributes = b" ".join(b"a%d=1" % i for i in range(count))
    return b"<html><body><div " + attributes + b">text</div></body></html>"


def siblings(markup: bytes, count: int = 100_000) -> bytes:
    """``count`` copies of ``markup`` side by side in one ``<div>`` (issue 32: 3 s CPU once)."""
    return b"<html><body><div>" + markup * count + b"</div></body></html>"


def gzip_bomb(path: Path, gigabytes: float = 1.0) -> None:
    """A .gz of one page of ``gigabytes`` (a paragraph, then spaces), written in chunks."""
    chunk = b" " * 16_000_000
    with gzip.open(path, "wb", compresslevel=9) as handle:
        handle.write(b"<html><body><p>bomb</p>")
        for _ in range(int(gigabytes * 1e9 / len(chunk))):
            handle.write(chunk)


CASES = {
    "1MB-paragraphs": lambda p: p.write_bytes(paragraphs(1)),
    "10MB-paragraphs": lambda p: p.write_bytes(paragraphs(10)),
    # 49.9: under the 50 MB limit of the code before issue 17, so that it was measured.
    "50MB-paragraphs": lambda p: p.write_bytes(paragraphs(49.9)),
    "10MB-tiny-paragraphs": lambda p: p.write_bytes(paragraphs(10, TINY_PARAGRAPH)),
    "1e5-hidden": lambda p: p.write_bytes(hidden_elements()),
    "1e5-attributes": lambda p: p.write_bytes(many_attributes()),
    "1GB-gzip-bomb": gzip_bomb,
    "1e5-br-siblings": lambda p: p.write_bytes(siblings(b"<br>")),
    "1e5-a-siblings": lambda p: p.write_bytes(siblings(b'<a href="/x">x</a>')),
    "1e5-img-siblings": lambda p: p.write_bytes(siblings(b'<img src="/i.png">')),
    "1e5-td-siblings": lambda p: p.write_bytes(
        b"<html><body><table><tr>" + b"<td>x</td>" * 100_000 + b"</tr></table></body></html>"),
    "1e5-li-siblings": lambda p: p.write_bytes(
        b"<html><body><ul>" + b"<li>item</li>" * 100_000 + b"</ul></body></html>"),
}


def run_case(path: Path, code: str | None, limit_gb: float | None) -> str:
    """The child's output line: wall s, CPU s, peak RSS MB, outcome."""
    env = dict(os.environ)
    if code:
        env["PYTHONPATH"] = code + os.pathsep + env.get("PYTHONPATH", "")

    def limit() -> None:
        if limit_gb:
            cap = int(limit_gb * 2**30)
            resource.setrlimit(resource.RLIMIT_AS, (cap, cap))

    # cwd: not this checkout, whose noisecbr/ would shadow --code (python -c puts the working
    # directory first on sys.path).
    child = subprocess.run([sys.executable, "-c", CHILD, str(path)], env=env, cwd=path.parent,
                           capture_output=True, preexec_fn=limit, check=False)
    lines = child.stdout.decode().strip()
    if lines:
        return lines
    last = (child.stderr.decode().strip().splitlines() or ["no output"])[-1]
    return f"- - - died (exit {child.returncode}): {last[:60]}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--code", help="directory put first on the children's PYTHONPATH")
    parser.add_argument("--cases", default=",".join(CASES), help="comma-separated case names")
    parser.add_argument("--limit-gb", type=float, default=None,
                        help="address-space cap of each child (GB)")
    parser.add_argument("--inputs", type=Path,
                        default=Path(tempfile.gettempdir()) / "noisecbr-sizes",
                        help="where the generated inputs are kept between runs")
    args = parser.parse_args()
    args.inputs.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PYTHONPATH": args.code or ""}
    where = subprocess.run([sys.executable, "-c", "import noisecbr; print(noisecbr.__file__)"],
                           env=env, cwd=args.inputs, capture_output=True, text=True, check=True)
    print(f"code: {where.stdout.strip()}; cap: {args.limit_gb or 'none'} GB\n")
    print("| case | input | wall s | CPU s | peak RSS MB | outcome |")
    print("|---|---|---|---|---|---|")
    for name in args.cases.split(","):
        path = args.inputs / (name + (".html.gz" if "gzip" in name else ".html"))
        if not path.exists():
            CASES[name](path)
        wall, cpu, rss, outcome = run_case(path, args.code, args.limit_gb).split(" ", 3)
        size = path.stat().st_size / 1e6
        print(f"| {name} | {size:.1f} MB | {wall} | {cpu} | {rss} | {outcome} |",
              flush=True)


if __name__ == "__main__":
    main()
