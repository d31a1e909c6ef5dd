"""The HTML names and values the engine compares, written once: the pure path's tests and
XPaths are built from them, and the compiled kernel is given them when it loads
(:func:`noisecbr.native.backend.load` calls the kernel's ``configure``), so that its C loops
never retype them.

(The keyword attributes the element table reads are
:data:`noisecbr.prepare.fields.KEYWORD_ATTRIBUTES`, given to the kernel the same way.)
"""

from __future__ import annotations

import re

__all__ = ["HIDING_FLAGS", "HIDING_STYLE", "HIDING_ATTRIBUTES", "HIDDEN_STYLE",
           "HIDING_STYLE_WORDS", "LD_JSON_TYPE"]

#: Attributes whose presence may hide an element (``visibility._is_hidden`` decides: ``hidden``
#: unless a streamed segment's, ``aria-hidden="true"``).
HIDING_FLAGS = ("hidden", "aria-hidden")
#: The attribute of an inline style, which hides an element when it matches :data:`HIDDEN_STYLE`.
HIDING_STYLE = "style"
#: Every attribute that may hide an element: the elements carrying one are tested.
HIDING_ATTRIBUTES = (*HIDING_FLAGS, HIDING_STYLE)
#: A style that hides its element.
HIDDEN_STYLE = re.compile(r"(?:display\s*:\s*none|visibility\s*:\s*hidden)", re.I)
#: What every match of :data:`HIDDEN_STYLE` holds in some ASCII case, the kernel's test before
#: the expression's: "none", and "dden" of "hidden" (under ``re.I`` "h" and "i" also match
#: characters outside ASCII, such as a dotless ı, which an ASCII test would miss; no other
#: character folds to n, o, e or d).
HIDING_STYLE_WORDS = ("none", "dden")
#: The ``type`` of a JSON-LD script (compared whitespace-normalised and lower-cased).
LD_JSON_TYPE = "application/ld+json"
