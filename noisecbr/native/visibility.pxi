# Hidden elements and JSON-LD declarations (prepare/visibility.py).
# Included by _kernel.pyx (one extension, as lxml assembles etree.pyx).

# ---------------------------------------------------------------------------------------------
# Hidden elements (visibility.remove_invisible): the elements that carry a hiding attribute.

cdef enum:
    #: How many attributes hide by their presence (``names.HIDING_FLAGS``), and how many words
    #: a hiding style holds one of (``names.HIDING_STYLE_WORDS``).
    N_HIDING_FLAGS = 2
    N_HIDING_WORDS = 2

#: The names and words of ``prepare/names.py``, given by :func:`configure`: the attributes that
#: hide by their presence, the style attribute, what a style that hides holds in some ASCII
#: case (see _style_may_hide).
cdef const char* HIDING_FLAG_NAMES[N_HIDING_FLAGS]
cdef const char* HIDING_STYLE_NAME = NULL
cdef const unsigned char* HIDING_WORDS[N_HIDING_WORDS]
cdef Py_ssize_t HIDING_LENGTHS[N_HIDING_WORDS]


cdef bint _style_may_hide(xmlAttr* attribute) noexcept nogil:
    """Whether a style value may match ``tidy._HIDDEN_STYLE``: every match holds "none" or
    "dden" in some ASCII case (no other character folds to n, o, e or d under ``re.I``). A
    value that is not one text node is taken to hide (the caller tests it)."""
    cdef xmlNode* value = attribute.children
    if value is NULL:
        return False  # an empty value
    if value.next is not NULL or value.type != XML_TEXT_NODE or value.content is NULL:
        return True
    return _holds_any(<const unsigned char*>value.content, strlen(<const char*>value.content),
                      HIDING_WORDS, HIDING_LENGTHS, N_HIDING_WORDS)


cdef bint _carries_hiding_attribute(xmlNode* node, bint hiding_styles) noexcept nogil:
    cdef xmlAttr* attribute = node.properties
    while attribute is not NULL:
        if attribute.ns is NULL:
            if strcmp(<const char*>attribute.name, HIDING_STYLE_NAME) == 0:
                if not hiding_styles or _style_may_hide(attribute):
                    return True
            elif (strcmp(<const char*>attribute.name, HIDING_FLAG_NAMES[0]) == 0
                    or strcmp(<const char*>attribute.name, HIDING_FLAG_NAMES[1]) == 0):
                return True
        attribute = attribute.next
    return False


def hiding_carriers(cetree._Element root, list noscripts=None, list iframes=None,
                    bint hiding_styles=False):
    """The elements below ``root`` that carry a ``hidden``, ``aria-hidden`` or ``style``
    attribute (in no namespace), in document order: what the XPath
    ``descendant::*/@hidden | descendant::*/@aria-hidden | descendant::*/@style`` finds,
    stepped back to the elements, in one walk over the nodes (no attribute string made).
    ``noscripts`` and ``iframes``, if given, receive the ``noscript`` and the ``iframe``
    elements (in no namespace) below ``root`` in document order, as ``descendant::noscript``
    and ``descendant::iframe`` find them, from the same walk. ``hiding_styles``: of the
    elements whose only such attribute is ``style``, those whose style may hide them (see
    :func:`_style_may_hide`; a modernweb-dev page has some 130 carriers, mostly of a style that
    hides nothing, each a Python test of 1.5 µs)."""
    cdef xmlNode* top = root._c_node
    cdef xmlNode* node = top.children
    cdef list out = []
    while node is not NULL:
        if node.type == XML_ELEMENT_NODE:
            if (node.properties is not NULL
                    and _carries_hiding_attribute(node, hiding_styles)):
                out.append(cetree.elementFactory(root._doc, node))
            if node.ns is NULL:
                if (noscripts is not None
                        and strcmp(<const char*>node.name, b"noscript") == 0):
                    noscripts.append(cetree.elementFactory(root._doc, node))
                elif iframes is not None and strcmp(<const char*>node.name, b"iframe") == 0:
                    iframes.append(cetree.elementFactory(root._doc, node))
        node = _next_node(node, top)
    return out


