# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The compiled kernel: the element table of :func:`noisecbr.prepare.subtrees.build_table` filled in one
C pass over libxml2's nodes (``fill_table``), the integer loops of the vectors
(``text_codes``, ``value_masks``, ``lookup``, ``ids``, ``inherited``, ``leaf_counts``,
``siblings``, ``signature_counts``) and their float columns (``page_quantities`` and
``fill_rows``: every column as the feature table says, by the pure path's float64 operations in
its order, for every row or the rows the walk reads; the logarithms still numpy's), the lexical
fields pooled (``pool_sums``, ``pool_rows``) and their attribute tokens gathered
(``element_runs``), the comment evidence (``thread_evidence``). :mod:`noisecbr.native.backend` chooses
it or the pure Python path, which is the reference: every output here must equal the pure path's
bit for bit.

What the pure path reads through lxml proxies (``.tag``, ``.text``, ``.tail``, ``getparent()``,
``.get(name)``) is read here from the ``xmlNode`` fields lxml itself reads, with lxml's rules:

* a node's ``.text`` is its run of leading TEXT/CDATA children concatenated (XInclude markers
  skipped), ``.tail`` the run after it; an entity reference's ``.text`` is ``&name;``;
* ``.tag`` is ``{href}name`` in a namespace, else ``name``; an entity reference's is not a str;
* ``.get(name)`` is the value of the attribute of that name in no namespace, "" if it has no
  value; DTD default values are not looked for here: a page whose DTD declares attributes has
  its values read through ``.get`` instead.

