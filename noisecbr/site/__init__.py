"""A site's pages: what a user labelled on them (:class:`SiteMemory`) and what recurs on its
unlabelled pages (:class:`SiteEvidence`).

Entry points: :class:`noisecbr.site.memory.SiteMemory`,
:class:`noisecbr.site.evidence.SiteEvidence`.

The modules are imported by name (the stages' modules import each other's, so this package
imports none of them).
"""
