"""The engine's modules one page passes through: every Python-level call of ``Cleaner.clean``
(and the result's text) that enters a module of noisecbr from another module, in order, counted
by module. A measure of how a page's path crosses the house (docs/architecture.md).

    python benchmarks/module_path.py [PAGE]      # default: examples/tide-pools.html
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

from noisecbr.cleaner import Cleaner


def entries(html: bytes) -> list[tuple[str, str]]:
    """(module, function) of each call into a noisecbr module from outside it, in order; the
    page is cleaned once before, so that lazy imports and caches are not counted."""
    cleaner = Cleaner()
    cleaner.clean(html)
    seq: list[tuple[str, str]] = []

    def profile(frame, event, arg) -> None:
        if event != "call":
            return
        module = frame.f_globals.get("__name__", "")
        caller = frame.f_back.f_globals.get("__name__", "") if frame.f_back else ""
        if module.startswith("noisecbr") and caller != module:
            seq.append((module, frame.f_code.co_name))

    sys.setprofile(profile)
    try:
        cleaner.clean(html).text  # noqa: B018 - the text is what is asked for
    finally:
        sys.setprofile(None)
    return seq


def main() -> None:
    page = Path(sys.argv[1] if len(sys.argv) > 1 else "examples/tide-pools.html")
    seq = entries(page.read_bytes())
    print(f"{len({m for m, _ in seq})} modules, {len(seq)} entries")
    for module, count in Counter(m for m, _ in seq).most_common():
        print(f"  {count:3d} {module}")
    print(" -> ".join(f"{m.removeprefix('noisecbr.')}.{f}" for m, f in seq))


if __name__ == "__main__":
    main()
