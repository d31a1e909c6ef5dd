# The comment evidence (score/discussion.py).
# Included by _kernel.pyx (one extension, as lxml assembles etree.pyx).

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
