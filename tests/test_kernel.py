"""The compiled kernel (noisecbr/native/_kernel.pyx) against the pure Python path it replaces: the
same element table field by field, hence the same vectors and the same cleaned text, on the
fixtures, on hand-made pages that probe lxml's text rules, and on generated hostile pages. The whole
dev data (2 344 pages) is compared by ``benchmarks/identity.py``, too slow for CI."""

from __future__ import annotations

import contextlib
import gzip
import os
import random
import subprocess
import sys

import numpy as np
import pytest
from fuzzing import FAMILIES, fixture_pages, generate
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lxml import etree

import noisecbr
from noisecbr.cleaner import Cleaner
from noisecbr.features import FEATURE_NAMES, vectorize
from noisecbr.native import backend
from noisecbr.native.backend import BACKEND
from noisecbr.prepare import subtrees
from noisecbr.prepare.fields import python_fields
from noisecbr.prepare.tidy import InputError, tidy

try:  # the module itself, even where the import-time check turned it down
    from noisecbr.native import _kernel
except ImportError:
    _kernel = None

#: test_the_compiled_kernel_is_built_and_in_use fails where it is missing.
compiled_only = pytest.mark.skipif(_kernel is None, reason="the compiled kernel is not built")
in_use = pytest.mark.skipif(BACKEND.kernel is None, reason="the compiled kernel is not in use")


def both_fields(body: etree._Element) -> tuple[dict, dict]:
    """The table fields of ``body`` by the compiled kernel and by the pure Python path."""
    elements = list(body.iter(etree.Element, etree.Entity))
    return _kernel.fill_table(elements), python_fields(elements)


def assert_same_table(body: etree._Element) -> dict:
    compiled, python = both_fields(body)
    assert backend.differences(compiled, python) == []
    return compiled


@pytest.fixture
def pure_python():
    """Switches the backend to the pure Python path for the rest of the test."""
    with contextlib.ExitStack() as stack:
        yield lambda: stack.enter_context(BACKEND.pure())


def test_the_compiled_kernel_is_built_and_in_use():
    # CI must not run the pure Python path unnoticed: the install builds the kernel, and only
    # the environment variable may turn it off.
    if os.environ.get(backend.PURE_PYTHON_ENV) == "1":
        assert BACKEND.name == "python"
    else:
        assert _kernel is not None  # the build put it there
        assert BACKEND.name == "compiled"
        assert BACKEND.kernel is _kernel


def test_the_environment_variable_selects_the_pure_path():
    code = "from noisecbr.native.backend import BACKEND; print(BACKEND.name, BACKEND.kernel)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, backend.PURE_PYTHON_ENV: "1"}).stdout
    assert out.split() == ["python", "None"]


@in_use
def test_a_kernel_that_disagrees_is_not_used():
    wrong = lambda elements: {**python_fields(elements), "tags": []}  # noqa: E731
    with pytest.warns(RuntimeWarning, match="disagrees"):
        assert backend.load(wrong) is None
    assert backend.load(python_fields) is BACKEND.kernel


def test_a_kernel_that_cannot_be_imported_is_said_once(monkeypatch):
    # As after `pip install .` with the package imported from the checkout's root: the
    # sources hold no built kernel.
    import noisecbr.native

    monkeypatch.delenv(backend.PURE_PYTHON_ENV, raising=False)
    monkeypatch.delattr(noisecbr.native, "_kernel", raising=False)
    monkeypatch.setitem(sys.modules, "noisecbr.native._kernel", None)  # import fails
    with pytest.warns(RuntimeWarning, match="compiled kernel is not in use.*pip install"):
        assert backend.load(python_fields) is None
    code = "import warnings; from noisecbr.native.backend import BACKEND; print(BACKEND.name)"
    quiet = subprocess.run([sys.executable, "-W", "error", "-c", code], capture_output=True,
                           text=True, env={**os.environ, backend.PURE_PYTHON_ENV: "1"})
    assert quiet.returncode == 0 and quiet.stdout.split() == ["python"]  # chosen: no warning


def test_the_pure_block_switches_the_backend_and_back():
    kernel = BACKEND.kernel
    with BACKEND.pure():
        assert BACKEND.name == "python" and BACKEND.kernel is None
    assert BACKEND.kernel is kernel


def test_differences_names_the_fields_that_differ():
    a = {"x": np.array([1, 2], dtype=np.int32), "y": ["a"], "z": np.zeros(1, dtype=bool)}
    b = {"x": np.array([1, 2], dtype=np.int64), "y": ["a"], "z": np.ones(1, dtype=bool)}
    assert backend.differences(a, b) == ["x", "z"]
    assert backend.differences(a, a) == []


@in_use
@pytest.mark.parametrize("page", range(len(fixture_pages())))
def test_fixture_pages_give_the_same_table_vectors_and_text(page, pure_python):
    html = fixture_pages()[page]
    body = tidy(html)
    assert_same_table(body)
    compiled_vectors = vectorize(subtrees.build_table(body))
    compiled_result = noisecbr.clean(html)
    cleaner = Cleaner()
    compiled_decision = cleaner.decide(cleaner.prepare(html)).decision
    pure_python()
    assert subtrees.build_table(tidy(html)).elements  # still works on the pure path
    assert vectorize(subtrees.build_table(body)).tobytes() == compiled_vectors.tobytes()
    assert np.array_equal(cleaner.decide(cleaner.prepare(html)).decision, compiled_decision)
    result = noisecbr.clean(html)
    assert (result.text, result.comments, result.title) == (
        compiled_result.text, compiled_result.comments, compiled_result.title)


