"""CPU milliseconds per page of each stage of ``Cleaner.clean``, median and mean over a set.

    python benchmarks/stages.py ../shared/data/dragnet
    python benchmarks/stages.py ../shared/data/modernweb-dev --limit 300
    python benchmarks/stages.py ../shared/data/dragnet --against main   # before → after

The stages as ``Cleaner.clean`` runs them: tidy (decode + parse + remove the invisible), the
element table, the scores' page-wide inputs, the walk, the page's metadata and headline, the
text (the comments too where the revision renders them eagerly), and freeing the page's tree and
table. Since the walk scores only the subtrees it reaches (2026-11-26,
``noisecbr.pipeline.score_and_decide``), "scores" is what every row's scores read, found once
(the page's quantities, the lexical fields' inputs and running sums) and "walk" the walk with
its rows' vectors, pooled fields and network (with the cleaner's one BLAS thread), the fallback
and the rules; for a revision before it, "scores" is the vectors, the lexical inputs and the
network over every subtree, and "walk" the walk (with the fallback). Every page is cleaned once
to warm the caches, then timed (``time.process_time``) a second time.

``--against REV`` also times the ``noisecbr`` package of git revision REV (extracted and
imported under another name), page by page alternately with the working tree's: on a shared
machine the load then hits both alike, where two runs minutes apart differ by more than a
speed change does.
"""

from __future__ import annotations

import argparse
import gzip
import importlib
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from io import BytesIO
from pathlib import Path
from types import SimpleNamespace

import numpy as np

STAGES = ("tidy", "table", "scores", "walk", "metadata", "text", "free")
#: What a caller asks of the result afterwards, timed apart (not in the total: rendered on
#: demand): the Markdown (0 for a revision without it).
ON_DEMAND = ("markdown",)
#: The name a revision's package is imported under, beside the working tree's ``noisecbr``.
AGAINST_PACKAGE = "noisecbr_against"


def load_api(package: str) -> SimpleNamespace:
    """The functions the stages call, from ``package`` (``noisecbr`` or a revision's copy):
    the pipeline's stages (:mod:`noisecbr.pipeline`), or for a revision from before them
    (``--against``) what its ``Cleaner.clean`` called (:func:`_legacy_api`)."""
    module = {name: _stage_module(package, name) for name in ("cleaner", "subtrees", "tidy")}
    try:
        module["features"] = importlib.import_module(f"{package}.features")
    except ModuleNotFoundError:  # a revision from before noisecbr.features
        module["features"] = importlib.import_module(f"{package}.vectors")
    try:
        lexical = importlib.import_module(f"{package}.features.lexical").lexical_inputs
    except ModuleNotFoundError:  # a revision from before the lexical fields
        lexical = None
    api = SimpleNamespace(
        lexical_inputs=lexical, package=package, Cleaner=module["cleaner"].Cleaner,
        tidy=module["tidy"].tidy, InputError=module["tidy"].InputError,
        build_table=module["subtrees"].build_table, vectorize=module["features"].vectorize)
    try:
        pipeline = importlib.import_module(f"{package}.pipeline")
    except ModuleNotFoundError:
        return _legacy_api(api, package)
    backend = _stage_module(package, "backend").BACKEND
    api.kernel = backend.name
    api.lazy = getattr(pipeline, "score_and_decide", None) is not None
    if api.lazy:
        api.Page = pipeline.Page
        api.row_scores = lambda cleaner, page: pipeline.RowScores(page, cleaner.model)
        api.lazy_decide = lambda cleaner, page, scores: pipeline.score_and_decide(
            page, cleaner.model, _thresholds(cleaner, page), scores=scores)
    rows = _stage_module(package, "rows")
    api.blas = getattr(rows, "blas_controller", None) or rows._blas_controller
    api.score = lambda cleaner, body, table: _scored(pipeline, cleaner, body, table)
    api.decide = lambda cleaner, page, proba: pipeline.decide(page, proba, _thresholds(cleaner,
                                                                                      page))
    api.metadata = lambda page: (page.metadata, page.headline)
    api.render = lambda cleaner, page, decided, _: pipeline.render(page, decided,
                                                                  comments=cleaner.comments)
    return api


#: Where a module went when the engine's modules moved into stage folders (2026-11-27), and
#: where a revision from before has it: at the top (its scores' rows in ``pipeline``).
_STAGE_OF = {"subtrees": "prepare", "tidy": "prepare", "backend": "native", "rows": "score"}
_BEFORE_STAGES = {"rows": "pipeline"}


