"""Training the subtree classifier (needs the ``train`` extra: torch, safetensors, matplotlib).

    from training.splits import make_splits
    from training.stored import from_casebase
    from training.train import fit
    d = from_casebase(CaseBase.open(url)); s = make_splits(d, seed=0)
    result = fit(d.subset(s.train), d.subset(s.val), "default", seed=0, progress=True)

Modules: :mod:`~training.datasets` (cases as arrays), :mod:`~training.stored` and
:mod:`~training.sources` (read from the case base or from labelled pages),
:mod:`~training.splits` (site-grouped), :mod:`~training.weights` (per-case loss weights),
:mod:`~training.presets` (``paper`` and ``default``), :mod:`~training.train` (``fit``; the
network and its export in :mod:`~training.network`, the output offsets in
:mod:`~training.calibration`),
:mod:`~training.runs` (runs in the case base), :mod:`~training.report` (metrics, plots,
ablation), :mod:`~training.cli` (``train`` and ``runs`` commands). Importing this package
imports nothing heavy.
"""