#: What ``visibility._DECLARATIONS`` compares a script's normalised, lower-cased type with
#: (``names.LD_JSON_TYPE``, given by :func:`configure`), and its length.
cdef const char* LD_JSON = NULL
cdef Py_ssize_t LD_JSON_LENGTH = 0


cdef inline bint _xml_space(unsigned char c) noexcept nogil:
    return c == 32 or c == 9 or c == 13 or c == 10


cdef int _is_ld_json(xmlAttr* attribute) noexcept nogil:
    """Whether a ``type`` value, whitespace-normalised and A-Z lower-cased as the XPath
    ``translate(normalize-space(@type), …)`` does, is ``application/ld+json``: 1 or 0; −1 for a
    value that is not one text node (the caller asks the XPath)."""
    cdef xmlNode* value = attribute.children
    if value is NULL:
        return 0
    if value.next is not NULL or value.type != XML_TEXT_NODE or value.content is NULL:
        return -1
    cdef const unsigned char* text = <const unsigned char*>value.content
    cdef Py_ssize_t start = 0, end = strlen(<const char*>text), k
    while start < end and _xml_space(text[start]):
        start += 1
    while end > start and _xml_space(text[end - 1]):
        end -= 1
    if end - start != LD_JSON_LENGTH:  # the name has no space inside: a value with one is
        return 0                       # another name
    for k in range(LD_JSON_LENGTH):
        if (text[start + k] + 32 if 65 <= text[start + k] <= 90 else text[start + k]) != (
                <const unsigned char*>LD_JSON)[k]:
            return 0
    return 1


def declarations(cetree._Element root, list unsure):
    """The JSON-LD scripts and named metas below ``root`` in document order, as
    ``visibility._DECLARATIONS`` finds them, in one walk over the nodes (no attribute string made):
    ``script`` elements whose normalised ``type`` is ``application/ld+json``, ``meta``
    elements with a ``property`` or a ``name`` (in no namespace). ``unsure`` receives the
    scripts whose ``type`` is not one text node (in document order among themselves), for the
    caller to test."""
    cdef xmlNode* top = root._c_node
    cdef xmlNode* node = top.children
    cdef xmlAttr* attribute
    cdef list out = []
    cdef int found
    while node is not NULL:
        if node.type == XML_ELEMENT_NODE and node.ns is NULL and node.properties is not NULL:
            if strcmp(<const char*>node.name, b"script") == 0:
                attribute = node.properties
                while attribute is not NULL:
                    if attribute.ns is NULL and strcmp(<const char*>attribute.name, b"type") == 0:
                        found = _is_ld_json(attribute)
                        if found > 0:
                            out.append(cetree.elementFactory(root._doc, node))
                        elif found < 0:
                            unsure.append(cetree.elementFactory(root._doc, node))
                        break
                    attribute = attribute.next
            elif strcmp(<const char*>node.name, b"meta") == 0:
                attribute = node.properties
                while attribute is not NULL:
                    if attribute.ns is NULL and (
                            strcmp(<const char*>attribute.name, b"property") == 0
                            or strcmp(<const char*>attribute.name, b"name") == 0):
                        out.append(cetree.elementFactory(root._doc, node))
                        break
                    attribute = attribute.next
        node = _next_node(node, top)
    return out


cdef inline xmlNode* _next_node(xmlNode* node, xmlNode* top) noexcept nogil:
    """The node after ``node`` in document order below ``top``, entering the children of
    elements only; NULL after the last."""
    if node.type == XML_ELEMENT_NODE and node.children is not NULL:
        return node.children
    while node.next is NULL:  # up to the first ancestor with a next sibling
        node = node.parent
        if node is top or node is NULL:
            return NULL
    return node.next
