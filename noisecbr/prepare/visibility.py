"""What a reader never sees, removed from the tree: invisible elements (scripts, styles,
templates…), elements hidden by ``hidden``, ``aria-hidden`` or an inline style, what a
``<noscript>`` or an ``<iframe>`` holds; the page's JSON-LD declarations kept aside in its head.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from lxml import etree

from ..native.backend import BACKEND
from ..settings import NOSCRIPT_CONTENT_CHARS
from .names import HIDDEN_STYLE, HIDING_ATTRIBUTES, HIDING_FLAGS, HIDING_STYLE, LD_JSON_TYPE
from .strings import drop_elements, set_text

#: Elements whose content is never shown to a reader. (``noembed`` and ``noframes`` hold the
#: fallback of browsers without plugins or frames, read by the parser as raw text: ad markup
#: such as ``<a href=…><img …>`` came out as article text on dev pages.)
INVISIBLE_TAGS = ("script", "style", "noscript", "template", "head", "link", "meta", "object",
                  "embed", "param", "canvas", "map", "datalist", "dialog", "title", "base",
                  "noembed", "noframes")


#: React streams server-rendered Suspense segments as ``<div hidden id="S:n">`` and moves them into
#: view with script: they are what a reader sees, so ``hidden`` does not remove them. React
#: numbers them in hexadecimal ("S:1a": a Turkish news agency's whole article was dropped).
#: Moving each segment to its ``<template>`` placeholder, as the script does, was tried on the
#: 23 development pages that stream (2026-11-25): F1 −0.005 a page on average, so they stay.
_STREAMED_SEGMENT = re.compile(r"S:[0-9a-f]+$")


def _is_hidden(element: etree._Element) -> bool:
    # element.get, not element.attrib: no attribute-mapping object per element.
    get = element.get
    hidden, aria_hidden = HIDING_FLAGS
    if get(hidden) is not None and not _STREAMED_SEGMENT.match(get("id", "")):
        return True
    if get(aria_hidden, "").strip().lower() == "true":
        return True
    style = get(HIDING_STYLE)
    return bool(style and HIDDEN_STYLE.search(style))


#: The hiding attributes of the elements below the body, in document order. Selecting the
#: attributes (a plain attribute-axis step per element) is cheaper in libxml2 than testing a
#: predicate on every element (``descendant::*[@hidden or ...]``, which builds a node set per
#: test). Stepping back to their elements in XPath (``@hidden/..``) would spare a getparent()
#: per attribute but is quadratic in their number (libxml2 deduplicates the parent step's node
#: set pairwise: 100 000 hidden elements took 15 s, against 0.06 s here).
_HIDING_ATTRIBUTES = etree.XPath(
    " | ".join(f"descendant::*/@{name}" for name in HIDING_ATTRIBUTES))


def _hiding_carriers_pure(body: etree._Element, noscripts: list[etree._Element],
                          iframes: list[etree._Element]) -> Iterable[etree._Element]:
    """The elements below ``body`` that carry a hiding attribute, once each (in document
    order; the compiled kernel walks the nodes in C, about ten times faster than the XPath).
    ``noscripts`` and ``iframes`` receive the ``noscript`` and ``iframe`` elements below
    ``body`` (the kernel finds them in the same walk)."""
    noscripts.extend(_NOSCRIPTS(body))
    iframes.extend(_IFRAMES(body))
    return dict.fromkeys(attribute.getparent() for attribute in _HIDING_ATTRIBUTES(body))


def _hiding_carriers_compiled(body: etree._Element, noscripts: list[etree._Element],
                              iframes: list[etree._Element]) -> Iterable[etree._Element]:
    # Of the styled elements, only those whose style may hide them: _is_hidden decides.
    return BACKEND.kernel.hiding_carriers(body, noscripts, iframes, hiding_styles=True)


_hiding_carriers = BACKEND.dispatch(_hiding_carriers_pure, _hiding_carriers_compiled)


#: The page's ``<noscript>`` elements in document order: libxml2's XPath finds them in less than
#: half the time of ``body.iter("noscript")`` (0.10 vs 0.26 ms per modernweb-dev page).
_NOSCRIPTS = etree.XPath("descendant::noscript")


_IFRAMES = etree.XPath("descendant::iframe")


#: What a page declares about itself that it may write in its body: JSON-LD blocks and named
#: ``<meta>`` elements (``og:type``, ``author``…; not microdata's ``itemprop`` metas, which
#: describe whatever box they sit in, a teaser's date as well as the article's).
_LD_JSON_TYPE = ("translate(normalize-space(@type), 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', "
                 f"'abcdefghijklmnopqrstuvwxyz') = '{LD_JSON_TYPE}'")


_DECLARATIONS = etree.XPath(
    f"descendant::script[{_LD_JSON_TYPE}] | descendant::meta[@property or @name]")


#: A script's test of :data:`_DECLARATIONS`, for the few the kernel leaves to it.
_LD_JSON_SCRIPT = etree.XPath(f"self::script[{_LD_JSON_TYPE}]")


def _declarations_pure(body: etree._Element) -> list[etree._Element]:
    """The declarations written in ``body`` (:data:`_DECLARATIONS`), in document order."""
    return _DECLARATIONS(body)


def _declarations_compiled(body: etree._Element) -> list[etree._Element]:
    # One C walk: the XPath's string functions over every script cost 2 % of a dragnet page.
    unsure: list[etree._Element] = []
    found = BACKEND.kernel.declarations(body, unsure)
    if unsure:  # a type attribute that is not one text node: the XPath decides, in order
        sure, asked = set(found), set(unsure)
        found = [element for element in body.iter("script", "meta")
                 if element in sure or (element in asked and _LD_JSON_SCRIPT(element))]
    return found


_declarations = BACKEND.dispatch(_declarations_pure, _declarations_compiled)


def keep_declarations(root: etree._Element, body: etree._Element) -> None:
    """Move the declarations written in the body (:data:`_DECLARATIONS`) to the head, where
    the metadata and the page's convention (:mod:`noisecbr.decide.convention`) read them: tidying
    removes scripts and metas from the body (a JSON-LD ``NewsArticle`` is in the body of 12 of
    fundus's 176 pages, 16 of modernweb-dev's 790)."""
    found = _declarations(body)
    if not found:
        return
    head = root.find("head")
    if head is None:
        head = etree.Element("head")
        root.insert(0, head)
    drop_elements(found)  # their tails stay in the body
    for element in found:
        element.tail = None
        head.append(element)


def remove_invisible(body: etree._Element) -> None:
    """Remove from ``body``, in place, what a reader never sees (the module docstring)."""
    # Comments and processing instructions (html5lib keeps them) and invisible tags go in C
    # (strip_elements keeps each removed element's tail); lxml's iterators never recurse.
    etree.strip_elements(body, etree.Comment, etree.ProcessingInstruction,
                         *(t for t in INVISIBLE_TAGS if t != "noscript"), with_tail=False)
    noscripts: list[etree._Element] = []
    iframes: list[etree._Element] = []
    # Only elements carrying one of the hiding attributes are inspected.
    carriers = _hiding_carriers(body, noscripts, iframes)
    # What an <iframe> holds is never shown: the frame shows another document. Parsers read it
    # as raw text, and pages put ad markup there for browsers without frames (29 dragnet pages:
    # cnet's "<SCRIPT language='JavaScript1.1' SRC=…>" came out as article text). The element
    # stays, an empty leaf of its type.
    for iframe in iframes:
        if iframe.text is not None or len(iframe):
            iframe.text = None
            del iframe[:]
    doomed = [element for element in noscripts if not _noscript_content(element)]
    doomed.extend(filter(_is_hidden, carriers))
    drop_elements(doomed)


#: A tag written out as text: how a ``<noscript>`` read as raw text holds its markup.
_TAG_TEXT = re.compile(r"</?[a-zA-Z][^<>]*>")


def _noscript_content(noscript: etree._Element) -> bool:
    """Whether a ``<noscript>`` is the page's no-JavaScript rendering, to keep: more than
    NOSCRIPT_CONTENT_CHARS characters of text that is not markup. Markup its text holds (a
    parser may read a noscript's content as text: ``<img height="1" …>`` tracking pixels) is
    taken out of the kept one's text, never shown as words."""
    texts = [(node, attribute, getattr(node, attribute))
             for node in noscript.iter() for attribute in ("text", "tail")
             if node is not noscript or attribute == "text"]
    marked = [(node, attribute, value) for node, attribute, value in texts
              if value and "<" in value and _TAG_TEXT.search(value)]
    plain = sum(len(value) for _, _, value in texts if value) - sum(
        sum(map(len, _TAG_TEXT.findall(value))) for _, _, value in marked)
    if plain < NOSCRIPT_CONTENT_CHARS:
        return False
    for node, attribute, value in marked:
        set_text(node, attribute, _TAG_TEXT.sub(" ", value))
    return True
