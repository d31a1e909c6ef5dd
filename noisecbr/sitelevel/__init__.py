"""Site-level cleaners: they learn what is common to many pages of one site.

* :class:`SiteStyleTree` — Yi, Liu & Li (KDD 2003): merged style tree and information-based
  node importance; cleans new pages of the site.
* :class:`CompressedStructureTree` — Yi & Liu (IJCAI 2003): merged structure tree that weights
  each word of a page by how informative its position and its spread over the site are.
* :func:`template_labels` — Chakrabarti, Kumar & Punera (WWW 2007): subtrees repeated on many
  pages of the site are templates.
"""

from .cst import CompressedStructureTree
from .sst import SiteStyleTree
from .templates import label_templates, template_labels

__all__ = ["CompressedStructureTree", "SiteStyleTree", "label_templates", "template_labels"]
