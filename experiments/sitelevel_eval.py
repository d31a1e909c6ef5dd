"""Site-level methods against the MLP cleaner on the multi-page sites of modernweb-dev (issue 4).

    python -m experiments.sitelevel_eval ../shared/data/modernweb-dev \
        [--dragnet ../shared/data/dragnet] --out DIR

The evaluation pages are those of the sites with at least ``--min-pages`` (3) pages; on
modernweb-dev that is 16 sites, 82 pages. Four measurements, each printed as a table and
written to ``DIR/sitelevel.json``:

1. **Held-out model.** One ``default`` model trained on the cases of every *other* page
   (modernweb-dev, plus dragnet with ``--dragnet``), its epoch and class offsets chosen on a
   site-grouped 15 % of that training data. None of the evaluation sites is seen in training, so
   the MLP is scored as on unseen sites. Cached as ``DIR/heldout-default.safetensors`` (reused
   when its metadata names the same held-out sites, training sets, seed and model code).
2. **Leave one page out.** For each evaluation page a :class:`SiteStyleTree` is fitted on the
   other pages of its site; the page is then cleaned by the SST alone, by the MLP alone, by the
   MLP with every SST-noisy node forced to noise (*combined*), and by the MLP with those SST
   nodes forced only where the MLP itself gives them p(noise) ≥ 1/3 (*combined, soft*): the
   site evidence may tip an undecided or noise-leaning node, never override a node the MLP
   scores below the uninformed three-class prior. Shingle P/R/F1, macro over pages.
3. **SiteLevel(θ) labels vs ground truth.** ``template_labels`` over all of a site's pages
   (θ = 0.10) against :func:`casebase.labelling.label_table` on the same tidied bodies, matched by
   element path: how many subtrees are templates and which share of them the ground truth calls
   noise, over subtrees with words and over all subtrees.
4. **Smoothing.** The held-out model's F1 on the evaluation pages with and without isotonic
   smoothing (``Cleaner(model, smooth=c)``) for each ``--smooth`` value, checked again on the
   model's own validation pages (other sites, used only to pick its epoch; skip with
   ``--no-smooth-check``), and the time of
   :func:`noisecbr.seeds.smoothing.isotonic_smooth` on the smallest evaluation page with at least
   5 000 subtrees, on the largest one, and on a synthetic 5 000-node page-like tree.

Byte-identical pages are kept as the data has them (each is scored); the site-level methods
themselves merge identical copies when fitting, so a page whose only siblings are copies of it
has, in effect, no other page of its site.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import random
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from lxml import etree

from casebase.labelling import label_table
from noisecbr.cleaner import Cleaner
from noisecbr.eval.datasets import LabelledPage, read_dataset
from noisecbr.eval.metric import PageScore, aggregate, bootstrap_f1, score_page
from noisecbr.pipeline import Page
from noisecbr.prepare.subtrees import build_table
from noisecbr.prepare.tidy import tidy
from noisecbr.render.text import render_text
from noisecbr.result import NOISE, PAPER_LABELS
from noisecbr.score.artifact import load_model, save_model
from noisecbr.score.model import Model
from noisecbr.seeds import SiteStyleTree, template_labels
from noisecbr.seeds.smoothing import isotonic_smooth, subtree_penalties

__all__ = [
    "METHODS",
    "SOFT_NOISE",
    "PageResult",
    "duplicate_groups",
    "evaluation_sites",
    "leave_one_out",
    "main",
    "smoothing_times",
    "summary_rows",
    "template_agreement",
    "train_heldout_model",
]

#: The soft combination forces an SST-noisy node only where the MLP gives it at least this
#: p(noise): 1/3 is the uninformed prior over the three classes, so below it the MLP holds
#: positive evidence against noise and the site-level verdict does not override it.
SOFT_NOISE = 1.0 / 3.0

#: Method names, in table order.
METHODS = ("no cleaning (all text)", "SST", "MLP (held-out)", "MLP + SST (forced)",
           "MLP + SST (soft, p≥1/3)")

MODEL_FILE = "heldout-default.safetensors"

#: The code a held-out model depends on (cases, labels, training): a cached model is reused only
#: while these files are unchanged.
MODEL_SOURCES = ("noisecbr/prepare/tidy.py", "noisecbr/prepare/subtrees.py", *(
                     f"noisecbr/features/{name}.py" for name in (
                         "schema", "tags", "keywords", "tokens", "quantities", "page",
                         "vectors")),
                 "casebase/labelling.py", "training/datasets.py", "training/sources.py",
                 "training/splits.py", "training/weights.py", "training/presets.py",
                 "training/train.py", "training/network.py", "training/calibration.py")
DEFAULT_SMOOTH = (0.01, 0.05, 0.2)


# -- which pages --------------------------------------------------------------------------------
def evaluation_sites(pages: Sequence[LabelledPage], min_pages: int = 3
                     ) -> dict[str, list[LabelledPage]]:
    """Pages of every site with at least ``min_pages`` pages, sites sorted by name."""
    by_site: dict[str, list[LabelledPage]] = defaultdict(list)
    for page in pages:
        by_site[page.site].append(page)
    return {site: by_site[site] for site in sorted(by_site) if len(by_site[site]) >= min_pages}


def duplicate_groups(pages: Sequence[LabelledPage]) -> list[list[str]]:
    """Ids of byte-identical pages (groups of two or more), in page order."""
    groups: dict[str, list[str]] = defaultdict(list)
    for page in pages:
        groups[hashlib.sha256(page.html).hexdigest()].append(page.id)
    return [ids for ids in groups.values() if len(ids) > 1]


# -- 1. the model that never saw the evaluation sites --------------------------------------------
def code_fingerprint() -> str:
    """sha256 over :data:`MODEL_SOURCES` (missing files count as empty)."""
    root = Path(__file__).resolve().parents[1]
    digest = hashlib.sha256()
    for name in MODEL_SOURCES:
        path = root / name
        digest.update(name.encode() + b"\0")
        digest.update(path.read_bytes() if path.is_file() else b"")
    return digest.hexdigest()


def train_heldout_model(dirs: Sequence[Path], held_out: Sequence[str], out: Path, seed: int = 0,
                        processes: int = 2, progress: bool = True) -> tuple[Model, dict]:
    """Train (or reuse from ``out``) a ``default`` model on every page of ``dirs`` whose site is
    not in ``held_out``; validation is a site-grouped 15 % of those training cases.

    The cache is keyed by the held-out sites, the training sets, the seed and
    :func:`code_fingerprint`."""
    from training.datasets import among
    from training.sources import from_pages
    from training.splits import split_by_site
    from training.train import fit

    held_out = sorted(held_out)
    sets = [d.name for d in dirs]
    path = out / MODEL_FILE
    wanted = {"held_out_sites": held_out, "trained_on": sets, "seed": seed,
              "code_sha256": code_fingerprint()}
    if path.is_file():
        model = load_model(path)
        if all(model.metadata.get(k) == v for k, v in wanted.items()):
            info = dict(model.metadata.get("heldout_training", {}))
            info["cached"] = True
            return model, info
        print(f"{path} was trained on other data or code: retraining", file=sys.stderr)
    start = time.perf_counter()
    dataset = from_pages(dirs, processes=processes, progress=progress)
    keep = np.flatnonzero(~among(dataset.sites, held_out))
    dataset = dataset.subset(keep)
    assert not set(held_out) & set(dataset.sites.tolist())
    fit_part, val_part = split_by_site(dataset.sites, (0.85, 0.15), seed)
    train, val = dataset.subset(fit_part), dataset.subset(val_part)
    info = {"cases": len(dataset), "train_cases": len(train), "val_cases": len(val)}
    for name, part in (("train", train), ("val", val)):
        info[f"{name}_pages"] = len(np.unique(part.pages))
        info[f"{name}_sites"] = len(np.unique(part.sites))
    result = fit(train, val, "default", seed=seed, progress=progress,
                 metadata={**wanted, "run_id": f"sitelevel-heldout-seed{seed}"})
    info.update(best_epoch=result.best_epoch, seconds=round(time.perf_counter() - start, 1),
                cached=False)
    result.model.metadata["heldout_training"] = info
    save_model(result.model, path)
    return result.model, info


def validation_pages(dirs: Sequence[Path], held_out: Sequence[str], seed: int = 0
                     ) -> list[LabelledPage]:
    """The pages of the held-out model's validation sites, recomputed without vectors.

    :func:`training.splits.split_by_site` depends only on each site's number of cases (one
    per subtree), so counting subtrees reproduces the split :func:`train_heldout_model` made.
    These pages were used to pick the model's epoch and class offsets, never trained on.
    """
    from noisecbr.prepare.tidy import InputError
    from training.splits import split_by_site

    held = set(held_out)
    pages, sites = [], []
    for directory in dirs:
        for page in read_dataset(directory):
            if page.site in held:
                continue
            try:
                n = len(build_table(tidy(page.html)))
            except InputError:
                continue
            if n:
                pages.append(page)
                sites.append(np.full(n, page.site, dtype=object))
    case_sites = np.concatenate(sites).astype(str)
    _, val_part = split_by_site(case_sites, (0.85, 0.15), seed)
    val_sites = set(np.unique(case_sites[val_part]).tolist())
    return [page for page in pages if page.site in val_sites]


def smoothing_scores(pages: Sequence[LabelledPage], model: Model, cs: Sequence[float]
                     ) -> list[PageResult]:
    """The cleaner without and with smoothing for each ``c`` on ``pages``."""
    cleaners = {METHODS[2]: Cleaner(model)}
    cleaners.update({f"MLP smooth c={c:g}": Cleaner(model, smooth=c) for c in cs})
    results = []
    for page in pages:
        result = PageResult(page=f"{page.dataset}/{page.id}", site=page.site)
        for name, cleaner in cleaners.items():
            result.scores[name] = score_page(cleaner.clean(page.html).text, page.truth)
        results.append(result)
    return results


# -- 2 and 4. leave one page out -----------------------------------------------------------------
@dataclass
class PageResult:
    """One evaluation page's scores per method and its site-style-tree counts."""

    page: str  # dataset/id
    site: str
    scores: dict[str, PageScore] = field(default_factory=dict)
    sst_noisy: int = 0  # maximal SST-noisy nodes of the page
    forced_soft: int = 0  # of those, kept by the soft combination
    other_pages: int = 0  # distinct other pages of the site the SST was fitted on


