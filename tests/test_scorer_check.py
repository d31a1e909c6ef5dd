"""benchmarks/scorer_check.py: its scorer specs, and its --quick run on the development data
(the slow set: a few minutes a scorer)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import SHARED_DATA, needs_torch, slow

ROOT = Path(__file__).resolve().parents[1]


def _check():
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import scorer_check
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    return scorer_check


def test_scorer_specs_name_presets_variants_and_trees():
    check = _check()
    name, preset = check.preset_of("default")
    assert name == "default" and preset.kind_inputs and preset.encoding_bins == 0
    name, preset = check.preset_of("encoded")
    assert preset.name == "encoded" and preset.encoding_bins == 8 and preset.kind_inputs
    name, preset = check.preset_of("enc16=encoded,encoding_bins=16,hidden=128/64")
    assert (name, preset.name, preset.encoding_bins, preset.hidden) == (
        "enc16", "enc16", 16, (128, 64))
    assert check.preset_of("trees") == ("trees", None)
    with pytest.raises(SystemExit, match="unknown scorer"):
        check.preset_of("forest")
    with pytest.raises(SystemExit, match="no field"):
        check.preset_of("x=encoded,depth=3")


def test_the_table_gives_means_of_seeds_and_their_spread():
    check = _check()
    figures = {k: 0.5 for k in ("wcxb", *check.KINDS, "dragnet_p", "dragnet_r", "dragnet_f1")}
    runs = {"0": {"summary": {**figures, "wcxb": 0.80}, "minutes": 2.0, "score_ms": 3.0},
            "1": {"summary": {**figures, "wcxb": 0.84}, "minutes": 4.0, "score_ms": 5.0}}
    row = check.table({"encoded": runs}).splitlines()[1].split()
    assert row[:3] == ["encoded", "2", "0.820"]
    assert row[-3:] == ["3.0", "4.00", "0.040"]


@slow
@needs_torch
@pytest.mark.skipif(not (SHARED_DATA / "wcxb-dev").is_dir(),
                    reason=f"no development data at {SHARED_DATA}")
def test_quick_check_runs_end_to_end(tmp_path):
    out = tmp_path / "check.json"
    run = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "scorer_check.py"),
                          str(SHARED_DATA), "--quick", "--scorer", "default", "--scorer",
                          "encoded", "--seeds", "0", "--out", str(out), "--cache",
                          str(tmp_path / "cache")], capture_output=True, text=True, check=True)
    lines = run.stdout.strip().splitlines()
    assert [line.split()[0] for line in lines[1:]] == ["default", "encoded"]
    results = json.loads(out.read_text())
    for name in ("default", "encoded"):
        summary = results[name]["0"]["summary"]
        assert 0.5 < summary["wcxb"] <= 1 and 0.5 < summary["dragnet_f1"] <= 1
        assert results[name]["0"]["score_ms"] > 0