def _xml_body(markup: str, **options) -> etree._Element:
    parser = etree.XMLParser(resolve_entities=False, strip_cdata=False, **options)
    root = etree.fromstring(markup.encode(), parser)
    return root if root.tag == "body" else root.find(".//body")


#: Pages that only an XML parser or the tree API can make: entity references, CDATA, comments
#: and processing instructions between text, namespaces, upper-case tags, DTD attributes.
XML_PAGES = {
    "entity references": """<!DOCTYPE body [<!ENTITY e "x"><!ENTITY f "y">]>
        <body><p class="a">one &e; two&f;<b>&e;</b>&e;&f; tail</p>&e;</body>""",
    "comments and PIs between text": """<body><p>before<!-- c -->after<?pi x?>more<b>b</b>
        tail<!-- d -->hidden tail<?q?>also</p><!-- e --> body text</body>""",
    "CDATA": "<body><p>a<![CDATA[b < c]]>d<b/><![CDATA[e]]>f</p><![CDATA[  ]]></body>",
    "namespaces": """<body xmlns:s="http://www.w3.org/2000/svg" xmlns:x="urn:x">
        <s:svg class="i"><s:foreignObject>f</s:foreignObject></s:svg>
        <x:a x:class="no" class="yes">in link</x:a><a><x:b>linked</x:b></a></body>""",
    "upper-case tags": "<body><DIV CLASS='x' class='y'><A>Link</A> text<P>Para</P></DIV></body>",
    "DTD attribute defaults": """<!DOCTYPE body [<!ATTLIST p class CDATA "fixed-nav">]>
        <body><p>default class</p><p class="own">own class</p></body>""",
    "entity in an attribute": """<!DOCTYPE body [<!ENTITY e "nav">]>
        <body><p class="site-&e; menu" id="x&e;">text</p></body>""",
    "empty body": "<body/>",
    "whitespace only": "<body>\n  <p> \t </p>\r\n<p>\u00a0\u3000\u2028\x85</p>  </body>",
}


@compiled_only
@pytest.mark.parametrize("name", sorted(XML_PAGES))
def test_xml_pages_give_the_same_table(name):
    fields = assert_same_table(_xml_body(XML_PAGES[name]))
    assert len(fields["tags"]) >= 1


@compiled_only
def test_lxml_text_rules_are_followed():
    fields = assert_same_table(_xml_body(XML_PAGES["comments and PIs between text"]))
    # The texts after a comment or PI are their tails: not pieces.
    assert "after" not in " ".join(fields["piece_text"])
    fields = assert_same_table(_xml_body(XML_PAGES["entity references"]))
    assert "&e;" in fields["piece_text"] and "#other" in fields["tags"]
    fields = assert_same_table(_xml_body(XML_PAGES["DTD attribute defaults"]))
    assert fields["keyword_values"][0][1:] == ["fixed-nav", "own"]
    fields = assert_same_table(_xml_body(XML_PAGES["whitespace only"]))
    assert fields["piece_text"] == []


#: HTML pages (through tidy, and through lxml's HTML parser keeping comments and PIs).
HTML_PAGES = {
    "unicode": """<body><p>NBSP\u00a0only: <b>\u00a0</b><i>\u2003\u3000</i>zero\u200bwidth
        <span>\U0001f600 \U0001d400\U0001d401 \U00010400x_1 \u0663\u00b2 __ a_b_</span>
        Ünïcödé, 日本語。 ¿Qué? ¡Sí! x.y,z;w:v</p></body>""",
    "attributes": """<body><div class id="" role="navigation" aria-label="Main menu"
        data-x="1" class="second">x</div><p CLASS="Upper">y</p><p class=a&amp;b>z</p></body>""",
    "links and tails": "<body><a href=x>one <b>two</b> three</a> after <a>four</a>five</body>",
    "comments in html": "<body><p>a<!-- c -->b<?php echo 1; ?>c</p><!-- d -->e</body>",
    "svg in html": "<body><svg viewBox='0 0 1 1'><foreignObject>f</foreignObject></svg></body>",
}


@compiled_only
@pytest.mark.parametrize("name", sorted(HTML_PAGES))
@pytest.mark.parametrize("parser", ["tidy-lxml", "tidy-html5lib", "lxml-keeping-comments"])
def test_html_pages_give_the_same_table(name, parser):
    html = HTML_PAGES[name]
    if parser == "lxml-keeping-comments":
        body = etree.HTML(html, etree.HTMLParser(remove_comments=False)).find("body")
    else:
        body = tidy(html, parser=parser.removeprefix("tidy-"))
    assert_same_table(body)


@compiled_only
def test_a_very_deep_tree_needs_no_recursion():
    body = etree.Element("body")
    node = body
    for depth in range(20_000):  # far past Python's recursion limit and libxml2's parse limit
        node = etree.SubElement(node, "div", {"class": f"d{depth % 7}"})
        node.text = f"level {depth}"
        node.tail = "tail," if depth % 3 else None
    fields = assert_same_table(body)
    assert fields["depth"].max() == 20_000


@compiled_only
def test_a_very_wide_tree():
    body = etree.Element("body")
    for k in range(30_000):
        etree.SubElement(body, "a" if k % 2 else "span", id=str(k)).tail = f" w{k} "
    fields = assert_same_table(body)
    assert int(fields["n_children"][0]) == 30_000