libxml2 is not linked: lxml's wheels link it statically and do not export it, so only struct
fields are read (their layout is libxml2's stable public ABI) and nothing of libxml2 is called.
"""

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize
from cpython.dict cimport PyDict_GetItem
from cpython.list cimport PyList_GET_ITEM, PyList_GET_SIZE
from cpython.object cimport PyObject
from cpython.unicode cimport (Py_UNICODE_ISALNUM, Py_UNICODE_ISSPACE, PyUnicode_DATA,
                              PyUnicode_DecodeUTF8, PyUnicode_GET_LENGTH, PyUnicode_KIND,
                              PyUnicode_READ, PyUnicode_Substring)
from libc.stdint cimport uint8_t, uint16_t, uint32_t
from libc.stdlib cimport free, malloc
from libc.string cimport memchr, memcmp, memcpy, strcmp, strlen

cimport lxml.includes.etreepublic as cetree
from lxml.includes.tree cimport (XML_CDATA_SECTION_NODE, XML_COMMENT_NODE,
                                 XML_ELEMENT_NODE, XML_ENTITY_REF_NODE, XML_PI_NODE,
                                 XML_TEXT_NODE, const_xmlChar, xmlAttr, xmlDoc, xmlDtd, xmlNode)

import itertools

import numpy as np

cdef extern from "Python.h":
    bint PyUnicode_IS_ASCII(object text)  # PEP 393: one byte per character, all below 128

cdef extern from "libxml/tree.h":
    # Not in lxml's tree.pxd; numbered as in libxml2's xmlElementType (stable since 2.0).
    enum:
        XML_XINCLUDE_START = 19
        XML_XINCLUDE_END = 20

cetree.import_lxml__etree()

#: The attributes read for the keyword features, in this order (``subtrees.KEYWORD_ATTRIBUTES``:
#: the import-time check compares the values read).
cdef const char* ATTRIBUTE_NAMES[4]
ATTRIBUTE_NAMES[0] = b"class"
ATTRIBUTE_NAMES[1] = b"id"
ATTRIBUTE_NAMES[2] = b"role"
ATTRIBUTE_NAMES[3] = b"aria-label"
cdef enum:
    N_ATTRIBUTES = 4
    #: Slots of the tag cache: a page has a few dozen distinct (name, namespace) pointers.
    TAG_SLOTS = 256


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


cdef enum:
    #: Longest word (bytes) the table of listed words holds; longer tokens are in no list.
    WORD_BYTES = 24


cdef class AsciiWords:
    """The code bits of the listed words (stop words of every language, boilerplate
    vocabularies: lower-case ASCII), in a C hash table: an ASCII token's code needs no Python
    dict lookup (the token cache holds ~10⁵ tokens, and probing it misses the CPU caches). The
    table has a power of two of slots, at least four per word (open addressing stays short)."""
    cdef unsigned char[:, ::1] keys
    cdef unsigned char[::1] lengths
    cdef long long[::1] bits
    cdef size_t mask
    cdef readonly bint usable  # False if a word cannot be held: every token then takes the dict
    #: Every ASCII token's code also holds its lexical bucket (features.lexical.bucket): the
    #: low ``bucket_bits`` bits of its FNV-1a hash folded, at ``bucket_shift``.
    cdef readonly int bucket_shift, bucket_bits

    def __cinit__(self, dict word_bits, int bucket_shift=0, int bucket_bits=0):
        cdef Py_ssize_t length, k
        cdef size_t slot, slots = 16
        self.bucket_shift, self.bucket_bits = bucket_shift, bucket_bits
        while slots < 4 * len(word_bits):
            slots *= 2
        self.mask = slots - 1
        self.keys = np.zeros((slots, WORD_BYTES), dtype=np.uint8)
        self.lengths = np.zeros(slots, dtype=np.uint8)
        self.bits = np.zeros(slots, dtype=np.int64)
        self.usable = True
        for word, bits in word_bits.items():
            encoded = word.encode("utf-8") if isinstance(word, str) else b""
            length = len(encoded)
            if (length == 0 or length >= WORD_BYTES or not word.isascii()
                    or word.lower() != word):
                self.usable = False
                return
            slot = _word_hash(encoded, length) & self.mask
            while self.lengths[slot] != 0:
                slot = (slot + 1) & self.mask
            for k in range(length):
                self.keys[slot, k] = <unsigned char>encoded[k]
            self.lengths[slot] = <unsigned char>length
            self.bits[slot] = bits

    cdef long long find(self, const char* lower, Py_ssize_t length) noexcept:
        """The bits of the lower-cased word, 0 if it is not listed."""
        cdef size_t slot = _word_hash(lower, length) & self.mask
        while self.lengths[slot] != 0:
            if (self.lengths[slot] == length
                    and memcmp(&self.keys[slot, 0], lower, length) == 0):
                return self.bits[slot]
            slot = (slot + 1) & self.mask
        return 0


cdef inline size_t _word_hash(const char* word, Py_ssize_t length) noexcept nogil:
    # FNV-1a: a few dozen short words, no adversary.
    cdef size_t h = 14695981039346656037ULL
    cdef Py_ssize_t i
    for i in range(length):
        h = (h ^ <unsigned char>word[i]) * 1099511628211ULL
    return h


cdef long long _ascii_code(int kind, const void* data, Py_ssize_t start, Py_ssize_t length,
                          AsciiWords words, long long title, long long digit) noexcept:
    """``features.tokens._code`` of the token ``[start, start + length)`` of a str's characters
    (``kind``, ``data``), all ASCII word characters: Title Case and digits by str.istitle's and
    str.isdigit's rules, then the listed word's bits and the lower-cased token's bucket."""
    cdef Py_ssize_t i
    cdef char lower[WORD_BYTES]
    cdef int ch  # an int, not a Py_UCS4: Cython would add 32 to a one-character str
    cdef bint cased = False, previous_cased = False, titled = True, digits = True
    cdef unsigned long long h = 14695981039346656037ULL  # FNV-1a, as features.lexical.bucket
    for i in range(length):
        ch = <int>PyUnicode_READ(kind, data, start + i)
        h = (h ^ <unsigned long long>(ch + 32 if 65 <= ch <= 90 else ch)) * 1099511628211ULL
        if 65 <= ch <= 90:  # A-Z
            titled = titled and not previous_cased
            previous_cased = cased = True
        elif 97 <= ch <= 122:  # a-z
            titled = titled and previous_cased
            previous_cased = cased = True
        else:
            previous_cased = False
        digits = digits and 48 <= ch <= 57
        if i < WORD_BYTES:
            lower[i] = <char>(ch + 32 if 65 <= ch <= 90 else ch)
    cdef long long code = (title if titled and cased else 0) | (digit if digits else 0)
    if length < WORD_BYTES:
        code |= words.find(lower, length)
    if words.bucket_bits:
        code |= <long long>((h ^ (h >> 32)) & ((1ULL << words.bucket_bits) - 1)) << words.bucket_shift
    return code


def text_codes(list piece_text, const int[::1] piece_words, dict cache, object code,
               AsciiWords words, long long title, long long digit):
    """The code of every token (run of ``\\w``) of the texts in ``piece_text``, in order
    (``piece_words``: each text's number of tokens, as the table counted them). Tokens of ASCII
    characters are coded here from the text's characters (``words``: the listed words' bits,
    ``title`` and ``digit`` the Title Case and digit bits), with no str made for them; the
    others come from ``cache`` (token → int) or, when not in it, ``code(token)`` (which caches
    it)."""
    cdef Py_ssize_t total = 0, k, i, start, length, at = 0
    cdef int kind
    cdef const void* data
    cdef Py_UCS4 ch
    cdef bint ascii
    cdef PyObject* found
    if PyList_GET_SIZE(piece_text) != piece_words.shape[0]:
        raise ValueError("piece_words needs a count for every text")
    for k in range(piece_words.shape[0]):
        total += piece_words[k]
    out = np.empty(total, dtype=np.int64)
    cdef long long[::1] codes = out
    for k in range(PyList_GET_SIZE(piece_text)):
        text = <str>PyList_GET_ITEM(piece_text, k)
        kind = PyUnicode_KIND(text)
        data = PyUnicode_DATA(text)
        length = PyUnicode_GET_LENGTH(text)
        i = 0
        while i < length:
            ch = PyUnicode_READ(kind, data, i)
            if not _is_word(ch):
                i += 1
                continue
            start, ascii = i, ch < 128
            i += 1
            while i < length:
                ch = PyUnicode_READ(kind, data, i)
                if not _is_word(ch):
                    break
                ascii = ascii and ch < 128
                i += 1
            if at == total:
                raise ValueError("the texts hold more tokens than piece_words counts")
            if ascii and words.usable:
                codes[at] = _ascii_code(kind, data, start, i - start, words, title, digit)
            else:
                token = PyUnicode_Substring(text, start, i)
                found = PyDict_GetItem(cache, token)
                codes[at] = <object>found if found is not NULL else code(token)
            at += 1
    if at != total:
        raise ValueError("the texts hold fewer tokens than piece_words counts")
    return out


def lookup(list values, dict table, object missing, bint unsigned):
    """``table.get(value, missing)`` of every value, as an int64 (uint64 if ``unsigned``) array:
    ``np.fromiter(map(table.get, values, repeat(missing)))`` without a Python call per value."""
    cdef Py_ssize_t n = PyList_GET_SIZE(values), k
    cdef PyObject* found
    out = np.empty(n, dtype=np.uint64 if unsigned else np.int64)
    cdef unsigned long long[::1] unsigned_out
    cdef long long[::1] signed_out
    cdef unsigned long long unsigned_missing = 0
    cdef long long signed_missing = 0
    if unsigned:
        unsigned_out, unsigned_missing = out, missing
        for k in range(n):
            found = PyDict_GetItem(table, <object>PyList_GET_ITEM(values, k))
            unsigned_out[k] = <object>found if found is not NULL else unsigned_missing
    else:
        signed_out, signed_missing = out, missing
        for k in range(n):
            found = PyDict_GetItem(table, <object>PyList_GET_ITEM(values, k))
            signed_out[k] = <object>found if found is not NULL else signed_missing
    return out


def ids(list values, dict index):
    """``map(index.setdefault, values, itertools.count(len(index) + 1))`` as an int64 array: a
    value met first at position k is numbered len(index) + 1 + k (``index`` is filled)."""
    cdef Py_ssize_t n = PyList_GET_SIZE(values), k
    cdef long long start = len(index) + 1
    cdef PyObject* found
    out = np.empty(n, dtype=np.int64)
    cdef long long[::1] numbers = out
    for k in range(n):
        value = <object>PyList_GET_ITEM(values, k)
        found = PyDict_GetItem(index, value)
        if found is not NULL:
            numbers[k] = <object>found
        else:
            index[value] = start + k
            numbers[k] = start + k
    return out


cdef enum:
    #: Forms the keyword scanner holds (``features.keywords.KEYWORDS`` and the whole-token
    #: forms: 43).
    MAX_FORMS = 64
    #: Longest form (characters).
    FORM_CHARS = 16


cdef class KeywordScanner:
    """The keyword bits of attribute values as ``features.keywords._new_masks`` finds them with a
    regex per keyword: bit ``b`` of a form is set when the form occurs in the lower-cased value,
    a whole-token form only between characters that are not ASCII letters. The forms are ASCII
    letters, so an occurrence lies inside one ``[a-z]+`` token, as the regexes' rule wants.
    One pass over a value's characters, trying only the forms that start with each one."""
    cdef Py_UCS4 forms[MAX_FORMS][FORM_CHARS]
    cdef int lengths[MAX_FORMS]
    cdef unsigned long long bits[MAX_FORMS]
    cdef bint whole[MAX_FORMS]
    #: the forms starting with character c are first_form[c] .. first_form[c] + form_count[c]
    cdef int first_form[128]
    cdef int form_count[128]

    def __cinit__(self, list forms):
        """``forms``: (form, bit, whole) triples; the form lower-case ASCII letters."""
        cdef int k, j, c
        if len(forms) > MAX_FORMS:
            raise ValueError(f"at most {MAX_FORMS} keyword forms")
        for c in range(128):
            self.first_form[c] = 0
            self.form_count[c] = 0
        ordered = sorted(forms, key=lambda entry: entry[0][:1])
        for k, (form, bit, whole) in enumerate(ordered):
            if not (0 < len(form) <= FORM_CHARS and form.isascii() and form.isalpha()
                    and form.islower()):
                raise ValueError(f"keyword form {form!r} is not lower-case ASCII letters")
            for j in range(len(form)):
                self.forms[k][j] = ord(form[j])
            self.lengths[k] = len(form)
            self.bits[k] = bit
            self.whole[k] = whole
            c = ord(form[0])
            if self.form_count[c] == 0:
                self.first_form[c] = k
            self.form_count[c] += 1

    cdef unsigned long long mask(self, str lowered):
        cdef int kind = PyUnicode_KIND(lowered)
        cdef void* data = PyUnicode_DATA(lowered)
        cdef Py_ssize_t n = PyUnicode_GET_LENGTH(lowered), i, j
        cdef unsigned long long found = 0
        cdef Py_UCS4 ch
        cdef int k, last
        for i in range(n):
            ch = PyUnicode_READ(kind, data, i)
            if ch >= 128 or self.form_count[ch] == 0:
                continue
            last = self.first_form[ch] + self.form_count[ch]
            for k in range(self.first_form[ch], last):
                if i + self.lengths[k] > n or found & self.bits[k]:
                    continue
                j = 1
                while (j < self.lengths[k]
                       and PyUnicode_READ(kind, data, i + j) == self.forms[k][j]):
                    j += 1
                if j < self.lengths[k]:
                    continue
                if self.whole[k] and (
                        (i > 0 and _ascii_lower_letter(PyUnicode_READ(kind, data, i - 1)))
                        or (i + j < n and _ascii_lower_letter(PyUnicode_READ(kind, data, i + j)))):
                    continue
                found |= self.bits[k]
        return found


cdef inline bint _ascii_lower_letter(Py_UCS4 ch) noexcept nogil:
    return 97 <= ch <= 122  # a-z: the regexes' [a-z]


def value_masks(list values, const long long[:, ::1] positions, dict cache,
                KeywordScanner scanner, const unsigned long long[::1] landmarks):
    """Per element, the OR of the keyword masks of its values and of ``landmarks``
    (``features.keywords.own_masks``), from a page's distinct values (``values``, None first)
    and each element's value per attribute (``positions``: attributes × elements, indices into
    them): each distinct value's mask found once (``cache``, else ``scanner``: a value's mask
    is cached, a str → int entry), then OR-ed per element with ``landmarks``."""
    cdef Py_ssize_t n_values = PyList_GET_SIZE(values), n = landmarks.shape[0], v, k, e
    cdef Py_ssize_t attributes = positions.shape[0]
    if positions.shape[1] != n:
        raise ValueError("positions must have a column per element")
    masks_array = np.zeros(n_values, dtype=np.uint64)
    cdef unsigned long long[::1] masks = masks_array
    cdef PyObject* found
    cdef unsigned long long bits
    for v in range(n_values):
        value = <object>PyList_GET_ITEM(values, v)
        if value is None:
            continue
        found = PyDict_GetItem(cache, value)
        if found is not NULL:
            masks[v] = <unsigned long long><object>found
            continue
        bits = scanner.mask(value.lower())
        cache[value] = bits
        masks[v] = bits
    out = np.array(landmarks, dtype=np.uint64)
    cdef unsigned long long[::1] own = out
    cdef long long index
    for k in range(attributes):
        for e in range(n):
            index = positions[k, e]
            if not 0 <= index < n_values:
                raise ValueError(f"value index {index} of {n_values} values")
            own[e] |= masks[index]
    return out


def inherited(const int[::1] parent, const unsigned long long[::1] own):
    """For every element, the OR of ``own`` over its strict ancestors (parents come before
    their children: one forward pass)."""
    cdef Py_ssize_t n = parent.shape[0], i
    out = np.zeros(n, dtype=np.uint64)
    cdef unsigned long long[::1] result = out
    for i in range(1, n):
        result[i] = result[parent[i]] | own[parent[i]]
    return out


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


# ---------------------------------------------------------------------------------------------
# Integer loops of the vectors' leaf and page groups.

def leaf_counts(const int[::1] parent, const int[::1] n_children, const long long[::1] types,
                const int[::1] piece_owner, int n_types, int text_type):
    """S_n of eq. 1 for every subtree (int32, elements × types): a childless element counts
    its own type, a text piece owned by an element with children counts as ``text_type``; one
    backward pass adds each element's counts to its parent's (children follow their parents)."""
    cdef Py_ssize_t n = parent.shape[0], i, k
    cdef int t
    out = np.zeros((n, n_types), dtype=np.int32)
    cdef int[:, ::1] counts = out
    for i in range(n):
        if n_children[i] == 0:
            counts[i, types[i]] += 1
    for k in range(piece_owner.shape[0]):
        if n_children[piece_owner[k]] > 0:
            counts[piece_owner[k], text_type] += 1
    for i in range(n - 1, 0, -1):
        for t in range(n_types):
            counts[parent[i], t] += counts[i, t]
    return out


def siblings(const int[::1] parent):
    """The previous and next element sibling of every element (−1 where there is none)."""
    cdef Py_ssize_t n = parent.shape[0], i
    previous_out = np.full(n, -1, dtype=np.int64)
    next_out = np.full(n, -1, dtype=np.int64)
    cdef long long[::1] previous = previous_out, following = next_out
    cdef long long* last = <long long*>malloc(max(n, 1) * sizeof(long long))
    if last is NULL:
        raise MemoryError()
    try:
        for i in range(n):
            last[i] = -1
        for i in range(1, n):
            if last[parent[i]] >= 0:
                previous[i] = last[parent[i]]
                following[last[parent[i]]] = i
            last[parent[i]] = i
    finally:
        free(last)
    return previous_out, next_out


def signature_counts(const long long[::1] signature, const long long[::1] previous,
                     const long long[::1] following):
    """Per element, how many elements of the page share its ``signature``, and how many of its
    parent's children do (itself included; the body counts among the elements without a
    parent), the children linked by ``previous`` and ``following`` (:func:`siblings`). Signatures are numbered in an open-addressing table, then counted per kind and,
    child by child of each parent, per kind among siblings."""
    cdef Py_ssize_t n = signature.shape[0], i, slots = 1, slot, kinds = 0
    while slots < 2 * n + 2:
        slots *= 2
    page_out = np.zeros(n, dtype=np.int64)
    sibling_out = np.zeros(n, dtype=np.int64)
    cdef long long[::1] page = page_out, among = sibling_out
    keys_array = np.empty(slots, dtype=np.int64)
    kind_of_slot = np.full(slots, -1, dtype=np.int64)
    kind_array = np.empty(max(n, 1), dtype=np.int64)
    per_kind_array = np.zeros(max(n, 1), dtype=np.int64)
    scratch_array = np.zeros(max(n, 1), dtype=np.int64)
    cdef long long[::1] keys = keys_array, slot_kind = kind_of_slot, kind = kind_array
    cdef long long[::1] per_kind = per_kind_array, scratch = scratch_array
    cdef unsigned long long h
    for i in range(n):
        h = <unsigned long long>signature[i] * 11400714819323198485ULL
        slot = <Py_ssize_t>(h >> 20) & (slots - 1)
        while slot_kind[slot] >= 0 and keys[slot] != signature[i]:
            slot = (slot + 1) & (slots - 1)
        if slot_kind[slot] < 0:
            keys[slot], slot_kind[slot] = signature[i], kinds
            kinds += 1
        kind[i] = slot_kind[slot]
        per_kind[kind[i]] += 1
    for i in range(n):
        page[i] = per_kind[kind[i]]
    # Siblings: elements with the same parent (the body alone has none), linked by
    # ``previous`` and ``following`` (:func:`siblings`).
    cdef long long j
    for i in range(n):
        if previous[i] >= 0:
            continue  # counted from the first of its siblings
        j = i
        while j >= 0:
            scratch[kind[j]] += 1
            j = following[j]
        j = i
        while j >= 0:
            among[j] = scratch[kind[j]]
            j = following[j]
        j = i
        while j >= 0:
            scratch[kind[j]] = 0
            j = following[j]
    return page_out, sibling_out


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
# Hidden elements (visibility.remove_invisible): the elements that carry a hiding attribute.

#: What a style that hides holds in some ASCII case (see _style_may_hide).
cdef const unsigned char* HIDING_WORDS[2]
HIDING_WORDS[0] = <const unsigned char*>b"none"
HIDING_WORDS[1] = <const unsigned char*>b"dden"
cdef Py_ssize_t HIDING_LENGTHS[2]
HIDING_LENGTHS[0] = 4
HIDING_LENGTHS[1] = 4


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
                      HIDING_WORDS, HIDING_LENGTHS, 2)


