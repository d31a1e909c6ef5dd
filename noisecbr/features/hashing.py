"""The bucket of a token: feature hashing for the lexical fields (:mod:`.lexical`).

FNV-1a over the lower-cased UTF-8 bytes, the 64-bit hash's high half folded onto its low half,
the low BUCKET_BITS bits kept: the same on every machine and in every process (not Python's
salted ``hash``), and computed in C for ASCII tokens by the compiled kernel as their codes are
(:mod:`.tokens`).
"""

from __future__ import annotations

from ..native.backend import BACKEND

__all__ = ["BUCKET_BITS", "BUCKET_MASK", "bucket", "python_bucket"]

#: Buckets: 2**20. With some 10⁵ distinct tokens kept by a model, a new token falls into a
#: known bucket about one time in ten; fewer bits would make collisions common, more cost
#: nothing but a wider code.
BUCKET_BITS = 20
BUCKET_MASK = (1 << BUCKET_BITS) - 1
_FNV_OFFSET, _FNV_PRIME, _MASK64 = 0xCBF29CE484222325, 0x100000001B3, (1 << 64) - 1


def bucket(token: str) -> int:
    """The bucket of a token (its case ignored): FNV-1a over the lower-cased UTF-8 bytes, the
    low BUCKET_BITS bits of the 64-bit hash folded with the high ones (by the compiled kernel
    when it is in use: a Python step per byte cost a cold page a tenth of its time).

    >>> bucket("Related") == bucket("related")
    True
    """
    return _bucket(token)


def python_bucket(token: str) -> int:
    """:func:`bucket` in Python: the reference of the kernel's."""
    h = _FNV_OFFSET
    for byte in token.lower().encode("utf-8"):
        h = ((h ^ byte) * _FNV_PRIME) & _MASK64
    return (h ^ (h >> 32)) & BUCKET_MASK


def _compiled_bucket(token: str) -> int:
    return BACKEND.kernel.fnv_bucket(token.lower(), BUCKET_BITS)


_bucket = BACKEND.dispatch(python_bucket, _compiled_bucket)
