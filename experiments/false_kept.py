"""What noisecbr keeps that the truth does not: the kept subtrees of unseen sites, by kind.

    python experiments/false_kept.py ../shared/data --models /tmp/recipe/s4-models \\
        --sets fundus utomo-chaos2017 [--show 40]

Every page of the sets is cleaned by the fold model that never saw its site (the folds and
models ``experiments/recipe_cv.py --models`` wrote). Each subtree the walk kept (decided data,
or a leaf kept) whose words are mostly not in the truth (shingle precision under 0.5) is a
*false keep*; they are tallied by the furniture vocabulary their first words belong to (a
dateline, a credit, a "related" heading…), by tag, and the most frequent are shown with their
text, so that what the model cannot see is named before a feature or a rule is written for it.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from noisecbr.cleaner import Cleaner, default_model  # noqa: E402
from noisecbr.eval.datasets import read_dataset, split_truth  # noqa: E402
from noisecbr.eval.metric import shingles, tokens  # noqa: E402
from noisecbr.features.tokens import VOCABULARIES  # noqa: E402
from noisecbr.prepare.tidy import InputError  # noqa: E402
from noisecbr.render.text import render_texts  # noqa: E402
from noisecbr.result import DATA  # noqa: E402
from noisecbr.score.artifact import load_model  # noqa: E402

_VOCABULARY_OF = {w: name for name, words in VOCABULARIES.items() for w in words}


def kind(words: list[str]) -> str:
    """The vocabulary of the first furniture word among a block's first six words."""
    for word in words[:6]:
        found = _VOCABULARY_OF.get(word.lower())
        if found:
            return found
    return "-"


def false_keeps(cleaner: Cleaner, page) -> tuple[list[dict], int]:
    """The page's false keeps and its number of kept shingles."""
    truth = shingles(tokens(split_truth(page.truth)[0]))
    prepared = cleaner.prepare(page.html)
    table = prepared.table
    decided = cleaner.decide(prepared)
    decision, proba = decided.decision, decided.proba
    kept = np.flatnonzero(decision == DATA).tolist()
    texts = [render_texts([table.elements[i]]) for i in kept]
    out, total = [], 0
    for i, text in zip(kept, texts):
        words = tokens(text)
        mine = shingles(words)
        total += sum(mine.values())
        if not mine:
            continue
        hits = sum(min(c, truth.get(s, 0)) for s, c in mine.items())
        if hits / sum(mine.values()) < 0.5:
            out.append({"tag": table.tags[i], "kind": kind(words), "words": len(words),
                        "shingles": sum(mine.values()) - hits, "text": " ".join(words[:14]),
                        "class": (table.keyword_values[0][i] or "")[:40], "page": page.id,
                        "data": round(float(proba[i, DATA]), 2)})
    return out, total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data_dir", type=Path)
    parser.add_argument("--models", type=Path, required=True)
    parser.add_argument("--sets", nargs="+", default=["fundus", "utomo-chaos2017"])
    parser.add_argument("--show", type=int, default=30)
    args = parser.parse_args()
    fold_of = json.loads((args.models / "folds.json").read_text())
    modes = default_model().metadata.get("modes")
    cleaners = {}
    for name in args.sets:
        found, total = [], 0
        for page in read_dataset(args.data_dir / name):
            fold = fold_of[f"{page.dataset}/{page.id}"]
            if fold not in cleaners:
                model = load_model(args.models / f"fold{fold}.safetensors")
                model.metadata.setdefault("modes", modes)
                cleaners[fold] = Cleaner(model)
            try:
                keeps, kept = false_keeps(cleaners[fold], page)
            except InputError:
                continue
            found += keeps
            total += kept
        lost = sum(f["shingles"] for f in found)
        print(f"== {name}: false keeps hold {lost} of {total} kept shingles "
              f"({lost / max(total, 1):.1%}) in {len(found)} subtrees")
        for key in ("kind", "tag"):
            tally = Counter()
            for f in found:
                tally[f[key]] += f["shingles"]
            print(f"  by {key}: " + ", ".join(f"{k} {v / max(total, 1):.1%}"
                                             for k, v in tally.most_common(12)))
        for f in sorted(found, key=lambda f: -f["shingles"])[:args.show]:
            print(f"  {f['shingles']:5d} {f['kind']:>9} {f['tag']:>8} {f['data']:.2f} "
                  f"{f['class']:<28.28} {f['page'][:24]:<24} {f['text'][:90]}")


if __name__ == "__main__":
    main()