cdef bint _carries_hiding_attribute(xmlNode* node, bint hiding_styles) noexcept nogil:
    cdef xmlAttr* attribute = node.properties
    while attribute is not NULL:
        if attribute.ns is NULL:
            if strcmp(<const char*>attribute.name, b"style") == 0:
                if not hiding_styles or _style_may_hide(attribute):
                    return True
            elif (strcmp(<const char*>attribute.name, b"hidden") == 0
                    or strcmp(<const char*>attribute.name, b"aria-hidden") == 0):
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


#: What ``tidy._DECLARATIONS`` compares a script's normalised, lower-cased type with.
cdef const char* LD_JSON = b"application/ld+json"


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
    if end - start != 19:  # the name has no space inside: a value with one is another name
        return 0
    for k in range(19):
        if (text[start + k] + 32 if 65 <= text[start + k] <= 90 else text[start + k]) != (
                <const unsigned char*>LD_JSON)[k]:
            return 0
    return 1


def declarations(cetree._Element root, list unsure):
    """The JSON-LD scripts and named metas below ``root`` in document order, as
    ``tidy._DECLARATIONS`` finds them, in one walk over the nodes (no attribute string made):
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


# ---------------------------------------------------------------------------------------------
# The vectors' float columns (features.vectorize): every column as its row of the feature table
# (noisecbr/features/schema.py) says, from per-element quantities computed here as the pure path
# computes them with numpy, operation by operation in float64, then rounded to float32. Sums of
# counts are exact in integers; the logarithms are numpy's (one np.log1p over a block of
# arguments: its results may differ from libm's in the last bit). The table reaches the kernel
# as a Schema (features.compiled.kernel_schema): no column position or feature scale is written
# here, only the quantities' names.

cpdef enum Transform:
    # How a column is made of its quantity (schema.TRANSFORMS, upper-cased): those that read a
    # quantity, then the two that read another column.
    LOG, SHARE, CAPPED, BIT, ONE_HOT, VALUE, AT, RELATIVE

cpdef enum Relation:
    # The element whose column an AT or RELATIVE column reads (schema.RELATIONS, upper-cased).
    PARENT, PREVIOUS, NEXT, ROOT, FIRST_H1

# The quantities the table's ``of`` and ``per`` name (upper-cased; module-level names, as an
# anonymous enum's members index a memoryview where a named enum's do not). First the rows of
# the quantities block, one float64 per element (a page-wide quantity repeated):
cpdef enum:
    INDEX, END, ELEMENTS, SIZE, DEPTH, MAX_DEPTH, CHILDREN, TAG_GROUP, LEAVES,
    CHARS, WORDS, LINK_CHARS, PUNCT, STOP_WORDS, OWN_CHARS, PAGE_CHARS,
    INSIDE_CANDIDATE, CONTAINS_CANDIDATE, CANDIDATE_TEXT_SHARE, CONTENT_SCORE, TOP_SCORE,
    CANDIDATE_DISTANCE, WORDS_BEFORE, WORDS_AFTER, PAGE_WORDS, SIGNATURES, SIGNATURE_SIBLINGS,
    SIBLINGS, SENTENCES, PAGE_SENTENCES, LINK_PIECES, PAGE_LINK_PIECES, AFTER_H1, CONTAINS_H1,
    BIGGEST_CHILD_WORDS, HAS_PREVIOUS, HAS_NEXT, TITLE_TOKENS, DIGIT_TOKENS, PIECES,
    # then the families, read at a column's index:
    LEAF_COUNTS, OWN_MASKS, ANCESTOR_MASKS, VOCABULARY_TOKENS, HEAD_VOCABULARY_TOKENS

cdef enum:
    #: Rows of the quantities block.
    N_ROWS = LEAF_COUNTS
    #: Rows filled at a time: a block of the output stays in the cache while its columns are
    #: written.
    BLOCK = 64

cdef enum:
    #: Rows of the per-piece cumulative sums (a subtree's pieces are contiguous).
    P_WORDS, P_CHARS, P_LINK_CHARS, P_PUNCT, P_STOPS, P_SENTENCES, P_LINK_PIECES, N_PIECE_SUMS

cdef enum:
    #: Columns of the per-token cumulative counts: Title Case, digits, then each vocabulary.
    T_TITLES, T_DIGITS, T_VOCABULARIES


cdef inline double _at_least(double x, double floor) noexcept nogil:
    return x if x >= floor else floor  # np.maximum(x, floor) for x not NaN


cdef inline double _at_most(double x, double ceiling) noexcept nogil:
    return x if x <= ceiling else ceiling  # np.minimum(x, ceiling) for x not NaN


cdef class Schema:
    """The feature table as the kernel reads it (``features.compiled.kernel_schema`` builds it
    from ``features.schema``). ``columns``: per column its Transform, what it is made of
    (``of``: a quantity, or the column an AT or RELATIVE column reads), the family ``index``,
    the quantity it is divided by (``per``, −1: none), its Relation (``at``), ``floor``,
    ``scale``, ``weight`` and ``cap``. ``parameters``: the column the candidate's score is
    damped by (``link_density``), the number of leaf types, the token codes' bits, and the
    parameters of the algorithms that make the quantities."""
    cdef int[::1] transform, of, index, per, at, log_row
    cdef double[::1] floor, scale, weight, cap
    cdef Py_ssize_t n_columns, n_logs, link_density, n_leaf_types
    cdef long long title_bit, digit_bit, stop_bit
    cdef int vocabulary_shift, n_vocabularies, head_words, sentence_words
    cdef double min_paragraph_chars, paragraph_chars, max_length_points, grandparent_divisor

    def __init__(self, dict columns, dict parameters):
        if len({len(values) for values in columns.values()}) != 1:
            raise ValueError("the feature table's arrays differ in length")
        self.transform, self.of, self.index = columns["transform"], columns["of"], columns["index"]
        self.per, self.at = columns["per"], columns["at"]
        self.floor, self.scale = columns["floor"], columns["scale"]
        self.weight, self.cap = columns["weight"], columns["cap"]
        self.n_columns = self.transform.shape[0]
        is_log = np.asarray(self.transform) == LOG
        self.n_logs = int(is_log.sum())
        # Each LOG column's row of the log1p block (−1 for the other columns).
        self.log_row = np.where(is_log, np.cumsum(is_log) - 1, -1).astype(np.int32)
        self.link_density = parameters["link_density"]
        self.n_leaf_types = parameters["leaf_types"]
        self.title_bit, self.digit_bit = parameters["title_bit"], parameters["digit_bit"]
        self.stop_bit = parameters["stop_bit"]
        self.vocabulary_shift = parameters["vocabulary_shift"]
        self.n_vocabularies = parameters["vocabularies"]
        self.head_words = parameters["head_words"]
        self.sentence_words = parameters["sentence_words"]
        self.min_paragraph_chars = parameters["min_paragraph_chars"]
        self.paragraph_chars = parameters["paragraph_chars"]
        self.max_length_points = parameters["max_length_points"]
        self.grandparent_divisor = parameters["grandparent_divisor"]
        _check_schema(self)


cdef inline bint _relational(Schema schema, Py_ssize_t c) noexcept:
    """Whether column c reads another column (AT, RELATIVE) rather than a quantity."""
    return schema.transform[c] == AT or schema.transform[c] == RELATIVE


cdef int _check_schema(Schema schema) except -1:
    """Refuse a table the loops (which do not check bounds) would misread: an unknown
    transform, quantity or relation, a family index beyond its family, a share without a
    divisor, an AT or RELATIVE column that reads another such column, a link density column
    that reads what is not computed yet when the candidate's score is damped."""
    cdef dict width = {LEAF_COUNTS: schema.n_leaf_types, OWN_MASKS: 64, ANCESTOR_MASKS: 64,
                       VOCABULARY_TOKENS: schema.n_vocabularies,
                       HEAD_VOCABULARY_TOKENS: schema.n_vocabularies}
    cdef Py_ssize_t c
    cdef int of, per
    for c in range(schema.n_columns):
        of, per = schema.of[c], schema.per[c]
        if _relational(schema, c):
            usable = (0 <= of < schema.n_columns and not _relational(schema, of)
                      and PARENT <= schema.at[c] <= FIRST_H1)
        else:
            usable = (LOG <= schema.transform[c] <= VALUE and 0 <= of <= HEAD_VOCABULARY_TOKENS
                      and -1 <= per < N_ROWS and 0 <= schema.index[c] < width.get(of, 1 << 30)
                      and (per >= 0 or schema.transform[c] not in (SHARE, CAPPED)))
        if not usable:
            raise ValueError(f"column {c} of the feature table is not one the kernel can read")
    # The candidate's score is damped before the log1p block and the later rows exist
    # (_candidate_quantities runs after _element_quantities only).
    c = schema.link_density
    if (not 0 <= c < schema.n_columns or _relational(schema, c) or schema.transform[c] == LOG
            or not _filled_early(schema.of[c])
            or (schema.per[c] >= 0 and not _filled_early(schema.per[c]))):
        raise ValueError("the link density column must be a plain column of quantities the "
                         "element rows hold (not LOG, AT or RELATIVE)")
    return 0


