"""Document-order text and HTML of what a cleaning kept.

Text is assembled the way the shingle metric reads it: an element's text, then each kept child
followed by that child's tail, so nothing is reordered or glued. Block elements are separated by
a blank line, list items, table rows and line breaks start a new line, a row's cells are
separated by a tab, and runs of whitespace inside a line collapse to one space, except in
``<pre>``: a code block keeps its lines and their indentation exactly (its own paragraph).
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Callable, Collection, Sequence
from xml.sax.saxutils import quoteattr

from lxml import etree, html

from ..native.backend import BACKEND
from ..prepare.strings import printable

__all__ = ["BLOCK_TAGS", "LINE_TAGS", "MEDIA_TAGS", "render_html", "render_text", "render_texts",
           "sanitised_body", "verbatim_text"]

#: Elements that end a paragraph: the text around them is separated by a blank line.
BLOCK_TAGS = frozenset(
    "address article aside blockquote body center dd details dialog dir div dl fieldset "
    "figcaption figure footer form h1 h2 h3 h4 h5 h6 header hgroup hr legend main menu nav ol p "
    "pre section summary table tbody thead tfoot ul caption".split()
)
#: Elements that start a new line but not a new paragraph.
LINE_TAGS = frozenset("li tr dt option br".split())
#: Elements whose text is separated from their neighbours by a space.
CELL_TAGS = frozenset("img input button label select textarea".split())
#: A table's cells: separated from their neighbours in the row by a tab (one, however many
#: empty cells stand between; none at the row's ends).
TABLE_CELL_TAGS = frozenset(("td", "th"))

_PARAGRAPH = "\x00P"
_LINE = "\x00L"
_CELL = "\x00C"
#: A cell boundary inside a line while the lines are joined: a Unicode noncharacter.
_TAB = "\ufdd5"
_CELL_RUN = re.compile(f" ?{_TAB}[{_TAB} ]*")


_SPACES = re.compile(r"[ \t\r\f\v\n\u00a0\u200b]+")


def _line(line: str) -> str:
    """A line as the text gives it: its cell boundaries as single tabs, stripped (so no tab
    at its ends)."""
    return (_CELL_RUN.sub("\t", line) if _TAB in line else line).strip()


def _join(parts: list[str]) -> str:
    """Turn text parts and break markers into lines and paragraphs."""
    paragraphs: list[str] = []
    lines: list[str] = []
    current: list[str] = []
    pending_paragraph = False

    def close_line() -> None:
        line = _line(_SPACES.sub(" ", "".join(current)))
        current.clear()
        if line:
            lines.append(line)

    def close_paragraph() -> None:
        close_line()
        if lines:
            paragraphs.append("\n".join(lines))
            lines.clear()

    for part in parts:
        if part == _PARAGRAPH:
            pending_paragraph = True
        elif part == _LINE:
            close_line()
        elif part == _CELL:
            current.append(_TAB)
        else:
            if pending_paragraph:
                close_paragraph()
                pending_paragraph = False
            current.append(part)
    close_paragraph()
    return "\n\n".join(paragraphs)


#: The break marker each tag emits at its start and at its end: one dict lookup instead of up to
#: three set tests (the merge order gives block tags precedence over line tags over cell tags,
#: as the tests' order did; the sets are disjoint anyway).
_START_MARK = {**dict.fromkeys(CELL_TAGS, " "), **dict.fromkeys(TABLE_CELL_TAGS, _CELL),
               **dict.fromkeys(LINE_TAGS, _LINE),
               **dict.fromkeys(BLOCK_TAGS, _PARAGRAPH)}
_END_MARK = {**_START_MARK}
del _END_MARK["br"]  # a line break breaks before what follows it, not again after


#: Characters that ``str.split()`` and ``str.strip()`` treat as whitespace but ``_SPACES`` does
#: not collapse, and the zero-width space, which ``_SPACES`` collapses but ``str.split()`` keeps
#: (tests/test_render.py checks this list against the Unicode database).
_OTHER_SPACES = ("\x1c\x1d\x1e\x1f\x85\u1680" + "".join(map(chr, range(0x2000, 0x200c)))
                 + "\u2028\u2029\u202f\u205f\u3000")


def _split_join(joined: str) -> str:
    """What :func:`_join` returns for parts whose concatenation is ``joined``, when no text part
    contains the markers' first character (NUL), computed with C string methods on the whole
    text instead of a Python step per part.

    A paragraph marker always ends the paragraph (a pending one is only ever followed by line
    markers, which add nothing), so paragraphs are the pieces between paragraph markers and
    lines the pieces between line markers, each with its runs of spaces collapsed and stripped.
    """
    if not any(map(joined.__contains__, _OTHER_SPACES + "\x01\x02")):
        # The whitespace str.split() sees is then exactly _SPACES's: collapse every run to one
        # space at once, drop the spaces beside markers (the lines' ends), and turn the markers
        # into the single characters \x01 (line) and \x02 (paragraph) so that empty lines and
        # paragraphs can be stripped and split away.
        text = " ".join(joined.split())
        text = (text.replace(" \x00", "\x00").replace(_PARAGRAPH + " ", "\x02")
                .replace(_LINE + " ", "\x01").replace(_PARAGRAPH, "\x02").replace(_LINE, "\x01"))
        if _CELL in text:  # a table: each line's cells tab-separated, empty lines dropped
            text = text.replace(_CELL + " ", _TAB).replace(_CELL, _TAB)
            paragraphs = ("\n".join(filter(None, map(_line, block.split("\x01"))))
                          for block in text.split("\x02"))
            return "\n\n".join(filter(None, paragraphs))
        paragraphs = filter(None, map(str.strip, text.split("\x02"), itertools.repeat("\x01")))
        return "\n\n".join(["\n".join(filter(None, paragraph.split("\x01")))
                             for paragraph in paragraphs])
    # Collapsing spaces over the whole string is the same as per line: the markers are not
    # spaces, so no run of spaces crosses one.
    joined = _SPACES.sub(" ", joined).replace(_CELL, _TAB)
    paragraphs = ("\n".join(filter(None, map(_line, block.split(_LINE))))
                  for block in joined.split(_PARAGRAPH))
    return "\n\n".join(filter(None, paragraphs))


def _join_fast(parts: list[str]) -> str | None:
    """:func:`_join` by :func:`_split_join`; None when a text part contains a NUL (never in a
    parsed page), so that the caller falls back to the loop."""
    joined = "".join(parts)
    if joined.count("\x00") != parts.count(_PARAGRAPH) + parts.count(_LINE) + parts.count(_CELL):
        return None
    return _split_join(joined)


#: What a ``<pre>`` block's line ends, spaces and tabs stand as while the text around it is
#: joined and its whitespace collapsed: Unicode noncharacters, which no page may use for text
#: (what lxml would refuse, \ufffe and \uffff, are the only others).
_VERBATIM = str.maketrans({"\n": "\ufdd0", " ": "\ufdd1", "\t": "\ufdd2", "\u00a0": "\ufdd4"})
_RESTORE = str.maketrans({"\ufdd0": "\n", "\ufdd1": " ", "\ufdd2": "\t", "\ufdd4": "\u00a0"})
_PRE = etree.XPath("descendant-or-self::pre[1]")


def _has_pre(root: etree._Element) -> bool:
    """Whether ``root`` holds a ``<pre>`` (libxml2's XPath stops at the first)."""
    return isinstance(root.tag, str) and bool(_PRE(root))


def verbatim_text(pre: etree._Element, removed: Collection[etree._Element]) -> str:
    """A ``<pre>`` block's text as it reads (its kept descendants' too), lines and indentation
    kept, without the line ends that open and close it."""
    parts: list[str] = []
    walker = etree.iterwalk(pre, events=("start", "end"))
    for event, element in walker:
        if event == "start":
            if element in removed:
                walker.skip_subtree()
            elif element.text:
                parts.append(element.text)
        elif element is not pre and element.tail:
            parts.append(element.tail)
    return "".join(parts).replace("\r\n", "\n").replace("\r", "\n").strip("\n").rstrip()


def render_text(root: etree._Element, removed: Collection[etree._Element] = (),
                dropped_text: Collection[etree._Element] = (), *,
                has_pre: bool | None = None) -> str:
    """Text of ``root`` without the subtrees in ``removed`` (their tails are kept) and without
    the own text (``.text`` and the children's tails) of the elements in ``dropped_text``.
    ``has_pre``: whether ``root`` holds a ``<pre>``, when the caller knows (else looked up)."""
    if has_pre if has_pre is not None else _has_pre(root):
        # The compiled walk collapses every space: a page with code blocks walks in Python.
        return _render_in_python(root, removed, dropped_text).translate(_RESTORE)
    compiled = _compiled_render()
    if compiled is not None:
        # The same walk in C (no Python step per element), which also does _split_join's work
        # on its UTF-8 bytes (one pass, no str per word) unless the text holds a character
        # that takes _split_join off its fast path: then it hands back the parts joined.
        walked = compiled(root, removed, dropped_text, _MARK_CODES, True)
        if walked is not None:
            finished, text = walked
            return text if finished else _split_join(text)
    return _render_in_python(root, removed, dropped_text)


def render_texts(roots: Sequence[etree._Element]) -> str:
    """The texts of several subtrees one after the other, as paragraphs: what
    ``"\n\n".join(filter(None, map(render_text, roots)))`` gives (a page's comments are often
    dozens of subtrees)."""
    compiled = _compiled_render()
    if compiled is not None and not any(map(_has_pre, roots)):
        walked = [compiled(root, (), (), _MARK_CODES, True) for root in roots]
        if None not in walked:  # each text finished in C, or by _split_join (render_text)
            return "\n\n".join(filter(None, (text if finished else _split_join(text)
                                               for finished, text in walked)))
    return "\n\n".join(filter(None, map(render_text, roots)))


def _render_in_python(root: etree._Element, removed: Collection[etree._Element] = (),
                      dropped_text: Collection[etree._Element] = ()) -> str:
    """:func:`render_text` walked in Python: the reference of the compiled kernel's walk, and
    the path for what it leaves to Python (comments and processing instructions)."""
    parts: list[str] = []
    append = parts.append
    start_mark, end_mark = _START_MARK.get, _END_MARK.get
    walker = etree.iterwalk(root, events=("start", "end"))
    for event, element in walker:
        if event == "start":
            if element in removed:
                walker.skip_subtree()  # its "end" event still comes, and emits the tail
                continue
            mark = start_mark(element.tag)
            if mark:
                append(mark)
            if element.tag == "pre" and not (dropped_text and element in dropped_text):
                # Its "end" event comes, and closes the paragraph.
                walker.skip_subtree()
                append(verbatim_text(element, removed).translate(_VERBATIM))
                continue
            text = element.text
            if text and not (dropped_text and element in dropped_text):
                append(text)
        else:
            if element not in removed:
                mark = end_mark(element.tag)
                if mark:
                    append(mark)
            if element is not root:
                tail = element.tail
                if tail and not (dropped_text and element.getparent() in dropped_text):
                    append(tail)
    text = _join_fast(parts)
    return _join(parts) if text is None else text


#: Each tag's start and end marks as the compiled walk reads them: start code | end code << 3,
#: codes 1 (a space), 2 (a line), 3 (a paragraph) and 4 (a table cell).
_CODES = {" ": 1, _LINE: 2, _PARAGRAPH: 3, _CELL: 4}
_MARK_CODES = {tag: _CODES.get(_START_MARK.get(tag), 0) | _CODES.get(_END_MARK.get(tag), 0) << 3
               for tag in _START_MARK}

#: A page for the import-time check of the compiled walk: every kind of mark, tails, an entity
#: (from XML), removed and muted elements, non-ASCII text.
_CHECK_PAGE = """<!DOCTYPE body [<!ENTITY e "x">]><body>Lead <div>One <b>bold</b> tail
  <p>Para&e;graph, <br/>next line</p>after p<ul><li>a</li><li>bé<img/>c</li></ul>
  <table><tr><td>x</td><td>y</td></tr></table><span class="gone">gone <i>too</i></span>kept
  tail<section class="mute">muted <em>child</em> child tail</section></div>end</body>"""


def _renders_the_check_page(render: Callable) -> bool:
    """Whether the kernel's walk ``render`` renders the check page as the Python walk does."""
    parser = etree.XMLParser(resolve_entities=False)
    body = etree.fromstring(_CHECK_PAGE.encode(), parser)
    removed = set(body.iterfind(".//span"))
    muted = set(body.iterfind(".//section"))
    for skipped, muted_text in (((), ()), (removed, ()), (removed, muted), ({body}, ())):
        expected = _render_in_python(body, skipped, muted_text)
        joined = render(body, skipped, muted_text, _MARK_CODES)
        finished = render(body, skipped, muted_text, _MARK_CODES, True)
        if joined is None or _split_join(joined) != expected or finished != (True, expected):
            return False
    return True


def _compiled_render() -> Callable | None:
    """The compiled walk, if the kernel is in use and renders the check page as the Python
    walk does (else None: the Python walk is used)."""
    return BACKEND.verified("render_text", _renders_the_check_page)


def render_html(body: etree._Element, title: str | None = None, lang: str | None = None, *,
                safe: bool = True, keep_media: bool = False) -> str:
    """Serialise a body as a complete, re-parseable HTML document (with the page's ``title``
    and ``lang`` when given), sanitised unless ``safe=False`` (:func:`sanitised_body`, its
    images and media kept with ``keep_media=True``)."""
    document = etree.Element("html")
    head = etree.SubElement(document, "head")
    etree.SubElement(head, "meta", charset="utf-8")
    if title:
        etree.SubElement(head, "title").text = title
    # Serialise the body on its own so the caller's tree is not re-parented.
    body_html = html.tostring(body, encoding="unicode", method="html")
    if safe:
        body_html = sanitised_body(body_html, keep_media=keep_media)
    head_html = html.tostring(head, encoding="unicode", method="html")
    html_tag = f"<html lang={quoteattr(lang)}>" if lang else "<html>"
    return f"<!DOCTYPE html>\n{html_tag}{head_html}{body_html}</html>\n"


#: The elements that show an image or play a medium, and the sources and tracks they choose
#: among: what ``keep_media=True`` keeps as the page wrote it (:func:`sanitised_body`).
MEDIA_TAGS = frozenset(("img", "picture", "source", "video", "audio", "track"))
#: Their attributes that load the medium or make it playable: on them with ``keep_media=True``,
#: on no element otherwise (``src`` of any other element too: ``<portal>``, ``<bgsound>``…).
_MEDIA_ATTRIBUTES = ("src", "srcset", "sizes", "poster", "controls", "kind", "srclang")
#: The media elements that go, their content kept, when the media do: a player without a
#: source (its fallback text shows instead), and the sources and tracks (libxml2's HTML parser
#: does not know ``<source>`` and ``<track>`` as empty: what follows them is inside).
_MEDIA_UNWRAPPED = ("video", "audio", "source", "track")
#: Where ``href`` loads rather than links (SVG's ``<image>``, ``<use>``, ``<feImage>``…): it
#: goes from every element inside these but ``<a>``.
_FOREIGN_ROOTS = ("svg", "math")


@functools.cache
def _sanitiser(keep_media: bool = False):
    """lxml_html_clean's Cleaner as the output's HTML needs it (made once for each
    ``keep_media``: its safe attributes are then HTML's and the media's)."""
    from lxml.html import defs
    from lxml_html_clean import Cleaner as HtmlCleaner

    media = {"safe_attrs": defs.safe_attrs | frozenset(_MEDIA_ATTRIBUTES)} if keep_media else {}
    return HtmlCleaner(
        scripts=True, javascript=True, comments=True, style=True, inline_style=True,
        links=True, meta=True, page_structure=False, processing_instructions=True,
        embedded=True, frames=True, forms=True, annoying_tags=True, remove_unknown_tags=False,
        safe_attrs_only=True, add_nofollow=False, kill_tags=("base",), **media)


def _drop_loads(document: html.HtmlElement, keep_media: bool) -> None:
    """Remove what the sanitiser leaves that a browser loads when it opens the page: the
    sources of images and media (all of them, and their players, unless ``keep_media``) and
    the ``href`` of SVG and MathML elements other than links."""
    unwrapped = []
    for element in document.iter(etree.Element):
        tag = element.tag
        if not (keep_media and tag in MEDIA_TAGS):
            for name in _MEDIA_ATTRIBUTES:
                element.attrib.pop(name, None)
            if tag in _MEDIA_UNWRAPPED:
                unwrapped.append(element)
        if tag in _FOREIGN_ROOTS:
            for inner in element.iter(etree.Element):
                if inner.tag != "a":
                    inner.attrib.pop("href", None)
    for element in unwrapped:
        element.drop_tag()


#: XML's ``Name`` (its first character, then the others): the attribute names lxml can
#: address. The HTML parser takes nearly anything between a tag's name and its ``>`` for an
#: attribute name (``{a}``, ``a<b``, ``"x``); lxml reads one that starts with ``{`` as
#: ``{namespace}name`` (``{a}`` is then empty, ``{a`` unclosed, ``{x}y`` another attribute)
#: and refuses control characters, so the sanitiser could neither keep nor remove such an
#: attribute: it raised (issue 54).
_NAME_START = (":A-Z_a-z\xc0-\xd6\xd8-\xf6\xf8-\u02ff\u0370-\u037d\u037f-\u1fff\u200c\u200d"
               "\u2070-\u218f\u2c00-\u2fef\u3001-\ud7ff\uf900-\ufdcf\ufdf0-\ufffd"
               "\U00010000-\U000effff")
_NAME_CHAR = _NAME_START + "\\-.0-9\xb7\u0300-\u036f\u203f\u2040"
_ATTRIBUTE_NAME = re.compile(f"[{_NAME_START}][{_NAME_CHAR}]*")


def _drop_misnamed_attributes(document: etree._Element) -> None:
    """Drop the attributes whose names are not XML names (:data:`_ATTRIBUTE_NAME`) before the
    sanitiser sees them. None is one of the safe attributes it keeps (plain ASCII names), so
    it would have dropped them all: what a page gives is unchanged, only no longer a crash."""
    for element in document.iter(etree.Element):
        names = element.keys()
        if names and not all(map(_ATTRIBUTE_NAME.fullmatch, names)):
            kept = [(name, value) for name, value in element.items()
                    if _ATTRIBUTE_NAME.fullmatch(name)]
            # lxml cannot address the others by name: all go, the valid ones come back in order.
            element.attrib.clear()
            for name, value in kept:
                element.set(name, value)


def sanitised_body(body_html: str, *, keep_media: bool = False) -> str:
    """A serialised ``<body>`` that a browser opens without running anything, or loading
    anything from anywhere (lxml_html_clean, a maintained sanitiser, not a list of our own,
    then the loads it leaves): no scripts, event handlers (``onerror``, ``onload``,
    ``onfocus``…), ``javascript:`` URLs, frames (``srcdoc`` included), objects and embeds,
    forms and their controls, ``<base>``, ``<meta>`` refreshes, stylesheets or inline styles
    (``url(…)``, ``image-set(…)`` and CSS escapes load from elsewhere), SVG's ``href`` loads;
    attributes outside HTML's safe ones dropped. Nor, by default, images or media, as for
    scripts: an ``<img>`` stays without its ``src``, ``srcset`` and ``sizes`` (its ``alt`` text
    shows), ``<video>``, ``<audio>``, ``<source>`` and ``<track>`` go, their fallback text kept
    (``poster`` with them). ``keep_media=True`` keeps images and media as the page wrote them
    (``src``, ``srcset``, ``sizes``, ``poster``, ``controls``; a browser then loads them).
    The content's markup, its text (captions, ``alt``) and its links are kept."""
    # Without the control characters lxml refuses: an attribute name libxml2 read from
    # garbage may hold one, and the sanitiser could then neither keep nor remove it.
    document = html.document_fromstring(printable(body_html) or "<body></body>",
                                        parser=html.HTMLParser(huge_tree=True))
    _drop_misnamed_attributes(document)
    _sanitiser(keep_media)(document)
    _drop_loads(document, keep_media)
    body = document.find("body")
    if body is None:
        return "<body></body>"
    return html.tostring(body, encoding="unicode", method="html")

