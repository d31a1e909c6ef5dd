# The element table in one C pass over libxml2's nodes (prepare/subtrees.py, its pure twin
# prepare/fields.py).
# Included by _kernel.pyx (one extension, as lxml assembles etree.pyx).

cdef enum:
    #: How many keyword attributes the table reads (its per-attribute lists).
    N_ATTRIBUTES = 4
    #: Slots of the tag cache: a page has a few dozen distinct (name, namespace) pointers.
    TAG_SLOTS = 256

#: The attributes read for the keyword features, in this order: ``fields.KEYWORD_ATTRIBUTES``,
#: given by :func:`configure`.
cdef const char* ATTRIBUTE_NAMES[N_ATTRIBUTES]


cdef inline bint _is_text(xmlNode* node) noexcept nogil:
    return node.type == XML_TEXT_NODE or node.type == XML_CDATA_SECTION_NODE


cdef inline xmlNode* _text_or_skip(xmlNode* node) noexcept nogil:
    """lxml's ``_textNodeOrSkip``: the node if it is text, past XInclude markers, else NULL."""
    while node is not NULL:
        if _is_text(node):
            return node
        if node.type == XML_XINCLUDE_START or node.type == XML_XINCLUDE_END:
            node = node.next
        else:
            return NULL
    return NULL


cdef inline bint _ascii_space(unsigned char byte) noexcept nogil:
    # The ASCII characters str.isspace() accepts: \t \n \v \f \r, \x1c-\x1f and the space.
    return byte == 32 or 9 <= byte <= 13 or 28 <= byte <= 31


cdef object _run_text(xmlNode* first):
    """The text of a run of text nodes starting at ``first`` (lxml's ``_collectText``), or None
    when the run has no text that is not whitespace (``str.isspace``): such text is no piece.
    Runs of ASCII whitespace, most of a page's runs, are skipped without making a str."""
    cdef xmlNode* node = _text_or_skip(first)
    cdef xmlNode* walker
    cdef const unsigned char* byte
    cdef Py_ssize_t total = 0, length, at
    cdef bint visible_ascii = False, non_ascii = False, several = False
    if node is NULL:
        return None
    walker = node
    while walker is not NULL:
        if walker.content is not NULL:
            byte = <const unsigned char*>walker.content
            if not visible_ascii:  # look only until the first visible ASCII character
                length = 0
                while byte[length] != 0:
                    if byte[length] >= 128:
                        non_ascii = True
                    elif not _ascii_space(byte[length]):
                        visible_ascii = True
                        break
                    length += 1
            total += strlen(<const char*>byte)
        walker = _text_or_skip(walker.next)
        if walker is not NULL:
            several = True
    if not visible_ascii and not non_ascii:
        return None  # empty, or ASCII whitespace only
    if not several:
        text = PyUnicode_DecodeUTF8(<char*>node.content, total, NULL)
    else:
        joined = PyBytes_FromStringAndSize(NULL, total)
        at = 0
        walker = node
        while walker is not NULL:
            if walker.content is not NULL:
                length = strlen(<const char*>walker.content)
                memcpy(PyBytes_AS_STRING(joined) + at, walker.content, length)
                at += length
            walker = _text_or_skip(walker.next)
        text = PyUnicode_DecodeUTF8(PyBytes_AS_STRING(joined), total, NULL)
    if not visible_ascii and _all_space(text):
        return None  # Unicode whitespace only (NBSP, ideographic space, …)
    return text


cdef bint _all_space(str text):
    """``text.isspace()`` for a non-empty str."""
    cdef int kind = PyUnicode_KIND(text)
    cdef void* data = PyUnicode_DATA(text)
    cdef Py_ssize_t i
    for i in range(PyUnicode_GET_LENGTH(text)):
        if not Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, i)):
            return False
    return True


cdef inline bint _is_word(Py_UCS4 ch) noexcept:
    # re's \w for str patterns (_sre's SRE_UNI_IS_WORD): alphanumeric or the underscore.
    if ch < 128:
        return (48 <= ch <= 57) or (65 <= ch <= 90) or (97 <= ch <= 122) or ch == 95
    return Py_UNICODE_ISALNUM(ch) or ch == 95


cdef inline bint _is_punct(Py_UCS4 ch) noexcept nogil:
    # subtrees._PUNCT: [.!?,;:]
    return ch == 46 or ch == 33 or ch == 63 or ch == 44 or ch == 59 or ch == 58


