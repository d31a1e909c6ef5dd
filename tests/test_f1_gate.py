"""F1 gate: the embedded model's shingle F1 on fixed samples of the development sets must not
drop more than ``tolerance`` below the figures recorded in ``tests/f1_gate.json``.

The samples are every k-th page (in id order) of each set, so they are the same pages on every
run. cleaneval-dev is not in the embedded model's training data; modernweb-dev and dragnet are,
so their figures guard against regressions, not generalisation. After retraining the embedded
model, re-record: ``python tests/test_f1_gate.py --record``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

GATE = Path(__file__).with_name("f1_gate.json")


def sample_f1(data: Path, every: int) -> float:
    """Shingle F1 (of the mean P and mean R, as ``noisecbr bench``) of the embedded model on
    every ``every``-th page of the set ``data``."""
    from noisecbr.cleaner import Cleaner
    from noisecbr.layout import read_dataset
    from noisecbr.metric import aggregate, score_page
    from noisecbr.tidy import InputError

    cleaner = Cleaner()
    scores = []
    for k, page in enumerate(read_dataset(data)):
        if k % every:
            continue
        try:
            text = cleaner.clean(page.html, url=page.url).text
        except InputError:
            text = ""
        scores.append(score_page(text, page.truth))
    return aggregate(scores).f1


def _shared_data() -> Path:
    from conftest import SHARED_DATA

    return SHARED_DATA


@pytest.mark.parametrize("name", sorted(json.loads(GATE.read_text())["samples"]))
def test_embedded_model_f1_does_not_drop(name):
    gate = json.loads(GATE.read_text())
    data = _shared_data() / name
    if not (data / "ground-truth.json").is_file():
        pytest.skip(f"development data not found at {data} (set NOISECBR_SHARED_DATA)")
    recorded = gate["f1"][name]
    f1 = sample_f1(data, gate["samples"][name]["every"])
    assert f1 >= recorded - gate["tolerance"], (
        f"{name}: F1 {f1:.4f} is more than {gate['tolerance']} below the recorded {recorded:.4f}")


if __name__ == "__main__" and sys.argv[1:] == ["--record"]:
    sys.path.insert(0, str(Path(__file__).parent))
    gate = json.loads(GATE.read_text())
    for name, sample in gate["samples"].items():
        gate["f1"][name] = round(sample_f1(_shared_data() / name, sample["every"]), 4)
        print(name, gate["f1"][name])
    GATE.write_text(json.dumps(gate, indent=2) + "\n")
