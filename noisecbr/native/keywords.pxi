# The attribute keywords' bits (features/keywords.py) and their inheritance.
# Included by _kernel.pyx (one extension, as lxml assembles etree.pyx).

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
