"""CPU milliseconds per page of each stage of ``Cleaner.clean``, median and mean over a set.

    python benchmarks/stages.py ../shared/data/dragnet
    python benchmarks/stages.py ../shared/data/modernweb-dev --limit 300

The stages as ``Cleaner.clean`` runs them: tidy (decode + parse + remove the invisible), the
element table, the vectors, the network (scores, with the cleaner's one BLAS thread), the walk,
the text, and freeing the page's tree and table. Every page is cleaned once to warm the caches,
then timed (``time.process_time``) a second time.
"""

from __future__ import annotations

import argparse
import gzip
import statistics
import time
from pathlib import Path

import numpy as np

from noisecbr.cleaner import NOISE, Cleaner, _blas_controller
from noisecbr.render import render_text
from noisecbr.subtrees import build_table
from noisecbr.tidy import InputError, tidy
from noisecbr.vectors import vectorize

STAGES = ("tidy", "table", "vectors", "network", "walk", "text", "free")


def time_page(cleaner: Cleaner, html: bytes) -> dict[str, float]:
    """CPU ms of each stage for one page (the same steps as Cleaner.clean_body)."""
    clock = time.process_time
    marks = [clock()]
    body = tidy(html)
    marks.append(clock())
    table = build_table(body)
    marks.append(clock())
    vectors = vectorize(table)
    marks.append(clock())
    with _blas_controller().limit(limits=1, user_api="blas"):
        cleaner.model.predict_proba(vectors)
    marks.append(clock())
    # predict() scores the page again: its own time less the vectors' and the network's is
    # the walk's.
    decision, _ = cleaner.predict(table)
    marks.append(clock())
    decided = np.flatnonzero(decision >= 0)
    removed = {table.elements[i] for i in decided[decision[decided] == NOISE].tolist()}
    render_text(body, removed)
    marks.append(clock())
    del body, table, removed, vectors
    marks.append(clock())
    ms = {stage: (b - a) * 1000 for stage, a, b in zip(STAGES, marks[:-1], marks[1:], strict=True)}
    ms["walk"] -= ms["vectors"] + ms["network"]
    ms["total"] = sum(ms[stage] for stage in STAGES)
    return ms


def main() -> None:
    """Print the median and mean ms of every stage."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dataset", type=Path)
    parser.add_argument("--limit", type=int, default=None)
    args = parser.parse_args()
    paths = sorted((args.dataset / "html").glob("*.html.gz"))[: args.limit]
    pages = [gzip.decompress(path.read_bytes()) for path in paths]
    cleaner = Cleaner()
    rows = []
    for html in pages:
        try:
            cleaner.clean(html)
        except InputError:
            continue
        rows.append(time_page(cleaner, html))
    print(f"{args.dataset.name}: {len(rows)} pages, CPU ms per page")
    for stage in (*STAGES, "total"):
        values = [row[stage] for row in rows]
        print(f"  {stage:8s} median {statistics.median(values):6.2f}   "
              f"mean {statistics.mean(values):6.2f}")


if __name__ == "__main__":
    main()
