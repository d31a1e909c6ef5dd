"""The page's metadata against a set's truth: title, author and date, noisecbr beside trafilatura.

    python benchmarks/metadata.py ../shared/data/wcxb-dev --fold-models runs/recipe-folds

A field matches when the two agree after normalisation: titles and authors as their sequence of
lower-cased words (``\\w+``), dates as the day (``YYYY-MM-DD``, read by htmldate's own date
parser from whatever form the extractor gave); a page whose truth has no value matches when the
extractor gives none. Printed: the share of pages that match, over every page and over the pages
whose truth has a value, per field and extractor, and each extractor's metadata time per page.
"""

from __future__ import annotations

import argparse
import datetime
import json
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from noisecbr.eval.datasets import read_dataset

FIELDS = ("title", "author", "date")
_WORDS = re.compile(r"\w+")
_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")


def normalised(field: str, value: str | None) -> str | None:
    """A field's value as it is compared (None: no value)."""
    if not value or not str(value).strip():
        return None
    value = str(value)
    if field != "date":
        return " ".join(w.lower() for w in _WORDS.findall(value)) or None
    day = _DAY.search(value)
    if day:
        return day.group(0)
    from htmldate.extractors import try_date_expr  # htmldate: trafilatura's date reader

    found = try_date_expr(value, "%Y-%m-%d", True, datetime.datetime(1995, 1, 1),
                          datetime.datetime.now() + datetime.timedelta(days=366))
    return found or value.strip().lower()


def _noisecbr(pages, folds: Path | None = None) -> Callable[[object], dict]:
    """noisecbr's metadata of a page: by the embedded model, or with ``folds`` by the fold model
    that never saw the page's site (the kind it reads decides whether a date is looked for)."""
    from noisecbr_apps.bench import page_cleaner

    cleaner_of = page_cleaner(pages, folds)

    def extract(page) -> dict:
        result = cleaner_of(page).clean(page.html, url=page.url)
        return {"title": result.title, "author": result.author, "date": result.date}

    return extract


def _trafilatura(pages, folds: Path | None = None) -> Callable[[object], dict]:
    from trafilatura import extract_metadata

    def extract(page) -> dict:
        found = extract_metadata(page.html, default_url=page.url)
        if found is None:
            return dict.fromkeys(FIELDS)
        return {"title": found.title, "author": found.author, "date": found.date}

    return extract


EXTRACTORS = {"noisecbr": _noisecbr, "trafilatura": _trafilatura}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dataset", type=Path)
    parser.add_argument("-e", "--extractor", action="append", choices=sorted(EXTRACTORS))
    parser.add_argument("--limit", type=int)
    parser.add_argument("--fold-models", type=Path, help="noisecbr by the fold models in this "
                        "folder (python -m training.crossval DATA --out DIR)")
    args = parser.parse_args()
    pages = list(read_dataset(args.dataset))[: args.limit]
    fields = json.loads((args.dataset / "ground-truth.json").read_text(encoding="utf-8"))
    truths = [{f: normalised(f, fields[page.id].get(f)) for f in FIELDS} for page in pages]
    print(f"{args.dataset.name}: {len(pages)} pages; with a value: "
          + ", ".join(f"{f} {sum(t[f] is not None for t in truths)}" for f in FIELDS))
    print(f"{'extractor':<12} " + " ".join(f"{f + ' all':>10} {f + ' given':>11}" for f in FIELDS)
          + "   ms/page")
    for name in args.extractor or ["noisecbr", "trafilatura"]:
        extract = EXTRACTORS[name](pages, args.fold_models)
        hits = {f: [] for f in FIELDS}
        spent = 0.0
        for page, truth in zip(pages, truths):
            started = time.process_time()
            try:
                found = extract(page)
            except Exception:  # noqa: BLE001 - a page an extractor fails on matches nothing
                found = dict.fromkeys(FIELDS)
            spent += time.process_time() - started
            for f in FIELDS:
                hits[f].append((truth[f], normalised(f, found[f])))
        cells = []
        for f in FIELDS:
            every = sum(t == p for t, p in hits[f]) / len(hits[f])
            given = [(t, p) for t, p in hits[f] if t is not None]
            matched = sum(t == p for t, p in given) / max(len(given), 1)
            cells.append(f"{every:>10.3f} {matched:>11.3f}")
        print(f"{name:<12} " + " ".join(cells) + f"   {spent / len(pages) * 1000:8.1f}")


if __name__ == "__main__":
    main()
