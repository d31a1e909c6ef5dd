# The text renderer (render/text.py).
# Included by _kernel.pyx (one extension, as lxml assembles etree.pyx).

# ---------------------------------------------------------------------------------------------
# The text renderer: render.render_text's walk in C.

cdef extern from "stdlib.h" nogil:
    void qsort(void* base, size_t count, size_t size, int (*compare)(const void*, const void*))
    void* bsearch(const void* key, const void* base, size_t count, size_t size,
                  int (*compare)(const void*, const void*))
    void* realloc(void* pointer, size_t size)


cdef int _compare_pointers(const void* a, const void* b) noexcept nogil:
    cdef size_t x = <size_t>(<xmlNode**>a)[0], y = <size_t>(<xmlNode**>b)[0]
    return (x > y) - (x < y)


cdef class _NodeSet:
    """The nodes of a collection of lxml elements, sorted for binary search (identity, as a
    Python set of proxies compares them: a node has one proxy while it is alive)."""
    cdef xmlNode** nodes
    cdef size_t count
    cdef readonly bint valid  # False if an item is not an lxml element

    def __cinit__(self, object elements):
        self.nodes, self.count, self.valid = NULL, 0, True
        cdef size_t size = len(elements)
        if size == 0:
            return
        self.nodes = <xmlNode**>malloc(size * sizeof(xmlNode*))
        if self.nodes is NULL:
            raise MemoryError()
        for element in elements:
            if not isinstance(element, cetree._Element) or self.count == size:
                self.valid = False
                return
            self.nodes[self.count] = (<cetree._Element>element)._c_node
            self.count += 1
        qsort(self.nodes, self.count, sizeof(xmlNode*), _compare_pointers)

    def __dealloc__(self):
        free(self.nodes)

    cdef inline bint holds(self, xmlNode* node) noexcept nogil:
        if self.count == 0:
            return False
        return bsearch(&node, self.nodes, self.count, sizeof(xmlNode*),
                       _compare_pointers) is not NULL


cdef class _Buffer:
    """Growing UTF-8 bytes."""
    cdef char* data
    cdef size_t size, capacity

    def __cinit__(self):
        self.capacity = 65536
        self.size = 0
        self.data = <char*>malloc(self.capacity)
        if self.data is NULL:
            raise MemoryError()

    def __dealloc__(self):
        free(self.data)

    cdef int add(self, const char* text, size_t length) except -1:
        cdef char* grown
        cdef size_t capacity = self.capacity
        if self.size + length > capacity:
            while self.size + length > capacity:
                capacity *= 2
            grown = <char*>realloc(self.data, capacity)
            if grown is NULL:
                raise MemoryError()
            self.data, self.capacity = grown, capacity
        memcpy(self.data + self.size, text, length)
        self.size += length
        return 0


cdef inline bint _is_walked(xmlNode* node) noexcept nogil:
    # lxml's _isElement: the nodes iterwalk visits.
    return (node.type == XML_ELEMENT_NODE or node.type == XML_ENTITY_REF_NODE
            or node.type == XML_COMMENT_NODE or node.type == XML_PI_NODE)


cdef inline xmlNode* _next_walked(xmlNode* node) noexcept nogil:
    while node is not NULL and not _is_walked(node):
        node = node.next
    return node


cdef int _add_run(_Buffer out, xmlNode* first) except -1:
    """Append the text of the run of text nodes at ``first`` (lxml's ``_collectText``)."""
    cdef xmlNode* node = _text_or_skip(first)
    while node is not NULL:
        if node.content is not NULL:
            out.add(<const char*>node.content, strlen(<const char*>node.content))
        node = _text_or_skip(node.next)
    return 0


#: Mark codes (render.py hands the tag → code table): what an element adds at its start and
#: at its end.
cdef const char* MARKS[5]
MARKS[0] = b""
MARKS[1] = b" "
MARKS[2] = b"\x00L"
MARKS[3] = b"\x00P"
MARKS[4] = b"\x00C"
#: Their lengths (strlen stops at the markers' NUL).
cdef size_t MARK_LENGTHS[5]
MARK_LENGTHS[:] = [0, 1, 2, 2, 2]
cdef enum:
    #: Bits of one mark code in a tag's start | end << MARK_BITS.
    MARK_BITS = 3