cdef class _Pieces:
    """The text pieces being collected, with their per-piece counts (the tokens themselves are
    not made: ``ElementTable.piece_tokens`` finds them when asked, ``text_codes`` codes them)."""
    cdef list text
    cdef int[::1] owner, words, chars, punct, commas
    cdef unsigned char[::1] in_link
    cdef Py_ssize_t count

    def __cinit__(self, Py_ssize_t capacity):
        self.text, self.count = [], 0
        self.owner = np.empty(capacity, dtype=np.int32)
        self.words = np.empty(capacity, dtype=np.int32)
        self.chars = np.empty(capacity, dtype=np.int32)
        self.punct = np.empty(capacity, dtype=np.int32)
        self.commas = np.empty(capacity, dtype=np.int32)
        self.in_link = np.empty(capacity, dtype=np.uint8)

    cdef int add(self, str text, int owner, bint in_link) except -1:
        """Append a piece: its tokens (runs of \\w), word characters, punctuation, commas."""
        cdef int kind = PyUnicode_KIND(text)
        cdef void* data = PyUnicode_DATA(text)
        cdef Py_ssize_t length = PyUnicode_GET_LENGTH(text), i = 0, start, k = self.count
        cdef int chars = 0, punct = 0, commas = 0, tokens = 0
        cdef Py_UCS4 ch
        while i < length:
            ch = PyUnicode_READ(kind, data, i)
            if _is_word(ch):
                start = i
                i += 1
                while i < length and _is_word(PyUnicode_READ(kind, data, i)):
                    i += 1
                tokens += 1
                chars += i - start
                continue
            if _is_punct(ch):
                punct += 1
                if ch == 44:
                    commas += 1
            i += 1
        self.text.append(text)
        self.owner[k] = owner
        self.words[k] = tokens
        self.chars[k] = chars
        self.punct[k] = punct
        self.commas[k] = commas
        self.in_link[k] = in_link
        self.count = k + 1
        return 0

    cdef dict fields(self):
        """The pieces' fields of the table (the arrays cut to the pieces found)."""
        cdef Py_ssize_t count = self.count
        return {
            "piece_text": self.text,
            "piece_owner": np.asarray(self.owner[:count]).copy(),
            "piece_words": np.asarray(self.words[:count]).copy(),
            "piece_chars": np.asarray(self.chars[:count]).copy(),
            "piece_punct": np.asarray(self.punct[:count]).copy(),
            "piece_commas": np.asarray(self.commas[:count]).copy(),
            "piece_in_link": np.asarray(self.in_link[:count]).astype(bool),
        }