cdef inline bint _filled_early(int of) noexcept:
    """Whether a quantity is filled before the candidate's rows: the element rows
    (_element_quantities) and the families, read off the page's own arrays."""
    return of <= PAGE_CHARS or of == SENTENCES or of == LINK_PIECES or of >= LEAF_COUNTS


cdef class _Page:
    """One page's inputs (the element table's arrays, the caller's integer aggregates) and what
    the kernel derives from them: the quantities block, the log1p block, the token ranges."""
    cdef const int[::1] parent, end, depth, n_children, piece_start, piece_end, owner
    cdef const int[::1] piece_words, piece_chars, piece_punct, piece_commas
    cdef const unsigned char[::1] in_link
    cdef const int[:, ::1] leaf
    cdef const unsigned long long[::1] own, inherited
    cdef const long long[::1] codes, tag_group, signatures, signature_siblings
    cdef const long long[::1] previous, following
    cdef Py_ssize_t n, m, first_h1
    cdef double[:, ::1] q
    cdef long long[::1] token_offset, every_row
    cdef int[:, ::1] token_sums
    cdef Schema schema  # the one its quantities were computed by

    def __init__(self, object table, dict inputs):
        self.parent, self.end, self.depth = table.parent, table.end, table.depth
        self.n_children, self.owner = table.n_children, table.piece_owner
        self.piece_start, self.piece_end = table.piece_start, table.piece_end
        self.piece_words, self.piece_chars = table.piece_words, table.piece_chars
        self.piece_punct, self.piece_commas = table.piece_punct, table.piece_commas
        self.in_link = table.piece_in_link.view(np.uint8)
        self.leaf, self.tag_group = inputs["leaf_counts"], inputs["tag_group"]
        self.own, self.inherited = inputs["own_masks"], inputs["ancestor_masks"]
        self.codes = inputs["codes"]
        self.signatures = inputs["signatures"]
        self.signature_siblings = inputs["signature_siblings"]
        self.previous, self.following = inputs["previous"], inputs["next"]
        self.first_h1 = inputs["first_h1"]
        self.n, self.m = self.parent.shape[0], self.owner.shape[0]
        self.q = np.empty((N_ROWS, self.n), dtype=np.float64)
        self.every_row = np.arange(self.n, dtype=np.int64)


def page_quantities(Schema schema not None, object table, dict inputs):
    """The quantities every column of a page reads (an opaque handle for :func:`fill_rows`),
    from the element table and the integer aggregates the caller computed (``inputs``: leaf
    counts, tag groups, keyword masks, token codes, signature counts, sibling links, the first
    h1), as ``features.vectors``'s pure path computes them: the same float64 operations in the
    same order. The vocabulary counts are those of ``tokens.vocabulary_quantities``, counted
    here."""
    cdef _Page page = _Page(table, inputs)
    page.schema = schema
    if page.n == 0:
        return page
    if page.leaf.shape[1] != schema.n_leaf_types:
        raise ValueError(f"{page.leaf.shape[1]} leaf types, where the table has "
                         f"{schema.n_leaf_types}")
    cdef Py_ssize_t i
    # The relations the columns read are indices the loops follow unchecked.
    if (page.previous.shape[0] != page.n or page.following.shape[0] != page.n
            or not -1 <= page.first_h1 < page.n):
        raise ValueError("sibling links and the first h1 must be elements of the page or -1")
    for i in range(page.n):
        if not (-1 <= page.previous[i] < page.n and -1 <= page.following[i] < page.n):
            raise ValueError("sibling links and the first h1 must be elements of the page or -1")
    _count_tokens(page, schema)
    cdef long long[:, ::1] cum = _piece_sums(page, schema)
    _element_quantities(page, cum)
    _candidate_quantities(page, schema)
    _page_quantities(page, cum)
    _vocabulary_quantities(page)
    return page


def fill_rows(float[:, ::1] out, Schema schema not None, _Page page not None,
              object rows=None):
    """Fill the columns of ``out`` (float32) as ``schema`` says with the vectors of a page's
    elements (its :func:`page_quantities`, made by the same schema): every element's, or with
    ``rows`` (distinct element indices, int64) only theirs, ``out``'s row k that of element
    ``rows[k]``: their columns and the logarithms those read are computed, and each value is the
    one the whole page's vectors hold (every cell's operations are the same). The page is only
    read: threads may fill rows of one page at once."""
    if schema is not page.schema:
        raise ValueError("the page's quantities were computed by another feature table")
    if page.n == 0:
        if out.shape[0] != (0 if rows is None else len(rows)):
            raise ValueError("rows of a page without elements")
        return
    cdef const long long[::1] chosen = page.every_row if rows is None else rows
    if out.shape[0] != chosen.shape[0] or out.shape[1] != schema.n_columns:
        raise ValueError(f"an output of {out.shape[0]} × {out.shape[1]} for {chosen.shape[0]} "
                         f"elements of {schema.n_columns} columns")
    _check_rows(chosen, page.n)
    cdef Py_ssize_t k
    cdef const long long[::1] log_rows = _log_rows(page, schema, chosen)
    cdef long long[::1] log_at = (page.every_row if log_rows.shape[0] == page.n
                                  else np.full(page.n, -1, dtype=np.int64))
    if log_rows.shape[0] != page.n:
        for k in range(log_rows.shape[0]):
            log_at[log_rows[k]] = k
    logs = np.empty((schema.n_logs, log_rows.shape[0]), dtype=np.float64)
    cdef double[:, ::1] block = logs
    cdef _Raw raw = _raw(page)
    raw.log_width, raw.log_at = log_rows.shape[0], &log_at[0]
    _log_block(&raw, page, schema, log_rows, block)
    np.log1p(logs, out=logs)
    raw.logs = &block[0, 0] if block.shape[0] and block.shape[1] else NULL
    _fill(out, &raw, page, schema, chosen, rows is None)


cdef int _count_tokens(_Page page, Schema schema) except -1:
    """Per token, cumulative counts: Title Case, digits, each vocabulary."""
    cdef const long long[::1] codes = page.codes
    cdef Py_ssize_t t
    cdef long long vocabulary
    page.token_sums = np.zeros((codes.shape[0] + 1, T_VOCABULARIES + schema.n_vocabularies),
                               dtype=np.int32)
    cdef int[:, ::1] sums = page.token_sums
    cdef Py_ssize_t j, width = sums.shape[1]
    for t in range(codes.shape[0]):
        for j in range(width):  # an element loop: a slice copy would make a view per token
            sums[t + 1, j] = sums[t, j]
        sums[t + 1, T_TITLES] += (codes[t] & schema.title_bit) != 0
        sums[t + 1, T_DIGITS] += (codes[t] & schema.digit_bit) != 0
        vocabulary = (codes[t] >> schema.vocabulary_shift) - 1
        if vocabulary >= schema.n_vocabularies:
            raise ValueError(f"token code {codes[t]} names no vocabulary")
        if vocabulary >= 0:
            sums[t + 1, T_VOCABULARIES + vocabulary] += 1
    return 0