def on_generated_pages(examples: int):
    """A test over ``examples`` generated hostile pages (tests/fuzzing.py's families but the
    deepest nesting), given as (seed, family)."""
    def wrap(test):
        return compiled_only(settings(
            max_examples=examples, deadline=None, derandomize=True,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])(given(
                seed=st.integers(min_value=0, max_value=2**32 - 1),
                family=st.sampled_from(sorted(set(FAMILIES) - {"deep-nesting"})))(test)))
    return wrap


def generated_roots(seed: int, family: str, tidied: bool = True) -> list[etree._Element]:
    """The generated page's tidied body (unless tidy refuses it, or not ``tidied``) and its
    root as lxml's HTML parser reads it keeping comments and PIs (unless it finds none)."""
    page = generate(random.Random(seed), family)
    roots = []
    if tidied:
        try:
            roots.append(tidy(page))
        except InputError:
            pass
    raw = page if isinstance(page, bytes) else page.encode("utf-8", "surrogatepass")
    root = etree.HTML(raw, etree.HTMLParser(remove_comments=False, recover=True))
    return roots if root is None else [*roots, root]


@on_generated_pages(150)
def test_generated_pages_give_the_same_table(seed, family):
    for root in generated_roots(seed, family):
        assert_same_table(root)


def _pure_vectors(table) -> np.ndarray:
    """The vectors of ``table`` by the pure Python path (numpy's float columns)."""
    # What a table keeps once computed (its memos, such as its tokens' codes; its attribute
    # values): computed again, by the pure path.
    for cached in ("_memos", "_attribute_values", "_tokens"):
        table.__dict__.pop(cached, None)
    with BACKEND.pure():
        return vectorize(table)


@in_use
@on_generated_pages(60)
def test_generated_pages_give_the_same_vectors(seed, family):
    for root in generated_roots(seed, family):
        table = subtrees.build_table(root)
        assert vectorize(table).tobytes() == _pure_vectors(table).tobytes()


@in_use
@pytest.mark.parametrize("name", sorted(XML_PAGES))
def test_xml_pages_give_the_same_vectors(name):
    table = subtrees.build_table(_xml_body(XML_PAGES[name]))
    vectors = vectorize(table)
    assert vectors.shape[0] == len(table) and np.isfinite(vectors).all()
    assert vectors.tobytes() == _pure_vectors(table).tobytes()


def _subsets(n: int, rng: random.Random) -> list[np.ndarray]:
    """Row sets of a page of ``n`` elements as the lazy walk asks for them: the first row,
    scattered rows in any order, the last, all, none."""
    rows = list(range(n))
    return [np.array(pick, dtype=np.int64) for pick in (
        [0], rng.sample(rows, min(n, 7)), [n - 1], rows[::-1], [])]


@in_use
@pytest.mark.parametrize("page", range(len(fixture_pages())))
def test_the_vectors_of_some_rows_are_the_whole_pages(page):
    from noisecbr.features.vectors import row_vectors

    table = subtrees.build_table(tidy(fixture_pages()[page]))
    whole = vectorize(table)
    rows_of = row_vectors(table)
    for rows in _subsets(len(table), random.Random(page)):
        assert rows_of(rows).tobytes() == whole[rows].tobytes()
        assert vectorize(table, rows).tobytes() == whole[rows].tobytes()
    with BACKEND.pure():
        assert vectorize(table, [len(table) - 1, 0]).tobytes() == whole[[-1, 0]].tobytes()
    for wrong in ([len(table)], [-1]):
        with pytest.raises(ValueError, match="row"):
            rows_of(np.array(wrong))


@in_use
@on_generated_pages(40)
def test_generated_pages_give_the_same_vectors_row_by_row(seed, family):
    from noisecbr.features.vectors import row_vectors

    for root in generated_roots(seed, family):
        table = subtrees.build_table(root)
        whole = vectorize(table)
        rows_of = row_vectors(table)
        for rows in _subsets(len(table), random.Random(seed)):
            assert rows_of(rows).tobytes() == whole[rows].tobytes()


@compiled_only
def test_dev_pages_give_the_same_table(modernweb_dev):
    # Fifty real pages of one set (the whole dev data: benchmarks/identity.py).
    for path in sorted((modernweb_dev / "html").glob("*.html.gz"))[:50]:
        assert_same_table(tidy(gzip.decompress(path.read_bytes())))


#: Tokens whose codes have edges: Title Case next to digits and underscores, all capitals,
#: listed words in any case, the longest listed word, non-ASCII tokens (the dict's path)
#: including a Kelvin sign that lower-cases to ASCII.
TRICKY_TOKENS = ["ABC", "Abc", "aBc", "A1", "1A", "_A", "A_b", "A_B", "Hello_World", "X", "x",
                 "123", "0", "_", "The", "THE", "the", "advertisement", "Advertisement", "ADS",
                 "In", "iN", "In2", "comments", "COMMENTS", "a" * 40, "Ünï", "\u212aike", "日本",
                 "\U0001d400", "x_1", "und", "UND", "Und", "über", "también", "weiterlesen",
                 "Поделиться", "関連記事一覧", "ADVERTISEMENT", "Foto", "gmt"]


