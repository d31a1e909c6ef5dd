"""CPU milliseconds per page of each stage of ``Cleaner.clean``, median and mean over a set.

    python benchmarks/stages.py ../shared/data/dragnet
    python benchmarks/stages.py ../shared/data/modernweb-dev --limit 300

The stages as ``Cleaner.clean`` runs them: tidy (decode + parse + remove the invisible), the
element table, the vectors, the network (scores, with the cleaner's one BLAS thread), the walk
(with the fallback), the page's metadata and headline, the text (and comments), and freeing the
page's tree and table. Every page is cleaned once to warm the caches,
then timed (``time.process_time``) a second time.
"""

from __future__ import annotations

import argparse
import gzip
import statistics
import time
from pathlib import Path

import numpy as np

from noisecbr.cleaner import Cleaner, _blas_controller, _result
from noisecbr.fallback import FALLBACK_MIN_WORDS, fall_back, fallback_subtree, kept_words
from noisecbr.metadata import headline_element, page_metadata
from noisecbr.subtrees import build_table
from noisecbr.tidy import InputError, tidy
from noisecbr.vectors import vectorize

STAGES = ("tidy", "table", "vectors", "network", "walk", "metadata", "text", "free")


def _walk(cleaner: Cleaner, table, proba: np.ndarray) -> tuple[np.ndarray, bool]:
    """The walk and the fallback, as Cleaner.finish runs them."""
    decision = cleaner.walk(table, proba)
    if kept_words(table, decision) < FALLBACK_MIN_WORDS:
        root = fallback_subtree(table, proba)
        if root is not None:
            return fall_back(table, cleaner.walk(table, proba, start=root), root), True
    return decision, False


def time_page(cleaner: Cleaner, html: bytes) -> dict[str, float]:
    """CPU ms of each stage for one page (the same steps as Cleaner.clean_body and finish)."""
    clock = time.process_time
    ms: dict[str, float] = {}
    start = clock()

    def lap(stage: str) -> None:
        nonlocal start
        now = clock()
        ms[stage] = (now - start) * 1000
        start = now

    body = tidy(html)
    lap("tidy")
    table = build_table(body)
    lap("table")
    vectors = vectorize(table)
    lap("vectors")
    with _blas_controller().limit(limits=1, user_api="blas"):
        cleaner.model.predict_proba(vectors)
    lap("network")
    proba = cleaner.scores(table)  # the padded scores the cleaner walks (computed again: untimed)
    start = clock()
    decision, fell_back = _walk(cleaner, table, proba)
    lap("walk")
    metadata = page_metadata(body)
    headline = headline_element(body, metadata.title)
    lap("metadata")
    _result(table, body, decision, proba, None, metadata, headline, fell_back,
            cleaner.comments, None, None)
    lap("text")
    del body, table, vectors, proba, decision
    lap("free")
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
