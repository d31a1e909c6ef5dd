"""Training the subtree classifier (needs the ``train`` extra: torch, safetensors, matplotlib).

    from training.datasets import make_splits
    from training.stored import from_casebase
    from training.train import fit
    d = from_casebase(CaseBase.open(url)); s = make_splits(d, seed=0)
    result = fit(d.subset(s.train), d.subset(s.val), "default", seed=0, progress=True)

Modules: :mod:`~training.datasets` (cases as arrays, site-grouped splits, weights),
:mod:`~training.presets` (``paper`` and ``default``), :mod:`~training.train` (``fit``),
:mod:`~training.runs` (runs in the case base), :mod:`~training.report` (metrics, plots,
ablation), :mod:`~training.cli` (``train`` and ``runs`` commands). Importing this package
imports nothing heavy.
"""