@in_use  # the module-level helpers it calls take the kernel in use
def test_token_codes_match_the_python_coder():
    from noisecbr.features import tokens as coding
    tokens = [TRICKY_TOKENS] + [piece for html in fixture_pages()
                                for piece in subtrees.build_table(tidy(html)).piece_tokens]
    expected = [coding._code(token) for piece in tokens for token in piece]
    # The tokens as texts: joined by spaces and by non-word characters, and each ASCII token
    # also inside a non-ASCII text (whose characters are stored two or four bytes wide).
    texts = [" ".join(piece) for piece in tokens] + ["-.\u00a0".join(piece) for piece in tokens]
    wide = [f"\u0100 {' '.join(piece)} \U0001f600" for piece in tokens]
    counts = [len(piece) for piece in tokens]
    for words in (coding._ascii_words(), _kernel.AsciiWords({"é": 1})):  # C, and the dict
        codes = _kernel.text_codes(texts, np.array(counts * 2, dtype=np.int32), {},
                                   coding._code, words, coding.TITLE, coding.DIGIT)
        assert codes.tolist() == expected * 2
        wide_codes = _kernel.text_codes(wide, np.array([c + 1 for c in counts], np.int32), {},
                                        coding._code, words, coding.TITLE, coding.DIGIT)
        assert wide_codes.tolist() == [code for piece in tokens for code in
                                       [coding._code("\u0100"), *map(coding._code, piece)]]
    with pytest.raises(ValueError, match="more tokens"):
        _kernel.text_codes(["a b"], np.array([1], np.int32), {}, coding._code,
                           coding._ascii_words(), 1, 2)
    with pytest.raises(ValueError, match="fewer tokens"):
        _kernel.text_codes(["a b"], np.array([3], np.int32), {}, coding._code,
                           coding._ascii_words(), 1, 2)
    assert coding._ascii_words().usable and not _kernel.AsciiWords({"é": 1}).usable


#: Attribute values that probe the keyword rules: whole-token "ad"/"ads" beside letters,
#: digits, non-ASCII letters and string ends; overlapping and repeated keywords; upper case;
#: lower-casing that lengthens a value ("İ"); values that end inside a keyword.
TRICKY_VALUES = [
    "ad", "ads", "ad-slot", "bad", "adx", "x ads", "adsense", "ad1", "éad", "adé", "AD",
    "ADS-top", "İnav", "nav İ ad", "sidebar-aside", "maincontent", "recommendations",
    "newsletter-subscribe", "commentary", "heade", "nav", "n", "", "\x00ad", "ad\x00",
    "postbody entry-content", "ﬀooter", "Breadcrumb_nav", "ad_", "_ad", "s-ad-s", "ads2",
]


@in_use  # the module-level helpers it calls take the kernel in use
def test_keyword_masks_match_the_regexes():
    from noisecbr.features import keywords
    rng = random.Random(7)
    pieces = [*keywords.KEYWORDS, "ads", "-", "_", " ", "x", "é", "İ", "A", "1", "s"]
    generated = ["".join(rng.choice(pieces) for _ in range(rng.randint(1, 6)))
                 for _ in range(3000)]
    values = TRICKY_VALUES + generated + [random.Random(k).choice(pieces).upper() + v
                                          for k, v in enumerate(generated[:500])]
    values = list(dict.fromkeys(values))
    expected = keywords._new_masks(values)
    landmarks = np.zeros(len(values), dtype=np.uint64)
    cache: dict = {}
    # The distinct values (None first, as the table numbers them); per element, its first
    # attribute's value and no second.
    distinct = [None, *values]
    numbers = np.arange(1, len(values) + 1)
    positions = np.stack([numbers, np.zeros_like(numbers)])
    masks = _kernel.value_masks(distinct, positions, cache, keywords._scanner(), landmarks)
    assert masks.tolist() == expected
    assert [cache[v] for v in values] == expected  # what the cache learnt
    assert None not in cache
    # a second pass reads the cache, and ORs each element's values and landmark bits
    landmarks[:] = 1 << 60
    positions = np.stack([numbers, numbers[::-1]])
    again = _kernel.value_masks(distinct, positions, cache, keywords._scanner(), landmarks)
    assert again.tolist() == [(a | b | 1 << 60) for a, b in zip(expected, expected[::-1])]
    with pytest.raises(ValueError, match="value index"):
        _kernel.value_masks(distinct, positions + 1, cache, keywords._scanner(), landmarks)


@in_use  # the module-level helpers it calls take the kernel in use
def test_the_kernel_reads_the_quantities_the_table_names_and_refuses_others():
    from noisecbr.features import FEATURES
    from noisecbr.features.compiled import schema_arrays
    named = {f.of for f in FEATURES if f.transform not in ("at", "relative")}
    named |= {f.per for f in FEATURES if f.per is not None}
    assert all(isinstance(getattr(_kernel, name.upper()), int) for name in named)
    _kernel.Schema(*schema_arrays())
    leaf = [f.name for f in FEATURES].index("leaf:a")
    for field, value in (("index", 30), ("of", 999), ("transform", 99), ("per", -1)):
        columns, parameters = schema_arrays()
        columns[field][leaf] = value
        with pytest.raises(ValueError, match="not one the kernel can read"):
            _kernel.Schema(columns, parameters)
    # the candidate's score is damped by the link density before the log1p block and the
    # page's and candidate's rows are made
    for field, value in (("transform", _kernel.Transform.LOG), ("of", _kernel.CONTENT_SCORE),
                         ("per", _kernel.WORDS_BEFORE)):
        columns, parameters = schema_arrays()
        columns[field][parameters["link_density"]] = value
        with pytest.raises(ValueError, match="link density column"):
            _kernel.Schema(columns, parameters)


