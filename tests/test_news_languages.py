"""News pages in German and Spanish: the embedded model gives the article body, without the
furniture around it (dateline, byline, share bar, captions and credits, related and most-read
lists, newsletter box, tags, navigation, footer), in the page's own words.

The two pages are written for these tests (tests/fixtures/news), after the templates of
regional news sites; no development page is shipped."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from lxml import etree

import noisecbr
from noisecbr.decide.orphans import orphaned_headings
from noisecbr.prepare.subtrees import build_table
from noisecbr.result import DATA, NOISE

NEWS = Path(__file__).parent / "fixtures" / "news"

PAGES = {
    "de-lokal": {
        "body": ["Die Reederei Nordlicht hat am Dienstag in Emden",
                 "Das Schiff ist 82 Meter lang",
                 "Nach Angaben des Geschäftsführers Jan Petersen",
                 "Auf den Inseln wird das neue Schiff mit Erwartung begrüßt",
                 "Die erste Fahrt mit Passagieren ist für den 1. April geplant"],
        "furniture": ["Veröffentlicht am", "Artikel teilen", "Foto: dpa",
                      "Das könnte Sie auch interessieren", "Hafen Emden: Ausbau",
                      "Newsletter abonnieren", "Themen:", "Meistgelesen", "Sturmflut",
                      "Impressum", "Alle Rechte vorbehalten", "Zum Inhalt springen",
                      "Abo abschließen"],
        "title": "Neue Fähre für die Nordseeinseln: Reederei stellt Elektroschiff vor",
    },
    "es-local": {
        "body": ["El nuevo servicio unirá la estación de tren",
                 "El Ayuntamiento ha presentado este martes",
                 "La alcaldesa, Carmen Ruiz, explicó",
                 "Los vecinos del barrio de la estación",
                 "El servicio comenzará a funcionar de forma gratuita"],
        "furniture": ["Utilizamos cookies", "Publicado:", "Compartir:", "Foto: EFE",
                      "Noticias relacionadas", "Las obras de la avenida",
                      "Recibe nuestro boletín", "Temas:", "Lo más leído", "Aviso legal",
                      "Todos los derechos reservados", "Suscríbete"],
        "title": "La ciudad estrena su primer tranvía eléctrico sin catenaria",
    },
}


@pytest.mark.parametrize("name", sorted(PAGES))
def test_a_news_page_in_another_language_loses_its_furniture(name):
    expected = PAGES[name]
    result = noisecbr.clean((NEWS / f"{name}.html").read_bytes(),
                            url=f"https://news.example/{name}")
    for sentence in expected["body"]:
        assert sentence in result.text
    kept = [furniture for furniture in expected["furniture"] if furniture in result.text]
    assert kept == []
    assert result.title == expected["title"]


def test_the_spanish_byline_gives_the_author_and_leaves_the_text():
    result = noisecbr.clean((NEWS / "es-local.html").read_bytes())
    assert result.author == "Lucía Martín"
    assert "Por " not in result.text


def _walked_div(inner: str):
    """The table of ``<body><div>inner</div></body>`` and a walk's decisions on it: body and
    div mixture, every child of the div kept (data)."""
    table = build_table(etree.HTML(f"<html><body><div>{inner}</div></body></html>")
                        .find("body"))
    decision = np.full(len(table), -1, dtype=np.int8)
    decision[0] = decision[1] = 2  # body and div: mixture
    decision[table.parent == 1] = DATA
    return table, decision


def test_a_furniture_heading_goes_with_the_box_the_walk_removed():
    table, decision = _walked_div(
        "<p>Article text of the page, long enough to be the article.</p>"
        "<h3>Noticias relacionadas</h3><ul><li><a href='/a'>Otra noticia</a></li></ul>"
        "<h3>El contexto</h3><ul><li>Una lista del artículo</li></ul>"
        "<h3>Related stories</h3><p>Kept paragraph after a kept heading.</p>")
    lists = [i for i, tag in enumerate(table.tags) if tag == "ul"]
    decision[lists[0]] = NOISE  # the related list removed; the article's own list kept
    headings = [i for i, tag in enumerate(table.tags) if tag == "h3"]
    assert orphaned_headings(table, decision).tolist() == [headings[0]]


def test_documentation_sections_are_never_comments():
    result = noisecbr.clean((NEWS / "docs-reference.html").read_bytes())
    assert result.comments == ""
    for clause in ("WITH clause allows", "FROM clause specifies", "HAVING clause eliminates",
                   "LIMIT clause consists"):
        assert clause in result.text


_WORDS = " ".join(["word"] * 12)


def _comment_evidence(boxes: str):
    """The element table of a body of ``boxes`` and its comment evidence."""
    from noisecbr.score.discussion import comment_evidence

    table = build_table(etree.HTML(f"<html><body>{boxes}</body></html>").find("body"))
    return table, comment_evidence(table)


def test_a_comment_score_needs_a_threads_markup():
    from noisecbr.result import COMMENT
    from noisecbr.score.discussion import without_unfounded_comments

    words = _WORDS
    table, evidence = _comment_evidence(
        f"<div class='refsect2'><p>{words}</p></div>"
        f"<ol class='commentlist'><li><p>{words}</p></li></ol>"
        f"<div id='disqus_thread'><div><div><div><p>{words}</p></div></div></div></div>"
        "<div class='comments'><p>No comments yet.</p></div>")
    by_tag = {(tag, i): bool(evidence[i]) for i, tag in enumerate(table.tags)}
    assert not evidence[table.tags.index("div")]  # a documentation section
    assert evidence[table.tags.index("ol")] and evidence[table.tags.index("li")]
    last = len(table) - 1  # "No comments yet.": markup, but no thread's words
    assert not evidence[last] and not evidence[last - 1]
    deep = [i for i, tag in enumerate(table.tags) if tag == "p"][2]  # 4 below disqus_thread
    assert not evidence[deep] and by_tag
    proba = np.tile(np.array([[0.1, 0.2, 0.1, 0.6]], dtype=np.float32), (len(table), 1))
    out = without_unfounded_comments(table, proba)
    assert out[table.tags.index("ol"), COMMENT] == pytest.approx(0.6)
    section = table.tags.index("div")
    assert out[section, COMMENT] == 0.0
    np.testing.assert_allclose(out[section, :3], [0.25, 0.5, 0.25], rtol=1e-6)


def test_a_responsive_layout_is_no_discussion():
    words = _WORDS
    table, evidence = _comment_evidence(
        f"<div class='table-responsive'><p>{words}</p></div>"
        f"<div id='respond' class='comment-respond'><p>{words}</p></div>"
        f"<ol class='responses'><li><p>{words}</p></li></ol>"
        f"<div class='byline__correspondent'><p>{words}</p></div>")
    divs = [i for i, tag in enumerate(table.tags) if tag == "div"]
    assert not evidence[divs[0]] and not evidence[divs[2]]
    assert evidence[divs[1]] and evidence[table.tags.index("ol")]


def test_a_dateline_leaves_the_text_and_a_schedule_stays():
    from noisecbr.decide.datelines import ANNOUNCING, datelines
    from noisecbr.features.furniture import FURNITURE

    assert ANNOUNCING <= {w for text in FURNITURE["dateline"].values() for w in text.split()}
    table, decision = _walked_div(
        "<p>Publicado: 19 de noviembre de 2025, 08:59 · Actualizado: 10:12</p>"
        "<p>Updated 0339 GMT (1139 HKT) November 19, 2019</p>"
        "<p>Monday 19 November 2025, 10:00 to 12:00</p>"
        "<p>Published in 2025, the report found 12 of 40 schools short of teachers.</p>")
    paragraphs = [i for i, tag in enumerate(table.tags) if tag == "p"]
    assert datelines(table, decision).tolist() == paragraphs[:2]
    recalled = np.full(len(table), -1, dtype=np.int8)
    recalled[paragraphs[0]] = DATA  # the site's stored cases keep it: it stays
    assert datelines(table, decision, recalled).tolist() == paragraphs[1:2]
