"""How high a ground truth lets the extractors reach, and where noisecbr's precision goes.

    python benchmarks/ceiling.py ../shared/data/dragnet --truth article

Each page is cleaned by noisecbr's site-grouped fold model (``--cv``, as ``noisecbr bench --cv``
trains them), by trafilatura and by readability. Printed:

- each extractor's P / R / F1, and the *oracle* of each combination: every page scored by the
  extractor that did best on it (``noisecbr bench --oracle`` adds the same row to a bench);
- noisecbr's macro precision loss split by who else keeps the false shingles: both peers,
  one of them, or neither (what only noisecbr keeps is what a better noisecbr could drop
  without doing worse than the peers on any shingle);
- F1 by the size of the truth (truths of a headline and a dateline score about 0 for an
  extractor that moves the headline to the title);
- how many truths hold the headline noisecbr moves to ``CleanResult.title``, and F1 with it
  put back in front of the text.
"""

from __future__ import annotations

import argparse
import itertools
import sys

import numpy as np

from noisecbr.decide.walk import AUTO
from noisecbr.eval.metric import aggregate, score_page, shingles, tokens
from noisecbr_apps.bench import bench_pages, best_per_page, cv_models, get_extractor, page_cleaners


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dataset")
    parser.add_argument("--truth", choices=["full", "article"], default="article")
    parser.add_argument("--cv", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    pages, labelled = bench_pages(args.dataset, None, 0, args.truth)
    models = cv_models(labelled, args.cv, args.seed, sys.stderr.isatty())
    cleaners = page_cleaners(pages, models.__getitem__, AUTO, False)
    peers = {name: get_extractor(name) for name in ("trafilatura", "readability")}
    texts: dict[str, list[str]] = {"noisecbr": [], **{name: [] for name in peers}}
    titles = []
    for page in pages:
        result = cleaners[page.id].clean(page.html, url=page.url)
        texts["noisecbr"].append(result.text)
        titles.append(result.title or "")
        for name, extract in peers.items():
            try:
                texts[name].append(extract(page.html, page.url))
            except Exception:  # noqa: BLE001 - a peer's crash is its empty result
                texts[name].append("")
    scores = {name: [score_page(t, p.truth) for t, p in zip(got, pages)]
              for name, got in texts.items()}

    print(f"{len(pages)} pages of {args.dataset}, {args.truth} truth, noisecbr cv {args.cv}")
    for name, got in scores.items():
        print(f"  {name:<40} {aggregate(got)}")
    for size in (2, 3):
        for combo in itertools.combinations(scores, size):
            lists = [scores[name] for name in combo]
            best = [lists[k][i] for i, k in enumerate(best_per_page(lists))]
            print(f"  oracle of {' + '.join(combo):<30} {aggregate(best)}")

    shares = np.zeros((len(pages), 3))  # false shingles kept by both peers, one, neither
    for k, page in enumerate(pages):
        true = shingles(tokens(page.truth))
        kept = shingles(tokens(texts["noisecbr"][k]))
        others = [shingles(tokens(texts[name][k])) for name in peers]
        total = sum(kept.values())
        for gram, count in (kept - true).items():
            shares[k, 2 - sum(other[gram] > 0 for other in others)] += count / total
    loss = shares.mean(axis=0)
    print(f"noisecbr's precision loss {loss.sum():.3f}: false shingles both peers keep too "
          f"{loss[0]:.3f}, one peer {loss[1]:.3f}, neither {loss[2]:.3f}")

    words = np.array([len(tokens(page.truth)) for page in pages])
    for low, high in ((0, 25), (25, 50), (50, 200), (200, 10**9)):
        band = (words >= low) & (words < high)
        cells = "  ".join(f"{name} {aggregate([s for s, b in zip(got, band) if b]).f1:.3f}"
                          for name, got in scores.items())
        print(f"  truth of {low}-{high if high < 10**9 else '…'} words: {band.sum():4d} pages  "
              f"{cells}")

    named = [k for k, title in enumerate(titles) if len(tokens(title)) >= 3]
    held = sum(" ".join(tokens(titles[k])) in " ".join(tokens(pages[k].truth)) for k in named)
    with_title = [score_page(f"{t}\n\n{x}" if t else x, p.truth)
                  for t, x, p in zip(titles, texts["noisecbr"], pages)]
    print(f"truths holding the headline noisecbr moves to the title: {held} of {len(named)}; "
          f"with the title in front of the text: {aggregate(with_title)}")


if __name__ == "__main__":
    main()