# The text renderer's walk in C (render.render_text) against the Python walk it replaces.

def _both_renders(root, removed=(), dropped=()) -> tuple[str | None, str]:
    """The compiled walk's text (None where it leaves the page to Python) and the Python
    walk's; the compiled text finished in C and by _split_join alike."""
    from noisecbr.render import text as render
    joined = _kernel.render_text(root, removed, dropped, render._MARK_CODES)
    walked = _kernel.render_text(root, removed, dropped, render._MARK_CODES, True)
    compiled = None if joined is None else render._split_join(joined)
    if walked is None:
        assert joined is None
    else:
        finished, text = walked
        assert (text if finished else render._split_join(text)) == compiled
        assert finished or text == joined
    return compiled, render._render_in_python(root, removed, dropped)


@compiled_only
def test_the_text_is_finished_in_c_as_split_join_finishes_it():
    from noisecbr.render import text as render
    rng = random.Random(3)
    pieces = ["a", "bé", "日本", "\U0001f600", " ", "\t", "\n", "\x0b", "\x0c", "\r", "\u00a0",
              render._PARAGRAPH, render._LINE, render._CELL, render._CELL, "  ", "x y",
              "\u00a0\u00a0", "\u2019"]
    slow = render._OTHER_SPACES + "\x01\x02"
    finished = 0
    for _ in range(5000):
        parts = [rng.choice(pieces) for _ in range(rng.randint(0, 12))]
        if rng.random() < 0.2:
            parts.insert(rng.randint(0, len(parts)), rng.choice(slow))
        joined = "".join(parts)
        text = _kernel.finish_text(joined)
        if text is None:  # left to _split_join's other path
            assert any(character in joined for character in slow)
        else:
            assert text == render._split_join(joined)
            finished += 1
    assert finished > 3000
    for character in slow:  # every one of them takes the text off the fast path
        assert _kernel.finish_text(f"a{character}b") is None


def _random_subsets(root, rng: random.Random) -> list[tuple[set, set]]:
    """Removed and text-dropped sets drawn from the root's elements (entities included)."""
    elements = list(root.iter(etree.Element, etree.Entity))
    draws = [(set(), set())]
    for share in (0.05, 0.3):
        draws.append(({e for e in elements if rng.random() < share},
                      {e for e in elements if rng.random() < share}))
    return draws


@in_use
def test_the_compiled_renderer_is_in_use():
    from noisecbr.render import text as render
    assert render._compiled_render() is not None


@compiled_only
@pytest.mark.parametrize("page", range(len(fixture_pages())))
def test_fixture_pages_render_the_same_text(page):
    body = tidy(fixture_pages()[page])
    for removed, dropped in _random_subsets(body, random.Random(page)):
        compiled, python = _both_renders(body, removed, dropped)
        assert compiled == python


@compiled_only
@pytest.mark.parametrize("name", sorted(XML_PAGES))
def test_xml_pages_render_the_same_text_or_leave_it_to_python(name):
    from noisecbr.render.text import render_text
    body = _xml_body(XML_PAGES[name])
    compiled, python = _both_renders(body)
    has_comment_or_pi = any(not isinstance(e.tag, str) and e.tag is not etree.Entity
                            for e in body.iter())
    # Comments and PIs are rendered by the Python walk (the C walk hands them back).
    assert compiled == (None if has_comment_or_pi else python)
    assert render_text(body) == python


@compiled_only
def test_the_renderer_keeps_tails_of_removed_elements_and_skips_muted_text():
    body = etree.fromstring("<body><div>a<p>b</p>c<span>d</span>e</div>f</body>")
    div, p, span = body[0], body[0][0], body[0][1]
    compiled, python = _both_renders(body, {p}, {div})
    assert compiled == python == "d\n\nf"  # a, c and e are the muted div's text and tails
    assert _both_renders(body, {body})[0] == ""
    assert _both_renders(body, {span})[0] == "a\n\nb\n\nce\n\nf"


@compiled_only
def test_the_renderer_refuses_what_is_not_an_element():
    body = etree.fromstring("<body><p>x</p></body>")
    assert _kernel.render_text(body, {"not an element"}, (), {}) is None


@compiled_only
def test_the_renderer_walks_very_deep_and_wide_trees():
    body = etree.Element("body")
    node = body
    for depth in range(20_000):
        node = etree.SubElement(node, "div")
        node.text, node.tail = f"d{depth}", "t"
    wide = etree.SubElement(body, "p")
    for k in range(30_000):
        etree.SubElement(wide, "b").tail = f" w{k}"
    compiled, python = _both_renders(body, {body[0][0][0]}, {wide})
    assert compiled == python and "d19999" not in compiled and compiled.startswith("d0")


@on_generated_pages(100)
def test_generated_pages_render_the_same_text(seed, family):
    for root in generated_roots(seed, family):
        for removed, dropped in _random_subsets(root, random.Random(seed)):
            compiled, python = _both_renders(root, removed, dropped)
            assert compiled is None or compiled == python


def _carriers_by_xpath(root) -> list:
    from noisecbr.prepare import visibility
    return list(dict.fromkeys(a.getparent() for a in visibility._HIDING_ATTRIBUTES(root)))


