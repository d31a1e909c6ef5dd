"""Loading damaged and oversized model files: the error each gives, and the loader's peak RSS.

    python benchmarks/model_files.py [--unused-gb G]

Each case is the embedded model written again with one thing broken (the cases of
tests/test_model_files.py), plus a file cut short and a file carrying an unused tensor of G GB
(default 2; a sparse file, so it costs no disk). Each load runs in a fresh ``python`` child,
which prints its outcome and its own peak RSS; the output is a Markdown table.
"""

from __future__ import annotations

import argparse
import json
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

_TESTS = Path(__file__).resolve().parents[1] / "tests"

#: The child: load the file, print "peak-RSS-MB outcome".
CHILD = r"""
import resource, sys
from noisecbr.score.model import ModelError
from noisecbr.score.artifact import load_model
try:
    model = load_model(sys.argv[1])
    outcome = f"loaded ({len(model.labels)} classes)"
except ModelError as error:
    outcome = "ModelError: " + str(error).replace(sys.argv[1], "FILE")
except Exception as error:
    outcome = f"UNEXPECTED {type(error).__name__}: {error}"
print(f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} {outcome}")
"""


def with_unused_tensor(good: Path, path: Path, gigabytes: float) -> None:
    """``good`` with one more tensor of ``gigabytes`` GB of float32 that the model never uses,
    its data a hole in a sparse file (the safetensors layout: an 8-byte header length, the JSON
    header, then the data)."""
    raw = good.read_bytes()
    (length,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + length])
    data = raw[8 + length:]
    size = int(gigabytes * 1e9) // 4 * 4
    header["optimizer.state"] = {"dtype": "F32", "shape": [size // 4],
                                 "data_offsets": [len(data), len(data) + size]}
    encoded = json.dumps(header).encode()
    encoded += b" " * (-len(encoded) % 8)  # the data starts 8-byte aligned
    with path.open("wb") as handle:
        handle.write(struct.pack("<Q", len(encoded)) + encoded + data)
        handle.truncate(8 + len(encoded) + len(data) + size)


def files(directory: Path, gigabytes: float) -> dict[str, Path]:
    """The cases: name → model file."""
    sys.path.insert(0, str(_TESTS))
    from test_model_files import CASES, _break, _parts, write

    made: dict[str, Path] = {}
    for case in ("good", *CASES):
        folder = directory / case
        folder.mkdir()
        made[case] = Path(write(folder, *(_parts() if case == "good" else _break(case))))
    truncated = directory / "truncated.safetensors"
    truncated.write_bytes(made["good"].read_bytes()[:-1000])
    made["truncated"] = truncated
    unused = directory / "unused-tensor.safetensors"
    with_unused_tensor(made["good"], unused, gigabytes)
    made[f"unused-{gigabytes:g}GB-tensor"] = unused
    return made


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--unused-gb", type=float, default=2.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        print("| case | peak RSS MB | outcome |\n|---|---|---|")
        for name, path in files(Path(directory), args.unused_gb).items():
            child = subprocess.run([sys.executable, "-c", CHILD, str(path)], capture_output=True,
                                   text=True, check=False, cwd=directory)
            rss, outcome = (child.stdout.strip() or f"- died: {child.stderr[-80:]}").split(" ", 1)
            print(f"| {name} | {rss} | {outcome} |", flush=True)


if __name__ == "__main__":
    main()
