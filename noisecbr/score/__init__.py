"""Score: the network's forward pass over subtree vectors (:class:`Model`, the safetensors artifact
it is loaded from), the page's kind (:mod:`.kind`: its evidence and the kind model) and the
comment evidence that sets a comment score aside (:mod:`.discussion`).

Entry point: :meth:`noisecbr.score.model.Model.predict_proba`.

The modules are imported by name (the stages' modules import each other's, so this package
imports none of them).
"""
