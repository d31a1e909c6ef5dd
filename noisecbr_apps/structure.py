"""How much of a page's structure an extractor's text keeps: code lines and table rows.

The shingle F1 cannot see structure (it reads words). Here, of the page's ``<pre>`` lines and
table rows that an extractor's text *kept* (their words are in it), the share that came out
*intact*: a code line as a line of the text with its indentation, a table row's cells (two or
more with text) on one line, in order. ``noisecbr bench --structure`` prints it for every
extractor of the run.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from noisecbr.prepare.tidy import InputError, tidy
from noisecbr.render.text import verbatim_text

__all__ = ["PageStructure", "StructureCounts", "page_structure", "structure_counts"]

_SPACES = re.compile(r"\s+")


def _normal(text: str) -> str:
    return _SPACES.sub(" ", text).strip()


@dataclass(frozen=True)
class PageStructure:
    """A page's code lines (indentation kept) and table rows (their cells' texts)."""

    code_lines: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]


@dataclass
class StructureCounts:
    """Of the page's code lines and table rows, how many a text kept, and kept intact."""

    code_kept: int = 0
    code_intact: int = 0
    rows_kept: int = 0
    rows_intact: int = 0

    def __iadd__(self, other: StructureCounts) -> StructureCounts:
        self.code_kept += other.code_kept
        self.code_intact += other.code_intact
        self.rows_kept += other.rows_kept
        self.rows_intact += other.rows_intact
        return self


def page_structure(html: bytes | str) -> PageStructure:
    """The code lines and table rows of a page as tidy reads it (none for input that is not a
    page: the extractors' failures on it are counted apart)."""
    try:
        body = tidy(html)
    except InputError:
        return PageStructure((), ())
    code = tuple(line.rstrip() for pre in body.iter("pre")
                 for line in verbatim_text(pre, ()).split("\n")
                 if line.strip())
    rows = []
    for row in body.iter("tr"):
        cells = tuple(filter(None, (_normal(" ".join(cell.itertext()))
                                    for cell in row if cell.tag in ("td", "th"))))
        if len(cells) >= 2:
            rows.append(cells)
    return PageStructure(code, tuple(rows))


def structure_counts(structure: PageStructure, text: str) -> StructureCounts:
    """What ``text`` kept of ``structure``, and kept intact."""
    counts = StructureCounts()
    if not structure.code_lines and not structure.rows:
        return counts
    flat = _normal(text)
    text_lines = text.split("\n")
    lines = {line.rstrip() for line in text_lines}
    normal_lines = [_normal(line) for line in text_lines]
    for line in structure.code_lines:
        if _normal(line) in flat:
            counts.code_kept += 1
            counts.code_intact += line in lines
    for cells in structure.rows:
        if all(cell in flat for cell in cells):
            counts.rows_kept += 1
            counts.rows_intact += any(_in_order(cells, line) for line in normal_lines
                                      if cells[0] in line)
    return counts


def _in_order(cells: tuple[str, ...], line: str) -> bool:
    """Whether every cell's text stands in ``line``, one after the other."""
    at = 0
    for cell in cells:
        found = line.find(cell, at)
        if found < 0:
            return False
        at = found + len(cell)
    return True
