"""Text as a result may hold it: without control characters (:func:`printable`), or what XML
takes (:func:`xml_safe`); whitespace collapsed (:func:`normalize_space`); subtrees detached
with their tails kept (:func:`drop_elements`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from lxml import etree

_SPACE = re.compile(r"\s+")


def normalize_space(text: str) -> str:
    """Collapse runs of whitespace to one space and strip the ends."""
    return _SPACE.sub(" ", text).strip()


#: Characters lxml refuses in a text it is given (XML 1.0's excluded code points), though
#: libxml2's HTML parser puts them in the text it reads (from the raw bytes and from character
#: references such as ``&#12;``). The form feed is HTML whitespace and becomes a space.
_XML_INCOMPATIBLE = re.compile("[\x00-\x08\x0b\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def xml_safe(text: str) -> str:
    """``text`` without the characters lxml refuses to store in a tree (see above)."""
    return _XML_INCOMPATIBLE.sub("", text.replace("\x0c", " "))


#: What no output holds: the C0 controls but tab and newline, DEL and the C1 controls (a page's
#: raw bytes or references such as ``&#127;`` or ``&#133;`` put them in the text; a terminal
#: would act on them), with what lxml refuses.
_NOT_PRINTABLE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]")


def printable(text: str) -> str:
    """``text`` as every output gives it: a form feed is a space, a carriage return and C1's
    "next line" are line ends, and no other control character (:data:`_NOT_PRINTABLE`) is
    left."""
    if _NOT_PRINTABLE.search(text) is None:  # nearly every page: no copy
        return text
    text = (text.replace("\x0c", " ").replace("\r\n", "\n").replace("\r", "\n")
            .replace("\x85", "\n"))
    return _NOT_PRINTABLE.sub("", text)


def set_text(element: etree._Element, attribute: str, text: str) -> None:
    """Set an element's ``text`` or ``tail``, dropping the control characters lxml refuses
    when the parser left some there (rare: most text never needs the second try)."""
    try:
        setattr(element, attribute, text)
    except ValueError:
        setattr(element, attribute, xml_safe(text))


def drop_elements(elements: Iterable[etree._Element]) -> None:
    """Detach elements from their tree, keeping each one's tail text (it belongs to the parent).

    The tails of a run of dropped siblings are joined once, onto the kept sibling before the
    run (or the parent's text): appending them one by one to the same growing string was
    quadratic (100 000 hidden spans in one paragraph took 52 s; now 0.1 s). One pass over the
    children of each parent that loses some keeps the tails in document order whatever the
    order of ``elements``.
    """
    # Each element once: a hidden <noscript> is doomed twice over, and removing it twice fails.
    by_parent: dict[etree._Element, dict[etree._Element, None]] = {}
    for element in elements:
        parent = element.getparent()
        if parent is not None:
            by_parent.setdefault(parent, {})[element] = None
    for parent, children in by_parent.items():
        doomed = set(children)
        target, attribute, pieces = parent, "text", [parent.text or ""]
        for child in parent:
            if child in doomed:
                if child.tail:
                    pieces.append(child.tail)
                continue
            if len(pieces) > 1:
                set_text(target, attribute, "".join(pieces))
            target, attribute, pieces = child, "tail", [child.tail or ""]
        if len(pieces) > 1:
            set_text(target, attribute, "".join(pieces))
        for child in children:
            parent.remove(child)
