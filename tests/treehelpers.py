"""Helpers shared by tests that need trees the HTML parser would not build."""

from lxml import etree


def nest_deeply(body: etree._Element, depth: int) -> etree._Element:
    """Append a chain of ``depth`` nested divs ending in a paragraph to ``body``.

    Built directly: the HTML parser caps nesting, a page tree handed over by a caller may not.
    """
    element = body
    for _ in range(depth):
        element = etree.SubElement(element, "div")
    etree.SubElement(element, "p").text = "deep words"
    return body
