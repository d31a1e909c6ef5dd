"""Prepare: a page's bytes become a tidy tree (decoded, parsed, repaired, its invisible parts
dropped: :func:`tidy`) and its element table (every subtree a contiguous range of rows:
:func:`build_table`), filled by the kernel or by the pure reference (:mod:`.fields`); the page's
declared metadata (:mod:`.metadata`) and the limits and sniffing that refuse what is not a page.

Entry points: :func:`noisecbr.prepare.tidy.tidy`, then
:func:`noisecbr.prepare.subtrees.build_table`.

The modules are imported by name (the stages' modules import each other's, so this package
imports none of them).
"""