def _indices_of(noisy: set) -> Callable:
    def evidence(table) -> set[int]:
        return {i for i, element in enumerate(table.elements) if element in noisy}
    return evidence


def _soft_evidence(cleaner: Cleaner, noisy: set, threshold: float, kept: list[int]) -> Callable:
    """SST-noisy nodes the cleaner's own p(noise) puts at or above ``threshold``; the number
    chosen is appended to ``kept``."""
    forced = _indices_of(noisy)

    def evidence(table) -> set[int]:
        candidates = forced(table)
        if candidates:
            p_noise = cleaner.score(Page(table.elements[0], table))[:, NOISE]
            candidates = {i for i in candidates if p_noise[i] >= threshold}
        kept.append(len(candidates))
        return candidates
    return evidence


def _cleaned(cleaner: Cleaner, body, extra_noise: Callable):
    """The result of a tidied ``body`` cleaned with ``extra_noise``'s subtrees removed too."""
    page = Page(body, build_table(body))
    return cleaner.render(page, cleaner.decide(page, extra_noise=extra_noise))


def leave_one_out(
    site_pages: Sequence[LabelledPage],
    model: Model,
    smooth: Sequence[float] = DEFAULT_SMOOTH,
    soft_noise: float = SOFT_NOISE,
) -> list[PageResult]:
    """Score every page of one site, the site style tree fitted on the site's other pages."""
    cleaner = Cleaner(model)
    smoothers = {c: Cleaner(model, smooth=c) for c in smooth}
    bodies = [tidy(page.html) for page in site_pages]  # read-only: fitting does not mutate
    digests = [hashlib.blake2b(etree.tostring(b), digest_size=16).digest() for b in bodies]
    results = []
    for k, page in enumerate(site_pages):
        others = [b for j, b in enumerate(bodies) if j != k]
        sst = SiteStyleTree().fit_bodies(others)
        result = PageResult(page=f"{page.dataset}/{page.id}", site=page.site,
                            other_pages=len({d for j, d in enumerate(digests) if j != k}))
        truth = page.truth

        body = tidy(page.html)
        result.scores[METHODS[0]] = score_page(render_text(body, set()), truth)
        result.scores[METHODS[1]] = score_page(sst.clean(page.html).text, truth)
        result.scores[METHODS[2]] = score_page(cleaner.clean(page.html).text, truth)

        # Combined: the SST's verdicts on the very body the cleaner walks.
        before = etree.tostring(body)
        noisy = sst.noisy_elements(body)
        if etree.tostring(body) != before:
            raise AssertionError(f"noisy_elements mutated the body of {result.page}")
        result.sst_noisy = len(noisy)
        soft_body = tidy(page.html)
        soft_noisy = sst.noisy_elements(soft_body)
        result.scores[METHODS[3]] = score_page(
            _cleaned(cleaner, body, _indices_of(noisy)).text, truth)

        kept: list[int] = []
        soft = _soft_evidence(cleaner, soft_noisy, soft_noise, kept)
        result.scores[METHODS[4]] = score_page(_cleaned(cleaner, soft_body, soft).text, truth)
        result.forced_soft = kept[0] if kept else 0

        for c, smoother in smoothers.items():
            result.scores[f"MLP smooth c={c:g}"] = score_page(smoother.clean(page.html).text,
                                                             truth)
        results.append(result)
    return results


