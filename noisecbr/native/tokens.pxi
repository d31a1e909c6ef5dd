# Words coded by the listed words' table (features/tokens.py) and values numbered or looked up
# (prepare/subtrees.py).
# Included by _kernel.pyx (one extension, as lxml assembles etree.pyx).

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
