"""Hashes of every dev page's vectors, decisions, text and whole JSON output: run before and after
a speed change or a refactoring, and the two files must be equal (the change is then
bit-identical on every page).

    python benchmarks/identity.py ../shared/data -o /tmp/before.json   # --every 20: a sample
    # … change the code …
    python benchmarks/identity.py ../shared/data -o /tmp/after.json --compare /tmp/before.json
    NOISECBR_PURE_PYTHON=1 python benchmarks/identity.py …   # the pure Python path's

Only the public API and two stable entry points are called (tidy, Cleaner.clean and the result;
the element table's build_table and the features' vectorize), so one script hashes the code
before and after a change of the engine's inside.

Pages of every development set are hashed (nothing is tuned on
them here: the hashes only say whether the output changed). A page the cleaner refuses is
recorded by its error.
"""

from __future__ import annotations

import argparse
import dataclasses
import gzip
import hashlib
import json
import sys
from pathlib import Path

from noisecbr import Cleaner, InputError, tidy
from noisecbr.features import vectorize

try:  # where the element table is built: the stage folders' home, else the module before them
    from noisecbr.prepare.subtrees import build_table
except ImportError:
    from noisecbr.subtrees import build_table

SETS = ("wcxb-dev", "modernweb-dev", "dragnet", "cleaneval-dev", "readability", "fundus",
        "utomo-chaos2017", "utomo-big9", "chinese-wce")


def page_hashes(cleaner: Cleaner, html: bytes) -> dict[str, str]:
    """SHA-1 of the page's vectors (float32 bytes), decisions (JSON), text, the rest of the
    result (title, author, date, language, comments, fallback) and its whole JSON output (text,
    Markdown, cleaned HTML, decisions with their probabilities)."""
    try:
        vectors = vectorize(build_table(tidy(html)))
        result = cleaner.clean(html)
    except InputError as error:
        return {"error": type(error).__name__}
    decisions = json.dumps([dataclasses.asdict(d) for d in result.decisions])
    return {
        "vectors": hashlib.sha1(vectors.tobytes()).hexdigest(),
        "decisions": hashlib.sha1(decisions.encode()).hexdigest(),
        "text": hashlib.sha1(result.text.encode()).hexdigest(),
        "rest": hashlib.sha1(json.dumps([result.title, result.author, result.date, result.lang,
                                         result.comments, result.fallback]).encode()).hexdigest(),
        "json": hashlib.sha1(result.to_json().encode()).hexdigest(),
    }


def main() -> None:
    """Hash every page; with --compare, list the pages whose hashes differ (exit 1 if any)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data", type=Path)
    parser.add_argument("-o", "--output", type=Path, required=True)
    parser.add_argument("--compare", type=Path, help="an earlier output to compare with")
    parser.add_argument("--every", type=int, default=1, metavar="N",
                        help="every Nth page of each set only (a sample, for CI)")
    args = parser.parse_args()
    cleaner = Cleaner()
    hashes: dict[str, dict[str, str]] = {}
    for name in SETS:
        for path in sorted((args.data / name / "html").glob("*.html.gz"))[::args.every]:
            hashes[f"{name}/{path.name}"] = page_hashes(cleaner, gzip.decompress(
                path.read_bytes()))
    args.output.write_text(json.dumps(hashes, indent=0, sort_keys=True))
    print(f"{len(hashes)} pages hashed into {args.output}")
    if args.compare:
        before = json.loads(args.compare.read_text())
        differ = sorted(k for k in before.keys() | hashes.keys() if before.get(k) != hashes.get(k))
        for key in differ:
            print(f"  differs: {key}")
        print(f"{len(differ)} of {len(hashes)} pages differ")
        sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
