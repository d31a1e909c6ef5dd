"""Mining on raw against cleaned pages, as the seed papers measure cleaning (issue 18).

    python -m experiments.mining_eval [--data ../shared/data] [--out docs] [--cache runs/mining]

For modernweb-dev (classes = page type) and dragnet (classes = URL section topic), every
cleaning method of :data:`experiments.mining.methods.METHODS` turns the pages into documents;
then classification across sites, k-means clustering and same-site near-duplicates are
measured on each method's documents (:mod:`experiments.mining.measures`), and the tables and a
plot are written to ``OUT/mining.md`` and ``OUT/mining.png`` (:mod:`experiments.mining.report`).
noisecbr cleans each page with the site-grouped cross-validation model that never saw its site
(five models per set, trained once: the cleaned texts are cached under ``--cache``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path

from experiments.mining.corpus import Corpus, dragnet_corpus, modernweb_corpus
from experiments.mining.evaluate import SetResult, evaluate
from experiments.mining.methods import (
    METHODS,
    MIN_SITE_PAGES,
    FoldCleaners,
    documents,
    method_functions,
)
from experiments.mining.report import write_report

__all__ = ["PREAMBLE", "main", "method_documents", "run"]

#: The generated report's opening: what each method is (the discussion follows the tables).
PREAMBLE = f"""
Each page becomes a document per cleaning method, then a TF-IDF vector (terms: lower-cased
words found on at least two pages). Methods:

- **no cleaning**: the text of the tidied page (`render_text(tidy(html))`);
- **noisecbr (cv)**: `Cleaner(model).clean(html)`, its `.title` then its `.text` (reader
  comments left out), with the model of the site-grouped 5-fold cross-validation that never saw
  the page's site (`training.crossval.fold_models`, default preset: not the embedded model,
  which was trained on these sets);
- **noisecbr + site memory (cv)**: the same cleaner with `memory=memory_from_truth(the other
  pages of the host)`; on one-page hosts it equals noisecbr (cv);
- **site style tree**, **CST weights**, **SiteLevel templates removed**: fitted on all pages of
  the page's host (unsupervised, as in the papers) where the host has ≥ {MIN_SITE_PAGES} pages,
  else the uncleaned text. CST weights replace the term counts (the IJCAI 2003 feature
  weighting) before IDF;
- **trafilatura**, **readability**: `noisecbr_apps.bench.get_extractor`;
- **ground truth (reference)**: the hand-checked main content (`articleBody`): what a perfect
  article extractor would keep. It is a yardstick, not a method.
"""

ROOT = Path(__file__).resolve().parents[1]


def _default_data() -> Path:
    """``$NOISECBR_SHARED_DATA``, else the ``shared/data`` beside the checkout (or beside the
    folder of worktrees it sits in)."""
    if os.environ.get("NOISECBR_SHARED_DATA"):
        return Path(os.environ["NOISECBR_SHARED_DATA"])
    candidates = [ROOT.parent / "shared" / "data", ROOT.parents[1] / "shared" / "data"]
    return next((c for c in candidates if c.is_dir()), candidates[0])


def method_documents(corpus: Corpus, functions: dict, cache: Path | None,
                     methods: Sequence[str] = METHODS) -> dict[str, list]:
    """Each method's documents of the corpus's pages, with the CPU seconds each took."""
    out = {}
    for method in methods:
        start = time.process_time()
        out[method] = documents(corpus, method, functions[method], cache)
        print(f"{corpus.name}: {method}: {time.process_time() - start:.0f} s CPU",
              file=sys.stderr)
    return out


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m experiments.mining_eval",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=_default_data(),
                        help="folder holding modernweb-dev/ and dragnet/")
    parser.add_argument("--out", type=Path, default=ROOT / "docs",
                        help="where mining.md and mining.png go")
    parser.add_argument("--cache", type=Path, default=ROOT / "runs" / "mining",
                        help="cleaned documents and nothing else (delete to recompute)")
    parser.add_argument("--documents-only", action="store_true",
                        help="fill the cache and stop")
    return parser


def main(argv: Sequence[str] | None = None) -> None:
    """Command-line entry point."""
    parser = _parser()
    args = parser.parse_args(argv)
    for name in ("modernweb-dev", "dragnet"):
        if not (args.data / name / "ground-truth.json").is_file():
            parser.error(f"{args.data / name} is not a dataset folder (give --data)")
    corpora = [modernweb_corpus(args.data / "modernweb-dev"),
               dragnet_corpus(args.data / "dragnet")]
    docs = {corpus.name: method_documents(corpus, method_functions(FoldCleaners(corpus)),
                                          args.cache)
            for corpus in corpora}
    if args.documents_only:
        return
    command = " ".join(["python -m experiments.mining_eval", *(argv or sys.argv[1:])])
    run(corpora, docs, args.out, command, args.cache / "mining.json")


def run(corpora: Sequence[Corpus], docs: dict[str, dict[str, list]], out: Path, command: str,
        record: Path | None = None, **settings) -> list[SetResult]:
    """Measure every set's documents and write the report (and, with ``record``, every
    per-fold and per-run value as JSON)."""
    results = []
    for corpus in corpora:
        start = time.process_time()
        results.append(evaluate(corpus, docs[corpus.name], **settings))
        print(f"{corpus.name}: measures: {time.process_time() - start:.0f} s CPU",
              file=sys.stderr)
    path = write_report(results, out, command, PREAMBLE)
    if record is not None:
        record.parent.mkdir(parents=True, exist_ok=True)
        record.write_text(json.dumps([asdict(r) for r in results], indent=1, default=float))
    print(f"wrote {path} and {out / 'mining.png'}", file=sys.stderr)
    return results


if __name__ == "__main__":
    main()
