"""Decide: the top-down walk over the scores (:func:`walk`, under :class:`Thresholds`), the mode a
page is walked in (:mod:`.convention`), the fallback when a walk keeps too little, and the
repairs after it (orphaned headings, datelines).

Entry point: :func:`noisecbr.decide.walk.walk`.

The modules are imported by name (the stages' modules import each other's, so this package
imports none of them).
"""