cdef long long[:, ::1] _piece_sums(_Page page, Schema schema):
    """Per piece, cumulative counts (the P_ rows): words, characters, link characters,
    punctuation, stop words, sentences, link pieces; and the pieces' token offsets."""
    cdef Py_ssize_t k, t
    cdef long long stops
    cdef bint sentence
    cdef long long[:, ::1] cum = np.zeros((N_PIECE_SUMS, page.m + 1), dtype=np.int64)
    page.token_offset = np.zeros(page.m + 1, dtype=np.int64)
    cdef long long[::1] offset = page.token_offset
    cdef const int[::1] words = page.piece_words, chars = page.piece_chars
    cdef const int[::1] punct = page.piece_punct
    cdef const unsigned char[::1] in_link = page.in_link
    cdef const long long[::1] codes = page.codes
    cdef long long stop_bit = schema.stop_bit
    for k in range(page.m):
        offset[k + 1] = offset[k] + words[k]
        stops = 0
        for t in range(offset[k], offset[k + 1]):
            stops += (codes[t] & stop_bit) != 0
        sentence = words[k] >= schema.sentence_words and punct[k] > 0 and not in_link[k]
        cum[P_WORDS, k + 1] = cum[P_WORDS, k] + words[k]
        cum[P_CHARS, k + 1] = cum[P_CHARS, k] + chars[k]
        cum[P_LINK_CHARS, k + 1] = cum[P_LINK_CHARS, k] + (chars[k] if in_link[k] else 0)
        cum[P_PUNCT, k + 1] = cum[P_PUNCT, k] + punct[k]
        cum[P_STOPS, k + 1] = cum[P_STOPS, k] + stops
        cum[P_SENTENCES, k + 1] = cum[P_SENTENCES, k] + sentence
        cum[P_LINK_PIECES, k + 1] = cum[P_LINK_PIECES, k] + in_link[k]
    return cum


cdef inline double _summed(long long[:, ::1] cum, int row, _Page page,
                           Py_ssize_t i) noexcept:
    """Element i's subtree sum of a per-piece count (exact as a whole number)."""
    return <double>(cum[row, page.piece_end[i]] - cum[row, page.piece_start[i]])


cdef void _element_quantities(_Page page, long long[:, ::1] cum) noexcept:
    """The leaf, text and structure groups' rows, and the subtree sums the page group reads."""
    cdef double[:, ::1] q = page.q
    cdef Py_ssize_t n = page.n, i, k, t
    cdef long long leaves
    cdef double max_depth = 0.0
    for i in range(n):
        q[INDEX, i] = <double>i
        q[END, i] = <double>page.end[i]
        q[SIZE, i] = <double>(page.end[i] - i)
        q[DEPTH, i] = <double>page.depth[i]
        q[CHILDREN, i] = <double>page.n_children[i]
        q[TAG_GROUP, i] = <double>page.tag_group[i]
        leaves = 0
        for t in range(page.leaf.shape[1]):
            leaves += page.leaf[i, t]
        q[LEAVES, i] = <double>leaves
        q[WORDS, i] = _summed(cum, P_WORDS, page, i)
        q[CHARS, i] = _summed(cum, P_CHARS, page, i)
        q[LINK_CHARS, i] = _summed(cum, P_LINK_CHARS, page, i)
        q[PUNCT, i] = _summed(cum, P_PUNCT, page, i)
        q[STOP_WORDS, i] = _summed(cum, P_STOPS, page, i)
        q[SENTENCES, i] = _summed(cum, P_SENTENCES, page, i)
        q[LINK_PIECES, i] = _summed(cum, P_LINK_PIECES, page, i)
        q[OWN_CHARS, i] = 0.0
        max_depth = _at_least(q[DEPTH, i], max_depth)
    for k in range(page.m):
        q[OWN_CHARS, page.owner[k]] += page.piece_chars[k]
    for i in range(n):
        q[ELEMENTS, i] = <double>n
        q[MAX_DEPTH, i] = max_depth
        q[PAGE_CHARS, i] = q[CHARS, 0]


cdef int _candidate_quantities(_Page page, Schema schema) except -1:
    """The candidate group's rows: readability's paragraph scores, added to the parent, then
    divided to the grandparent, in document order (as the pure path's bincount adds them),
    damped by the link density column; the main candidate is the best score."""
    cdef double[:, ::1] q = page.q
    cdef const int[::1] parent = page.parent, end = page.end
    cdef Py_ssize_t n = page.n, i, k, top = 0
    cdef double[::1] commas = np.zeros(n), paragraph = np.empty(n)
    cdef double[::1] score = np.zeros(n), density = np.empty(n)
    cdef bint inside, contains
    for k in range(page.m):
        commas[page.owner[k]] += page.piece_commas[k]
    for i in range(n):
        paragraph[i] = ((1.0 + commas[i]) + _at_most(q[OWN_CHARS, i] / schema.paragraph_chars,
                                                     schema.max_length_points)
                        if q[OWN_CHARS, i] >= schema.min_paragraph_chars else 0.0)
    for i in range(n):
        if parent[i] >= 0:
            score[parent[i]] += paragraph[i]
    for i in range(n):
        if parent[i] >= 0 and parent[parent[i]] >= 0:
            score[parent[parent[i]]] += paragraph[i] / schema.grandparent_divisor
    cdef _Raw raw = _raw(page)  # the link density is no LOG column (Schema checks it)
    _column(&raw, schema, schema.link_density, &page.every_row[0], n, &density[0])
    for i in range(n):
        score[i] *= 1.0 - density[i]
        if score[i] > score[top]:
            top = i
    for i in range(n):
        inside = i >= top and i < end[top]
        contains = i <= top and end[i] > top
        q[INSIDE_CANDIDATE, i] = 1.0 if inside else 0.0
        q[CONTAINS_CANDIDATE, i] = 1.0 if contains else 0.0
        q[CANDIDATE_TEXT_SHARE, i] = 1.0 if inside else (
            q[CHARS, top] / _at_least(q[CHARS, i], 1.0) if contains else 0.0)
        q[CONTENT_SCORE, i] = score[i]
        q[TOP_SCORE, i] = score[top]
        q[CANDIDATE_DISTANCE, i] = <double>abs(page.depth[i] - page.depth[top])
    return 0


cdef void _page_quantities(_Page page, long long[:, ::1] cum) noexcept:
    """The page group's rows (its subtree sums are in place already): the words before and
    after the subtree, repeated signatures, page-wide sums, the first h1, the biggest child,
    the siblings."""
    cdef double[:, ::1] q = page.q
    cdef const int[::1] parent = page.parent
    cdef Py_ssize_t n = page.n, i, first = page.first_h1
    cdef double total = _at_least(<double>cum[P_WORDS, page.m], 1.0)
    for i in range(n):
        q[BIGGEST_CHILD_WORDS, i] = 0.0
    for i in range(1, n):
        if q[WORDS, i] > q[BIGGEST_CHILD_WORDS, parent[i]]:
            q[BIGGEST_CHILD_WORDS, parent[i]] = q[WORDS, i]
    for i in range(n):
        q[WORDS_BEFORE, i] = <double>cum[P_WORDS, page.piece_start[i]]
        q[WORDS_AFTER, i] = total - <double>cum[P_WORDS, page.piece_end[i]]
        q[PAGE_WORDS, i] = total
        q[SIGNATURES, i] = <double>page.signatures[i]
        q[SIGNATURE_SIBLINGS, i] = <double>page.signature_siblings[i]
        q[SIBLINGS, i] = <double>page.n_children[parent[i]] if parent[i] >= 0 else 1.0
        q[PAGE_SENTENCES, i] = q[SENTENCES, 0]
        q[PAGE_LINK_PIECES, i] = q[LINK_PIECES, 0]
        q[AFTER_H1, i] = 1.0 if first >= 0 and i >= first else 0.0
        q[CONTAINS_H1, i] = 1.0 if first >= 0 and i <= first and page.end[i] > first else 0.0
        q[HAS_PREVIOUS, i] = 1.0 if page.previous[i] >= 0 else 0.0
        q[HAS_NEXT, i] = 1.0 if page.following[i] >= 0 else 0.0


cdef void _vocabulary_quantities(_Page page) noexcept:
    """The vocabulary group's rows: Title Case and digit tokens, text pieces."""
    cdef double[:, ::1] q = page.q
    cdef int[:, ::1] sums = page.token_sums
    cdef Py_ssize_t i
    cdef long long first, last
    for i in range(page.n):
        first = page.token_offset[page.piece_start[i]]
        last = page.token_offset[page.piece_end[i]]
        q[TITLE_TOKENS, i] = <double>(sums[last, T_TITLES] - sums[first, T_TITLES])
        q[DIGIT_TOKENS, i] = <double>(sums[last, T_DIGITS] - sums[first, T_DIGITS])
        q[PIECES, i] = <double>(page.piece_end[i] - page.piece_start[i])


