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

#: The bytes the C pointers of the names the kernel compares point into (:func:`configure`),
#: kept alive here.
cdef tuple _CONSTANTS = ()

# The kernel in topic files, each named after what it computes and saying which module's pure
# path it mirrors (lxml's way: one extension assembled from .pxi files).
include "table.pxi"
include "tokens.pxi"
include "keywords.pxi"
include "render.pxi"
include "counts.pxi"
include "limits.pxi"
include "visibility.pxi"
include "vectors.pxi"
include "walk.pxi"
include "lexical.pxi"
include "discussion.pxi"


# ---------------------------------------------------------------------------------------------
# The constants the C loops compare names with, given from the Python side.


def python_names():
    """The names the kernel compares, as the Python side writes them once
    (``prepare/fields.py``'s ``KEYWORD_ATTRIBUTES``, ``prepare/names.py``): the arguments of
    :func:`configure`, which the module calls with them when it is imported."""
    from noisecbr.prepare.fields import KEYWORD_ATTRIBUTES
    from noisecbr.prepare.names import (HIDING_FLAGS, HIDING_STYLE, HIDING_STYLE_WORDS,
                                        LD_JSON_TYPE)

    return (tuple(KEYWORD_ATTRIBUTES), tuple(name.encode() for name in HIDING_FLAGS),
            HIDING_STYLE.encode(), tuple(word.encode() for word in HIDING_STYLE_WORDS),
            LD_JSON_TYPE.encode())


def configure(tuple attribute_names, tuple hiding_flags, bytes hiding_style,
              tuple hiding_style_words, bytes ld_json):
    """Set the names the kernel's C loops compare (:func:`python_names` when the module is
    imported). ValueError when their number is not the one this build's arrays hold (a kernel
    built from other sources: rebuild it)."""
    global _CONSTANTS, HIDING_STYLE_NAME, LD_JSON, LD_JSON_LENGTH
    if (len(attribute_names) != N_ATTRIBUTES or len(hiding_flags) != N_HIDING_FLAGS
            or len(hiding_style_words) != N_HIDING_WORDS):
        raise ValueError(f"the kernel was built for {N_ATTRIBUTES} keyword attributes, "
                         f"{N_HIDING_FLAGS} hiding attributes and {N_HIDING_WORDS} hiding "
                         "words: rebuild it from these sources (pip install .)")
    for value in (*attribute_names, *hiding_flags, hiding_style, *hiding_style_words, ld_json):
        if not isinstance(value, bytes) or b"\0" in value:
            raise ValueError(f"a name the kernel compares must be bytes without NUL: {value!r}")
    _CONSTANTS = (attribute_names, hiding_flags, hiding_style, hiding_style_words, ld_json)
    cdef Py_ssize_t k
    for k in range(N_ATTRIBUTES):
        ATTRIBUTE_NAMES[k] = <const char*>(<bytes>attribute_names[k])
    for k in range(N_HIDING_FLAGS):
        HIDING_FLAG_NAMES[k] = <const char*>(<bytes>hiding_flags[k])
    for k in range(N_HIDING_WORDS):
        HIDING_WORDS[k] = <const unsigned char*>(<bytes>hiding_style_words[k])
        HIDING_LENGTHS[k] = len(hiding_style_words[k])
    HIDING_STYLE_NAME = <const char*>hiding_style
    LD_JSON, LD_JSON_LENGTH = <const char*>ld_json, len(ld_json)


configure(*python_names())