def _macro_f1(precision: np.ndarray, recall: np.ndarray) -> np.ndarray:
    p, r = precision.mean(axis=-1), recall.mean(axis=-1)
    return np.where(p + r > 0, 2 * p * r / np.maximum(p + r, 1e-12), 0.0)


def paired_delta(scores: Sequence[PageScore], baseline: Sequence[PageScore],
                 rounds: int = 2000, seed: int = 0) -> tuple[float, float, float]:
    """F1(scores) − F1(baseline) on the same pages, with a paired 95 % bootstrap interval
    (pages resampled together for both methods)."""
    a = np.array([[s.precision, s.recall] for s in scores])
    b = np.array([[s.precision, s.recall] for s in baseline])
    delta = float(_macro_f1(a[:, 0], a[:, 1]) - _macro_f1(b[:, 0], b[:, 1]))
    if len(a) < 2:
        return delta, delta, delta
    sample = np.random.default_rng(seed).integers(0, len(a), size=(rounds, len(a)))
    deltas = (_macro_f1(a[sample, 0], a[sample, 1]) - _macro_f1(b[sample, 0], b[sample, 1]))
    low, high = np.percentile(deltas, [2.5, 97.5])
    return delta, float(low), float(high)


def summary_rows(results: Sequence[PageResult], methods: Sequence[str],
                 baseline: str | None = None) -> list[dict]:
    """Macro P / R / F1, the F1's 95 % bootstrap half-width and, with ``baseline``, the paired
    F1 difference to that method with its 95 % interval."""
    rows = []
    base = [r.scores[baseline] for r in results] if baseline else None
    for method in methods:
        scores = [r.scores[method] for r in results]
        s = aggregate(scores)
        row = {"method": method, "precision": s.precision, "recall": s.recall,
               "f1": s.f1, "f1_ci95": bootstrap_f1(scores), "pages": s.pages}
        if base is not None:
            delta, low, high = paired_delta(scores, base)
            row["delta_f1"] = None if method == baseline else (
                f"{delta:+.3f} [{low:+.3f}, {high:+.3f}]")
        rows.append(row)
    return rows


