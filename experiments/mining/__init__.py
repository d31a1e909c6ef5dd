"""Does cleaning help web mining? The seed papers' yardstick (issue 18): classification across
sites, clustering and near-duplicate detection on raw against cleaned pages.
Run it with ``python -m experiments.mining_eval``."""