cdef long long[::1] _log_rows(_Page page, Schema schema, const long long[::1] chosen):
    """The rows whose logarithms the chosen rows' columns read (ascending): the chosen rows,
    and the rows their relational columns read. Every row when all are chosen."""
    if chosen.shape[0] == page.n:
        return page.every_row
    cdef Py_ssize_t c, k
    cdef long long g
    needed_array = np.zeros(page.n, dtype=np.uint8)
    cdef unsigned char[::1] needed = needed_array
    cdef bint seen[FIRST_H1 + 1]
    for c in range(FIRST_H1 + 1):
        seen[c] = False
    for k in range(chosen.shape[0]):
        needed[chosen[k]] = 1
    for c in range(schema.n_columns):
        if not _relational(schema, c) or seen[schema.at[c]]:
            continue
        seen[schema.at[c]] = True
        for k in range(chosen.shape[0]):
            g = _related(page, schema.at[c], chosen[k])
            if g >= 0:
                needed[g] = 1
    # The marked rows in order, by a C loop (np.flatnonzero and its astype cost more than
    # the rest of a small round's call).
    cdef Py_ssize_t count = 0, i
    for i in range(page.n):
        count += needed[i]
    rows_array = np.empty(count, dtype=np.int64)
    cdef long long[::1] rows = rows_array
    count = 0
    for i in range(page.n):
        if needed[i]:
            rows[count] = i
            count += 1
    return rows


cdef int _log_block(const _Raw* raw, _Page page, Schema schema, const long long[::1] rows,
                    double[:, ::1] logs) except -1:
    """The arguments of every LOG column (the quantity, divided by ``per`` where it has one)
    at ``rows`` into ``logs`` (one row per LOG column, one column per row), for numpy's log1p
    over the whole block at once."""
    cdef Py_ssize_t c, p, r, m = rows.shape[0]
    if m == 0:
        return 0
    for c in range(schema.n_columns):
        r = schema.log_row[c]
        if r < 0:
            continue
        _gather(raw, schema, c, &rows[0], m, &logs[r, 0])
        if schema.per[c] >= 0:
            for p in range(m):
                logs[r, p] = logs[r, p] / _at_least(page.q[schema.per[c], rows[p]],
                                                    schema.floor[c])
    return 0


cdef struct _Raw:
    # The page's arrays as the column loops read them: raw pointers taken once per page. A
    # memoryview assigned to a local acquires a reference and releases it on return (an atomic
    # count each way); taken per column and block of rows, that was 9 % of py-spy's samples of
    # a dragnet page.
    Py_ssize_t n, leaf_width, sums_width, log_width
    const double* q  # N_ROWS × n
    const double* logs  # n_logs × log_width (NULL before the log1p block is made)
    const long long* log_at  # per row, its column of the log1p block
    const int* leaf  # n × leaf_width
    const unsigned long long* own
    const unsigned long long* inherited
    const int* piece_start
    const int* piece_end
    const long long* token_offset
    const int* token_sums  # (tokens + 1) × sums_width


cdef _Raw _raw(_Page page):
    """The raw pointers of ``page``'s arrays (which it keeps alive; ``page.n`` > 0); the
    log1p block's are set by its maker (fill_rows, which keeps the block alive)."""
    cdef _Raw r
    r.n, r.leaf_width, r.sums_width = page.n, page.leaf.shape[1], page.token_sums.shape[1]
    r.q = &page.q[0, 0]
    r.logs, r.log_at, r.log_width = NULL, NULL, 0
    r.leaf = &page.leaf[0, 0]
    r.own, r.inherited = &page.own[0], &page.inherited[0]
    r.piece_start, r.piece_end = &page.piece_start[0], &page.piece_end[0]
    r.token_offset, r.token_sums = &page.token_offset[0], &page.token_sums[0, 0]
    return r


cdef void _gather(const _Raw* r, Schema schema, Py_ssize_t c, const long long* rows,
                  Py_ssize_t count, double* v) noexcept:
    """Column c's quantity (a family's at the column's index) of the ``count`` rows ``rows``
    into v."""
    cdef int of = schema.of[c], index = schema.index[c]
    cdef Py_ssize_t i, k, head = schema.head_words, n = r.n, width = r.sums_width
    cdef long long first, last
    cdef const unsigned long long* masks
    cdef const double* row
    if of < N_ROWS:
        row = r.q + of * n
        for k in range(count):
            v[k] = row[rows[k]]
    elif of == LEAF_COUNTS:
        for k in range(count):
            v[k] = <double>r.leaf[rows[k] * r.leaf_width + index]
    elif of == OWN_MASKS or of == ANCESTOR_MASKS:
        masks = r.own if of == OWN_MASKS else r.inherited
        for k in range(count):
            v[k] = <double>((masks[rows[k]] >> index) & 1)
    else:  # VOCABULARY_TOKENS, HEAD_VOCABULARY_TOKENS: over the subtree, or its head
        for k in range(count):
            i = rows[k]
            first = r.token_offset[r.piece_start[i]]
            last = r.token_offset[r.piece_end[i]]
            if of == HEAD_VOCABULARY_TOKENS and first + head < last:
                last = first + head
            v[k] = <double>(r.token_sums[last * width + T_VOCABULARIES + index]
                            - r.token_sums[first * width + T_VOCABULARIES + index])


cdef void _column(const _Raw* r, Schema schema, Py_ssize_t c, const long long* rows,
                  Py_ssize_t count, double* v) noexcept:
    """Column c (not an AT or RELATIVE one) of the ``count`` rows ``rows`` into v, in
    float64: the arithmetic of the schema module's docstring, operation by operation."""
    cdef int transform = schema.transform[c], per = schema.per[c]
    cdef double floor = schema.floor[c], scale = schema.scale[c]
    cdef double weight = schema.weight[c], cap = schema.cap[c]
    cdef double index = <double>schema.index[c]
    cdef Py_ssize_t k
    cdef const double* row
    if transform == LOG:
        row = r.logs + schema.log_row[c] * r.log_width
        for k in range(count):
            v[k] = row[r.log_at[rows[k]]] / scale
        return
    _gather(r, schema, c, rows, count, v)
    if transform == SHARE:
        row = r.q + per * r.n
        for k in range(count):
            v[k] = v[k] / _at_least(row[rows[k]], floor)
    elif transform == CAPPED:
        row = r.q + per * r.n
        for k in range(count):
            v[k] = _at_most(v[k] / _at_least(row[rows[k]], floor) * weight, cap)
    elif transform == BIT:
        for k in range(count):
            v[k] = 1.0 if v[k] > 0.0 else 0.0
    elif transform == ONE_HOT:
        for k in range(count):
            v[k] = 1.0 if v[k] == index else 0.0
    # VALUE: the quantity as it is


cdef inline long long _related(_Page page, int relation, Py_ssize_t i) noexcept:
    """The element whose column an AT or RELATIVE column of element i reads (−1: none)."""
    if relation == PARENT:
        return page.parent[i]
    if relation == PREVIOUS:
        return page.previous[i]
    if relation == NEXT:
        return page.following[i]
    return 0 if relation == ROOT else page.first_h1


cdef bint _bit_or_one_hot(const _Raw* r, Schema schema, Py_ssize_t c, const long long* rows,
                         Py_ssize_t start, Py_ssize_t stop, float[:, ::1] out) noexcept:
    """Column c of output rows [start, stop) (elements ``rows[start:stop]``) written straight
    into ``out`` when it is a keyword bit or a one-hot of a quantity (91 and 26 of the 221
    columns; passing their 0s and 1s through _column's buffers made the float columns 0.30 ms a
    dragnet page instead of 0.24); False for any other column.
    The values are _column's: a bit is 1 where the mask has it, a one-hot 1 where the
    quantity equals the index."""
    cdef int transform = schema.transform[c], of = schema.of[c], index = schema.index[c]
    cdef Py_ssize_t k
    cdef const unsigned long long* masks
    cdef const double* row
    cdef double target = <double>index
    if transform == BIT and (of == OWN_MASKS or of == ANCESTOR_MASKS):
        masks = r.own if of == OWN_MASKS else r.inherited
        for k in range(start, stop):
            out[k, c] = <float>((masks[rows[k]] >> index) & 1)
        return True
    if transform == ONE_HOT and of < N_ROWS:
        row = r.q + of * r.n
        for k in range(start, stop):
            out[k, c] = 1.0 if row[rows[k]] == target else 0.0
        return True
    return False


cdef int _fill(float[:, ::1] out, const _Raw* raw, _Page page, Schema schema,
               const long long[::1] chosen, bint every) except -1:
    """Every column of the ``chosen`` rows into ``out`` (its row k: element ``chosen[k]``), a
    block of rows at a time; then the AT and RELATIVE columns, from the column each reads at
    the rows they relate to (and, for RELATIVE, at the chosen rows). ``every``: the chosen
    rows are the page's elements in order (row k is element k: a column is read in place)."""
    cdef double values[BLOCK]
    cdef Py_ssize_t m = chosen.shape[0]
    if m == 0:
        return 0
    cdef double[::1] source = np.empty(page.n if every else m), at_related = np.empty(m)
    cdef long long[::1] related = np.empty(m, dtype=np.int64)
    cdef long long[::1] targets = np.empty(m, dtype=np.int64)
    cdef Py_ssize_t start, stop, c, k, g, found
    cdef const long long* rows = &chosen[0]
    for start in range(0, m, BLOCK):
        stop = start + BLOCK if start + BLOCK < m else m
        for c in range(schema.n_columns):
            if _relational(schema, c) or _bit_or_one_hot(raw, schema, c, rows, start, stop,
                                                         out):
                continue
            _column(raw, schema, c, rows + start, stop - start, values)
            for k in range(start, stop):
                out[k, c] = <float>values[k - start]
    for c in range(schema.n_columns):
        if not _relational(schema, c):
            continue
        found = 0
        for k in range(m):
            related[k] = _related(page, schema.at[c], rows[k])
            if related[k] >= 0:
                targets[found] = related[k]
                found += 1
        if every:
            _column(raw, schema, schema.of[c], rows, m, &source[0])
        else:
            if schema.transform[c] == RELATIVE:
                _column(raw, schema, schema.of[c], rows, m, &source[0])
            if found:
                _column(raw, schema, schema.of[c], &targets[0], found, &at_related[0])
        found = 0
        for k in range(m):
            g = related[k]
            if g < 0:
                out[k, c] = 0.0
                continue
            if every:
                out[k, c] = <float>(source[g] if schema.transform[c] == AT
                                    else source[k] - source[g])
            elif schema.transform[c] == AT:
                out[k, c] = <float>at_related[found]
            else:
                out[k, c] = <float>(source[k] - at_related[found])
            found += 1
    return 0