@compiled_only
def test_hiding_carriers_are_those_the_xpath_finds():
    page = """<body hidden=""><div style="x" id="a"><p hidden="">h</p><b aria-hidden="true">b</b>
        <i data-style="no" x:style="no" xmlns:x="urn:x">i</i></div><!-- c --><span style="">s
        </span><p><em hidden="" aria-hidden="false" style="y">e</em></p></body>"""
    body = etree.fromstring(page)
    found = _kernel.hiding_carriers(body)
    assert [e.get("id") or e.tag for e in found] == ["a", "p", "b", "span", "em"]
    assert found == _carriers_by_xpath(body)
    assert _kernel.hiding_carriers(etree.fromstring("<body/>")) == []


@compiled_only
def test_elements_of_fixtures_and_xml_pages_are_counted_as_the_xpath_counts_them():
    count = etree.XPath("count(//*)")
    roots = [etree.HTML(page) for page in fixture_pages()]
    roots += [_xml_body(markup).getroottree().getroot() for markup in XML_PAGES.values()]
    for root in roots:
        assert _kernel.count_elements(root) == int(count(root))


@compiled_only
def test_noscripts_are_found_in_the_same_walk():
    page = """<body><noscript id="1">a<noscript id="2"/></noscript><div><y:noscript
        xmlns:y="urn:y" id="ns"/><p style="x"><noscript id="3" hidden="">b</noscript></p>
        </div><NOSCRIPT id="upper"/></body>"""
    body = etree.fromstring(page)
    noscripts: list = []
    iframes: list = []
    carriers = _kernel.hiding_carriers(body, noscripts, iframes)
    assert [e.get("id") for e in noscripts] == ["1", "2", "3"]
    assert noscripts == etree.XPath("descendant::noscript")(body)
    assert carriers == _carriers_by_xpath(body)
    assert iframes == []
    page = """<body><iframe id="1">a<iframe id="2"/></iframe><div><y:iframe xmlns:y="urn:y"
        id="ns"/><p style="x"><noscript id="n"/><iframe id="3" hidden="">b</iframe></p></div>
        <IFRAME id="upper"/></body>"""
    body = etree.fromstring(page)
    noscripts, iframes = [], []
    carriers = _kernel.hiding_carriers(body, noscripts, iframes)
    assert [e.get("id") for e in iframes] == ["1", "2", "3"]
    assert iframes == etree.XPath("descendant::iframe")(body)
    assert [e.get("id") for e in noscripts] == ["n"]
    assert carriers == _carriers_by_xpath(body)


@on_generated_pages(60)
def test_elements_are_counted_as_the_xpath_counts_them(seed, family):
    count = etree.XPath("count(//*)")
    for root in generated_roots(seed, family, tidied=False):
        assert _kernel.count_elements(root) == int(count(root))
        for element in list(root.iter())[:3]:  # any element of the document counts it all
            assert _kernel.count_elements(element) == int(count(root))


@on_generated_pages(60)
def test_generated_pages_have_the_same_hiding_carriers(seed, family):
    for root in generated_roots(seed, family, tidied=False):
        noscripts: list = []
        assert _kernel.hiding_carriers(root, noscripts) == _carriers_by_xpath(root)
        assert noscripts == etree.XPath("descendant::noscript")(root)


_TAG_ALPHABET = "<>aZ =\"'/1\u00e9\u65e5\U0001f600\n"


@compiled_only
@settings(max_examples=300, deadline=None)
@given(text=st.text(alphabet=_TAG_ALPHABET, max_size=80), min_chars=st.integers(0, 6),
       start=st.integers(0, 10))
def test_long_tags_are_where_the_regex_finds_them(text, min_chars, start):
    import re

    pattern = re.compile(rf"<[a-zA-Z][^<>]{{{min_chars},}}")
    expected = [match.start() for match in pattern.finditer(text, start)]
    assert _kernel.long_tags(text, min_chars, start) == expected


@compiled_only
def test_styled_carriers_are_those_whose_style_may_hide():
    from noisecbr.prepare import visibility
    page = """<body><p id="a" style="color: red">a</p><p id="b" style="DISPLAY :  None">b</p>
        <p id="c" style="border:none">c</p><p id="d" style="visibility:hıdden">d</p>
        <p id="e" style="">e</p><p id="f" aria-hidden="false" style="x">f</p>
        <p id="g" style="visibility:&#10;hidden">g</p><p id="h" style="diſplay:\u00a0none">h</p>
        </body>"""
    body = etree.fromstring(page, etree.HTMLParser()).find("body")
    every = _kernel.hiding_carriers(body)
    styled = _kernel.hiding_carriers(body, hiding_styles=True)
    assert [e.get("id") for e in styled] == ["b", "c", "d", "f", "g", "h"]
    # Whatever the prefilter leaves out hides nothing: the same elements are hidden.
    assert list(filter(visibility._is_hidden, styled)) == list(
        filter(visibility._is_hidden, every))
    # re.I folds "ı" to "i" and "ſ" to "s": the prefilter looks only at "none" and "dden".
    assert [e.get("id") for e in filter(visibility._is_hidden, styled)] == ["b", "d", "g", "h"]


