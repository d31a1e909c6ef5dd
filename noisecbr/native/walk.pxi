# The lazy walk's reach (decide/walk.py).
# Included by _kernel.pyx (one extension, as lxml assembles etree.pyx).

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