# ---------------------------------------------------------------------------------------------
# The lazy walk's reach (walk._within_reach).

def rows_within(const int[::1] end, const int[::1] depth, list frontier, Py_ssize_t lookahead):
    """The elements of the subtrees of ``frontier`` (disjoint subtrees' roots, ascending) down
    to ``lookahead`` − 1 levels below their roots, ascending (int64): each subtree walked in
    document order, skipping what lies deeper (a deeper element's subtree is deeper still)."""
    cdef Py_ssize_t n = end.shape[0], f, k, i, stop, last = -1
    cdef long long limit
    cdef list out = []
    if depth.shape[0] != n:
        raise ValueError("the table's end and depth arrays differ in length")
    for k in range(len(frontier)):
        f = frontier[k]
        if not last < f < n or end[f] > n:
            raise ValueError("the frontier's roots must be ascending elements of the page")
        limit, stop, i = depth[f] + lookahead, end[f], f
        while i < stop:
            if depth[i] < limit:
                out.append(i)
                i += 1
            else:
                i = end[i] if end[i] > i else i + 1
        last = stop - 1
    return np.array(out, dtype=np.int64)


cdef Py_ssize_t _first_outside(const long long[::1] rows, Py_ssize_t n) noexcept:
    """The position of the first of ``rows`` that is no element index of a page of ``n``
    elements, or −1."""
    cdef Py_ssize_t k
    for k in range(rows.shape[0]):
        if not 0 <= rows[k] < n:
            return k
    return -1


cdef int _check_rows(const long long[::1] rows, Py_ssize_t n) except -1:
    """Refuse ``rows`` that are not element indices of a page of ``n`` elements (the row
    fillers index with them unchecked)."""
    cdef Py_ssize_t k = _first_outside(rows, n)
    if k >= 0:
        raise ValueError(f"row {rows[k]} of a page of {n} elements")
    return 0


def rows_inside(const long long[::1] rows, Py_ssize_t n):
    """Whether every one of ``rows`` is an element index of a page of ``n`` elements
    (``subtrees.element_rows``' test, without numpy's two reductions: a round of the lazy walk
    asks it twice)."""
    return _first_outside(rows, n) < 0


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


# ---------------------------------------------------------------------------------------------
# The lexical fields pooled (features.lexical.Lexicon.pool): the same float64 operations in
# the same order as its numpy reference, in one pass instead of some forty numpy calls.

cdef int _prefix(const int[::1] rows, const long long[::1] tokens, const double[:, ::1] vectors,
                 double[:, ::1] total, double[::1] count) except -1:
    """Cumulative sums (leading zero row) of the tokens' vectors and of the known tokens
    (``rows``: each bucket's row of ``vectors``, −1 for an unknown one)."""
    cdef Py_ssize_t t, j, dim = vectors.shape[1]
    cdef int row
    for j in range(dim):
        total[0, j] = 0.0
    count[0] = 0.0
    for t in range(tokens.shape[0]):
        row = rows[tokens[t]]
        for j in range(dim):
            total[t + 1, j] = total[t, j] + (vectors[row, j] if row >= 0 else 0.0)
        count[t + 1] = count[t] + (1.0 if row >= 0 else 0.0)
    return 0


cdef inline void _mean_into(float[:, ::1] out, Py_ssize_t i, Py_ssize_t at,
                            const double[:, ::1] total, const double[::1] count,
                            Py_ssize_t start, Py_ssize_t end) noexcept:
    """out[i, at:at + dim]: the mean vector of the known tokens in [start, end)."""
    cdef Py_ssize_t j
    cdef double known = count[end] - count[start]
    for j in range(total.shape[1]):
        out[i, at + j] = <float>((total[end, j] - total[start, j]) / (known if known > 1.0 else 1.0))


def pool_sums(object inputs, const int[::1] text_rows, const double[:, ::1] text_vectors,
              const int[::1] attr_rows, const double[:, ::1] attr_vectors):
    """What every element's pooled fields read (for :func:`pool_rows`): the cumulative sums of
    the words' vectors and counts, and each element's own attribute tokens' sum and count."""
    cdef const long long[::1] text = inputs.text, attr = inputs.attr
    cdef const long long[::1] attr_start = inputs.attr_start, attr_end = inputs.attr_end
    cdef Py_ssize_t n = attr_start.shape[0], dim = text_vectors.shape[1], i, j
    if dim > 64 or attr_vectors.shape[1] != dim:
        raise ValueError("the lexical fields' widths disagree")
    text_sum, text_count = np.empty((text.shape[0] + 1, dim)), np.empty(text.shape[0] + 1)
    attr_sum, attr_count = np.empty((attr.shape[0] + 1, dim)), np.empty(attr.shape[0] + 1)
    own, own_count = np.empty((n, dim)), np.empty(n)
    _prefix(text_rows, text, text_vectors, text_sum, text_count)
    _prefix(attr_rows, attr, attr_vectors, attr_sum, attr_count)
    cdef double[:, ::1] total = attr_sum, mine = own
    cdef double[::1] count = attr_count, mine_count = own_count
    for i in range(n):
        for j in range(dim):
            mine[i, j] = total[attr_end[i], j] - total[attr_start[i], j]
        mine_count[i] = count[attr_end[i]] - count[attr_start[i]]
    return text_sum, text_count, own, own_count


def pool_rows(float[:, ::1] out, object inputs, tuple sums, Py_ssize_t head_words,
              object rows=None):
    """The five pooled fields of a page's elements (features.lexical.LexicalInputs ``inputs``)
    into ``out`` (elements × 5·dim, float32): own attribute tokens, the ancestors', the first
    ``head_words`` words, all words, the page's words; from the page's :func:`pool_sums`.
    Every element's, or with ``rows`` (distinct element indices, int64) only theirs, ``out``'s
    row k that of element ``rows[k]``, each the same as the whole page's."""
    cdef const long long[::1] text_start = inputs.text_start, text_end = inputs.text_end
    cdef const long long[:, ::1] ancestors = inputs.ancestors
    cdef const double[:, ::1] text_sum = sums[0], own = sums[2]
    cdef const double[::1] text_count = sums[1], own_count = sums[3]
    cdef Py_ssize_t n = own.shape[0], dim = own.shape[1], i, j, k, a, head
    cdef const long long[::1] chosen = (np.arange(n, dtype=np.int64) if rows is None
                                        else rows)
    cdef Py_ssize_t m = chosen.shape[0]
    cdef double around[64]
    cdef double around_count
    # What the loops read unchecked: sums made by pool_sums from these inputs.
    if (dim > 64 or text_sum.shape[1] != dim or text_count.shape[0] != text_sum.shape[0]
            or own_count.shape[0] != n or text_start.shape[0] != n or text_end.shape[0] != n
            or ancestors.shape[0] != n):
        raise ValueError("the pooled fields' sums are not those of these inputs")
    if out.shape[1] != 5 * dim or out.shape[0] != m:
        raise ValueError(f"an output of {out.shape[0]} × {out.shape[1]} for {m} elements' "
                         f"fields of {dim}")
    _check_rows(chosen, n)
    for i in range(n):
        if not (0 <= text_start[i] <= text_end[i] < text_sum.shape[0]):
            raise ValueError("the pooled fields' sums are not those of these inputs")
        for a in range(ancestors.shape[1]):
            if not -1 <= ancestors[i, a] < n:
                raise ValueError("an ancestor that is not an element of the page")
    for k in range(m):
        i = chosen[k]
        head = text_start[i] + head_words
        _mean_into(out, k, 2 * dim, text_sum, text_count, text_start[i],
                   head if head < text_end[i] else text_end[i])
        _mean_into(out, k, 3 * dim, text_sum, text_count, text_start[i], text_end[i])
        _mean_into(out, k, 4 * dim, text_sum, text_count, text_start[0], text_end[0])
        for j in range(dim):
            out[k, j] = <float>(own[i, j] / (own_count[i] if own_count[i] > 1.0 else 1.0))
        for j in range(dim):
            around[j] = 0.0
        around_count = 0.0
        for a in range(ancestors.shape[1]):
            if ancestors[i, a] >= 0:
                for j in range(dim):
                    around[j] = around[j] + own[ancestors[i, a], j]
                around_count = around_count + own_count[ancestors[i, a]]
        for j in range(dim):
            out[k, dim + j] = <float>(around[j] / (around_count if around_count > 1.0 else 1.0))


cdef extern from *:
    int __builtin_ctzll(unsigned long long) nogil  # GCC and Clang: the lowest set bit


def bit_counts(const long long[::1] codes, int shift, int bits):
    """How many of ``codes`` have each of the ``bits`` bits from ``shift`` on set (int64):
    the tokens of each language's stop words (features.language.page_language)."""
    out = np.zeros(bits, dtype=np.int64)
    cdef long long[::1] counts = out
    cdef Py_ssize_t t
    cdef unsigned long long word
    cdef int bit
    for t in range(codes.shape[0]):
        word = (<unsigned long long>codes[t] >> shift) & ((1ULL << bits) - 1)
        while word:
            bit = __builtin_ctzll(word)
            counts[bit] += 1
            word &= word - 1
    return out


