# Integer loops of the vectors' leaf and page groups (features/tags.py, features/page.py).
# Included by _kernel.pyx (one extension, as lxml assembles etree.pyx).

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
