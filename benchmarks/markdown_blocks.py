"""Markdown structure against wcxb-dev's Markdown truth: F1 per kind of block, noisecbr beside
trafilatura, in one run.

    python benchmarks/markdown_blocks.py ../shared/data/wcxb-dev --fold-models runs/recipe-folds

Each Markdown (the truth's, each extractor's) is parsed by markdown-it-py (CommonMark with GFM
tables) into blocks of four kinds: headings, list items (an item's own text, not its nested
lists'), table rows (a row's cells) and code blocks (fenced or indented). A block is its text's
lower-cased words; per page and kind, the extractor's blocks and the truth's are matched as
multisets and their F1 taken; a kind's figure is the mean over the pages whose truth has blocks
of that kind (how many: the ``pages`` row). An extractor that gives a page no block of a kind
its truth has scores 0 there.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from noisecbr.eval.datasets import read_dataset

KINDS = ("headings", "list items", "table rows", "code blocks")
_WORDS = re.compile(r"\w+")


def blocks(markdown: str) -> dict[str, Counter]:
    """The page's blocks of each kind, as multisets of their normalised texts."""
    from markdown_it import MarkdownIt

    tokens = MarkdownIt("commonmark").enable("table").parse(markdown or "")
    out = {kind: Counter() for kind in KINDS}
    row: list[str] | None = None
    item_depth = 0  # inside list items: an item's first inline is its own text
    item_open = False
    for k, token in enumerate(tokens):
        if token.type == "list_item_open":
            item_depth += 1
            item_open = True
        elif token.type == "list_item_close":
            item_depth -= 1
            item_open = False
        elif token.type == "tr_open":
            row = []
        elif token.type == "tr_close" and row is not None:
            _add(out["table rows"], " ".join(row))
            row = None
        elif token.type in ("fence", "code_block"):
            _add(out["code blocks"], token.content)
        elif token.type == "inline":
            if row is not None:
                row.append(token.content)
            elif k and tokens[k - 1].type == "heading_open":
                _add(out["headings"], token.content)
            elif item_depth and item_open:
                _add(out["list items"], token.content)
                item_open = False
    return out


def _add(counter: Counter, text: str) -> None:
    words = " ".join(w.lower() for w in _WORDS.findall(text))
    if words:
        counter[words] += 1


def _f1(found: Counter, truth: Counter) -> float:
    common = sum((found & truth).values())
    if not common:
        return 0.0
    precision, recall = common / sum(found.values()), common / sum(truth.values())
    return 2 * precision * recall / (precision + recall)


def _noisecbr(pages, folds: Path | None) -> Callable[[object], str]:
    from noisecbr_apps.bench import page_cleaner

    cleaner_of = page_cleaner(pages, folds)
    return lambda page: cleaner_of(page).clean(page.html, url=page.url).markdown


def _trafilatura(pages, folds: Path | None) -> Callable[[object], str]:
    from trafilatura import extract

    return lambda page: extract(page.html, url=page.url, output_format="markdown") or ""


EXTRACTORS = {"noisecbr": _noisecbr, "trafilatura": _trafilatura}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dataset", type=Path)
    parser.add_argument("--fold-models", type=Path, help="noisecbr by the fold models in this "
                        "folder (python -m training.crossval DATA --out DIR)")
    parser.add_argument("--limit", type=int)
    args = parser.parse_args()
    pages = list(read_dataset(args.dataset))[: args.limit]
    fields = json.loads((args.dataset / "ground-truth.json").read_text(encoding="utf-8"))
    truths = [blocks(fields[page.id].get("markdown") or "") for page in pages]
    with_kind = {kind: [i for i, t in enumerate(truths) if t[kind]] for kind in KINDS}
    print(f"{args.dataset.name}: {len(pages)} pages")
    print(f"{'':<12} " + " ".join(f"{kind:>12}" for kind in KINDS))
    print(f"{'pages':<12} " + " ".join(f"{len(with_kind[kind]):>12}" for kind in KINDS))
    for name, make in EXTRACTORS.items():
        extract = make(pages, args.fold_models)
        found = []
        for page in pages:
            try:
                found.append(blocks(extract(page)))
            except Exception:  # noqa: BLE001 - a page an extractor fails on has no blocks
                found.append({kind: Counter() for kind in KINDS})
        cells = [sum(_f1(found[i][kind], truths[i][kind]) for i in with_kind[kind])
                 / max(len(with_kind[kind]), 1) for kind in KINDS]
        print(f"{name:<12} " + " ".join(f"{cell:>12.3f}" for cell in cells))


if __name__ == "__main__":
    main()
