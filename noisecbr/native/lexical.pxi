# The lexical fields: pooled, and their attribute tokens hashed (features/lexical.py,
# features/hashing.py).
# Included by _kernel.pyx (one extension, as lxml assembles etree.pyx).

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