# -- 3. SiteLevel(θ) templates against the ground-truth labels ------------------------------------
def template_agreement(site_pages: Sequence[LabelledPage], theta: float = 0.10) -> dict:
    """Counts of template subtrees of one site by ground-truth label, with and without words.

    Both sides use :func:`noisecbr.prepare.tidy.tidy` with its defaults and
    ``getroottree().getpath``; paths found on one side only are counted in ``unmatched`` (0 when
    tidying is deterministic).
    """
    labels = template_labels([page.html for page in site_pages], theta=theta)
    counts: Counter[str] = Counter()
    for page, flags in zip(site_pages, labels, strict=True):
        body = tidy(page.html)
        table = build_table(body)
        truth = label_table(table, page.truth)
        paths = table.paths()
        counts["unmatched"] += len(set(flags) ^ set(paths))
        template = np.array([flags.get(p, False) for p in paths], dtype=bool)
        has_words = truth.words > 0
        parent_template = np.zeros(len(paths), dtype=bool)
        parents = table.parent
        parent_template[1:] = template[parents[1:]]
        maximal = template & ~parent_template
        counts["subtrees"] += len(paths)
        counts["subtrees_words"] += int(has_words.sum())
        counts["noise_words"] += int((has_words & (truth.labels == NOISE)).sum())
        for name, mask in (("all", template), ("words", template & has_words),
                           ("maximal_words", maximal & has_words),
                           ("maximal_4words", maximal & (truth.words >= 4))):
            counts[f"templates_{name}"] += int(mask.sum())
            for label, label_name in enumerate(PAPER_LABELS):
                in_label = mask & (truth.labels == label)
                counts[f"templates_{name}_{label_name}"] += int(in_label.sum())
        # Words (tokens) inside maximal templates, by what the ground truth says of them.
        words = truth.words
        counts["template_words"] += int(words[maximal].sum())
        counts["truth_words_in_templates"] += int(
            np.round(truth.share[maximal] * words[maximal]).sum())
    out = dict(counts)
    out["pages"] = len(site_pages)
    out["distinct_pages"] = len({hashlib.sha256(p.html).digest() for p in site_pages})
    return out