cdef class _MarkCache:
    """Each distinct tag name pointer's start and end mark codes."""
    cdef const_xmlChar* names[TAG_SLOTS]
    cdef unsigned char codes[TAG_SLOTS]
    cdef dict table

    def __cinit__(self, dict table):
        cdef int i
        for i in range(TAG_SLOTS):
            self.names[i] = NULL
        self.table = table

    cdef int code(self, xmlNode* node) except -1:
        """start code | end code << 3, 0 for a namespaced element (its tag is ``{href}name``,
        in no set of render.py)."""
        cdef size_t slot
        cdef int probe
        if node.ns is not NULL:
            return 0
        slot = (<size_t>node.name >> 3) % TAG_SLOTS
        for probe in range(TAG_SLOTS // 4):
            if self.names[slot] is NULL:
                break
            if self.names[slot] == node.name:
                return self.codes[slot]
            slot = (slot + 1) % TAG_SLOTS
        name = PyUnicode_DecodeUTF8(<char*>node.name, strlen(<const char*>node.name), NULL)
        cdef int code = self.table.get(name, 0)
        if self.names[slot] is NULL:
            self.names[slot], self.codes[slot] = node.name, code
        return code


cdef enum:
    #: What _finish finds a UTF-8 sequence to be.
    WORD_CHAR, SPACE_CHAR, SLOW_CHAR


cdef inline int _char_kind(const unsigned char* data, size_t at, size_t size,
                           size_t* length) noexcept nogil:
    """The kind of the UTF-8 character at ``at`` (and its length in bytes): a space as
    ``str.split()`` and ``render._SPACES`` both see it (ASCII space, \\t\\n\\v\\f\\r, U+00A0),
    a character on which render._split_join leaves its fast path (render._OTHER_SPACES, \\x01,
    \\x02), or a word character."""
    cdef unsigned char first = data[at], second, third
    if first < 0x80:
        length[0] = 1
        if first == 0x20 or 9 <= first <= 13:
            return SPACE_CHAR
        if first == 1 or first == 2 or 0x1c <= first <= 0x1f:
            return SLOW_CHAR
        return WORD_CHAR
    length[0] = 1 if first < 0xc0 else 2 if first < 0xe0 else 3 if first < 0xf0 else 4
    if at + length[0] > size:
        length[0] = size - at
        return WORD_CHAR
    second = data[at + 1]
    if first == 0xc2:
        return SPACE_CHAR if second == 0xa0 else SLOW_CHAR if second == 0x85 else WORD_CHAR
    if length[0] != 3:
        return WORD_CHAR
    third = data[at + 2]
    if ((first == 0xe1 and second == 0x9a and third == 0x80)                      # U+1680
            or (first == 0xe2 and second == 0x80 and (0x80 <= third <= 0x8b      # U+2000-200B
                                                      or third == 0xa8 or third == 0xa9
                                                      or third == 0xaf))          # 2028/9, 202F
            or (first == 0xe2 and second == 0x81 and third == 0x9f)              # U+205F
            or (first == 0xe3 and second == 0x80 and third == 0x80)):            # U+3000
        return SLOW_CHAR
    return WORD_CHAR


cdef object _finish(const unsigned char* data, size_t size):
    """``render._split_join`` of the joined UTF-8 text ``data`` (markers "\\x00P", "\\x00L" and
    "\\x00C"), in one pass: words of a line joined by one space, a row's cells by one tab
    (none at the line's ends), lines by a newline, paragraphs by a blank line, empty lines and
    paragraphs dropped. None when the text holds a character on which _split_join leaves its
    fast path: the caller then runs it."""
    cdef _Buffer out = _Buffer()
    cdef size_t at = 0, length
    cdef bint line_started = False, paragraph_started = False, any_paragraph = False
    cdef bint space = False, cell = False
    cdef int kind
    while at < size:
        if data[at] == 0:  # a marker: a cell's edge ("C"), else the line ends ("P": the paragraph)
            if at + 1 < size and data[at + 1] == 67:  # "C"
                cell = True
                at += 2
                continue
            if at + 1 < size and data[at + 1] == 80:  # "P"
                paragraph_started = False
            line_started = space = cell = False
            at += 2
            continue
        kind = _char_kind(data, at, size, &length)
        if kind == SLOW_CHAR:
            return None
        if kind == SPACE_CHAR:
            space = True
        else:
            if not line_started:
                if not paragraph_started:
                    if any_paragraph:
                        out.add(b"\n\n", 2)
                    any_paragraph = paragraph_started = True
                else:
                    out.add(b"\n", 1)
                line_started = True
            elif cell:
                out.add(b"\t", 1)
            elif space:
                out.add(b" ", 1)
            space = cell = False
            out.add(<const char*>data + at, length)
        at += length
    return PyUnicode_DecodeUTF8(out.data, out.size, NULL)


def finish_text(str joined):
    """:func:`_finish` of a joined str (its markers as render.py writes them), for tests."""
    encoded = joined.encode("utf-8", "surrogatepass")
    return _finish(<const unsigned char*>PyBytes_AS_STRING(encoded), len(encoded))


def render_text(cetree._Element root, object removed, object dropped_text, dict marks,
                bint finish=False):
    """What ``render.render_text`` joins for ``root``, as one str: the kept text in document
    order with the break markers ("\\x00P", "\\x00L", "\\x00C", " ") of ``marks`` (tag → start
    code | end code << 3; codes 1 space, 2 line, 3 paragraph, 4 table cell) between. None when the walk meets what
    only the Python walk renders (a comment or processing instruction, an item of ``removed``
    or ``dropped_text`` that is not an lxml element). With ``finish``, a pair: whether the
    text is finished (``render._split_join`` done in C, see :func:`_finish`), and the text,
    else the joined str."""
    cdef _NodeSet skip = _NodeSet(removed)
    cdef _NodeSet mute = _NodeSet(dropped_text)
    if not skip.valid or not mute.valid:
        return None
    cdef _MarkCache cache = _MarkCache(marks)
    cdef _Buffer out = _Buffer()
    cdef xmlNode* top = root._c_node
    cdef xmlNode* node = top
    cdef xmlNode* child
    cdef bint skipped
    cdef int code
    while True:
        # The start event of node.
        if node.type == XML_COMMENT_NODE or node.type == XML_PI_NODE:
            return None
        skipped = skip.holds(node)
        child = NULL
        if not skipped:
            if node.type == XML_ENTITY_REF_NODE:
                if not mute.holds(node):
                    out.add(b"&", 1)
                    out.add(<const char*>node.name, strlen(<const char*>node.name))
                    out.add(b";", 1)
            else:
                code = cache.code(node) & ((1 << MARK_BITS) - 1)
                if code:
                    out.add(MARKS[code], MARK_LENGTHS[code])
                if not mute.holds(node):
                    _add_run(out, node.children)
                child = _next_walked(node.children)
        if child is not NULL:
            node = child
            continue
        # No child to enter: end events, upwards until a next sibling starts.
        while True:
            if not skip.holds(node) and node.type == XML_ELEMENT_NODE:
                code = cache.code(node) >> MARK_BITS
                if code:
                    out.add(MARKS[code], MARK_LENGTHS[code])
            if node == top:
                if finish:
                    text = _finish(<const unsigned char*>out.data, out.size)
                    if text is not None:
                        return True, text
                    return False, PyUnicode_DecodeUTF8(out.data, out.size, NULL)
                return PyUnicode_DecodeUTF8(out.data, out.size, NULL)
            if not mute.holds(node.parent):
                _add_run(out, node.next)
            child = _next_walked(node.next)
            if child is not NULL:
                node = child
                break
            node = node.parent
