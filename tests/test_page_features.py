import numpy as np
import pytest

from noisecbr.features import FEATURE_GROUPS, group_slices, vectorize
from noisecbr.features.page import page_quantities
from noisecbr.prepare.subtrees import build_table
from noisecbr.prepare.tidy import tidy

PAGE = ("<body><ul><li class='item'>One</li><li class='item'>Two</li><li class='item'>Three</li>"
        "</ul><h1>The Title</h1><div><h2>Related stories</h2>"
        "<p>Continue reading about it now.</p></div>"
        "<p>Copyright 2024 Example Inc, all rights reserved.</p></body>")
# elements: 0 body, 1 ul, 2-4 li.item, 5 h1, 6 div, 7 h2, 8 p, 9 p


def table():
    return build_table(tidy(PAGE))


PAGE_FEATURES, VOCABULARY_FEATURES = FEATURE_GROUPS["page"], FEATURE_GROUPS["vocabulary"]


def column(features, names, name):
    return features[:, names.index(name)]


def page(t):
    return vectorize(t)[:, group_slices()["page"]]


def vocabulary_features(t):
    return vectorize(t)[:, group_slices()["vocabulary"]]


def test_shapes_and_finite():
    t = table()
    assert t.tags == ["body", "ul", "li", "li", "li", "h1", "div", "h2", "p", "p"]
    p, v = page(t), vocabulary_features(t)
    assert p.shape == (len(t), len(PAGE_FEATURES))
    assert v.shape == (len(t), len(VOCABULARY_FEATURES))
    assert np.isfinite(p).all() and np.isfinite(v).all()


def test_text_position_shares():
    t = table()
    p = page(t)
    before, after = column(p, PAGE_FEATURES, "text_before"), column(p, PAGE_FEATURES, "text_after")
    total = t.subtree(t.piece_words)[0]
    share = t.subtree(t.piece_words) / total
    assert np.allclose(before + share + after, 1.0)
    assert before[0] == 0 and after[0] == 0
    assert before[9] == pytest.approx(1 - share[9])  # the last paragraph ends the page


def test_repeated_signatures_and_siblings():
    t = table()
    p = page(t)
    # three li.item on the page and among the same parent's children
    assert column(p, PAGE_FEATURES, "log_signature_count")[2] == pytest.approx(np.log1p(3) / 7)
    assert column(p, PAGE_FEATURES, "signature_sibling_share")[3] == pytest.approx(1.0)
    # the two <p> share a signature on the page but not a parent
    assert column(p, PAGE_FEATURES, "log_signature_count")[8] == pytest.approx(np.log1p(2) / 7)
    assert column(p, PAGE_FEATURES, "log_signature_siblings")[8] == pytest.approx(np.log1p(1) / 5)
    has_prev, has_next = (column(p, PAGE_FEATURES, n) for n in ("has_prev", "has_next"))
    assert has_prev.tolist() == [0, 0, 0, 1, 1, 1, 1, 0, 1, 1]
    assert has_next.tolist() == [0, 1, 1, 1, 0, 1, 1, 1, 0, 0]
    # h1 is element 5: the div after it is after_h1, the list before is not, body contains it
    after_h1 = column(p, PAGE_FEATURES, "after_h1")
    assert after_h1[6] == 1 and after_h1[1] == 0
    assert column(p, PAGE_FEATURES, "contains_h1")[0] == 1


def test_boilerplate_vocabulary():
    t = table()
    v = vocabulary_features(t)
    head_related = column(v, VOCABULARY_FEATURES, "head_voc:related")
    legal = column(v, VOCABULARY_FEATURES, "voc:legal")
    assert head_related[6] == 1  # "Related stories" opens the div
    assert head_related[8] == 0
    assert column(v, VOCABULARY_FEATURES, "head_voc:readmore")[8] == 1
    assert legal[9] > 0 and legal[8] == 0
    # "The Title": two Title Case words of two
    assert column(v, VOCABULARY_FEATURES, "title_case_share")[5] == pytest.approx(1.0)
    assert column(v, VOCABULARY_FEATURES, "digit_share")[9] == pytest.approx(1 / 7)


def test_page_without_text():
    t = build_table(tidy("<body><div><img src=x></div></body>"))
    assert np.isfinite(page(t)).all()
    assert (vocabulary_features(t) == 0).all()


def test_empty_class_is_no_class_and_shared_reads_agree():
    t = build_table(tidy("<body><div><p class=''>One two</p><p>Three four</p>"
                         "<p class='x'>Five</p></div></body>"))
    words = t.subtree(t.piece_words)
    own_reads, _ = page_quantities(t, words)
    shared, _ = page_quantities(t, words, [e.get("class") for e in t.elements])
    assert all(np.array_equal(own_reads[name], shared[name]) for name in own_reads)
    count = column(page(t), PAGE_FEATURES, "log_signature_count")
    p_rows = [i for i, tag in enumerate(t.tags) if tag == "p"]
    assert count[p_rows[0]] == count[p_rows[1]] == pytest.approx(np.log1p(2) / 7)
    assert count[p_rows[2]] == pytest.approx(np.log1p(1) / 7)