def _share(a: int, b: int) -> float | None:
    return a / b if b else None


def agreement_row(site: str, c: dict) -> dict:
    """A site's row of the template-agreement table from its counts."""
    return {
        "site": site, "pages": c["pages"], "distinct": c["distinct_pages"],
        "subtrees": c["subtrees"], "templates": c["templates_all"],
        "templates_share": _share(c["templates_all"], c["subtrees"]),
        "templates_words": c["templates_words"],
        "precision_words": _share(c["templates_words_noise"], c["templates_words"]),
        "precision_all": _share(c["templates_all_noise"], c["templates_all"]),
        "maximal_words": c["templates_maximal_words"],
        "precision_maximal_words": _share(c["templates_maximal_words_noise"],
                                          c["templates_maximal_words"]),
        "maximal_4words": c["templates_maximal_4words"],
        "precision_maximal_4words": _share(c["templates_maximal_4words_noise"],
                                           c["templates_maximal_4words"]),
        "noise_recall_words": _share(c["templates_words_noise"], c["noise_words"]),
        "truth_word_share_in_templates": _share(c["truth_words_in_templates"],
                                                c["template_words"]),
    }


# -- 4. smoothing time -----------------------------------------------------------------------------
def _best_of(runs: int, fn: Callable, *args) -> float:
    best = float("inf")
    for _ in range(runs):
        start = time.perf_counter()
        fn(*args)
        best = min(best, time.perf_counter() - start)
    return best


def smoothing_times(model: Model, pages: Sequence[LabelledPage], cs: Sequence[float],
                    nodes: int = 5000, runs: int = 3) -> list[dict]:
    """Best-of-``runs`` time of the smoothing DP alone on real and synthetic trees."""
    cleaner = Cleaner(model)
    sized = []
    for page in pages:
        table = build_table(tidy(page.html))
        sized.append((len(table), page, table))
    sized.sort(key=lambda item: item[0])
    chosen = [item for item in sized if item[0] >= nodes][:1] + sized[-1:]
    cases = []
    for _, page, table in chosen:
        noise = cleaner.score(Page(table.elements[0], table))[:, NOISE]
        noise = noise.astype(np.float64).tolist()
        cases.append((f"{page.site} {page.dataset}/{page.id}", table.parent.tolist(), noise))
    bench = _bench_module()
    if bench is not None:
        rng = random.Random(0)
        parents = bench.page_like_tree(nodes, rng)
        cases.append(("synthetic page-like tree (bench_smoothing, seed 0)", parents,
                      [rng.random() for _ in parents]))
    rows = []
    for name, parents, scores in cases:
        for c in cs:
            penalties = subtree_penalties(parents, c)
            seconds = _best_of(runs, isotonic_smooth, parents, scores, penalties)
            rows.append({"tree": name, "nodes": len(parents),
                         "distinct_scores": len(set(scores)), "c": c, "seconds": seconds})
    return rows