cdef class _TagCache:
    """Each distinct (name, namespace) pointer's lower-cased tag, made once per page."""
    cdef const_xmlChar* names[TAG_SLOTS]
    cdef const_xmlChar* hrefs[TAG_SLOTS]
    cdef PyObject* tags[TAG_SLOTS]
    cdef list keep  # owns the tags the slots point to
    cdef object entity_tag

    def __cinit__(self):
        cdef int i
        for i in range(TAG_SLOTS):
            self.names[i] = NULL
        self.keep = []
        self.entity_tag = "#other"

    cdef str tag(self, xmlNode* node):
        cdef const_xmlChar* href = NULL
        cdef size_t slot
        cdef int probe
        if node.type != XML_ELEMENT_NODE:
            return self.entity_tag  # entity references: lxml's tag is not a str
        if node.ns is not NULL:
            href = node.ns.href
        slot = ((<size_t>node.name >> 3) ^ (<size_t>href >> 5)) % TAG_SLOTS
        for probe in range(TAG_SLOTS // 4):
            if self.names[slot] is NULL:
                break
            if self.names[slot] == node.name and self.hrefs[slot] == href:
                return <str>self.tags[slot]
            slot = (slot + 1) % TAG_SLOTS
        tag = _spelled_tag(node.name, href).lower()
        if self.names[slot] is NULL:  # else the probe ran out: not cached, still right
            self.keep.append(tag)
            self.names[slot], self.hrefs[slot] = node.name, href
            self.tags[slot] = <PyObject*>tag
        return tag


cdef str _spelled_tag(const_xmlChar* name, const_xmlChar* href):
    """lxml's ``_namespacedNameFromNsName``: ``{href}name``, or ``name`` without a namespace."""
    local = PyUnicode_DecodeUTF8(<char*>name, strlen(<const char*>name), NULL)
    if href is NULL:
        return local
    return "{" + PyUnicode_DecodeUTF8(<char*>href, strlen(<const char*>href), NULL) \
        + "}" + local


cdef inline object _entity_text(xmlNode* node):
    return "&" + PyUnicode_DecodeUTF8(<char*>node.name, strlen(<const char*>node.name),
                                      NULL) + ";"


cdef bint _declares_attributes(xmlDoc* doc) noexcept:
    """Whether the document's DTD declares attributes (then default values may exist, which
    ``.get`` finds and the struct reads here do not)."""
    if doc is NULL or doc.intSubset is NULL:
        return False
    if doc.intSubset.attributes is not NULL:
        return True
    return doc.extSubset is not NULL and doc.extSubset.attributes is not NULL


cdef int _attribute_slot(const_xmlChar* name) noexcept nogil:
    """Which of ATTRIBUTE_NAMES ``name`` is, or -1."""
    cdef int which
    for which in range(N_ATTRIBUTES):
        if strcmp(<const char*>name, ATTRIBUTE_NAMES[which]) == 0:
            return which
    return -1


cdef int _read_attributes(list elements, Py_ssize_t n, xmlNode** nodes,
                          list values) except -1:
    """Each element's values of the four keyword attributes, as ``element.get`` reads them:
    the attribute of that name in no namespace, "" when it has no value."""
    cdef Py_ssize_t k
    cdef int which
    cdef xmlAttr* attribute
    cdef xmlNode* child
    if _declares_attributes(nodes[0].doc):
        for which in range(N_ATTRIBUTES):
            name = ATTRIBUTE_NAMES[which].decode()
            values[which] = [element.get(name) for element in elements]
        return 0
    for k in range(n):
        attribute = nodes[k].properties if nodes[k].type == XML_ELEMENT_NODE else NULL
        while attribute is not NULL:
            which = _attribute_slot(attribute.name) if attribute.ns is NULL else -1
            # The first attribute of the name is the one .get finds (a parser keeps one).
            if which >= 0 and (<list>values[which])[k] is None:
                child = attribute.children
                if child is NULL:
                    value = ""
                elif child.next is NULL and _is_text(child) and child.content is not NULL:
                    value = PyUnicode_DecodeUTF8(<char*>child.content,
                                                 strlen(<const char*>child.content), NULL)
                else:  # entity references in the value: let lxml join them
                    value = (<object>PyList_GET_ITEM(elements, k)).get(
                        ATTRIBUTE_NAMES[which].decode())
                (<list>values[which])[k] = value
            attribute = attribute.next
    return 0


def fill_table(list elements):
    """The element table's fields for ``elements`` (a body's ``iter(Element, Entity)``, in
    document order): a dict of the ElementTable fields other than ``elements``."""
    cdef Py_ssize_t n = PyList_GET_SIZE(elements)
    arrays = {name: np.empty(n, dtype=np.int32) for name in
              ("parent", "depth", "end", "piece_start", "piece_end")}
    arrays["n_children"] = np.zeros(n, dtype=np.int32)
    cdef unsigned char* in_link = NULL
    cdef xmlNode** nodes = NULL
    cdef int* stack = NULL
    cdef _Pieces pieces = _Pieces(2 * n)  # a text and a tail per element at most
    cdef list tags = [None] * n
    cdef list values = [[None] * n for _ in range(N_ATTRIBUTES)]
    if n > 0:
        try:
            nodes = <xmlNode**>malloc(n * sizeof(xmlNode*))
            stack = <int*>malloc(n * sizeof(int))
            in_link = <unsigned char*>malloc(n)
            if nodes is NULL or stack is NULL or in_link is NULL:
                raise MemoryError()
            _walk(elements, n, nodes, stack, in_link, _TagCache(), pieces, tags,
                  arrays["parent"], arrays["depth"], arrays["end"], arrays["n_children"],
                  arrays["piece_start"], arrays["piece_end"])
            _read_attributes(elements, n, nodes, values)
        finally:
            free(nodes)
            free(stack)
            free(in_link)
    arrays.update(pieces.fields())
    arrays["tags"] = tags
    arrays["keyword_values"] = values
    return arrays


cdef void _walk(list elements, Py_ssize_t n, xmlNode** nodes, int* stack,
                unsigned char* in_link, _TagCache cache, _Pieces pieces, list tags,
                int[::1] parent, int[::1] depth, int[::1] end, int[::1] n_children,
                int[::1] piece_start, int[::1] piece_end) except *:
    """One pass in document order: an element enters after the elements it follows have ended
    (their tails are pieces of their parents, innermost first), then its own text is a piece.
    The stack holds the open elements: depth is its height, a parent its top."""
    cdef Py_ssize_t k, top = 0
    cdef int j
    cdef xmlNode* node
    for k in range(n):
        node = (<cetree._Element?>PyList_GET_ITEM(elements, k))._c_node
        nodes[k] = node
        if k > 0:
            while top > 0 and nodes[stack[top - 1]] != node.parent:
                top -= 1
                _close(stack[top], k, nodes, in_link, pieces, parent, end, piece_end)
            if top == 0:
                raise ValueError("the elements are not one subtree in document order")
            parent[k] = stack[top - 1]
            n_children[stack[top - 1]] += 1
        else:
            parent[k] = -1
        depth[k] = top
        tag = cache.tag(node)
        tags[k] = tag
        in_link[k] = tag == "a" or (k > 0 and in_link[parent[k]])
        piece_start[k] = pieces.count
        if node.type == XML_ENTITY_REF_NODE:
            pieces.add(_entity_text(node), k, in_link[k])
        else:
            text = _run_text(node.children)
            if text is not None:
                pieces.add(text, k, in_link[k])
        stack[top] = k
        top += 1
    while top > 0:
        top -= 1
        _close(stack[top], n, nodes, in_link, pieces, parent, end, piece_end)


cdef inline void _close(int j, Py_ssize_t at, xmlNode** nodes, unsigned char* in_link,
                        _Pieces pieces, int[::1] parent, int[::1] end,
                        int[::1] piece_end) except *:
    """Element ``j`` ends before element ``at``: its ranges close and its tail (not the
    body's: that is outside the page) becomes a piece of its parent."""
    end[j] = at
    piece_end[j] = pieces.count
    if j > 0:
        tail = _run_text(nodes[j].next)
        if tail is not None:
            pieces.add(tail, parent[j], in_link[parent[j]])