@on_generated_pages(60)
def test_generated_pages_hide_the_same_elements_with_the_style_prefilter(seed, family):
    from noisecbr.prepare import visibility
    for root in generated_roots(seed, family, tidied=False):
        hidden = list(filter(visibility._is_hidden, _kernel.hiding_carriers(root)))
        assert list(filter(visibility._is_hidden, _kernel.hiding_carriers(
            root, hiding_styles=True))) == hidden


@in_use  # its compiled side calls the kernel in use
def test_discussion_marks_are_those_the_pattern_finds():
    discussion = sys.modules["noisecbr.score.discussion"]
    rng = random.Random(3)
    alphabet = "acdekmnoprstuwyACDEKMNOPRSTUWY-_ 1"
    values = [None, "", "comments-list", "CommentBox", "Kommentare", "reply-to", "REPLIES",
              "responsive", "disqus_thread", "reactie", "reactions", "antwort", "yorumlar",
              "коммент-блок", "用户评论", "post-body", "commen", "reakcja", "dis cus"]
    values += ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 24)))
               for _ in range(4000)]
    expected = np.array([bool(v) and discussion.DISCUSSION_MARKUP.search(v.lower()) is not None
                         for v in values])
    discussion._MARKED.clear()
    assert (discussion._marked_compiled(values) == expected).all()
    assert (discussion._marked_compiled(values) == expected).all()  # from the cache
    discussion._MARKED.clear()
    assert (discussion._marked_pure(values) == expected).all()
    # "responsive" is a layout's word, not a discussion's.
    assert expected[:19].tolist() == [False, False, True, True, True, True, True, False, True,
                                      True, True, True, True, True, True, False, False, False,
                                      False]


def _evidence_both(body: etree._Element, rng: np.random.Generator) -> None:
    """comment_evidence's two paths agree on ``body``'s table, with its own marks and random
    ones (real pages mark few values)."""
    discussion = sys.modules["noisecbr.score.discussion"]
    table = subtrees.build_table(body)
    values, positions = table.attribute_values()
    words = table.subtree(table.piece_words)
    for marked in (discussion._marked(values), rng.random(len(values)) < 0.2):
        marked[0] = False  # None, an absent attribute, is never marked
        pure = discussion._evidence_pure(table, marked, positions, words)
        compiled = discussion._evidence_compiled(table, marked, positions, words)
        assert compiled.dtype == pure.dtype and compiled.tolist() == pure.tolist()


@in_use  # the compiled path it compares calls the kernel in use
@pytest.mark.parametrize("page", range(len(fixture_pages())))
def test_comment_evidence_is_the_numpy_steps(page):
    _evidence_both(tidy(fixture_pages()[page]), np.random.default_rng(page))


@in_use
@on_generated_pages(40)
def test_generated_pages_have_the_same_comment_evidence(seed, family):
    for root in generated_roots(seed, family, tidied=True)[:1]:
        _evidence_both(root, np.random.default_rng(seed))


@compiled_only
def test_comment_evidence_refuses_what_is_not_a_tree():
    one = np.zeros(1, dtype=np.int32)
    with pytest.raises(ValueError, match="value index"):
        _kernel.thread_evidence(np.zeros(1, np.uint8), np.array([[2]]), np.ones(1, np.int32),
                                one - 1, 3, np.zeros(1), 1.0)
    with pytest.raises(ValueError, match="tree"):
        _kernel.thread_evidence(np.zeros(1, np.uint8), np.array([[0]]), one + 2, one - 1, 3,
                                np.zeros(1), 1.0)


@compiled_only
@settings(max_examples=300, deadline=None)
@given(text=st.text(alphabet=_TAG_ALPHABET, max_size=80), min_chars=st.integers(0, 6))
def test_the_first_long_tag_is_where_the_regex_finds_it(text, min_chars):
    import re

    for data, pattern in ((text, rf"<[a-zA-Z][^<>]{{{min_chars},}}"),
                          (text.encode(), rb"<[a-zA-Z][^<>]{%d,}" % min_chars)):
        match = re.search(pattern, data)
        assert _kernel.first_long_tag(data, min_chars) == (-1 if match is None
                                                           else match.start())


@in_use  # its compiled side calls the kernel in use
def test_declarations_are_those_the_xpath_finds():
    from noisecbr.prepare import visibility
    page = """<body><script type=" Application/LD+JSON\n" id="1">{}</script><meta name="a"
        id="2"/><script type="text/javascript" id="no"/><script type="application/ld+json x"
        id="no2"/><div><meta property="og:type" id="3"/><meta itemprop="x" id="no3"/><y:script
        xmlns:y="urn:y" type="application/ld+json" id="ns"/><script id="no4"/><SCRIPT
        type="application/ld+json" id="upper"/><script TYPE="application/ld+json" id="upper2"
        /><script type="application/ld&#43;json" id="4"/></div></body>"""
    body = etree.fromstring(page)
    unsure: list = []
    found = _kernel.declarations(body, unsure)
    assert [e.get("id") for e in found] == ["1", "2", "3", "4"]
    assert found == visibility._DECLARATIONS(body) and unsure == []
    # A type that is not one text node is the XPath's to test, in document order.
    doc = etree.fromstring('<!DOCTYPE body [<!ENTITY t "ld+json">]><body><meta name="m"/>'
                           '<script type="application/&t;" id="e"/><meta name="n"/></body>',
                           etree.XMLParser(resolve_entities=False))
    unsure = []
    assert [e.get("name") for e in _kernel.declarations(doc, unsure)] == ["m", "n"]
    assert len(unsure) == 1
    assert visibility._declarations_compiled(doc) == visibility._declarations_pure(doc)
    for html in fixture_pages():
        root = etree.HTML(html)
        assert _kernel.declarations(root, []) == visibility._DECLARATIONS(root)


