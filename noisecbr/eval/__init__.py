"""Evaluation: the shingle F1 and word F1 metrics (:mod:`.metric`) and the development sets'
layout on disk (:mod:`.datasets`): the case base's labelling needs both, so they sit in the
engine, below it.

Entry points: :func:`noisecbr.eval.datasets.read_dataset`,
:func:`noisecbr.eval.metric.score_page`.

The modules are imported by name (the stages' modules import each other's, so this package
imports none of them).
"""
