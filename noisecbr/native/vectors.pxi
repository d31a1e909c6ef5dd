# The vectors' float columns (features/vectors.py, features/compiled.py).
# Included by _kernel.pyx (one extension, as lxml assembles etree.pyx).

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
