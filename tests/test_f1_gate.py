"""F1 gate: the embedded model's shingle F1 on fixed samples of the development sets must not
drop more than ``tolerance`` below the figures recorded in ``tests/f1_gate.json``.

After retraining the embedded model, re-record the figures with

    python benchmarks/f1_gate.py --record

(``benchmarks/f1_gate.py`` says how the samples are drawn and measures them for this test.)
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
from conftest import SHARED_DATA

ROOT = Path(__file__).resolve().parents[1]
GATE = Path(__file__).with_name("f1_gate.json")


def _script():
    spec = importlib.util.spec_from_file_location("f1_gate", ROOT / "benchmarks" / "f1_gate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("name", sorted(json.loads(GATE.read_text())["samples"]))
def test_embedded_model_f1_does_not_drop(name):
    gate = json.loads(GATE.read_text())
    data = SHARED_DATA / name
    if not (data / "ground-truth.json").is_file():
        pytest.skip(f"development data not found at {data} (set NOISECBR_SHARED_DATA)")
    recorded = gate["f1"][name]
    f1 = _script().sample_f1(data, gate["samples"][name]["every"])
    assert f1 >= recorded - gate["tolerance"], (
        f"{name}: F1 {f1:.4f} is more than {gate['tolerance']} below the recorded {recorded:.4f}"
        " (re-record after retraining: python benchmarks/f1_gate.py --record)")


def test_the_gate_records_what_it_measures(tmp_path):
    # --record writes the measured figure of each sample into the gate file.
    import shutil

    source = SHARED_DATA / "cleaneval-dev"
    if not (source / "ground-truth.json").is_file():
        pytest.skip(f"development data not found at {source} (set NOISECBR_SHARED_DATA)")
    data = tmp_path / "data" / "tiny"
    shutil.copytree(source, data)
    gate = tmp_path / "gate.json"
    gate.write_text(json.dumps({"tolerance": 0.01, "samples": {"tiny": {"every": 20}},
                                "f1": {"tiny": 0.0}}))
    assert _script().main(["--record", "--data", str(tmp_path / "data"), "--gate", str(gate)]) == 0
    recorded = json.loads(gate.read_text())["f1"]["tiny"]
    assert 0.5 < recorded <= 1.0
