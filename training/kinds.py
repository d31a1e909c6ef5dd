"""The kind model: which of the seven kinds a page is (:mod:`noisecbr.score.kind`), learnt from the
pages whose truth names their kind.

wcxb-dev labels each of its 1 157 pages with its kind (modernweb-dev its remaining 53); the
article-body sets and dragnet hold news articles and blog posts, which join as articles at a
lower weight (:data:`ARTICLE_SET_WEIGHT`) so that the network knows a news page in any language
without taking the web for a newspaper. The network is a small MLP over the page's evidence
(:func:`noisecbr.score.kind.page_evidence`), standardised, trained with back-propagation and early
stopping on a site-grouped validation part; several seeds are averaged (:data:`ENSEMBLE`),
which steadies the probabilities the subtree network reads.

:func:`out_of_fold_kinds` gives every page the probabilities of a model that never saw its
site, which is what the subtree network learns to read (the kinds of pages it will clean are
guesses too, never the truth).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from noisecbr.eval.datasets import LabelledPage
from noisecbr.score.kind import EVIDENCE_NAMES, KINDS, KindModel

from .sources import map_pages_with
from .splits import site_folds, split_by_site

__all__ = ["ARTICLE_SET_WEIGHT", "ENSEMBLE", "KindData", "kind_data", "kind_of", "fit_kinds",
           "out_of_fold_kinds", "kinds_by_page", "accuracy", "confusion", "fold_accuracy"]

#: The weight of a page of a set without page types (all articles): 2 247 of them beside
#: wcxb-dev's 621 articles would make every unsure page an article.
ARTICLE_SET_WEIGHT = 0.2
#: Kind networks averaged (seeds 0…ENSEMBLE−1).
ENSEMBLE = 5
#: Hidden units, dropout, weight decay, learning rate, epochs at most, and epochs without a
#: better validation loss before stopping.
HIDDEN, DROPOUT, WEIGHT_DECAY, LR, EPOCHS, PATIENCE = 64, 0.3, 1e-3, 3e-3, 300, 30
#: Page types other names stand for (modernweb-dev's "blog" is an article).
_ALIASES = {"blog": "article", "": "article"}


def kind_of(page: LabelledPage) -> str:
    """A page's kind as its truth names it (an article for a set without kinds)."""
    kind = _ALIASES.get(page.page_type, page.page_type)
    if kind not in KINDS:
        raise ValueError(f"{page.dataset}/{page.id}: page type {page.page_type!r} is not a kind")
    return kind


@dataclass
class KindData:
    """Pages as the kind model learns them: evidence, kind index, site, key and weight."""

    X: np.ndarray
    y: np.ndarray
    sites: np.ndarray
    keys: np.ndarray
    weights: np.ndarray

    def subset(self, index: np.ndarray) -> KindData:
        """The pages at ``index``."""
        return KindData(self.X[index], self.y[index], self.sites[index], self.keys[index],
                        self.weights[index])


def _evidence(page: LabelledPage) -> np.ndarray | None:
    from noisecbr.pipeline import prepare
    from noisecbr.prepare.tidy import InputError

    try:
        return prepare(page.html, url=page.url or None).evidence
    except InputError:
        return None


def kind_data(pages: Sequence[LabelledPage], processes: int = 2) -> KindData:
    """The evidence of ``pages`` (those that are HTML) and their kinds; the pages of a set
    without kinds weigh :data:`ARTICLE_SET_WEIGHT`."""
    evidence = map_pages_with(_evidence, pages, processes)
    kept = [k for k, found in enumerate(evidence) if found is not None]
    X = np.array([evidence[k] for k in kept], dtype=np.float64).reshape(len(kept),
                                                                        len(EVIDENCE_NAMES))
    typed = np.array([bool(pages[k].page_type) for k in kept])
    return KindData(X=X, y=np.array([KINDS.index(kind_of(pages[k])) for k in kept]),
                    sites=np.array([pages[k].site for k in kept], dtype=str),
                    keys=np.array([f"{pages[k].dataset}/{pages[k].id}" for k in kept],
                                  dtype=str),
                    weights=np.where(typed, 1.0, ARTICLE_SET_WEIGHT))


def _fit_one(train: KindData, val: KindData, mean: np.ndarray, scale: np.ndarray, seed: int
             ) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """One network's weights, the epoch of best weighted validation loss kept."""
    import torch
    import torch.nn as nn

    torch.manual_seed(seed)
    net = nn.Sequential(nn.Linear(train.X.shape[1], HIDDEN), nn.ReLU(), nn.Dropout(DROPOUT),
                        nn.Linear(HIDDEN, len(KINDS)))
    opt = torch.optim.AdamW(net.parameters(), lr=LR, weight_decay=WEIGHT_DECAY)

    def tensors(part: KindData):
        return (torch.from_numpy(((part.X - mean) / scale).astype(np.float32)),
                torch.from_numpy(part.y.astype(np.int64)),
                torch.from_numpy(part.weights.astype(np.float32)))

    if not len(val.y) or not val.weights.sum():
        val = train  # too few sites to hold some out: the training loss stops it
    (xt, yt, wt), (xv, yv, wv) = tensors(train), tensors(val)
    best, since = np.inf, 0
    best_state = {k: v.detach().clone() for k, v in net.state_dict().items()}
    loss = nn.CrossEntropyLoss(reduction="none")
    for _ in range(EPOCHS):
        net.train()
        opt.zero_grad()
        (loss(net(xt), yt) * wt).sum().div(wt.sum()).backward()
        opt.step()
        net.eval()
        with torch.no_grad():
            value = float((loss(net(xv), yv) * wv).sum() / wv.sum())
        if value < best - 1e-5:
            best, since = value, 0
            best_state = {k: v.detach().clone() for k, v in net.state_dict().items()}
        else:
            since += 1
            if since >= PATIENCE:
                break
    net.load_state_dict(best_state)
    linears = [m for m in net if isinstance(m, nn.Linear)]
    return ([m.weight.detach().numpy().astype(np.float64) for m in linears],
            [m.bias.detach().numpy().astype(np.float64) for m in linears])


