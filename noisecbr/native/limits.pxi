# The attribute and element limits (prepare/limits.py).
# Included by _kernel.pyx (one extension, as lxml assembles etree.pyx).

# ---------------------------------------------------------------------------------------------
# The attribute limit's scan (limits.limit_attributes).

ctypedef fused _unit:  # the code units of PEP 393's three string kinds
    uint8_t
    uint16_t
    uint32_t


cdef Py_ssize_t _first_long_tag(const _unit* data, Py_ssize_t n, Py_ssize_t min_chars,
                                Py_ssize_t i, Py_ssize_t* end) noexcept nogil:
    """From ``i`` on, the start of the first long tag (-1: none); ``end`` receives where its
    run of characters other than ``<`` and ``>`` ends (where ``re.finditer`` goes on)."""
    cdef Py_ssize_t j, stop
    cdef const void* found
    while i < n:
        if _unit is uint8_t:  # one byte per character: memchr skips the text between tags
            found = memchr(data + i, 60, n - i)
            if found is NULL:
                return -1
            i = <const uint8_t*>found - data
        if data[i] == 60 and i + 1 < n and (65 <= data[i + 1] <= 90 or 97 <= data[i + 1] <= 122):
            j = i + 2
            if _unit is uint8_t:
                # The tag's run ends at its ">" or an earlier "<": memchr finds each within
                # the run's first min_chars + 1 bytes (the loop below, byte by byte, was 1 % of
                # a dragnet page's instructions); a longer run is followed to its end below.
                stop = j + min_chars + 1 if j + min_chars + 1 < n else n
                found = memchr(data + j, 62, stop - j)
                if found is not NULL:
                    stop = <const uint8_t*>found - data
                found = memchr(data + j, 60, stop - j)
                j = stop if found is NULL else <const uint8_t*>found - data
            while j < n and data[j] != 60 and data[j] != 62:
                j += 1
            if j - i - 2 >= min_chars:
                end[0] = j
                return i
            i = j  # no "<" before j: no tag starts in between
            continue
        i += 1
    return -1


def first_long_tag(object text, Py_ssize_t min_chars):
    """Where ``<[a-zA-Z][^<>]{min_chars,}`` first matches in ``text`` (a start tag with at least
    ``min_chars`` characters before the next ``<`` or ``>``), or -1. ``text`` may be bytes:
    then the pattern is matched on bytes. A negative ``min_chars`` counts as 0."""
    cdef Py_ssize_t end
    min_chars = min_chars if min_chars > 0 else 0
    if isinstance(text, bytes):
        return _first_long_tag(<const uint8_t*>PyBytes_AS_STRING(text), len(text), min_chars,
                               0, &end)
    cdef int kind = PyUnicode_KIND(text)
    cdef void* data = PyUnicode_DATA(text)
    cdef Py_ssize_t n = PyUnicode_GET_LENGTH(text)
    if kind == 1:
        return _first_long_tag(<const uint8_t*>data, n, min_chars, 0, &end)
    if kind == 2:
        return _first_long_tag(<const uint16_t*>data, n, min_chars, 0, &end)
    return _first_long_tag(<const uint32_t*>data, n, min_chars, 0, &end)


cdef list _long_tags(const _unit* data, Py_ssize_t n, Py_ssize_t min_chars, Py_ssize_t i):
    cdef list starts = []
    cdef Py_ssize_t end = n
    while True:
        i = _first_long_tag(data, n, min_chars, i, &end)
        if i < 0:
            return starts
        starts.append(i)
        i = end


def long_tags(str text, Py_ssize_t min_chars, Py_ssize_t start=0):
    """The start of every match of ``<[a-zA-Z][^<>]{min_chars,}`` in ``text`` from ``start``
    on, as ``re.finditer`` finds them (one pass; the regex took 0.4 ms a modernweb-dev
    page)."""
    cdef int kind = PyUnicode_KIND(text)
    cdef void* data = PyUnicode_DATA(text)
    cdef Py_ssize_t n = PyUnicode_GET_LENGTH(text)
    if kind == 1:
        return _long_tags(<const uint8_t*>data, n, min_chars, start)
    if kind == 2:
        return _long_tags(<const uint16_t*>data, n, min_chars, start)
    return _long_tags(<const uint32_t*>data, n, min_chars, start)


# ---------------------------------------------------------------------------------------------
# The element limit (limits.check_elements).

def count_elements(cetree._Element element):
    """The number of element nodes in ``element``'s document, as libxml2's XPath
    ``count(//*)`` counts them on a parsed page (tests/test_kernel.py compares the two),
    without building the node set."""
    cdef xmlDoc* doc = element._doc._c_doc
    cdef xmlNode* top = <xmlNode*>doc
    cdef xmlNode* node = doc.children
    cdef Py_ssize_t count = 0
    while node is not NULL:
        count += node.type == XML_ELEMENT_NODE
        node = _next_node(node, top)
    return count