def _bench_module():
    path = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_smoothing.py"
    if not path.is_file():
        return None
    spec = importlib.util.spec_from_file_location("bench_smoothing", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# -- output --------------------------------------------------------------------------------------
def _fmt(value, digits: int = 3) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def markdown_table(rows: Sequence[dict], columns: Sequence[tuple[str, str]],
                   digits: int = 3) -> str:
    """``rows`` as a Markdown table of ``columns`` (key, title), numbers to ``digits`` places."""
    head = "| " + " | ".join(title for _, title in columns) + " |"
    rule = "|" + "|".join("---" for _ in columns) + "|"
    body = ["| " + " | ".join(_fmt(row[key], digits) for key, _ in columns) + " |"
            for row in rows]
    return "\n".join([head, rule, *body])


SCORE_COLUMNS = [("method", "method"), ("precision", "P"), ("recall", "R"), ("f1", "F1"),
                 ("f1_ci95", "F1 ±95 %"), ("delta_f1", "ΔF1 vs MLP [paired 95 %]"),
                 ("pages", "pages")]
AGREEMENT_COLUMNS = [
    ("site", "site"), ("pages", "pages"), ("distinct", "distinct"), ("subtrees", "subtrees"),
    ("templates", "templates"), ("templates_share", "share"),
    ("templates_words", "templates w/ words"), ("precision_words", "P(noise | template, words)"),
    ("precision_all", "P(noise | template)"), ("maximal_words", "maximal w/ words"),
    ("precision_maximal_words", "P(noise | maximal, words)"),
    ("maximal_4words", "maximal ≥ 4 words"),
    ("precision_maximal_4words", "P(noise | maximal, ≥ 4 words)"),
    ("noise_recall_words", "noise w/ words found"),
    ("truth_word_share_in_templates", "truth words in templates"),
]
TIME_COLUMNS = [("tree", "tree"), ("nodes", "nodes"), ("distinct_scores", "distinct scores"),
                ("c", "c"), ("seconds", "seconds")]


def _git_head() -> str | None:
    import subprocess

    try:
        return subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True,
                              cwd=Path(__file__).resolve().parent, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None


def _arguments(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data", type=Path, help="the modernweb-dev folder")
    parser.add_argument("--dragnet", type=Path, help="also train the held-out model on dragnet")
    parser.add_argument("--out", type=Path, required=True, help="model cache and results")
    parser.add_argument("--min-pages", type=int, default=3)
    parser.add_argument("--theta", type=float, default=0.10)
    parser.add_argument("--smooth", type=float, nargs="+", default=list(DEFAULT_SMOOTH))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--processes", type=int, default=2, help="for building training cases")
    parser.add_argument("--no-smooth-check", dest="smooth_check", action="store_false",
                        help="skip the smoothing check on the model's validation pages")
    return parser.parse_args(argv)


def _per_site(sites: dict, results: list[PageResult]) -> list[dict]:
    """Per evaluation site: pages, each method's F1, SST-noisy and soft-forced nodes."""
    per_site = []
    for site in sites:
        mine = [r for r in results if r.site == site]
        row = {"site": site, "pages": len(mine)}
        for method in METHODS:
            row[method] = aggregate([r.scores[method] for r in mine]).f1
        row["sst_noisy"] = sum(r.sst_noisy for r in mine)
        row["forced_soft"] = sum(r.forced_soft for r in mine)
        per_site.append(row)
    return per_site


def _agreement(sites: dict, theta: float) -> tuple[dict, list[dict], Counter]:
    """SiteLevel templates against the ground truth: counts per site, table rows, totals."""
    agreement = {site: template_agreement(site_pages, theta) for site, site_pages in sites.items()}
    total: Counter[str] = Counter()
    for counts in agreement.values():
        total.update(counts)
    rows = [agreement_row(site, c) for site, c in agreement.items()]
    rows.append(agreement_row(f"all ({len(sites)} sites)", dict(total)))
    return agreement, rows, total


def _smoothing_check(dirs: list[Path], sites: dict, seed: int, training: dict, model: Model,
                     smooth: Sequence[float], smooth_methods: list[str]) -> list[dict]:
    """Smoothing scores on the held-out model's own validation pages (none of the evaluation
    sites), printed and returned as table rows."""
    val = validation_pages(dirs, list(sites), seed)
    recorded = training.get("val_pages")
    if recorded is not None and recorded != len(val):
        raise AssertionError(f"recomputed {len(val)} validation pages, the model's "
                             f"training recorded {recorded}")
    checked = smoothing_scores(val, model, smooth)
    rows = summary_rows(checked, [METHODS[2]] + smooth_methods[1:], baseline=METHODS[2])
    print(f"\nSmoothing check on the held-out model's {len(val)} validation pages "
          f"({len({p.site for p in val})} sites, none of the evaluation sites):")
    print(markdown_table(rows, SCORE_COLUMNS))
    return rows


def main(argv: Sequence[str] | None = None) -> dict:
    """Run the whole evaluation (see the module docstring); print the tables and write
    ``sitelevel.json`` into ``--out``."""
    argv = list(sys.argv[1:] if argv is None else argv)
    args = _arguments(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    provenance = {"git_head": _git_head(), "code_sha256": code_fingerprint()}

    pages = list(read_dataset(args.data))
    sites = evaluation_sites(pages, args.min_pages)
    evaluation = [page for site_pages in sites.values() for page in site_pages]
    duplicates = duplicate_groups(evaluation)
    print(f"{len(sites)} sites with ≥ {args.min_pages} pages, {len(evaluation)} pages; "
          f"byte-identical groups: {duplicates}")

    dirs = [args.data] + ([args.dragnet] if args.dragnet else [])
    model, training = train_heldout_model(dirs, list(sites), args.out, args.seed, args.processes)
    print(f"held-out model: {training}")

    t0 = time.perf_counter()
    results: list[PageResult] = []
    for site_pages in sites.values():
        results.extend(leave_one_out(site_pages, model, args.smooth))
    loo_seconds = time.perf_counter() - t0
    main_rows = summary_rows(results, METHODS, baseline=METHODS[2])
    smooth_methods = [METHODS[2]] + [f"MLP smooth c={c:g}" for c in args.smooth]
    smooth_rows = summary_rows(results, smooth_methods, baseline=METHODS[2])
    per_site = _per_site(sites, results)
    print("\nLeave one page out (macro over pages):")
    print(markdown_table(main_rows, SCORE_COLUMNS))
    print("\nPer site F1:")
    print(markdown_table(per_site, [("site", "site"), ("pages", "pages")]
                         + [(m, m) for m in METHODS]
                         + [("sst_noisy", "SST-noisy nodes"), ("forced_soft", "soft-forced")]))

    t0 = time.perf_counter()
    agreement, agreement_rows, total = _agreement(sites, args.theta)
    template_seconds = time.perf_counter() - t0
    print(f"\nSiteLevel(θ={args.theta:g}) templates vs ground truth "
          f"(unmatched paths: {total['unmatched']}):")
    print(markdown_table(agreement_rows, AGREEMENT_COLUMNS))

    print("\nSmoothing (held-out model):")
    print(markdown_table(smooth_rows, SCORE_COLUMNS))
    check_rows = (_smoothing_check(dirs, sites, args.seed, training, model, args.smooth,
                                   smooth_methods) if args.smooth_check else [])
    times = smoothing_times(model, evaluation, args.smooth)
    print(markdown_table(times, TIME_COLUMNS))

    report = {
        "command": " ".join(["python -m experiments.sitelevel_eval", *argv]),
        **provenance,
        "sites": {site: [p.id for p in site_pages] for site, site_pages in sites.items()},
        "duplicates": duplicates,
        "training": training,
        "leave_one_out": main_rows, "per_site": per_site,
        "pages": [{"page": r.page, "site": r.site, "other_pages": r.other_pages,
                   "sst_noisy": r.sst_noisy, "forced_soft": r.forced_soft,
                   **{m: {"p": s.precision, "r": s.recall} for m, s in r.scores.items()}}
                  for r in results],
        "templates": agreement_rows, "template_counts": agreement,
        "smoothing": smooth_rows, "smoothing_check": check_rows, "smoothing_times": times,
        "seconds": {"leave_one_out": round(loo_seconds, 1),
                    "templates": round(template_seconds, 1),
                    "total": round(time.perf_counter() - start, 1)},
    }
    (args.out / "sitelevel.json").write_text(json.dumps(report, indent=1, default=float))
    print(f"\n{report['seconds']} → {args.out / 'sitelevel.json'}")
    return report


if __name__ == "__main__":
    main()
