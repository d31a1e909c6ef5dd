"""Experiments and the seed methods' evaluations: how much cleaning helps web mining
(:mod:`experiments.mining_eval`), the site-level methods on the development sets
(:mod:`experiments.sitelevel_eval`), the embedded recipe's site-grouped folds
(``recipe_cv.py``) and where precision goes (``false_kept.py``). Run from a checkout: nothing
here is installed with the package."""
