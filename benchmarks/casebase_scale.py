"""The case base at scale: bytes a stored page takes, and explaining pages from a large base.

    python benchmarks/casebase_scale.py size ../shared/data/wcxb-dev --limit 40
    python benchmarks/casebase_scale.py explain DB ../shared/data/wcxb-dev --pages 20
    python benchmarks/casebase_scale.py service DB ../shared/data/wcxb-dev --pages 20
    python benchmarks/casebase_scale.py recall DB ../shared/data/wcxb-dev --pages 5

``size`` imports the first N pages of a dataset into a new SQLite case base and prints the
file's bytes per page (after the write-ahead log is folded in) and what the tables take.
``explain`` opens the nearest-case index of DB (building it the first time: run it twice to
see both), then explains the first N pages of a dataset with ``k = 3`` in this process,
printing the time per page and the process's peak resident memory. ``recall`` compares the
approximate index's top 3 with the exact search on those pages' subtrees (the exact search
holds every embedding in memory: a few GB at millions of cases).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def _rss_mb() -> float:
    """Peak resident memory of this process so far (MB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _current_rss_mb() -> float:
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def size(dataset: Path, limit: int, jobs: int) -> None:
    import sqlite3

    from casebase.importer import import_dataset
    from casebase.store import CaseBase

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "cb.sqlite"
        cb = CaseBase.open(f"sqlite:///{path}")
        started = time.perf_counter()
        with cb.session() as session:
            report = import_dataset(session, dataset, limit=limit, jobs=jobs, oracle=False)
        seconds = time.perf_counter() - started
        cb.close()
        connection = sqlite3.connect(path)
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        pages = connection.execute("SELECT COUNT(*) FROM pages").fetchone()[0]
        cases = connection.execute("SELECT COUNT(*) FROM cases").fetchone()[0]
        total = path.stat().st_size
        print(f"{dataset.name}: {pages} pages, {cases:,} cases, {total / 2**20:.1f} MB: "
              f"{total / pages / 1024:.1f} KB a page, {total / cases:.0f} bytes a case; "
              f"import {report.read / seconds:.1f} pages/s with {jobs} worker(s)")
        try:
            for name, used in connection.execute(
                    "SELECT name, SUM(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC LIMIT 5"):
                print(f"  {name:<28} {used / pages / 1024:8.1f} KB a page")
        except sqlite3.OperationalError:
            pass  # a SQLite built without dbstat
        blobs = connection.execute(
            "SELECT AVG(LENGTH(html)), AVG(LENGTH(truth)), AVG(LENGTH(vectors)), "
            "AVG(LENGTH(outline)) FROM pages").fetchone()
        print("  a page's html {:.1f} KB, truth {:.1f} KB, vectors {:.1f} KB, outline {:.1f} KB"
              .format(*(b / 1024 for b in blobs)))
        connection.close()


def _pages(dataset: Path, count: int) -> list:
    from noisecbr.eval.datasets import read_dataset

    pages = []
    for page in read_dataset(dataset):
        pages.append(page)
        if len(pages) >= count:
            break
    return pages


def explain(db: str, dataset: Path, count: int, mode: str) -> None:
    from casebase.neighbours import open_index
    from casebase.retrieve import explain_page
    from casebase.store import CaseBase
    from noisecbr.cleaner import default_model

    pages = _pages(dataset, count)
    cb = CaseBase.open(db)
    model = default_model()
    started = time.perf_counter()
    index = open_index(cb, model, mode=mode, progress=True)
    opened = time.perf_counter() - started
    print(f"index ({type(index).__name__}) of {len(index):,} cases opened in {opened:.2f} s; "
          f"peak RSS {_rss_mb():.0f} MB")
    times, subtrees = [], 0
    for page in pages:
        started = time.perf_counter()
        explanations = explain_page(index, cb, page.html, url=page.url or None, k=3)
        times.append(time.perf_counter() - started)
        subtrees += len(explanations)
    times.sort()
    print(f"explain -k 3 of {len(pages)} pages ({subtrees / len(pages):.0f} subtrees a page): "
          f"median {1000 * statistics.median(times):.0f} ms, "
          f"p90 {1000 * times[int(0.9 * (len(times) - 1))]:.0f} ms, "
          f"max {1000 * times[-1]:.0f} ms; peak RSS {_rss_mb():.0f} MB, "
          f"now {_current_rss_mb():.0f} MB")
    cb.close()


def service(db: str, dataset: Path, count: int) -> None:
    """The review page's neighbours: ``POST /explain`` of the service on DB, timed per page
    after a first request (which opens the index in the service's worker)."""
    from fastapi.testclient import TestClient

    from noisecbr_apps.service.app import Settings, create_app

    pages = _pages(dataset, count + 1)
    with TestClient(create_app(Settings(db=db))) as client:
        def ask(page):
            started = time.perf_counter()
            answer = client.post("/explain", json={
                "html": page.html.decode("utf-8", "replace"), "url": page.url or None,
                "options": {"k": 3}})
            answer.raise_for_status()
            return time.perf_counter() - started

        first = ask(pages[0])
        times = sorted(ask(page) for page in pages[1:])
    print(f"POST /explain (k 3): first {first:.2f} s (opens the index); then {len(times)} pages:"
          f" median {1000 * statistics.median(times):.0f} ms, "
          f"p90 {1000 * times[int(0.9 * (len(times) - 1))]:.0f} ms")


def recall(db: str, dataset: Path, count: int) -> None:
    import numpy as np

    from casebase.neighbours import ApproximateIndex, index_directory
    from casebase.retrieve import CaseIndex
    from casebase.store import CaseBase
    from noisecbr.cleaner import Cleaner, default_model
    from noisecbr.features import vectorize

    cb = CaseBase.open(db)
    model = default_model()
    approximate = ApproximateIndex.open(cb, model, index_directory(cb))
    exact = CaseIndex.build(cb, model)
    cleaner = Cleaner(model)
    total = 0
    gaps, shortfalls = [], []
    for page in _pages(dataset, count):
        vectors = vectorize(cleaner.prepare(page.html, url=page.url or None).table)
        exact_ids, exact_sim = exact.nearest_cases(vectors, 3)
        ids, sim = approximate.nearest_cases(vectors, 3)
        # A neighbour counts as found when its exact similarity reaches the exact third's
        # (identical vectors are frequent: another case of the same vector is as near). The
        # index's own similarities come from 16-bit codes: their error is the gap printed.
        true = np.array(exact.similarity_to(vectors, [row[row >= 0].tolist() for row in ids]),
                        dtype=object)
        for row, third in zip(true, exact_sim[:, -1].tolist()):
            shortfalls += [max(0.0, third - value) for value in row]
        total += sim.size
        gaps.append(np.abs(sim[:, 0] - exact_sim[:, 0]))
    gap, short = np.concatenate(gaps), np.array(shortfalls)
    found = ", ".join(f"{(short <= tolerance).mean():.4f} within {tolerance:g}"
                      for tolerance in (1e-6, 1e-3, 1e-2))
    print(f"{total // 3:,} queries: a neighbour of the index is as near as the exact third "
          f"(recall@3): {found}; top-1 similarity as shown against the exact one: mean gap "
          f"{gap.mean():.5f}, max {gap.max():.4f}")
    cb.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("size")
    p.add_argument("dataset", type=Path)
    p.add_argument("--limit", type=int, default=40)
    p.add_argument("-j", "--jobs", type=int, default=2)
    p = sub.add_parser("explain")
    p.add_argument("db")
    p.add_argument("dataset", type=Path)
    p.add_argument("--pages", type=int, default=20)
    p.add_argument("--index", default="auto", choices=["auto", "exact", "approximate"])
    p = sub.add_parser("service")
    p.add_argument("db")
    p.add_argument("dataset", type=Path)
    p.add_argument("--pages", type=int, default=20)
    p = sub.add_parser("recall")
    p.add_argument("db")
    p.add_argument("dataset", type=Path)
    p.add_argument("--pages", type=int, default=5)
    args = parser.parse_args()
    if args.command == "size":
        size(args.dataset, args.limit, args.jobs)
    elif args.command == "explain":
        explain(args.db, args.dataset, args.pages, args.index)
    elif args.command == "service":
        service(args.db, args.dataset, args.pages)
    else:
        recall(args.db, args.dataset, args.pages)


if __name__ == "__main__":
    main()