def fit_kinds(data: KindData, seed: int = 0, ensemble: int = ENSEMBLE) -> KindModel:
    """The kind model of ``data``: ``ensemble`` networks (seeds ``seed``…), each with its
    epoch chosen on a site-grouped 15 % of the pages, averaged into one wider network (their
    hidden layers side by side, their logits averaged)."""
    import torch

    mean = data.X.mean(axis=0)
    std = data.X.std(axis=0)
    scale = np.where(std > 1e-9, std, 1.0)
    weights: list[list[np.ndarray]] = [[], []]
    biases: list[list[np.ndarray]] = [[], []]
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # a few thousand pages: threads cost more than they give
    try:
        for k in range(ensemble):
            fit_part, val_part = split_by_site(data.sites, (0.85, 0.15), seed + k)
            w, b = _fit_one(data.subset(fit_part), data.subset(val_part), mean, scale, seed + k)
            for layer in (0, 1):
                weights[layer].append(w[layer])
                biases[layer].append(b[layer])
    finally:
        torch.set_num_threads(threads)
    # The mean of the networks' logits is one network: hidden units stacked, output weights
    # side by side and divided by their number.
    first = np.concatenate(weights[0], axis=0)
    second = np.concatenate(weights[1], axis=1) / ensemble
    return KindModel(weights=[first, second],
                     biases=[np.concatenate(biases[0]), np.mean(biases[1], axis=0)],
                     mean=mean, scale=scale)


def out_of_fold_kinds(data: KindData, folds: int = 5, seed: int = 0,
                      ensemble: int = ENSEMBLE) -> np.ndarray:
    """Every page's kind probabilities by the kind model of the site-grouped fold that held its
    site out (rows in ``data``'s order)."""
    out = np.zeros((len(data.y), len(KINDS)))
    for train, test in site_folds(data.sites, folds, seed):
        model = fit_kinds(data.subset(train), seed, ensemble)
        out[test] = model.predict_proba(data.X[test])
    return out


def kinds_by_page(data: KindData, folds: int = 5, seed: int = 0) -> dict[str, np.ndarray]:
    """:func:`out_of_fold_kinds` by page key (``set/id``): what the subtree network learns to
    read."""
    return dict(zip(data.keys.tolist(), out_of_fold_kinds(data, folds, seed)))


def accuracy(proba: np.ndarray, y: np.ndarray) -> float:
    """The share of pages whose most probable kind is their kind."""
    return float((np.asarray(proba).argmax(axis=1) == y).mean()) if len(y) else 0.0


def confusion(proba: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Pages by true kind (rows) and predicted kind (columns), :data:`KINDS` order."""
    out = np.zeros((len(KINDS), len(KINDS)), dtype=np.int64)
    np.add.at(out, (y, np.asarray(proba).argmax(axis=1)), 1)
    return out


def fold_accuracy(data_dir: Path, folder: Path, dataset: str = "wcxb-dev"
                  ) -> tuple[float, np.ndarray, int]:
    """The kind models of a folder of fold models (``python -m training.crossval``) on the
    pages of ``dataset`` that name their kind, each page by the model of the fold that held
    its site out: accuracy, confusion matrix (:func:`confusion`) and pages."""
    import json

    from noisecbr.eval.datasets import read_dataset
    from noisecbr.score.artifact import load_model

    fold_of = json.loads((folder / "folds.json").read_text(encoding="utf-8"))
    pages = [page for page in read_dataset(Path(data_dir) / dataset)
             if page.page_type and f"{page.dataset}/{page.id}" in fold_of]
    data = kind_data(pages)
    folds = np.array([fold_of[key] for key in data.keys])
    proba = np.zeros((len(data.y), len(KINDS)))
    for fold in np.unique(folds):
        model = load_model(folder / f"fold{fold}.safetensors").kind_model
        if model is None:
            raise ValueError(f"fold {fold}'s model has no kind model")
        proba[folds == fold] = model.predict_proba(data.X[folds == fold])
    return accuracy(proba, data.y), confusion(proba, data.y), len(data.y)


def main(argv: Sequence[str] | None = None) -> None:
    """``python -m training.kinds DATA --folds DIR``: the fold models' kind accuracy."""
    parser = argparse.ArgumentParser(prog="python -m training.kinds",
                                     description=fold_accuracy.__doc__.split("\n\n")[0])
    parser.add_argument("data_dir", type=Path)
    parser.add_argument("--folds", type=Path, required=True)
    parser.add_argument("--set", default="wcxb-dev")
    args = parser.parse_args(argv)
    found, matrix, pages = fold_accuracy(args.data_dir, args.folds, args.set)
    print(f"{args.set}: kind accuracy {found:.3f} on {pages} pages (rows: true kind, columns: "
          "predicted)")
    width = max(map(len, KINDS))
    print(" " * (width + 1) + " ".join(f"{kind[:5]:>5}" for kind in KINDS))
    for kind, row in zip(KINDS, matrix):
        print(f"{kind:<{width}} " + " ".join(f"{count:>5}" for count in row))


if __name__ == "__main__":
    main()
