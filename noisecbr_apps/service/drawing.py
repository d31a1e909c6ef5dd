"""A cleaned page drawn for the review page: its decided subtrees marked, the page sanitised.

The page a client sends is untrusted. What the review page shows of it is the tidied page
(scripts and invisible elements already gone) passed through lxml_html_clean's Cleaner (no
scripts, event handlers, ``javascript:`` URLs, frames, objects, forms, ``<link>``/``<meta>``),
then stripped of every attribute that can load or point anywhere (``src``, ``href``,
``srcset``, ``action``, …). Form controls, frames and embeddings are first renamed to inert
``<span>``/``<div>`` (their text and children kept): the sanitiser would otherwise drop them, and
a decided subtree among them (a cookie banner's buttons) would have no box to click. The
review page adds a strict Content-Security-Policy and draws it in a sandboxed frame without
scripts: three layers, each enough to stop a load from another host.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from lxml import etree
from lxml import html as lxml_html
from lxml.html import defs
from lxml_html_clean import Cleaner as HtmlCleaner

from noisecbr.result import Decision

__all__ = ["DECISION_ATTRIBUTE", "FRAME_STYLESHEET", "LABEL_ATTRIBUTE", "draw_page"]

#: The attribute that carries a decided subtree's index in the decision list.
DECISION_ATTRIBUTE = "data-ncbr"
#: The attribute that carries its label (the frame's stylesheet colours by it).
LABEL_ATTRIBUTE = "data-ncbr-label"
#: The stylesheet that outlines the decided subtrees (served by the app, same origin).
FRAME_STYLESHEET = "/static/frame.css"

#: Attributes that load something or lead somewhere: removed whatever their value.
_URL_ATTRIBUTES = ("src", "href", "srcset", "action", "formaction", "background", "poster",
                   "cite", "longdesc", "usemap", "data", "codebase", "archive", "lowsrc",
                   "dynsrc", "ping", "xmlns", "manifest")

#: Elements the sanitiser drops (or drops with their content), renamed to inert ones first so
#: that every decided subtree keeps a box: the URL attributes go after, so none loads anything.
_INERT = {"form": "div", "button": "span", "input": "span", "select": "span",
          "textarea": "span", "option": "span", "optgroup": "span", "iframe": "div",
          "frame": "div", "frameset": "div", "object": "div", "embed": "span", "applet": "div",
          "param": "span", "layer": "div", "blink": "span", "marquee": "div"}

#: What in CSS loads from elsewhere (``url(...)``, ``image-set(...)``, ``@import``, old IE's
#: ``expression(``, Firefox's ``-moz-binding``).
_CSS_LOADS = re.compile(r"@import[^;]*;?|(?:url|image-set|-webkit-image-set|image)\s*\([^)]*\)"
                        r"|expression\s*\(|-moz-binding|behavior\s*:", re.IGNORECASE)
#: A CSS escape (``\75 rl(`` is ``url(``): CSS that spells a name in escapes is dropped whole,
#: since no pattern over its text can say what it loads.
_CSS_ESCAPE = re.compile(r"\\")

_SANITISER = HtmlCleaner(
    scripts=True, javascript=True, comments=True, style=False, inline_style=False, links=True,
    meta=True, page_structure=False, processing_instructions=True, embedded=True, frames=True,
    forms=True, annoying_tags=True, remove_unknown_tags=False, safe_attrs_only=True,
    # The page keeps its look (classes, ids, inline styles) and the decision marks.
    safe_attrs=frozenset(defs.safe_attrs) | {"style", DECISION_ATTRIBUTE,
                                                        LABEL_ATTRIBUTE},
)


def draw_page(body: etree._Element, decisions: Sequence[Decision]) -> str:
    """The document drawn in the review page's frame: ``body`` (the tidied page the decisions
    were taken on, not yet stripped of its noise) with each decided subtree marked by its index
    in ``decisions`` and its label, sanitised."""
    tree = body.getroottree()
    # The page's own marks would pass for ours: a page could place a box of its own over
    # another and make the reviewer label the wrong one.
    for element in body.iter(etree.Element):
        for name in [name for name in element.attrib if name.startswith(DECISION_ATTRIBUTE)]:
            del element.attrib[name]
    for index, decision in enumerate(decisions):
        found = tree.xpath(decision.path)
        if found and isinstance(found[0], etree._Element):
            found[0].set(DECISION_ATTRIBUTE, str(index))
            found[0].set(LABEL_ATTRIBUTE, decision.label)
    # The sanitiser works on lxml.html's element classes: the tidied tree is parsed again.
    document = lxml_html.document_fromstring(
        lxml_html.tostring(body, encoding="unicode", with_tail=False),
        parser=lxml_html.HTMLParser(huge_tree=True))
    for element in document.iter(*_INERT):
        element.tag = _INERT[element.tag]
    _SANITISER(document)
    for element in document.iter(etree.Element):
        for name in _URL_ATTRIBUTES:
            element.attrib.pop(name, None)
        if "style" in element.attrib:
            style = element.get("style")
            if _CSS_ESCAPE.search(style):
                del element.attrib["style"]
            else:
                element.set("style", _CSS_LOADS.sub("none", style))
        if element.tag == "style" and element.text:
            element.text = ("" if _CSS_ESCAPE.search(element.text)
                            else _CSS_LOADS.sub("", element.text))
    clean = document.find("body")
    inner = lxml_html.tostring(clean if clean is not None else document, encoding="unicode",
                               with_tail=False)
    return ("<!DOCTYPE html><html><head><meta charset=\"utf-8\">"
            f"<link rel=\"stylesheet\" href=\"{FRAME_STYLESHEET}\"></head>{inner}</html>")