@in_use
def test_the_row_fillers_refuse_what_their_page_was_not_made_of():
    from noisecbr.features.compiled import kernel_schema, page_inputs, schema_arrays
    from noisecbr.features.lexical import Lexicon, lexical_inputs

    table = subtrees.build_table(tidy(fixture_pages()[0]))
    page = _kernel.page_quantities(kernel_schema(), table, page_inputs(table))
    out = np.empty((len(table), len(FEATURE_NAMES)), dtype=np.float32)
    _kernel.fill_rows(out, kernel_schema(), page, None)
    assert out.tobytes() == vectorize(table).tobytes()
    other = _kernel.Schema(*schema_arrays())  # an equal table, but not the page's
    with pytest.raises(ValueError, match="another feature table"):
        _kernel.fill_rows(out, other, page, None)
    with pytest.raises(TypeError):
        _kernel.fill_rows(out, kernel_schema(), None, None)
    wrong_links = {**page_inputs(table), "next": np.full(len(table), len(table))}
    with pytest.raises(ValueError, match="sibling links"):
        _kernel.page_quantities(kernel_schema(), table, wrong_links)
    inputs = lexical_inputs(table)
    buckets = np.unique(inputs.text)[:3]
    lexicon = Lexicon(buckets, np.ones((3, 8), np.float32), buckets, np.ones((3, 8), np.float32))
    text_rows, attr_rows = lexicon._rows()
    text64, attr64 = lexicon._float64()
    sums = _kernel.pool_sums(inputs, text_rows, text64, attr_rows, attr64)
    wide = (np.ones((sums[0].shape[0], 80)), sums[1], np.ones((len(table), 80)), sums[3])
    with pytest.raises(ValueError, match="sums"):
        _kernel.pool_rows(np.empty((len(table), 400), np.float32), inputs, wide, 6, None)
    assert _kernel.first_long_tag(b"<a b>", -5) == _kernel.first_long_tag(b"<a b>", 0) == 0


@in_use
def test_the_kernel_compares_the_names_the_python_side_gives_it():
    # The keyword attributes, hiding attributes and JSON-LD type are written once, on the
    # Python side; the kernel reads what it is given (here a fourth attribute renamed).
    from noisecbr.prepare.fields import KEYWORD_ATTRIBUTES

    body = etree.HTML('<html><body><p title="t" aria-label="a">x</p></body></html>').find("body")
    elements = list(body.iter(etree.Element, etree.Entity))
    renamed = (*KEYWORD_ATTRIBUTES[:3], b"title")
    try:
        _kernel.configure(renamed, (b"hidden", b"aria-hidden"), b"style", (b"none", b"dden"),
                          b"application/ld+json")
        values = _kernel.fill_table(elements)["keyword_values"]
    finally:
        _kernel.configure(*_kernel.python_names())
    assert KEYWORD_ATTRIBUTES[3] == b"aria-label"
    assert values[3] == [None, "t"]  # the renamed attribute's values
    assert _kernel.fill_table(elements)["keyword_values"][3] == [None, "a"]
    assert not backend.differences(_kernel.fill_table(elements), python_fields(elements))


@compiled_only
def test_configure_refuses_names_this_build_cannot_hold():
    from noisecbr.prepare.fields import KEYWORD_ATTRIBUTES

    with pytest.raises(ValueError, match="rebuild it"):
        _kernel.configure((b"class",), (b"hidden", b"aria-hidden"), b"style",
                          (b"none", b"dden"), b"application/ld+json")
    with pytest.raises(ValueError, match="without NUL"):
        _kernel.configure((b"class", b"id", b"role", b"aria\0label"),
                          (b"hidden", b"aria-hidden"), b"style", (b"none", b"dden"),
                          b"application/ld+json")
    _kernel.configure(*_kernel.python_names())
    assert _kernel.python_names()[0] == KEYWORD_ATTRIBUTES


def test_every_hiding_style_holds_one_of_the_kernels_words_in_some_ascii_case():
    # The kernel tests a style for HIDING_STYLE_WORDS, ASCII letters folded, before the
    # expression: every style the expression finds, with any letter replaced by one that
    # re.I matches to it (a dotless ı, a Kelvin sign, a long ſ…), holds one of them.
    import re

    from noisecbr.prepare.names import HIDDEN_STYLE, HIDING_STYLE_WORDS

    def ascii_lower(text):
        return "".join(c.lower() if "A" <= c <= "Z" else c for c in text)

    letters = set("displaynonevisibilityhidden")
    same = {c: [chr(u) for u in range(0x3000) if re.fullmatch(c, chr(u), re.I)]
            for c in letters}
    bases = ["display:none", "visibility:hidden", "DISPLAY : None", "x;Visibility:HIDDEN"]
    styles = list(bases)
    for base in bases:
        for k, c in enumerate(base):
            for other in same.get(c.lower(), []):
                styles.append(base[:k] + other + base[k + 1:])
        styles.append("".join(same.get(c.lower(), [c])[-1] for c in base))
    assert len(styles) > 100
    for style in styles:
        if HIDDEN_STYLE.search(style):
            assert any(word in ascii_lower(style) for word in HIDING_STYLE_WORDS), style
