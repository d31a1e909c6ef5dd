"""Scorers compared in one run: each trained on the same two site-grouped folds of wcxb-dev and
dragnet, every held-out page cleaned by the full Cleaner with its fold's model.

    python benchmarks/scorer_check.py ../shared/data --scorer default --scorer encoded \\
        --scorer trees --seeds 0 1 --out runs/scorer-check.json

A scorer is a training preset as the embedded recipe trains it (the page's kind read as the
recipe reads it, dragnet labelled to the article-body convention, the recipe's walk modes and
kind conventions), ``trees`` (gradient-boosted trees on the same columns and kinds: the
reference, never in the cleaning path; scikit-learn, the training extra), or
``NAME=BASE,field=value,...`` (a preset's variant: ``enc16=encoded,encoding_bins=16``). The
sites of both sets are split into two folds together, so a page is cleaned by a model that
never saw its site.

It prints one table: wcxb-dev word F1 over all pages and by page kind, dragnet's shingle
P / R / F1, the training minutes (two folds, one seed), the score stage's ms a page (every
subtree of a sample of held-out pages scored, median) and, for a scorer run with two seeds or
more, the spread of its wcxb-dev word F1 between them. ``--out`` keeps every page's scores as
they come (a scorer's seed at a time), and a run given the same ``--out`` again picks up where
it stopped. ``--quick``: a fixed sixth of the sites and a quarter of the epochs' cases, a few
minutes a scorer (the slow test set runs it).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from experiments.recipe_cv import score_pages, set_cases, typed  # noqa: E402
from noisecbr.cleaner import Cleaner  # noqa: E402
from noisecbr.eval.datasets import read_dataset  # noqa: E402
from noisecbr.eval.metric import PageScore, aggregate  # noqa: E402
from noisecbr.prepare.tidy import InputError  # noqa: E402
from noisecbr.score.rows import RowScores, blas_controller  # noqa: E402
from training.crossval import fold_model  # noqa: E402
from training.datasets import Dataset, among  # noqa: E402
from training.kinds import kind_data  # noqa: E402
from training.presets import PRESETS, Preset  # noqa: E402
from training.recipe import MODES, PRESET, weighted  # noqa: E402
from training.splits import site_folds  # noqa: E402

SETS = ("wcxb-dev", "dragnet")
FOLDS = 2
#: The page kinds of wcxb-dev, in the table's order.
KINDS = ("article", "documentation", "service", "forum", "product", "collection", "listing")
#: Pages a scorer's score stage is timed on (the first of the held-out pages, in set order).
TIMED_PAGES = 60
#: ``--quick``: the sites kept (their hash's remainder by this is 0) and the epochs' cases kept.
QUICK_SITES = 6
QUICK_CASES = 0.25


def preset_of(spec: str) -> tuple[str, Preset | None]:
    """A ``--scorer`` spec's name and preset (None: the trees): ``default`` and the other
    presets as the recipe trains them (reading the page's kind), or ``NAME=BASE,k=v,...``."""
    name, _, rest = spec.partition("=")
    base, *changes = (rest or name).split(",")
    if base == "trees":
        return name, None
    if base not in PRESETS:
        raise SystemExit(f"unknown scorer {base!r}: use trees or one of {sorted(PRESETS)}")
    preset = PRESETS[base].replace(kind_inputs=PRESET.kind_inputs) if base != "default" \
        else PRESET
    fields = {}
    for change in changes:
        key, _, value = change.partition("=")
        if not hasattr(preset, key):
            raise SystemExit(f"{spec}: a preset has no field {key!r}")
        # A tuple's numbers separated by "/": commas separate the fields.
        fields[key] = typed(getattr(preset, key), value, sep="/")
    return name, preset.replace(name=name if name != base else preset.name, **fields)


def _quick_site(site: str) -> bool:
    return int(hashlib.sha256(site.encode()).hexdigest(), 16) % QUICK_SITES == 0


def load(data_root: Path, cache: Path, quick: bool) -> tuple[list, Dataset]:
    """The pages of both sets and their cases (labelled as the recipe labels them, cached
    under ``cache`` while the code that makes cases is unchanged)."""
    cache.mkdir(parents=True, exist_ok=True)
    pages = [page for name in SETS for page in read_dataset(data_root / name)
             if not quick or _quick_site(page.site)]
    dataset = Dataset.concat([set_cases(data_root, name, cache, sets=SETS) for name in SETS])
    keys = np.asarray([f"{page.dataset}/{page.id}" for page in pages], dtype=str)
    dataset = dataset.subset(np.flatnonzero(among(dataset.pages, keys)))
    return pages, weighted(dataset)


class TreeScorer:
    """Gradient-boosted trees on a fold's cases (the columns of the default preset and the
    page's kind probabilities), standing in a fold model's place: the fold model's kind model,
    walk modes and conventions stay, its network's scores are the trees'."""

    def __init__(self, model, dataset: Dataset, seed: int, rows: int = 400_000) -> None:
        from sklearn.ensemble import HistGradientBoostingClassifier

        from training.weights import case_weights

        # The cases weigh as the MLP's do (every page the same, the classes the same, wordless
        # subtrees half), drawn with those weights from the fold's cases.
        dataset = dataset.with_classes(len(model.labels))
        weights = case_weights(dataset, PRESET.class_power, PRESET.page_power,
                               PRESET.wordless_weight, PRESET.frontier_weight)
        rng = np.random.default_rng(seed)
        pick = np.sort(rng.choice(len(dataset), min(rows, len(dataset)), replace=False))
        sub = dataset.subset(pick)
        self.columns = model.columns
        self.trees = HistGradientBoostingClassifier(max_iter=150, learning_rate=0.1,
                                                    random_state=seed)
        self.trees.fit(self._inputs(sub.X, sub.kinds), sub.y, sample_weight=weights[pick])

    def _inputs(self, X: np.ndarray, kinds: np.ndarray | None) -> np.ndarray:
        x = np.asarray(X, dtype=np.float32)[:, self.columns]
        if kinds is not None:
            kinds = np.broadcast_to(np.asarray(kinds, np.float32), (len(x), kinds.shape[-1]))
            x = np.concatenate([x, kinds], axis=1)
        return x

    def predict_proba(self, vectors, lexical=None, kinds=None) -> np.ndarray:
        return self.trees.predict_proba(self._inputs(vectors, kinds)).astype(np.float32)


def _tree_model(model, scorer: TreeScorer):
    """A copy of fold ``model`` whose scores are ``scorer``'s (an instance's own
    predict_proba is heard by the cleaner, which then scores every subtree at once)."""
    import copy

    out = copy.copy(model)
    out.predict_proba = scorer.predict_proba
    out.predict = lambda v, lexical=None, kinds=None: scorer.predict_proba(v, lexical,
                                                                          kinds).argmax(1)
    return out


def _unused_sites(sites, share: float) -> set[str]:
    """The sites left out of training when only ``share`` of them is trained on (by their
    hash: the same sites whatever the fold, a smaller share's sites among a larger one's)."""
    return {site for site in sites
            if int(hashlib.sha256(f"share/{site}".encode()).hexdigest(), 16) % 1000
            >= 1000 * share}


def train_folds(name: str, preset: Preset | None, seed: int, pages: list, dataset: Dataset,
                kinds, quick: bool, share: float = 1.0) -> tuple[dict, float]:
    """Each page's fold model (by ``set/id``) and the training minutes of both folds; with
    ``share`` < 1, each fold trained on that share of its training sites (a learning curve:
    the held-out pages stay the same)."""
    site_of_page = np.array([page.site for page in pages], dtype=object)
    unused = _unused_sites(set(site_of_page), share) if share < 1 else set()
    models, started = {}, time.perf_counter()
    for fold, (_, test) in enumerate(site_folds(site_of_page, FOLDS, 0)):
        held_out = set(site_of_page[test]) | unused
        base = preset if preset is not None else PRESET
        if quick:
            base = base.replace(epoch_cases=int(base.epoch_cases * QUICK_CASES)
                                if base.epoch_cases else None)
        model = fold_model(dataset, held_out, fold, FOLDS, base, seed, kinds=kinds)
        if preset is None:
            from training.kinds import kinds_by_page

            seen = kinds.subset(np.flatnonzero(~among(kinds.sites, np.asarray(sorted(held_out),
                                                                              dtype=str))))
            train = dataset.subset(np.flatnonzero(~among(dataset.sites, np.asarray(
                sorted(held_out), dtype=str)))).with_kinds(kinds_by_page(seen, FOLDS, seed))
            model = _tree_model(model, TreeScorer(model, train, seed))
        for i in test:
            models[f"{pages[i].dataset}/{pages[i].id}"] = model
        print(f"  {name} seed {seed} fold {fold}: {time.perf_counter() - started:.0f} s",
              file=sys.stderr, flush=True)
    return models, (time.perf_counter() - started) / 60


def score_ms(models: dict, pages: list) -> float:
    """The median ms of scoring every subtree of a held-out page (vectors, lexical pooling and
    the network; page preparation untimed), over :data:`TIMED_PAGES` pages."""
    times = []
    for page in pages[:TIMED_PAGES]:
        model = models[f"{page.dataset}/{page.id}"]
        cleaner = Cleaner(model)
        try:
            prepared = cleaner.prepare(page.html, url=page.url)
        except InputError:
            continue
        with blas_controller().limit(limits=1, user_api="blas"):
            started = time.perf_counter()
            RowScores(prepared, model)(None)
            times.append(time.perf_counter() - started)
    return 1000 * statistics.median(times) if times else float("nan")


def summary(rows: list[dict]) -> dict:
    """A run's figures: wcxb-dev word F1 (all, by kind), dragnet's P / R / F1."""
    wcxb = [r for r in rows if r["set"] == "wcxb-dev"]
    out = {"wcxb": statistics.mean(r["w"] for r in wcxb) if wcxb else float("nan")}
    for kind in KINDS:
        mine = [r["w"] for r in wcxb if r["type"] == kind]
        out[kind] = statistics.mean(mine) if mine else float("nan")
    dragnet = aggregate([PageScore(*r["s"]) for r in rows if r["set"] == "dragnet"])
    out.update(dragnet_p=dragnet.precision, dragnet_r=dragnet.recall, dragnet_f1=dragnet.f1)
    return out


def table(results: dict) -> str:
    """The check's table: a row per scorer (the means of its seeds), the seeds' spread."""
    head = (f"{'scorer':<14}{'seeds':>6}{'wcxb':>7}" + "".join(f"{k[:7]:>8}" for k in KINDS)
            + f"{'drag P':>8}{'drag R':>8}{'drag F1':>8}{'train min':>10}{'score ms':>9}"
            + f"{'spread':>8}")
    lines = [head]
    for name, runs in results.items():
        if not runs:
            continue
        figures = [run["summary"] for run in runs.values()]
        mean = {k: statistics.mean(f[k] for f in figures) for k in figures[0]}
        wcxb = [f["wcxb"] for f in figures]
        spread = f"{max(wcxb) - min(wcxb):8.3f}" if len(wcxb) > 1 else f"{'—':>8}"
        lines.append(
            f"{name:<14}{len(runs):>6}{mean['wcxb']:7.3f}"
            + "".join(f"{mean[k]:8.3f}" for k in KINDS)
            + f"{mean['dragnet_p']:8.3f}{mean['dragnet_r']:8.3f}{mean['dragnet_f1']:8.3f}"
            + f"{statistics.mean(r['minutes'] for r in runs.values()):10.1f}"
            + f"{statistics.mean(r['score_ms'] for r in runs.values()):9.2f}{spread}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data_root", type=Path, help="the folder holding wcxb-dev and dragnet")
    parser.add_argument("--scorer", action="append", default=None,
                        help="a scorer to train (repeatable) [default: default, encoded, trees]")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1])
    parser.add_argument("--tree-seeds", type=int, nargs="+", default=[0],
                        help="the trees' seeds (one by default: they are the reference)")
    parser.add_argument("--quick", action="store_true",
                        help="a fixed sixth of the sites and a quarter of the epochs' cases")
    parser.add_argument("--out", type=Path, default=None,
                        help="JSON of every run's figures and pages, kept as it goes; "
                             "runs already in it are not run again")
    parser.add_argument("--cache", type=Path, default=ROOT / "runs" / "cache")
    parser.add_argument("--train-share", type=float, nargs="+", default=[1.0],
                        help="train each fold on these shares of its training sites, the "
                             "held-out pages the same (a learning curve; a scorer's row is "
                             "named NAME@SHARE below 1)")
    args = parser.parse_args(argv)
    missing = [name for name in SETS if not (args.data_root / name).is_dir()]
    if missing:
        parser.error(f"{args.data_root} holds no {', '.join(missing)}")
    scorers = [preset_of(spec) for spec in args.scorer or ["default", "encoded", "trees"]]
    results = json.loads(args.out.read_text()) if args.out and args.out.is_file() else {}
    started = time.perf_counter()
    pages, dataset = load(args.data_root, args.cache, args.quick)
    kinds = kind_data(pages)
    print(f"{len(pages)} pages, {len(dataset):,} cases ({time.perf_counter() - started:.0f} s)",
          file=sys.stderr, flush=True)
    if not all(0 < share <= 1 for share in args.train_share):
        parser.error("--train-share takes shares in (0, 1]")
    scorers = [(name if share == 1 else f"{name}@{share:g}", preset, share)
               for name, preset in scorers for share in args.train_share]
    for name, preset, share in scorers:
        runs = results.setdefault(name, {})
        for seed in args.tree_seeds if preset is None else args.seeds:
            if str(seed) in runs:
                continue
            models, minutes = train_folds(name, preset, seed, pages, dataset, kinds, args.quick,
                                          share)
            rows = score_pages(pages, models, MODES)
            runs[str(seed)] = {"summary": summary(rows), "minutes": minutes,
                               "score_ms": score_ms(models, pages),
                               "pages": {r["key"]: round(r["w"], 4) for r in rows},
                               "precision_recall": {r["key"]: [round(v, 4) for v in r["wpr"]]
                                                    for r in rows}}
            if args.out:
                args.out.parent.mkdir(parents=True, exist_ok=True)
                args.out.write_text(json.dumps(results, indent=1))
            print(table({name: runs}), file=sys.stderr, flush=True)
    print(table({name: results.get(name, {}) for name, _, _ in scorers}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