def _stage_module(package: str, name: str):
    """``package``'s module ``name``, in its stage folder or, in an older revision, at the top."""
    stage = _STAGE_OF.get(name)
    try:
        return importlib.import_module(f"{package}.{stage}.{name}" if stage
                                       else f"{package}.{name}")
    except ModuleNotFoundError:
        return importlib.import_module(f"{package}.{_BEFORE_STAGES.get(name, name)}")


def _thresholds(cleaner, page):
    """The thresholds the cleaner walks the page by (each page's mode since favor="auto")."""
    pick = getattr(cleaner, "thresholds_for", None)
    return cleaner.thresholds if pick is None else pick(page)


def _scored(pipeline, cleaner, body, table) -> tuple[object, np.ndarray]:
    """The page of ``body`` and its scores as the cleaner walks them."""
    page = pipeline.Page(body, table)
    return page, pipeline.score(page, cleaner.model, smooth=cleaner.smooth)


def _legacy_api(api: SimpleNamespace, package: str) -> SimpleNamespace:
    """The stages of a revision from before the pipeline's stages (2026-11-26): its
    ``Cleaner`` methods and the private helpers its ``clean`` called (an old revision's code
    cannot be reached otherwise)."""
    cleaner_module = importlib.import_module(f"{package}.cleaner")
    fallback = importlib.import_module(f"{package}.fallback")
    api.kernel = getattr(importlib.import_module(f"{package}.subtrees"), "KERNEL", "python")
    api.blas = cleaner_module._blas_controller
    def score(cleaner, body, table):
        proba = cleaner.scores(table)
        return (body, table, proba), proba  # the old result needed the scores again

    def decide(cleaner, page, proba):
        body, table, _ = page
        if hasattr(cleaner, "settle"):
            return cleaner.settle(table, proba)
        decision = cleaner.walk(table, proba)
        if fallback.kept_words(table, decision) < fallback.FALLBACK_MIN_WORDS:
            root = fallback.fallback_subtree(table, proba)
            if root is not None:
                return fallback.fall_back(table, cleaner.walk(table, proba, start=root),
                                          root), True
        return decision, False

    def metadata(page):
        body, table, _ = page
        try:
            return cleaner_module._headline(body, table)
        except TypeError:  # _headline(body) before the table was handed in
            return cleaner_module._headline(body)

    def render(cleaner, page, decided, found):
        (body, table, proba), (decision, fell_back) = page, decided
        # The decisions' sources: one value since the site evidence, two arguments before.
        sources = ((cleaner_module._Sources(),) if hasattr(cleaner_module, "_Sources")
                   else (None, None))
        return cleaner_module._result(table, body, decision, proba, None, *found,
                                      fell_back, cleaner.comments, *sources)

    api.score, api.decide, api.metadata, api.render = score, decide, metadata, render
    return api


def time_page(api: SimpleNamespace, cleaner, html: bytes) -> dict[str, float]:
    """CPU ms of each stage for one page (the same steps as Cleaner.clean)."""
    clock = time.process_time
    ms: dict[str, float] = {}
    start = clock()

    def lap(stage: str | None) -> None:
        """The time since the last lap is ``stage``'s (None: untimed)."""
        nonlocal start
        now = clock()
        if stage is not None:
            ms[stage] = (now - start) * 1000
        start = now

    body = api.tidy(html)
    lap("tidy")
    table = api.build_table(body)
    lap("table")
    if getattr(api, "lazy", False):
        page = api.Page(body, table)
        vectors = proba = api.row_scores(cleaner, page)  # freed with the page ("free")
        lap("scores")
        decided = api.lazy_decide(cleaner, page, proba)
        lap("walk")
    else:
        vectors, proba, page, decided = _full_scores_and_walk(api, cleaner, body, table, lap)
    found = api.metadata(page)
    lap("metadata")
    result = api.render(cleaner, page, decided, found)
    lap("text")
    markdown_start = clock()
    if hasattr(result, "to_markdown"):
        result.to_markdown()
    markdown = (clock() - markdown_start) * 1000
    start = clock()
    # The metadata too: a revision's headline element would keep the tree alive past "free".
    del body, table, vectors, proba, page, decided, result, found
    lap("free")
    ms["total"] = sum(ms[stage] for stage in STAGES)
    ms["markdown"] = markdown
    return ms


