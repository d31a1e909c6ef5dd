"""The README's promises that a test can keep: CI runs its commands, and nothing else."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _readme_commands() -> list[str]:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"## Two commands\n+```bash\n(.*?)```", readme, re.DOTALL)
    assert block, "the README has no 'Two commands' bash block"
    return [line for line in block[1].splitlines() if line.strip() and not line.startswith("#")]


def test_ci_runs_exactly_the_readme_commands():
    lines = [line for line in (ROOT / ".ci" / "run").read_text().splitlines()
             if line.strip() and not line.startswith(("#", "set ", "cd "))]
    # System packages may come first (lines that run apt-get), the house's checks last (the
    # linter, the pure path, the identity sample: .ci/house); every other line is the README's.
    commands = [line for line in lines if "apt-get install" not in line]
    assert commands[-1] == "bash .ci/house"
    assert len(_readme_commands()) == 2
    assert commands[:-1] == _readme_commands()


def test_readme_stays_short():
    assert len((ROOT / "README.md").read_text(encoding="utf-8").splitlines()) < 200
