"""The F1 gate's figures (``tests/test_f1_gate.py``): the embedded model's shingle F1 on fixed
samples of the development sets, recorded in ``tests/f1_gate.json``.

    python benchmarks/f1_gate.py            # measure, and print beside the recorded figures
    python benchmarks/f1_gate.py --record   # measure and write them (after retraining)
    python benchmarks/f1_gate.py --data /path/to/shared/data --model run/model.safetensors

A sample is every k-th page (in id order) of a set (``samples`` in the JSON file), so it is the
same pages on every run. cleaneval-dev is not in the embedded model's training data;
modernweb-dev, dragnet, fundus and utomo-chaos2017 are, so their figures guard against
regressions (the last two: of the article-body convention), not generalisation.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GATE = ROOT / "tests" / "f1_gate.json"
#: The development data beside the checkout, as the tests look for it.
DEFAULT_DATA = Path(os.environ.get("NOISECBR_SHARED_DATA", ROOT.parent / "shared" / "data"))


def sample_f1(data: Path, every: int, model: str | None = None) -> float:
    """Shingle F1 (of the mean P and mean R, as ``noisecbr bench --truth article``) of
    ``model`` (the embedded one by default) on every ``every``-th page of the set ``data``,
    against the article part of the ground truth: reader comments (after dragnet's comments
    marker) are not main content, and the cleaner keeps them apart. A page that is not HTML
    scores as an empty text."""
    from noisecbr.cleaner import Cleaner
    from noisecbr.eval.datasets import read_dataset, split_truth
    from noisecbr.eval.metric import aggregate, score_page
    from noisecbr.prepare.tidy import InputError

    cleaner = Cleaner(model)
    scores = []
    for k, page in enumerate(read_dataset(data)):
        if k % every:
            continue
        try:
            text = cleaner.clean(page.html, url=page.url).text
        except InputError:
            text = ""
        scores.append(score_page(text, split_truth(page.truth)[0]))
    return aggregate(scores).f1


def main(argv: list[str] | None = None) -> int:
    """Measure every sample of the gate file; with ``--record``, write the figures into it."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--record", action="store_true", help="write the figures to the gate")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--model", help="a model artifact (default: the embedded model)")
    parser.add_argument("--gate", type=Path, default=GATE)
    args = parser.parse_args(argv)
    gate = json.loads(args.gate.read_text())
    for name, sample in gate["samples"].items():
        if not (args.data / name / "ground-truth.json").is_file():
            print(f"{name}: no data at {args.data / name}", file=sys.stderr)
            return 1
        f1 = round(sample_f1(args.data / name, sample["every"], args.model), 4)
        print(f"{name}: F1 {f1:.4f} (recorded {gate['f1'].get(name, float('nan')):.4f})")
        gate["f1"][name] = f1
    if args.record:
        args.gate.write_text(json.dumps(gate, indent=2) + "\n")
        print(f"recorded in {args.gate}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