def _full_scores_and_walk(api: SimpleNamespace, cleaner, body, table, lap) -> tuple:
    """A revision from before the lazy walk: its vectors, lexical inputs and network over
    every subtree ("scores"), then its walk ("walk")."""
    vectors = api.vectorize(table)
    lexical = None
    if getattr(cleaner.model, "lexicon", None) is not None and api.lexical_inputs is not None:
        lexical = api.lexical_inputs(table)
    with api.blas().limit(limits=1, user_api="blas"):
        if lexical is None:
            cleaner.model.predict_proba(vectors)
        else:
            cleaner.model.predict_proba(vectors, lexical)
    lap("scores")
    # The padded scores the cleaner walks (computed again: untimed).
    page, proba = api.score(cleaner, body, table)
    lap(None)
    decided = api.decide(cleaner, page, proba)
    lap("walk")
    return vectors, proba, page, decided


def extract_revision(revision: str, folder: Path) -> None:
    """Write git revision ``revision``'s ``noisecbr/`` to ``folder/AGAINST_PACKAGE``."""
    archive = subprocess.run(["git", "archive", revision, "noisecbr"], check=True,
                             capture_output=True, cwd=Path(__file__).resolve().parents[1]).stdout
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(folder, filter="data")
    (folder / "noisecbr").rename(folder / AGAINST_PACKAGE)
    if (folder / AGAINST_PACKAGE / "_kernel.pyx").exists():
        build_kernel(folder)


#: Builds a revision's compiled kernel in place, as setup.py builds the working tree's.
_BUILD_SCRIPT = f"""
import lxml
from Cython.Build import cythonize
from setuptools import Extension, setup
setup(ext_modules=cythonize(
    [Extension("{AGAINST_PACKAGE}._kernel", ["{AGAINST_PACKAGE}/_kernel.pyx"],
               include_dirs=lxml.get_include())],
    compiler_directives={{"language_level": 3}}, quiet=True),
    script_args=["build_ext", "--inplace", "-q"])
"""


def build_kernel(folder: Path) -> None:
    """Compile the revision's kernel in ``folder``: without it the revision would run its
    pure Python path and the comparison would time that."""
    built = subprocess.run([sys.executable, "-c", _BUILD_SCRIPT], check=False, cwd=folder,
                           capture_output=True, text=True)
    if built.returncode:
        sys.exit(f"cannot compile the revision's kernel (pip install 'noisecbr[bench]' "
                 f"brings Cython):\n{built.stderr[-2000:]}")


def _embedded(api: SimpleNamespace) -> str:
    """The path of the embedded model of ``api``'s package."""
    module = importlib.import_module(api.package)
    return str(Path(module.__file__).parent / "data" / "default.safetensors")


def main() -> None:
    """Print the median and mean ms of every stage (before → after with --against)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dataset", type=Path)
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--against", metavar="REV", help="also time this git revision's code")
    args = parser.parse_args()
    paths = sorted((args.dataset / "html").glob("*.html.gz"))[: args.limit]
    pages = [gzip.decompress(path.read_bytes()) for path in paths]
    versions = {"": load_api("noisecbr")}
    if args.against:
        folder = Path(tempfile.mkdtemp(prefix="stages-"))
        extract_revision(args.against, folder)
        sys.path.insert(0, str(folder))
        versions = {args.against: load_api(AGAINST_PACKAGE), "working tree": versions[""]}
    # Each revision cleans with its own embedded model (a revision's package would otherwise
    # find the working tree's, perhaps of another vector schema).
    cleaners = {name: api.Cleaner(_embedded(api)) for name, api in versions.items()}
    rows: dict[str, list[dict[str, float]]] = {name: [] for name in versions}
    input_errors = tuple(api.InputError for api in versions.values())
    names = list(versions)
    for k, html in enumerate(pages):
        try:
            for cleaner in cleaners.values():
                cleaner.clean(html)
        except input_errors:
            continue
        for name in names if k % 2 else names[::-1]:  # alternate who goes first
            rows[name].append(time_page(versions[name], cleaners[name], html))
    print(f"{args.dataset.name}: {len(rows[names[0]])} pages, CPU ms per page, median (mean)"
          + (f": {' → '.join(versions)}" if args.against else "")
          + f" (kernel: {', '.join(api.kernel for api in versions.values())})")
    for stage in (*STAGES, "total", *ON_DEMAND):
        cells = [f"{statistics.median(values):6.2f} ({statistics.mean(values):6.2f})"
                 for values in ([row[stage] for row in rows[name]] for name in versions)]
        print(f"  {stage:8s} " + "  →  ".join(cells))


if __name__ == "__main__":
    main()
