"""The embedded recipe on every development set at once, by site-grouped folds.

    python experiments/recipe_cv.py ../shared/data --out /tmp/recipe/base.json

Every page of the training sets is labelled and vectorised once (cached per set under
``--cache``), the sites of all sets together are split into K folds, and each fold's model is
trained as the embedded default is (the ``default`` preset on every other fold's pages, its
epoch chosen on 15 % of those sites) and cleans the fold's pages. A page is thus scored by a
model that never saw its site, whichever set it comes from: how the product meets a new site.

Per set it prints shingle P / R / F1 (dragnet against its article truth, also with the
headline the result holds as ``title`` scored before the text); modernweb-dev by page type;
and it writes every page's scores to ``--out`` so two recipes can be compared page by page
(``--against OTHER.json``: paired bootstrap ± of the difference per set).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from noisecbr.cleaner import Cleaner, default_model  # noqa: E402
from noisecbr.eval.datasets import read_dataset, split_truth  # noqa: E402
from noisecbr.eval.metric import aggregate, mean_word_f1, score_page, tokens, word_f1  # noqa: E402
from noisecbr.prepare.tidy import InputError  # noqa: E402
from noisecbr.score.artifact import load_model, save_model  # noqa: E402
from training.datasets import Dataset, among  # noqa: E402
from training.presets import get_preset  # noqa: E402
from training.recipe import RELABELLED_SETS, TRAINING_SETS, recipe_pages, superseded_ids  # noqa: E402
from training.recipe import set_weights as recipe_weights  # noqa: E402
from training.sources import from_labelled  # noqa: E402
from training.splits import site_folds, split_by_site  # noqa: E402
from training.train import fit  # noqa: E402

SETS = TRAINING_SETS
#: The walk's thresholds of every run: the embedded model's of 2026-11-24, so that recipes are
#: compared at the same thresholds (python -m training.modes chooses them for a recipe).
FIXED_MODES = {"balanced": {"noise": 0.3, "keep": 0.7, "leaf": 0.5},
               "precision": {"noise": 0.2, "keep": 0.7, "leaf": 0.3},
               "recall": {"noise": 0.7, "keep": 0.7, "leaf": 0.7}}
#: What each set's truth calls main content: the article body alone, or more.
ARTICLE_BODY = {"fundus", "utomo-chaos2017", "utomo-big9", "chinese-wce"}


def source_hash() -> str:
    """A hash of the code that turns pages into cases: a cache built by other code is stale."""
    h = hashlib.sha256()
    # The network's forward pass, its input encoding and its file do not make cases: a change
    # there keeps the cache.
    scoring = {ROOT / "noisecbr" / "score" / name
               for name in ("model.py", "artifact.py", "encoding.py", "rows.py")}
    for path in sorted([*ROOT.glob("noisecbr/**/*.py"), *ROOT.glob("noisecbr/*.pyx"),
                        *ROOT.glob("casebase/*.py"), *ROOT.glob("training/datasets.py"),
                        *ROOT.glob("training/sources.py"),
                        *ROOT.glob("training/lexicon.py")]):
        if path not in scoring:
            h.update(path.read_bytes())
    return h.hexdigest()[:16]


def set_cases(data_dir: Path, name: str, cache: Path,
              relabelled: tuple[str, ...] = RELABELLED_SETS,
              sets: tuple[str, ...] = SETS) -> Dataset:
    """The cases of one set (labelled to the article-body convention when it is one of
    ``relabelled``), from the cache when the code has not changed since; without the pages
    another of ``sets`` holds with a newer truth (training.recipe.SUPERSEDED_BY)."""
    convention = "-article-body" if name in relabelled else ""
    path = cache / f"{name}{convention}-{source_hash()}.npz"
    if path.is_file():
        dataset = Dataset.load_npz(path)
    else:
        pages = list(read_dataset(data_dir / name))
        dataset = from_labelled(pages, 2, source=name, relabelled=relabelled)
        dataset.save_npz(path)
    older = {f"{name}/{page_id}" for page_id in superseded_ids(data_dir, name, sets)}
    if older:
        dataset = dataset.subset(np.flatnonzero(~among(dataset.pages, older)))
    return dataset


def page_folds(pages, k: int, seed: int) -> dict[str, int]:
    """Fold of each page key ("set/id"), the sites of all sets split together."""
    sites = np.array([page.site for page in pages], dtype=object)
    out = {}
    for fold, (_, test) in enumerate(site_folds(sites, k, seed)):
        for i in test:
            out[f"{pages[i].dataset}/{pages[i].id}"] = fold
    return out


#: Weight factors by page key (``--kind-weight``: the pages of a kind), on top of the sets'.
PAGE_FACTORS: dict[str, float] = {}


def set_weights(dataset: Dataset, weights: dict[str, float]) -> np.ndarray:
    """Per-case weight factors: the recipe's (training.recipe), or ``weights`` per set where
    given (the set is the page key's prefix); times the page's factor (PAGE_FACTORS)."""
    prefix = np.array([p.split("/", 1)[0] for p in dataset.pages])
    out = recipe_weights(dataset.pages)
    for name, w in weights.items():
        out[prefix == name] = w
    if PAGE_FACTORS:
        out = out * np.array([PAGE_FACTORS.get(p, 1.0) for p in dataset.pages])
    return out


def train_fold(dataset: Dataset, fold_of_case: np.ndarray, fold: int, seed: int,
               weights: dict[str, float], preset, kind_model=None) -> object:
    train = dataset.subset(np.flatnonzero(fold_of_case != fold))
    train.weights = set_weights(train, weights)
    fit_part, val_part = split_by_site(train.sites, (0.85, 0.15), seed + fold)
    return fit(train.subset(fit_part), train.subset(val_part), preset, seed=seed,
               progress=False, kind_model=kind_model).model


def true_kinds(pages) -> dict[str, np.ndarray]:
    """Each page's kind probabilities as its truth's page type gives them (a page of a set
    without page types is an article)."""
    from noisecbr.score.kind import one_hot

    return {f"{p.dataset}/{p.id}": one_hot(_kind(p)) for p in pages}


def _kind(page) -> str:
    return {"blog": "article", "": "article"}.get(page.page_type, page.page_type)


def placeholder_kind_model():
    """A kind model that says nothing (every page's kind is given): what a model reading the
    true kinds carries."""
    from noisecbr.score.kind import EVIDENCE_NAMES, KINDS, KindModel

    return KindModel([np.zeros((len(KINDS), len(EVIDENCE_NAMES)))], [np.zeros(len(KINDS))],
                     np.zeros(len(EVIDENCE_NAMES)), np.ones(len(EVIDENCE_NAMES)))


def word_pr(predicted: str, truth: str) -> tuple[float, float]:
    """Word-bag precision and recall of a text (lower-cased tokens, as word F1 counts them;
    1 for an empty side)."""
    from collections import Counter

    got = Counter(t.lower() for t in tokens(predicted))
    want = Counter(t.lower() for t in tokens(truth))
    common = sum((got & want).values())
    return (common / sum(got.values()) if got else 1.0,
            common / sum(want.values()) if want else 1.0)


def score_pages(pages, model_of, modes, given_kinds: bool = False) -> list[dict]:
    """Every page cleaned by its fold's model; its shingle scores."""
    cleaners = {}
    out = []
    for page in pages:
        model = model_of[f"{page.dataset}/{page.id}"]
        if id(model) not in cleaners:
            model.metadata.setdefault("modes", modes)
            cleaners[id(model)] = Cleaner(model)
        truth = split_truth(page.truth)[0]
        try:
            result = cleaners[id(model)].clean(page.html, url=page.url,
                                               page_type=_kind(page) if given_kinds else None)
            text, title, lang = result.text, result.title or "", result.lang or ""
        except InputError:
            text, title, lang = "", "", ""
        s = score_page(text, truth)
        t = score_page(f"{title}\n\n{text}", truth)
        out.append({"key": f"{page.dataset}/{page.id}", "set": page.dataset,
                    "type": page.page_type, "lang": lang, "site": page.site,
                    "s": [s.tp, s.fp, s.fn], "t": [t.tp, t.fp, t.fn],
                    "w": word_f1(text, truth), "wt": word_f1(f"{title}\n\n{text}", truth),
                    "wpr": word_pr(text, truth),
                    "words": len(tokens(text))})
    return out


def report(rows: list[dict], key: str = "s") -> str:
    from noisecbr.eval.metric import PageScore

    lines = []
    for name in dict.fromkeys(r["set"] for r in rows):
        mine = [PageScore(*r[key]) for r in rows if r["set"] == name]
        a = aggregate(mine)
        empty = sum(1 for r in rows if r["set"] == name and r["words"] < 10)
        line = f"{name:<16} {len(mine):>5} P {a.precision:.3f} R {a.recall:.3f} F1 {a.f1:.3f}"
        if name == "dragnet":
            b = aggregate([PageScore(*r["t"]) for r in rows if r["set"] == name])
            line += f"   (title + text: P {b.precision:.3f} R {b.recall:.3f} F1 {b.f1:.3f})"
        words = mean_word_f1([r["w"] for r in rows if r["set"] == name])
        lines.append(line + f"   word F1 {words:.3f}   empty {empty}")
    for kinds in ("modernweb-dev", "wcxb-dev"):
        mw = [r for r in rows if r["set"] == kinds]
        if not mw:
            continue
        by = {}
        for r in mw:
            by.setdefault(r["type"], []).append(r)
        lines.append(f"  {kinds} by type (shingle / word F1): " + ", ".join(
            f"{t} {aggregate([PageScore(*r[key]) for r in v]).f1:.3f} / "
            f"{mean_word_f1([r['w'] for r in v]):.3f} ({len(v)})" for t, v in
            sorted(by.items(), key=lambda kv: -len(kv[1]))))
    fu = [r for r in rows if r["set"] == "fundus"]
    if fu:
        by = {}
        for r in fu:
            lang = (r["lang"] or "?").split("-")[0].lower()
            by.setdefault(lang if lang in ("de", "en") else "other", []).append(PageScore(*r[key]))
        lines.append("  fundus by language: " + ", ".join(
            f"{t} {aggregate(v).f1:.3f} ({len(v)})" for t, v in sorted(by.items())))
    return "\n".join(lines)


def paired(rows: list[dict], other: list[dict], rounds: int = 1000) -> str:
    """Per set: F1 difference against ``other`` (same pages) with a paired bootstrap 95 % ±."""
    from noisecbr.eval.metric import PageScore

    theirs = {r["key"]: r for r in other}
    lines = []
    rng = np.random.default_rng(0)
    for name in dict.fromkeys(r["set"] for r in rows):
        mine = [r for r in rows if r["set"] == name and r["key"] in theirs]
        if not mine:
            continue
        a = [PageScore(*r["s"]) for r in mine]
        b = [PageScore(*theirs[r["key"]]["s"]) for r in mine]
        diff = aggregate(a).f1 - aggregate(b).f1
        draws = []
        for _ in range(rounds):
            k = rng.integers(0, len(a), len(a))
            draws.append(aggregate([a[i] for i in k]).f1 - aggregate([b[i] for i in k]).f1)
        lo, hi = np.percentile(draws, [2.5, 97.5])
        lines.append(f"{name:<16} ΔF1 {diff:+.4f}  [{lo:+.4f}, {hi:+.4f}]")
    return "\n".join(lines)


def typed(current, value: str, sep: str = ","):
    """``value`` read as the type of a preset field's ``current`` value (a tuple's numbers
    separated by ``sep``)."""
    if isinstance(current, bool):
        return value.lower() in ("1", "true", "yes")
    if isinstance(current, tuple):
        return tuple(int(v) for v in value.split(sep))
    if current is None:
        return value
    return type(current)(value)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data_dir", type=Path)
    parser.add_argument("--sets", nargs="+", default=list(SETS), help="the sets trained on")
    parser.add_argument("--score", nargs="+", default=list(SETS),
                        help="the sets whose pages are scored (default: all the training sets)")
    parser.add_argument("--weight", action="append", default=[], metavar="SET=W",
                        help="case weight factor of a set's pages (default: the recipe's, "
                        "training.recipe)")
    parser.add_argument("--relabel", nargs="*", default=list(RELABELLED_SETS), metavar="SET",
                        help="the sets whose truths are labelled to the article-body "
                        "convention (default: the recipe's; none: --relabel)")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0, help="the folds' and the training's seed")
    parser.add_argument("--train-seed", type=int, default=None,
                        help="the training's seed alone (default: --seed): other initial "
                        "weights and batches on the same folds")
    parser.add_argument("--preset", default="default")
    parser.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE",
                        help="a preset field to override (e.g. lexical_dim=8)")
    parser.add_argument("--cache", type=Path, default=Path("/tmp/recipe-cache"))
    parser.add_argument("--out", type=Path)
    parser.add_argument("--against", type=Path)
    parser.add_argument("--modes", default=json.dumps(FIXED_MODES),
                        help="the walk's threshold sets (JSON; '' for the embedded model's)")
    parser.add_argument("--models", type=Path, help="write (or, with --reuse, read) the fold "
                        "models in this folder as foldK.safetensors, with folds.json: the "
                        "layout of python -m training.modes --cache")
    parser.add_argument("--reuse", action="store_true", help="read the fold models of --models")
    parser.add_argument("--kind-weight", action="append", default=[], metavar="KIND=W",
                        help="case weight factor of the pages of a kind (their truth's type)")
    parser.add_argument("--kinds", choices=("none", "true"), default="none",
                        help="the page kinds the network reads: none, or the truths' page types "
                        "(in training and in scoring: what a perfect kind model would give)")
    args = parser.parse_args()
    started = time.perf_counter()
    weights = {k: float(v) for k, v in (w.split("=") for w in args.weight)}
    preset = get_preset(args.preset)
    preset = preset.replace(**{k: typed(getattr(preset, k), v) for k, v in
                               (item.split("=") for item in args.set)})
    args.cache.mkdir(parents=True, exist_ok=True)
    names = list(dict.fromkeys([*args.sets, *args.score]))
    pages = list(recipe_pages(args.data_dir, names))
    # The training sets' pages each once (a set the scored sets supersede is learnt whole
    # when its newer set is not trained on: today's recipe, scored on the newer truths).
    dataset = Dataset.concat([set_cases(args.data_dir, name, args.cache, tuple(args.relabel),
                                        tuple(args.sets)) for name in args.sets])
    kind_weights = {k: float(v) for k, v in (w.split("=") for w in args.kind_weight)}
    PAGE_FACTORS.update({f"{p.dataset}/{p.id}": kind_weights[_kind(p)] for p in pages
                         if _kind(p) in kind_weights})
    kind_model = None
    if args.kinds == "true":
        dataset = dataset.with_kinds(true_kinds(pages))
        kind_model = placeholder_kind_model()
    print(f"{len(dataset):,} cases of {len(pages)} pages, {time.perf_counter() - started:.0f} s",
          file=sys.stderr)
    fold_of_page = page_folds(pages, args.folds, args.seed)
    fold_of_site = {p.site: fold_of_page[f"{p.dataset}/{p.id}"] for p in pages}
    fold_of_case = np.array([fold_of_site[site] for site in dataset.sites])
    scored = [p for p in pages if p.dataset in args.score]
    if args.models:
        args.models.mkdir(parents=True, exist_ok=True)
        (args.models / "folds.json").write_text(json.dumps(
            {f"{p.dataset}/{p.id}": fold_of_page[f"{p.dataset}/{p.id}"] for p in pages}))
    modes = json.loads(args.modes) if args.modes else default_model().metadata.get("modes")
    rows = []
    for fold in range(args.folds):
        path = args.models / f"fold{fold}.safetensors" if args.models else None
        if args.reuse and path is not None and path.is_file():
            model = load_model(path)
        else:
            seed = args.seed if args.train_seed is None else args.train_seed
            model = train_fold(dataset, fold_of_case, fold, seed, weights, preset, kind_model)
            if path is not None:
                save_model(model, path)
        mine = [p for p in scored if fold_of_page[f"{p.dataset}/{p.id}"] == fold]
        rows += score_pages(mine, {f"{p.dataset}/{p.id}": model for p in mine}, modes,
                            given_kinds=args.kinds == "true")
        print(f"fold {fold}: {time.perf_counter() - started:.0f} s", file=sys.stderr)
    print(report(rows))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps({"args": vars(args) | {"data_dir": str(args.data_dir)},
                                        "rows": rows}, default=str))
    if args.against:
        print(paired(rows, json.loads(args.against.read_text())["rows"]))


if __name__ == "__main__":
    main()
