"""The seed methods the project started from, each as its paper has it.

* :func:`isotonic_smooth` — isotonic regression of a page's scores down its tree (smoothing).
* :class:`SiteStyleTree` — Yi, Liu & Li (KDD 2003): merged style tree and information-based
  node importance; cleans new pages of the site.
* :class:`CompressedStructureTree` — Yi & Liu (IJCAI 2003): merged structure tree that weights
  each word of a page by how informative its position and its spread over the site are.
* :func:`template_labels` — Chakrabarti, Kumar & Punera (WWW 2007): subtrees repeated on many
  pages of the site are templates.

The site-level ones are imported on first use: cleaning a page never needs them.
"""

from __future__ import annotations

import importlib

from .smoothing import isotonic_smooth

_SITE_LEVEL = {"CompressedStructureTree": "cst", "SiteStyleTree": "sst",
               "label_templates": "templates", "template_labels": "templates"}

__all__ = ["CompressedStructureTree", "SiteStyleTree", "isotonic_smooth", "label_templates",
           "template_labels"]


def __getattr__(name: str):
    if name in _SITE_LEVEL:
        return getattr(importlib.import_module(f".{_SITE_LEVEL[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