def fnv_bucket(str token, int bits):
    """features.hashing.bucket of an already lower-cased token: FNV-1a over its UTF-8 bytes,
    the 64-bit hash's high half folded onto its low half, the low ``bits`` bits kept."""
    cdef bytes data = token.encode("utf-8")
    cdef const unsigned char* p = data
    cdef Py_ssize_t i, n = len(data)
    cdef unsigned long long h = 14695981039346656037ULL
    for i in range(n):
        h = (h ^ p[i]) * 1099511628211ULL
    return <long long>((h ^ (h >> 32)) & ((1ULL << bits) - 1))


cdef inline int _ascii_kind(int ch) noexcept nogil:
    """1 upper-case letter, 2 lower-case letter, 3 digit, 0 anything else."""
    if 65 <= ch <= 90:
        return 1
    if 97 <= ch <= 122:
        return 2
    if 48 <= ch <= 57:
        return 3
    return 0


cdef inline long long _bucket_of(const unsigned char* p, Py_ssize_t start, Py_ssize_t end,
                                 int bits) noexcept nogil:
    """FNV-1a of the lower-cased ASCII bytes [start, end), folded to ``bits`` bits."""
    cdef unsigned long long h = 14695981039346656037ULL
    cdef Py_ssize_t i
    for i in range(start, end):
        h = (h ^ <unsigned long long>(p[i] + 32 if 65 <= p[i] <= 90 else p[i])) * 1099511628211ULL
    return <long long>((h ^ (h >> 32)) & ((1ULL << bits) - 1))


def attribute_buckets(str value, int bits, int min_length, int max_length):
    """features.lexical's buckets of an ASCII attribute value's tokens (runs of letters split
    at camelCase humps, runs of digits; tokens of min_length to max_length characters, not all
    digits), as its regular expression finds them; None for a value that is not ASCII."""
    if not value.isascii():
        return None
    return _ascii_buckets(value, bits, min_length, max_length)


def attribute_buckets_of(list values, dict cache, object fallback, int bits, int min_length,
                         int max_length):
    """:func:`attribute_buckets` of each value (a str or None), looked up in ``cache`` (value →
    buckets) first, and stored there; ``fallback(value)`` gives a value that is not ASCII its
    buckets. One loop in C over a page's distinct values (a Python call per value cost 0.04 ms
    more a modernweb-dev page seen the first time)."""
    cdef list out = []
    cdef object value, found
    for value in values:
        if not value:
            out.append(())
            continue
        found = cache.get(value)
        if found is None:
            found = (_ascii_buckets(value, bits, min_length, max_length)
                     if (<str>value).isascii() else fallback(value))
            cache[value] = found
        out.append(found)
    return out


def element_runs(list per_value, const long long[:, ::1] positions):
    """Each element's items of ``per_value`` (one tuple of ints per distinct value) one after
    the other: per element (a column of ``positions``, attributes × elements, each a value's
    index), the items of its values in the attributes' order; and where each element's run
    ends (int64 arrays). ``features.lexical._element_runs_pure``'s numpy gather in one pass."""
    cdef Py_ssize_t n_values = len(per_value), attributes = positions.shape[0]
    cdef Py_ssize_t n = positions.shape[1], e, k, j, v, total = 0, at = 0
    lengths = np.empty(n_values, dtype=np.int64)
    starts = np.empty(n_values + 1, dtype=np.int64)
    cdef long long[::1] length = lengths, start = starts
    start[0] = 0
    for v in range(n_values):
        item = <object>PyList_GET_ITEM(per_value, v)
        if type(item) is not tuple:
            raise TypeError(f"value {v}'s items are a {type(item).__name__}, not a tuple")
        length[v] = len(<tuple>item)
        start[v + 1] = start[v] + length[v]
    pool = np.fromiter(itertools.chain.from_iterable(per_value), dtype=np.int64,
                       count=start[n_values])
    cdef const long long[::1] items = pool
    for e in range(n):
        for k in range(attributes):
            v = positions[k, e]
            if not 0 <= v < n_values:
                raise ValueError(f"value index {v} of {n_values} values")
            total += length[v]
    out = np.empty(total, dtype=np.int64)
    ends = np.empty(n, dtype=np.int64)
    cdef long long[::1] flat = out, end = ends
    for e in range(n):
        for k in range(attributes):
            v = positions[k, e]
            for j in range(start[v], start[v + 1]):
                flat[at] = items[j]
                at += 1
        end[e] = at
    return out, ends


def discussion_marks(list values, dict cache, object fallback, tuple words):
    """Per value (a str or None): whether it holds one of ``words`` (at most 32 lower-case
    ASCII words, as bytes) in any ASCII case, for an ASCII value; ``fallback(value)`` for
    another; looked up in ``cache`` first, and stored there (discussion._marked: 0.16 ms a
    modernweb-dev page in Python, the values being new to the cache on nearly every page)."""
    out = np.zeros(len(values), dtype=np.bool_)
    cdef unsigned char[::1] marks = out.view(np.uint8)
    cdef const unsigned char* starts[32]
    cdef Py_ssize_t lengths[32]
    cdef Py_ssize_t i, count = len(words)
    cdef object value, found
    if count > 32:
        raise ValueError("at most 32 words")
    for i in range(count):
        starts[i] = <const unsigned char*>PyBytes_AS_STRING(words[i])
        lengths[i] = len(words[i])
    for i, value in enumerate(values):
        if not value:
            continue
        found = cache.get(value)
        if found is None:
            if PyUnicode_IS_ASCII(value):
                found = _holds_any(<const unsigned char*>PyUnicode_DATA(value),
                                   PyUnicode_GET_LENGTH(value), starts, lengths, count)
            else:
                found = bool(fallback(value))
            cache[value] = found
        marks[i] = found is True
    return out


def thread_evidence(const unsigned char[::1] marked, const long long[:, ::1] positions,
                    const int[::1] end, const int[::1] parent, int ancestors,
                    const double[::1] words, double min_words):
    """``discussion.comment_evidence`` from its inputs in one pass: per element, whether one of
    its values (``positions``: attributes × elements, indices into ``marked``, one flag per
    value) is marked, on itself, inside its subtree or on one of its ``ancestors`` nearest
    ancestors, and its subtree holds ``min_words`` words (``words``)."""
    cdef Py_ssize_t n = end.shape[0], i, k, a
    cdef Py_ssize_t n_values = marked.shape[0], attributes = positions.shape[0]
    if positions.shape[1] != n or parent.shape[0] != n or words.shape[0] != n:
        raise ValueError("positions, parents and words must have one entry per element")
    own_array = np.zeros(n, dtype=np.uint8)
    inside_array = np.zeros(n + 1, dtype=np.int64)
    out = np.zeros(n, dtype=np.bool_)
    cdef unsigned char[::1] own = own_array, evidence = out.view(np.uint8)
    cdef long long[::1] inside = inside_array
    cdef long long v
    cdef int above
    for i in range(n):
        if not (i <= end[i] <= n and -1 <= parent[i] < i):
            raise ValueError("ends and parents must describe a tree in document order")
        for k in range(attributes):
            v = positions[k, i]
            if not 0 <= v < n_values:
                raise ValueError(f"value index {v} of {n_values} values")
            if marked[v]:
                own[i] = 1
        inside[i + 1] = inside[i] + own[i]
    for i in range(n):
        evidence[i] = inside[end[i]] - inside[i] > 0
        above = parent[i]
        for a in range(ancestors):
            if above < 0:
                break
            if own[above]:
                evidence[i] = 1
            above = parent[above]
        evidence[i] = evidence[i] and words[i] >= min_words
    return out


cdef bint _holds_any(const unsigned char* data, Py_ssize_t n, const unsigned char** words,
                     const Py_ssize_t* lengths, Py_ssize_t count) noexcept nogil:
    """Whether ``data`` holds one of ``words`` (lower-case ASCII letters) in any ASCII case."""
    cdef Py_ssize_t i, w, k
    cdef unsigned char ch
    for i in range(n):
        ch = data[i] | 32
        for w in range(count):
            if words[w][0] != ch or i + lengths[w] > n:
                continue
            k = 1
            while k < lengths[w] and (data[i + k] | 32) == words[w][k]:
                k += 1
            if k == lengths[w]:
                return True
    return False


cdef tuple _ascii_buckets(str value, int bits, int min_length, int max_length):
    cdef bytes data = value.encode("ascii")
    cdef const unsigned char* p = data
    cdef Py_ssize_t n = len(data), i = 0, j, end
    cdef int kind
    out = []
    while i < n:
        kind = _ascii_kind(p[i])
        if kind == 0:
            i += 1
            continue
        j = i + 1
        if kind == 3:  # \d+
            while j < n and _ascii_kind(p[j]) == 3:
                j += 1
            i = j  # all digits: never a token
            continue
        if kind == 1:
            while j < n and _ascii_kind(p[j]) == 1:
                j += 1
            if j < n and _ascii_kind(p[j]) == 2:
                if j - 1 > i:  # [A-Z]+(?=[A-Z][a-z]): the capitals but the last
                    end = j - 1
                else:  # [A-Z]?[a-z]+: a capital and its small letters
                    end = j
                    while end < n and _ascii_kind(p[end]) == 2:
                        end += 1
            else:  # [A-Z]+
                end = j
        else:  # [a-z]+
            end = j
            while end < n and _ascii_kind(p[end]) == 2:
                end += 1
        if min_length <= end - i <= max_length:
            out.append(_bucket_of(p, i, end, bits))
        i = end
    return tuple(out)
